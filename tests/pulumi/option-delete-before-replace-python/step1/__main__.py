"""Stage 0: two resources replaced when `value` changes, one deleted before its replacement."""

from pulumi import ResourceOptions

from conformance import SimpleResource

SimpleResource("withOption", True, ResourceOptions(replace_on_changes=["value"], delete_before_replace=True))
SimpleResource("withoutOption", True, ResourceOptions(replace_on_changes=["value"]))
