// `res` is gone: its before-delete hook (recorded in the state by name, registered again here)
// runs as it is deleted.
const assert = require("assert");
const { log, ResourceHook } = require("@pulumi/pulumi");
const { Component } = require("./things");

new ResourceHook("beforeDelete", (args) => {
    log.info(`beforeDelete was called with length = ${args.oldInputs["length"]}`);
    assert.strictEqual(args.name, "res");
});

const hookComp = new ResourceHook("hook_fun_comp", (args) => {
    log.info(`funComp was called with child = ${args.newOutputs["childId"]}`);
});

new Component("comp", { length: 7 }, { hooks: { afterCreate: [hookComp] } });
