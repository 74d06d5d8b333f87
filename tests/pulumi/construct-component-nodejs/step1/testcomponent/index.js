// `testcomponent`: a component provider written with the Node.js SDK. Its component holds one
// dynamic resource child and outputs its input `echo`, the child's ID and the stack's secret
// config `secret` (which must arrive marked secret).
const pulumi = require("@pulumi/pulumi");
const dynamic = require("@pulumi/pulumi/dynamic");
const provider = require("@pulumi/pulumi/provider");

let currentID = 0;

class Resource extends dynamic.Resource {
    constructor(name, echo, opts) {
        const impl = {
            create: async () => ({ id: (currentID++).toString(), outs: undefined }),
        };
        super(impl, name, { echo }, opts);
    }
}

class Component extends pulumi.ComponentResource {
    constructor(name, echo, secret, opts) {
        super("testcomponent:index:Component", name, {}, opts);
        this.echo = pulumi.output(echo);
        this.childId = new Resource(`child-${name}`, echo, { parent: this }).id;
        this.secret = secret;
        this.registerOutputs({ echo: this.echo, childId: this.childId, secret: this.secret });
    }
}

class Provider {
    constructor() {
        this.version = "0.0.1";
    }

    async construct(name, type, inputs, options) {
        if (type !== "testcomponent:index:Component") {
            throw new Error(`unknown resource type ${type}`);
        }
        const config = new pulumi.Config();
        if (!pulumi.runtime.isConfigSecret(`${config.name}:secret`)) {
            throw new Error(`expected config with key "secret" to be secret.`);
        }
        const secret = config.requireSecret("secret");
        const component = new Component(name, inputs["echo"], secret, options);
        return {
            urn: component.urn,
            state: { echo: component.echo, childId: component.childId, secret },
        };
    }
}

provider.main(new Provider(), process.argv.slice(2));
