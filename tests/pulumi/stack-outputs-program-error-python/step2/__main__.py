"""xyz changes, then the program fails before it exports foo: foo keeps its old value."""

import pulumi

pulumi.export("xyz", "DEF")

raise Exception("program error")

pulumi.export("foo", 1)
