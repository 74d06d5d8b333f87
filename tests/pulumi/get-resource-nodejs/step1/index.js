// A resource read back by its URN (`urn` option): its outputs, a secret one still secret.
const pulumi = require("@pulumi/pulumi");

class MyResource extends pulumi.dynamic.Resource {
    constructor(name, props, opts) {
        super({ create: async (inputs) => ({ id: "0", outs: inputs }) }, name, props, opts);
    }
}

/** Any resource, looked up by URN. */
class GetResource extends pulumi.Resource {
    constructor(urn) {
        super("unused:unused:unused", "unused", true, { foo: undefined, bar: undefined }, { urn });
    }
}

const a = new MyResource("a", { foo: "foo", bar: pulumi.secret("my-$ecret") });

module.exports = {
    foo: a.urn.apply((urn) => new GetResource(urn).foo),
    secret: a.urn.apply((urn) => new GetResource(urn).bar),
};
