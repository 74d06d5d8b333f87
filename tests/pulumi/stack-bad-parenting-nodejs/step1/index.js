// A parent that is not a resource: the program fails.
const pulumi = require("@pulumi/pulumi");

const provider = {
    async create(inputs) {
        return { id: "0", outs: undefined };
    },
};

class Resource extends pulumi.dynamic.Resource {
    constructor(name, parent) {
        super(provider, name, {}, { parent });
    }
}

new Resource("a", {});
