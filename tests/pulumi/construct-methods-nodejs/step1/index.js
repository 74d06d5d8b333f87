// A remote component with a method, getMessage, called through the engine (Call).
const pulumi = require("@pulumi/pulumi");

class Component extends pulumi.ComponentResource {
    constructor(name, args, opts) {
        super("testcomponent:index:Component", name, args, opts, true);
    }

    getMessage(args) {
        return pulumi.runtime.call("testcomponent:index:Component/getMessage",
            { __self__: this, name: args.name }, this);
    }
}

const component = new Component("component", { first: "Hello", second: "World" });
exports.message = component.getMessage({ name: "Alice" }).message;
