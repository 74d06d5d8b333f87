// Scenario 3: a component renamed with an alias; its children (one named after it) follow. Nothing changes.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

class ComponentThree extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentThree", name, {}, opts);
        new Resource(`${name}-child`, { parent: this });
        new Resource("otherchild", { parent: this });
    }
}

new ComponentThree("newcomp3", { aliases: [{ name: "comp3" }] });
