// Resources exported whole as stack outputs: a property made secret by `pulumi.secret` or by
// `additionalSecretOutputs` stays secret in the stack's outputs; a plain one does not.
const pulumi = require("@pulumi/pulumi");

const provider = {
    async create(inputs) {
        return { id: "1", outs: { prefix: inputs.prefix } };
    },
};

class R extends pulumi.dynamic.Resource {
    constructor(name, props, opts) {
        super(provider, name, props, opts);
    }
}

const text = "it's a secret to everybody";
module.exports = {
    withoutSecret: new R("withoutSecret", { prefix: pulumi.output(text) }),
    withSecret: new R("withSecret", { prefix: pulumi.secret(text) }),
    withSecretAdditional: new R("withSecretAdditional", { prefix: pulumi.output(text) }, { additionalSecretOutputs: ["prefix"] }),
};
