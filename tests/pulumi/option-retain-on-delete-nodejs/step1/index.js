// `retainOnDelete` true, false and left out.
const { SimpleResource } = require("./conformance");

new SimpleResource("retainOnDelete", { value: true }, { retainOnDelete: true });
new SimpleResource("notRetainOnDelete", { value: true }, { retainOnDelete: false });
new SimpleResource("defaulted", { value: true });
