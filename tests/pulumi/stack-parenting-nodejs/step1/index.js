// Components (of the one-word type `component`) and resources in a tree:
//
//     a      f
//    / \      \
//   b   c      g
//      / \
//     d   e
//
// a and f are children of the stack.
const pulumi = require("@pulumi/pulumi");

let nextId = 0;
const provider = {
    async create(inputs) {
        return { id: String(nextId++), outs: undefined };
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
