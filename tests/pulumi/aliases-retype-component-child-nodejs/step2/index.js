// A component's child changes type, with a type alias (its parent unchanged). Nothing changes.
const pulumi = require("@pulumi/pulumi");

class FooResource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:FooResourceNew", name, {}, pulumi.mergeOptions(opts, { aliases: [{ type: "my:module:FooResource" }] }));
    }
}

class Component extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentResource", name, {}, opts);
        new FooResource("childRetypeChild", { parent: this });
    }
}

new Component("compRetypeChild");
