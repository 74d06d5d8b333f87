// Scenario 1: before the edit.
const pulumi = require("@pulumi/pulumi");

class Resource extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:module:Resource", name, {}, opts);
    }
}

new Resource("res1");
