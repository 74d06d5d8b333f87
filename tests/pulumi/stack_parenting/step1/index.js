// Components with a one-word type ("component", which Pulumi accepts for components) nest
// resources and each other:
//
//     a      f
//    / \      \
//   b   c      g
//      / \
//     d   e
const pulumi = require("@pulumi/pulumi");

let next = 0;
const provider = {
    async create() {
        return { id: String(next++), outs: {} };
    },
};

class Component extends pulumi.ComponentResource {
    constructor(name, parent) {
        super("component", name, {}, { parent });
    }
}

class Resource extends pulumi.dynamic.Resource {
    constructor(name, parent) {
        super(provider, name, {}, { parent });
    }
}

const a = new Component("a");
new Resource("b", a);
const c = new Component("c", a);
new Resource("d", c);
new Resource("e", c);
const f = new Component("f");
new Resource("g", f);
