// Invokes of the test provider's returnArgs (which returns its arguments): plain, with a
// secret argument, with an argument from a resource, and with dependsOn.
const pulumi = require("@pulumi/pulumi");

class Echo extends pulumi.CustomResource {
    constructor(name, echo, opts) {
        super("testprovider:index:Echo", name, { echo }, opts);
    }
}

function returnArgs(value, opts) {
    return pulumi.runtime.invokeOutput("testprovider:index:returnArgs", { value }, opts)
        .apply((r) => r.value);
}

exports.hello = returnArgs("hello").apply((v) => `${v} world`);
exports.goodbye = returnArgs("goodbye").apply((v) => `${v} world`);
exports.secretArgument = returnArgs(pulumi.secret("goodbye")).apply((v) => `${v} world`);

const first = new Echo("first", "first hello");
const fromFirst = returnArgs(first.echo);
const second = new Echo("second", fromFirst);
exports.fromResource = fromFirst;

const afterFirst = returnArgs("hello", { dependsOn: [first] });
const third = new Echo("third", afterFirst);
exports.afterFirst = afterFirst;
