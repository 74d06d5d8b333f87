"""`depends_on` records a dependency."""

from pulumi import ResourceOptions

from conformance import SimpleResource

no_depends_on = SimpleResource("noDependsOn", True)
SimpleResource("withDependsOn", False, ResourceOptions(depends_on=[no_depends_on]))
