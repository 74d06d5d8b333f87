// One resource with the default dynamic provider, one with an explicit instance of it.
const pulumi = require("@pulumi/pulumi");

class DynamicProvider extends pulumi.ProviderResource {
    constructor(name, opts) {
        super("pulumi-nodejs", name, {}, opts);
    }
}

const provider = {
    async create(inputs) {
        return { id: "0", outs: undefined };
    },
};

class Resource extends pulumi.dynamic.Resource {
    constructor(name, providerResource) {
        super(provider, name, {}, { provider: providerResource });
    }
}

new Resource("a");
const p = new DynamicProvider("p");
new Resource("b", p);
