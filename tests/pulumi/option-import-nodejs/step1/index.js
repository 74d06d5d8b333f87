// One resource imported by ID (the `import` option), one created.
const pulumi = require("@pulumi/pulumi");

class Random extends pulumi.CustomResource {
    constructor(name, args, opts) {
        super("testprovider:index:Random", name, { ...args, result: undefined }, opts);
    }
}

// The ID `fakeID123` reads as a Random of length 9 without a prefix.
new Random("import", { length: 9, prefix: "" }, { import: "fakeID123" });
new Random("notImport", { length: 9, prefix: "" });
