"""xyz changes, and foo is exported as an output of a resource that fails to create: the
update fails before the stack's outputs are registered, so both keep their old values."""

import pulumi

from testresources import FailsOnCreate

pulumi.export("xyz", "DEF")
pulumi.export("foo", FailsOnCreate("test").value)
