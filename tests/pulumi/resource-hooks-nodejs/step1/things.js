// A dynamic stand-in for the test provider's Random (`length` in, `result` out) and a local
// component with one such child, whose outputs carry the child's ID (`childId`).
const pulumi = require("@pulumi/pulumi");

const randomProvider = {
    async create(inputs) {
        return { id: `random-${inputs.length}`, outs: { length: inputs.length, result: "x".repeat(inputs.length) } };
    },
    async delete() {},
};

class Random extends pulumi.dynamic.Resource {
    constructor(name, args, opts) {
        super(randomProvider, name, { length: args.length, result: undefined }, opts, "testprovider", "Random");
    }
}

class Component extends pulumi.ComponentResource {
    constructor(name, args, opts) {
        super("testprovider:index:Component", name, { length: args.length }, opts);
        const child = new Random(`${name}-child`, { length: args.length }, { parent: this });
        this.registerOutputs({ childId: child.id });
    }
}

module.exports = { Random, Component };
