// The component of state-migrations-rename-python, in Node.js: version 2 renames its disk
// `<name>-disk` through a state migration: no create, no delete.
const pulumi = require("@pulumi/pulumi");
const provider = {
    async create(inputs) { return { id: `disk-${inputs.label}`, outs: inputs }; },
    async diff(id, olds, news) {
        const keys = [...new Set([...Object.keys(olds), ...Object.keys(news)])].filter((k) => k !== "__provider" && JSON.stringify(olds[k]) !== JSON.stringify(news[k]));
        return { changes: keys.length > 0, replaces: keys };
    },
    async delete() {},
};
class Disk extends pulumi.dynamic.Resource {
    constructor(name, props, opts) { super(provider, name, props, opts, "store", "Disk"); }
}
const STEP = 2;
// Version 2 renames the disk `<name>-disk` and names the new URN the old one's successor.
function renameDisk(args) {
    pulumi.log.info(`migrating ${args.oldState.length} resources`);
    const successors = {};
    for (const r of args.oldState) {
        if (r.urn.endsWith("-volume")) {
            const renamed = r.urn.slice(0, -"-volume".length) + "-disk";
            successors[r.urn] = renamed;
            r.urn = renamed;
        }
    }
    return Object.keys(successors).length > 0 ? { newState: args.oldState, successors } : undefined;
}
class Storage extends pulumi.ComponentResource {
    constructor(name, amount, opts) {
        super("acme:index:Storage", name, {}, STEP === 1 ? opts : { ...opts, stateMigrations: [renameDisk] });
        this.disk = new Disk(`${name}-${STEP === 1 ? "volume" : "disk"}`, { label: name, size: amount }, { parent: this });
        this.registerOutputs({ diskId: this.disk.id });
    }
}
const storage = new Storage("data", 10);
new Disk("backup", { label: "backup", source: storage.disk.id }, { dependsOn: [storage.disk] });
exports.diskId = storage.disk.id;
