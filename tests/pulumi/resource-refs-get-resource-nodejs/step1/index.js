// A component whose output is a resource reference to another component, read back by URN: the
// reference resolves (through a registered resource module) to the child, with its URN and its
// outputs.
const assert = require("assert");
const pulumi = require("@pulumi/pulumi");

class Child extends pulumi.ComponentResource {
    constructor(name, message, opts) {
        const args = { message };
        super("test:index:Child", name, args, opts);
        if (opts && opts.urn) {
            return;
        }
        this.registerOutputs(args);
    }
}

class Container extends pulumi.ComponentResource {
    constructor(name, child, opts) {
        const args = { child };
        super("test:index:Container", name, args, opts);
        if (opts && opts.urn) {
            return;
        }
        this.registerOutputs(args);
    }
}

// The container's outputs are registered asynchronously (pulumi#16896): wait (5 s at most) until
// a read of it sees its child.
async function waitForContainer(container) {
    const end = Date.now() + 5000;
    for (;;) {
        const found = await new Promise((resolve) => {
            container.urn.apply((urn) => {
                new Container("mycontainer", undefined, { urn }).child.apply((c) => resolve(c !== undefined));
            });
        });
        if (found) {
            return;
        }
        if (Date.now() > end) {
            throw new Error("resource outputs not registered correctly");
        }
    }
}

pulumi.runtime.registerResourceModule("test", "index", {
    version: "0.0.1",
    construct: (name, type, urn) => {
        if (type === "test:index:Child") {
            return new Child(name, undefined, { urn });
        }
        throw new Error(`unknown resource type: ${type}`);
    },
});

const child = new Child("mychild", "hello world!");
const container = new Container("mycontainer", child);

waitForContainer(container).then(() => {
    pulumi.all([child.urn, container.urn]).apply(([childUrn, urn]) => {
        const again = new Container("mycontainer", undefined, { urn });
        return pulumi
            .all([childUrn, again.child.apply((c) => c.urn), again.child.apply((c) => c.message)])
            .apply(([expectedUrn, actualUrn, actualMessage]) => {
                assert.strictEqual(actualUrn, expectedUrn);
                assert.strictEqual(actualMessage, "hello world!");
                return expectedUrn;
            });
    });
});
