"""`additional_secret_outputs` makes an output secret."""

from pulumi import ResourceOptions

from conformance import SimpleResource

SimpleResource("withSecret", True, ResourceOptions(additional_secret_outputs=["value"]))
SimpleResource("withoutSecret", True)
