// Resources of the test provider (package `testprovider`, a Cairn wasm provider).
const pulumi = require("@pulumi/pulumi");

/** A random string of `length` characters (after `prefix`); `result` is secret. */
class Random extends pulumi.CustomResource {
    constructor(name, args, opts) {
        super("testprovider:index:Random", name, { length: args.length, prefix: args.prefix, result: undefined }, opts);
    }
}

/** Outputs its input `echo`. */
class Echo extends pulumi.CustomResource {
    constructor(name, args, opts) {
        super("testprovider:index:Echo", name, { echo: args.echo }, opts);
    }
}

/** Its creation always fails. */
class FailsOnCreate extends pulumi.CustomResource {
    constructor(name, opts) {
        super("testprovider:index:FailsOnCreate", name, { value: undefined }, opts);
    }
}

/** Its deletion always fails. */
class FailsOnDelete extends pulumi.CustomResource {
    constructor(name, opts) {
        super("testprovider:index:FailsOnDelete", name, {}, opts);
    }
}

module.exports = { Random, Echo, FailsOnCreate, FailsOnDelete };
