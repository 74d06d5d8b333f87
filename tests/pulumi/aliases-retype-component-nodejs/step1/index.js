// Scenario 4: before the edit.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

class ComponentFour extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentFour", name, {}, opts);
        new Resource("otherchild", { parent: this });
    }
}

new ComponentFour("comp4");
