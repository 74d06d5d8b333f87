// The test provider's Random (a wasm provider, package `testprovider`).
const pulumi = require("@pulumi/pulumi");

class Random extends pulumi.CustomResource {
    constructor(name, args, opts) {
        super("testprovider:index:Random", name, { ...args, result: undefined }, opts);
    }
}

module.exports = { Random };
