// A top-level resource moved into a component, with a parent alias of the stack.: before the edit.
const pulumi = require("@pulumi/pulumi");

class FooResource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:FooResource", name, {}, opts);
    }
}

class Component extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentResource", name, {}, opts);
    }
}

new Component("compAdoptChild");
new FooResource("childAdoptChild");
