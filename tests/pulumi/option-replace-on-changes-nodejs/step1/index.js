// Replacement by the provider's rule, by the `replaceOnChanges` option, by both, and neither.
const { ResourceA, ResourceB } = require("./conformance");

// 1: replaceProp replaces by the provider's (schema's) rule.
new ResourceA("schemaReplace", { value: true, replaceProp: true });
// 2: value replaces by the option.
new ResourceB("optionReplace", { value: true }, { replaceOnChanges: ["value"] });
// 3 and 4: both rules; value changes in 3, replaceProp in 4.
new ResourceA("bothReplaceValue", { value: true, replaceProp: true }, { replaceOnChanges: ["value"] });
new ResourceA("bothReplaceProp", { value: true, replaceProp: true }, { replaceOnChanges: ["value"] });
// 5: no rule: an update.
new ResourceB("regularUpdate", { value: true });
// 6: a rule, and no change.
new ResourceB("noChange", { value: true }, { replaceOnChanges: ["value"] });
// 7: the option names value, but replaceProp changes (the provider's rule applies).
new ResourceA("wrongPropChange", { value: true, replaceProp: true }, { replaceOnChanges: ["value"] });
// 8: several properties in the option.
new ResourceA("multiplePropReplace", { value: true, replaceProp: true },
    { replaceOnChanges: ["value", "replaceProp"] });
