import pulumi
from resource import Resource

# The provider asks for create-before-delete; the option overrides it for dependent only.
a = Resource("base", unique_key=1, state=42, no_dbr=True)
b = Resource("base-2", unique_key=2, state=42, no_dbr=True)
c = Resource(
    "dependent",
    state=pulumi.Output.all(a.state, b.state).apply(lambda s: s[0] + s[1]),
    no_dbr=True,
    opts=pulumi.ResourceOptions(delete_before_replace=True),
)
