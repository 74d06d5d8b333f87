// Scenario 1: a resource renamed, with an alias to its old name. Nothing changes.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

// Formerly `res1`.
new Resource("newres1", { aliases: [{ name: "res1" }] });
