// Scenario 5: before the edit.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

class ComponentFive extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentFive", name, {}, opts);
        new Resource("otherchild", { parent: this });
    }
}

new ComponentFive("comp5");
