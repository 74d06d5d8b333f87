// A dynamic resource whose create and update fail with a partial state when `state` is 4:
// the resource exists, with these outputs, but did not initialize.
const pulumi = require("@pulumi/pulumi");

const provider = {
    async create(inputs) {
        if (inputs.state === 4) {
            throw { message: "Resource failed to initialize", id: "0", properties: inputs, reasons: ["state can't be 4"] };
        }
        return { id: "0", outs: inputs };
    },
    async update(id, olds, news) {
        if (news.state === 4) {
            throw { message: "Resource failed to initialize", id, properties: news, reasons: ["state can't be 4"] };
        }
        return { outs: news };
    },
};

class Resource extends pulumi.dynamic.Resource {
    constructor(name, state, opts) {
        super(provider, name, { state }, opts);
    }
}

module.exports = { Resource };
