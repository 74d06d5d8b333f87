// A resource, then a read of it by its ID (`id` option) in the same program.
const pulumi = require("@pulumi/pulumi");

const provider = {
    async create(inputs) {
        return { id: "0", outs: undefined };
    },
};

class Resource extends pulumi.dynamic.Resource {
    constructor(name, opts) {
        super(provider, name, {}, opts);
    }
}

const a = new Resource("a");
new Resource("b", { id: a.id });
