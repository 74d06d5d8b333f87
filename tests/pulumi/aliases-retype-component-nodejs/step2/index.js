// Scenario 4: a component's type changes, with an alias to the old type; its child follows. Nothing changes.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

class ComponentFour extends pulumi.ComponentResource {
    constructor(name, opts) {
        const aliases = [{ type: "my:module:ComponentFour" }, ...((opts && opts.aliases) || [])];
        super("my:differentmodule:ComponentFourWithADifferentTypeName", name, {}, { ...opts, aliases });
        // The child's URN changes with its parent's type: an implicit alias from the parent's.
        new Resource("otherchild", { parent: this });
    }
}

new ComponentFour("comp4");
