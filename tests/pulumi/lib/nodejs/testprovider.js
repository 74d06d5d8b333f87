// Typed wrappers of the test provider's Random, Component and provider resource.
const pulumi = require("@pulumi/pulumi");

class Random extends pulumi.CustomResource {
    constructor(name, args, opts) {
        super("testprovider:index:Random", name, { ...args, result: undefined }, opts);
    }

    returnArgs(args) {
        return pulumi.runtime.invoke("testprovider:index:returnArgs", args);
    }
}

class Component extends pulumi.ComponentResource {
    constructor(name, args, opts) {
        super("testprovider:index:Component", name, { ...args, childId: undefined }, opts, true);
    }
}

class Provider extends pulumi.ProviderResource {
    constructor(name, opts) {
        super("testprovider", name, {}, opts);
    }
}

module.exports = { Random, Component, Provider };
