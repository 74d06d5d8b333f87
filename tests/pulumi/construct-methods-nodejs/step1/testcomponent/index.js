// `testcomponent`: a component provider with a method, written with the Node.js SDK. The
// component is rebuilt from its reference (a resource module) when a method is called on it.
const pulumi = require("@pulumi/pulumi");
const provider = require("@pulumi/pulumi/provider");

class Component extends pulumi.ComponentResource {
    constructor(name, args, opts) {
        if (opts && opts.urn) {
            // Rehydrated from a reference: its outputs are the recorded ones.
            args = { first: undefined, second: undefined };
        }
        super("testcomponent:index:Component", name, args, opts);
        if (opts && opts.urn) {
            return;
        }
        this.registerOutputs(args);
    }

    getMessage(name) {
        return pulumi.all([this.first, this.second, name])
            .apply(([first, second, who]) => `${first} ${second}, ${who}!`);
    }
}

class Provider {
    constructor() {
        this.version = "0.0.1";
        pulumi.runtime.registerResourceModule("testcomponent", "index", {
            version: this.version,
            construct: (name, type, urn) => {
                if (type !== "testcomponent:index:Component") {
                    throw new Error(`unknown resource type ${type}`);
                }
                return new Component(name, undefined, { urn });
            },
        });
    }

    async construct(name, type, inputs, options) {
        if (type !== "testcomponent:index:Component") {
            throw new Error(`unknown resource type ${type}`);
        }
        const component = new Component(name, inputs, options);
        return { urn: component.urn, state: inputs };
    }

    async call(token, inputs) {
        if (token !== "testcomponent:index:Component/getMessage") {
            throw new Error(`unknown method ${token}`);
        }
        return { outputs: { message: inputs.__self__.getMessage(inputs.name) } };
    }
}

provider.main(new Provider(), process.argv.slice(2));
