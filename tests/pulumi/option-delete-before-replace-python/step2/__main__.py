"""Stage 1: value changes: withOption is deleted first, withoutOption created first."""

from pulumi import ResourceOptions

from conformance import SimpleResource

SimpleResource("withOption", False, ResourceOptions(replace_on_changes=["value"], delete_before_replace=True))
SimpleResource("withoutOption", False, ResourceOptions(replace_on_changes=["value"]))
