"""`retain_on_delete` true, false and left out."""

from pulumi import ResourceOptions

from conformance import SimpleResource

SimpleResource("retainOnDelete", True, ResourceOptions(retain_on_delete=True))
SimpleResource("notRetainOnDelete", True, ResourceOptions(retain_on_delete=False))
SimpleResource("defaulted", True)
