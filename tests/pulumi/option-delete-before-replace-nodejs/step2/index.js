// Two resources replaced when value changes, one deleted before its replacement is created.
const { SimpleResource } = require("./conformance");

new SimpleResource("withOption", { value: false }, { replaceOnChanges: ["value"], deleteBeforeReplace: true });
new SimpleResource("withoutOption", { value: false }, { replaceOnChanges: ["value"] });
