import pulumi
from resource import Resource

a = Resource("base", unique_key=1, state=100)
b = Resource("base-2", unique_key=2, state=100)
c = Resource("dependent", state=pulumi.Output.all(a.state, b.state).apply(lambda s: s[0] + s[1]))
