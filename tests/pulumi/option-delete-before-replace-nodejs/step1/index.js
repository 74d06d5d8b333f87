// Two resources replaced when value changes, one deleted before its replacement is created.
const { SimpleResource } = require("./conformance");

new SimpleResource("withOption", { value: true }, { replaceOnChanges: ["value"], deleteBeforeReplace: true });
new SimpleResource("withoutOption", { value: true }, { replaceOnChanges: ["value"] });
