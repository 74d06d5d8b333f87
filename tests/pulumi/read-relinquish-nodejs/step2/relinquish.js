// A replace-only dynamic resource that can also be read by ID.
const pulumi = require("@pulumi/pulumi");

let nextId = 0;

const provider = {
    async check(olds, news) {
        return { inputs: news };
    },
    async diff(id, olds, news) {
        if (news.state !== olds.state) {
            return { changes: true, replaces: ["state"] };
        }
        return { changes: false };
    },
    async create(inputs) {
        return { id: String(nextId++), outs: inputs };
    },
    async update(id, olds, news) {
        throw new Error("this resource is replace-only and can't be updated");
    },
    async read(id, props) {
        return { id, props };
    },
};

class Resource extends pulumi.dynamic.Resource {
    constructor(name, props, opts) {
        super(provider, name, props, opts);
    }
}

module.exports = { Resource };
