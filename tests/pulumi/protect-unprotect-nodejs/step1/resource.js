// A dynamic resource with a free-form `state` that is updated in place (the provider has only
// `create`; IDs count up from 0).
const pulumi = require("@pulumi/pulumi");

let nextId = 0;

const provider = {
    async create(inputs) {
        return { id: String(nextId++), outs: undefined };
    },
};

class Resource extends pulumi.dynamic.Resource {
    constructor(name, props, opts) {
        super(provider, name, props, opts);
    }
}

module.exports = { Resource };
