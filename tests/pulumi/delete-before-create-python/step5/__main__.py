import pulumi
from resource import Resource

# Both bases are replaced delete-before-replace; dependent goes once, before either.
a = Resource("base", unique_key=1, state=200)
b = Resource("base-2", unique_key=2, state=50)
c = Resource("dependent", state=pulumi.Output.all(a.state, b.state).apply(lambda s: s[0] + s[1]))
