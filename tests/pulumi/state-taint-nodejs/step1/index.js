// Two dynamic resources to taint and untaint.
const pulumi = require("@pulumi/pulumi");

class DynamicResource extends pulumi.dynamic.Resource {
    constructor(name, opts) {
        super(
            {
                create: (inputs) => Promise.resolve({ id: name, outs: { output: "output" } }),
                update: (id, inputs) => Promise.resolve({ outs: { output: "output" } }),
                delete: (id, props) => Promise.resolve(),
            },
            name,
            { output: undefined },
            opts,
        );
    }
}

const resource1 = new DynamicResource("resource1");
new DynamicResource("resource2");

exports.resource1Id = resource1.id;
