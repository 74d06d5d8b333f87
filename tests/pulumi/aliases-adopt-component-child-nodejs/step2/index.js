// A top-level resource moved into a component, with a parent alias of the stack. Nothing changes.
const pulumi = require("@pulumi/pulumi");

class FooResource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:FooResource", name, {}, opts);
    }
}

class Component extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentResource", name, {}, opts);
        new FooResource("childAdoptChild", { parent: this, aliases: [{ parent: pulumi.rootStackResource }] });
    }
}

new Component("compAdoptChild");
