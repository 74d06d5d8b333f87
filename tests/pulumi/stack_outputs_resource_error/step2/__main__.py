import pulumi
from fails_on_create import FailsOnCreate

pulumi.export("xyz", "DEF")
# foo waits for a resource that fails: the stack outputs are never registered, and keep their
# previous values.
pulumi.export("foo", FailsOnCreate("test").value)
