// A component's child moved to the top level, with a parent alias of the component. Nothing changes.
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

const comp = new Component("compExtractChild");
new FooResource("childExtractChild", { aliases: [{ parent: comp }] });
