// Every hook kind around a dynamic resource's create, update (value 1 -> 2) and delete (step 3
// drops it), and a component's (its after hooks run when it registers its outputs); each hook
// logs what it was told. `dryBeforeCreate` also runs in previews.
const pulumi = require("@pulumi/pulumi");
const STEP = 3;

const provider = {
    async create(inputs) {
        return { id: "id-" + inputs.label, outs: { label: inputs.label, value: inputs.value, out: inputs.value * 10 } };
    },
    async diff(id, olds, news) {
        return { changes: olds.value !== news.value };
    },
    async update(id, olds, news) {
        return { outs: { label: news.label, value: news.value, out: news.value * 10 } };
    },
    async delete() {},
};

class Thing extends pulumi.dynamic.Resource {
    constructor(name, value, opts) {
        super(provider, name, { label: name, value, out: undefined }, opts);
    }
}

const pick = (m, k) => (m === undefined ? undefined : m[k]);
function report(kind) {
    return async (args) => {
        pulumi.log.info(`${kind}: name=${args.name} type=${args.type} id=${JSON.stringify(args.id)} ` +
            `new_inputs.value=${pick(args.newInputs, "value")} old_inputs.value=${pick(args.oldInputs, "value")} ` +
            `new_outputs.out=${pick(args.newOutputs, "out")} old_outputs.out=${pick(args.oldOutputs, "out")} ` +
            `dry=${pulumi.runtime.isDryRun()}`);
    };
}

const kinds = ["beforeCreate", "afterCreate", "beforeUpdate", "afterUpdate", "beforeDelete", "afterDelete"];
const hooks = {};
for (const k of kinds) hooks[k] = new pulumi.ResourceHook(k, report(k));
const dry = new pulumi.ResourceHook("dryBeforeCreate", report("dryBeforeCreate"), { onDryRun: true });
const binding = {};
for (const k of kinds) binding[k] = [hooks[k]];

if (STEP < 3) {
    new Thing("res", STEP, { hooks: binding });
}

class Comp extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:index:Comp", name, { size: STEP }, opts);
        this.registerOutputs({ size: STEP });
    }
}
new Comp("comp", { hooks: { beforeCreate: [hooks.beforeCreate, dry], afterCreate: [hooks.afterCreate],
    beforeUpdate: [hooks.beforeUpdate], afterUpdate: [hooks.afterUpdate] } });
