// A resource with before-create and before-delete hooks, and a component whose after-create
// hook sees its registered outputs.
const assert = require("assert");
const { log, ResourceHook } = require("@pulumi/pulumi");
const { Random, Component } = require("./things");

const beforeCreateHook = new ResourceHook("beforeCreate", (args) => {
    log.info(`beforeCreate was called with length = ${args.newInputs["length"]}`);
    assert.strictEqual(args.name, "res");
    assert.strictEqual(args.type, "pulumi-nodejs:dynamic/testprovider:Random");
});

const beforeDeleteHook = new ResourceHook("beforeDelete", (args) => {
    log.info(`beforeDelete was called with length = ${args.oldInputs["length"]}`);
    assert.strictEqual(args.name, "res");
});

new Random("res", { length: 10 }, { hooks: { beforeCreate: [beforeCreateHook], beforeDelete: [beforeDeleteHook] } });

const hookComp = new ResourceHook("hook_fun_comp", (args) => {
    const childId = args.newOutputs["childId"];
    log.info(`funComp was called with child = ${childId}`);
    if (!childId) {
        throw new Error(`expected non empty childId, got '${childId}'`);
    }
    assert.strictEqual(args.name, "comp");
    assert.strictEqual(args.type, "testprovider:index:Component");
});

new Component("comp", { length: 7 }, { hooks: { afterCreate: [hookComp] } });
