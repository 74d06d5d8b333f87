// A dynamic resource whose provider fails to create it.
const pulumi = require("@pulumi/pulumi");

const provider = {
    async create() {
        throw new Error("boom!");
    },
};

class CustomResource extends pulumi.dynamic.Resource {
    constructor(name, opts) {
        super(provider, name, {}, opts, "custom-provider", "CustomResource");
    }
}

exports.urn = new CustomResource("resource-name").urn;
