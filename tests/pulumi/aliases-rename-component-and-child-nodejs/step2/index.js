// Scenario 5: a component and its child renamed at once, each with a name alias. Nothing changes.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

class ComponentFive extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentFive", name, {}, opts);
        new Resource("otherchildrenamed", { parent: this, aliases: [{ name: "otherchild", parent: this }] });
    }
}

new ComponentFive("newcomp5", { aliases: [{ name: "comp5" }] });
