// A component's child renamed, with a name alias (its parent unchanged).: before the edit.
const pulumi = require("@pulumi/pulumi");

class FooResource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:FooResource", name, {}, opts);
    }
}

class Component extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentResource", name, {}, opts);
        new FooResource("childRenameChild", { parent: this });
    }
}

new Component("compRenameChild");
