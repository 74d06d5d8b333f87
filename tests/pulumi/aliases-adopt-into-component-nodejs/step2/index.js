// Scenarios 2 to 5: resources adopted into components, and duplicate aliases. Nothing changes.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

// Now holds the resource that was `res2` at the top level (an absolute URN alias).
class Component extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Component", name, {}, opts);
        new Resource(`${name}-child`, { parent: this, aliases: [pulumi.createUrn("res2", "my:module:Resource")] });
    }
}

class Component2 extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Component2", name, {}, opts);
    }
}

// Its child is now its own, aliased to the parent it had.
class Component3 extends pulumi.ComponentResource {
    constructor(name, opts) {
        opts = opts || {};
        super("my:module:Component3", name, {}, opts);
        new Component2(`${name}-child`, { aliases: [{ parent: opts.parent }], parent: this });
    }
}

// Two identical aliases.
class Component4 extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Component4", name, {}, { aliases: [{ parent: pulumi.rootStackResource }, { parent: pulumi.rootStackResource }], ...opts });
    }
}

const comp2 = new Component("comp2");
// No parent before (a parent alias of the stack), comp2 now.
new Component2("unparented", { aliases: [{ parent: pulumi.rootStackResource }], parent: comp2 });
new Component3("parentedbystack");
new Component3("parentedbycomponent", { parent: comp2 });
new Component4("duplicateAliases", { parent: comp2 });
