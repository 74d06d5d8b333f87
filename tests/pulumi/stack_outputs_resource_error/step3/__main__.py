import pulumi
from fails_on_create import FailsOnCreate

pulumi.export("xyz", "DEF")
FailsOnCreate("test")
# Both outputs are known: they are registered, and take their new values.
pulumi.export("foo", 1)
