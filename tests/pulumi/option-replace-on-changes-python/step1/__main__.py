"""Stage 0 of the replace-on-changes scenarios: everything created."""

from pulumi import ResourceOptions

from conformance import ResourceA, ResourceB

# 1: replaceProp replaces by the provider's (schema's) rule.
ResourceA("schemaReplace", value=True, replace_prop=True)
# 2: value replaces by the option.
ResourceB("optionReplace", value=True, opts=ResourceOptions(replace_on_changes=["value"]))
# 3 and 4: both rules; value changes in 3, replaceProp in 4.
ResourceA("bothReplaceValue", value=True, replace_prop=True, opts=ResourceOptions(replace_on_changes=["value"]))
ResourceA("bothReplaceProp", value=True, replace_prop=True, opts=ResourceOptions(replace_on_changes=["value"]))
# 5: no rule: an update.
ResourceB("regularUpdate", value=True)
# 6: a rule, and no change.
ResourceB("noChange", value=True, opts=ResourceOptions(replace_on_changes=["value"]))
# 7: the option names value, but replaceProp changes (the schema's rule applies).
ResourceA("wrongPropChange", value=True, replace_prop=True, opts=ResourceOptions(replace_on_changes=["value"]))
# 8: several properties in the option.
ResourceA("multiplePropReplace", value=True, replace_prop=True,
          opts=ResourceOptions(replace_on_changes=["value", "replaceProp"]))
