import pulumi
from resource import Resource

a = Resource("base", unique_key=1, state=42)
b = Resource("dependent", state=a.state)
c = Resource("dependent-2", state=99, opts=pulumi.ResourceOptions(depends_on=[a, b]))
d = Resource("dependent-3", state=99, no_replace=pulumi.Output.all(a.state, b.state).apply(lambda s: s[0] + s[1]))
e = Resource("dependent-4", state=pulumi.Output.all(b.state, c.state).apply(lambda s: s[0] + s[1]))
