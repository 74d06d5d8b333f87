// The test provider's functions, a method of its Echo resource (Call), and a Random read by ID
// (`get`), as a generated SDK would call them.
const pulumi = require("@pulumi/pulumi");

class Random extends pulumi.CustomResource {
    constructor(name, args, opts) {
        super("testprovider:index:Random", name, { ...args, result: undefined }, opts);
    }

    static get(name, id, opts) {
        return new Random(name, {}, { ...opts, id });
    }
}

class Echo extends pulumi.CustomResource {
    constructor(name, args, opts) {
        super("testprovider:index:Echo", name, { echo: args?.echo }, opts);
    }

    doEchoMethod(args) {
        return pulumi.runtime.call("testprovider:index:Echo/doEchoMethod",
            { __self__: this, echo: args.echo }, this);
    }
}

exports.res1 = new Random("res1", { length: 5 }).length;
exports.res2 = pulumi.runtime.invokeOutput("testprovider:index:doEcho", { echo: "hello" })
    .apply((r) => r.echo);
const res6 = new Echo("echo", {});
exports.res7 = res6.doEchoMethod({ echo: "hello" }).apply((r) => r.echo);
// The test provider's read of a Random makes its state from the ID: it need not exist.
exports.res8 = Random.get("res8", "banana").result;
