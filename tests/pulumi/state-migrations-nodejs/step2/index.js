// The component of state-migrations-python, in Node.js: version 2.
const pulumi = require("@pulumi/pulumi");
const provider = {
    async create(inputs) { return { id: `vol-${inputs.name}`, outs: inputs }; },
    async diff(id, olds, news) {
        const keys = [...new Set([...Object.keys(olds), ...Object.keys(news)])].filter((k) => k !== "__provider" && JSON.stringify(olds[k]) !== JSON.stringify(news[k]));
        return { changes: keys.length > 0, replaces: keys };
    },
    async delete() {},
};
class Volume extends pulumi.dynamic.Resource {
    constructor(name, props, opts) { super(provider, name, { name, ...props }, opts, "store", "Volume"); }
}
const STEP = 2;
function renameSize(args) {
    pulumi.log.info(`migrating ${args.oldState.length} resources`);
    let changed = false;
    for (const r of args.oldState) for (const f of ["inputs", "outputs"]) { const p = r[f] || {}; if ("size" in p) { p.capacity = p.size; delete p.size; changed = true; } }
    return changed ? { newState: args.oldState } : undefined;
}
class Storage extends pulumi.ComponentResource {
    constructor(name, amount, opts) {
        super("acme:index:Storage", name, {}, STEP === 1 ? opts : { ...opts, stateMigrations: [renameSize] });
        this.volume = new Volume(`${name}-volume`, STEP === 1 ? { size: amount } : { capacity: amount }, { parent: this });
        this.registerOutputs({ volumeId: this.volume.id });
    }
}
const storage = new Storage("data", 10);
exports.volumeId = storage.volume.id;
