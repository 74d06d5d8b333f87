// Three remote components (built by the testcomponent plugin, written with the Node.js SDK);
// b's input is a's output, c's is a's child's ID: the dependencies reach the components'
// children.
const pulumi = require("@pulumi/pulumi");

class Component extends pulumi.ComponentResource {
    constructor(name, args, opts) {
        super("testcomponent:index:Component", name,
            { echo: args.echo, childId: undefined, secret: undefined }, opts, true);
    }
}

const a = new Component("a", { echo: 42 });
const b = new Component("b", { echo: a.echo });
const c = new Component("c", { echo: a.childId });
