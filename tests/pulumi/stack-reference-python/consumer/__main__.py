"""Reads the outputs of stack `other` of this project through a StackReference."""

import pulumi

ref = pulumi.StackReference("ref", stack_name="organization/stackref/other")
pulumi.export("plain", ref.get_output("plain"))
pulumi.export("secret", ref.get_output("secret"))
pulumi.export("secret_unsecret", pulumi.Output.unsecret(ref.get_output("secret")))
