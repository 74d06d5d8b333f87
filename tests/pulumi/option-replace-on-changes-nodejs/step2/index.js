// Each resource's change (see step1 for what each one tests).
const { ResourceA, ResourceB } = require("./conformance");

new ResourceA("schemaReplace", { value: true, replaceProp: false });
new ResourceB("optionReplace", { value: false }, { replaceOnChanges: ["value"] });
new ResourceA("bothReplaceValue", { value: false, replaceProp: true }, { replaceOnChanges: ["value"] });
new ResourceA("bothReplaceProp", { value: true, replaceProp: false }, { replaceOnChanges: ["value"] });
new ResourceB("regularUpdate", { value: false });
new ResourceB("noChange", { value: true }, { replaceOnChanges: ["value"] });
new ResourceA("wrongPropChange", { value: true, replaceProp: false }, { replaceOnChanges: ["value"] });
new ResourceA("multiplePropReplace", { value: false, replaceProp: true },
    { replaceOnChanges: ["value", "replaceProp"] });
