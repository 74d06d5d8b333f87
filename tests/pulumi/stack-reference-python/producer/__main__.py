"""The stack the other one references: a plain output and a secret one."""

import pulumi

pulumi.export("plain", "plain")
pulumi.export("secret", pulumi.Output.secret("hidden-value"))
