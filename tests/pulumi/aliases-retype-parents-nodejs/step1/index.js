// Scenario 6: before the edit.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

class ComponentSix extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentSix-v0", name, {}, opts);
        new Resource("otherchild", { parent: this });
    }
}

class ComponentSixParent extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:ComponentSixParent-v0", name, {}, opts);
        new ComponentSix("child", { parent: this });
    }
}

new ComponentSixParent("comp6");
