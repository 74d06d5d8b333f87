// Scenarios 2 to 5: before the edit.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

class Component extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Component", name, {}, opts);
    }
}

class Component2 extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Component2", name, {}, opts);
    }
}

// Its child takes the options given to the component (so the component's own parent).
class Component3 extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Component3", name, {}, opts);
        new Component2(`${name}-child`, opts);
    }
}

class Component4 extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Component4", name, {}, undefined);
    }
}

new Resource("res2");
const comp2 = new Component("comp2");
new Component2("unparented");
new Component3("parentedbystack");
new Component3("parentedbycomponent", { parent: comp2 });
new Component4("duplicateAliases", { parent: comp2 });
