// A dynamic resource named with a module ("custom-provider") and a type ("CustomResource").
const pulumi = require("@pulumi/pulumi");

const provider = {
    async create() {
        return { id: "resource-id", outs: {} };
    },
};

class CustomResource extends pulumi.dynamic.Resource {
    constructor(name, opts) {
        super(provider, name, {}, opts, "custom-provider", "CustomResource");
    }
}

exports.urn = new CustomResource("resource-name").urn;
