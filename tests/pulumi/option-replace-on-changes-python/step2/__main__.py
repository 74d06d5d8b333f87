"""Stage 1 of the replace-on-changes scenarios: the edits."""

from pulumi import ResourceOptions

from conformance import ResourceA, ResourceB

ResourceA("schemaReplace", value=True, replace_prop=False)
ResourceB("optionReplace", value=False, opts=ResourceOptions(replace_on_changes=["value"]))
ResourceA("bothReplaceValue", value=False, replace_prop=True, opts=ResourceOptions(replace_on_changes=["value"]))
ResourceA("bothReplaceProp", value=True, replace_prop=False, opts=ResourceOptions(replace_on_changes=["value"]))
ResourceB("regularUpdate", value=False)
ResourceB("noChange", value=True, opts=ResourceOptions(replace_on_changes=["value"]))
ResourceA("wrongPropChange", value=True, replace_prop=False, opts=ResourceOptions(replace_on_changes=["value"]))
ResourceA("multiplePropReplace", value=False, replace_prop=True,
          opts=ResourceOptions(replace_on_changes=["value", "replaceProp"]))
