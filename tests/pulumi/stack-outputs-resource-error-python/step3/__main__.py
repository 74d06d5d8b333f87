"""A resource fails to create, but the outputs do not wait for it: both are updated."""

import pulumi

from testresources import FailsOnCreate

pulumi.export("xyz", "DEF")
FailsOnCreate("test")
pulumi.export("foo", 1)
