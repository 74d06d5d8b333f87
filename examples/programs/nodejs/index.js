// A Pulumi Node.js SDK program that Cairn deploys unchanged (run `npm install` first).
//
// It mixes a dynamic-provider resource (`Label`, run by the SDK's own dynamic-provider plugin)
// with resources of the published `@pulumi/random` SDK (from npm), which Cairn serves with its
// sandboxed `random` wasm provider, and shows a component, dependsOn, protect,
// aliases, config (plain and secret) and stack outputs. Config `version` (1 or 2) switches
// between two versions: `label` is replaced (its prefix changes), `message` is updated,
// `greeter` is renamed `welcome` with an alias, the protected `id` stays.
"use strict";
const pulumi = require("@pulumi/pulumi");
const random = require("@pulumi/random");

const labelProvider = {
    async create(inputs) {
        const full = `${inputs.prefix}:${inputs.text}`;
        return { id: full, outs: { ...inputs, full } };
    },
    async diff(id, olds, news) {
        const changed = ["prefix", "text"].filter((k) => olds[k] !== news[k]);
        return { changes: changed.length > 0, replaces: changed.filter((k) => k === "prefix") };
    },
    async update(id, olds, news) {
        return { outs: { ...news, full: `${news.prefix}:${news.text}` } };
    },
};

class Label extends pulumi.dynamic.Resource {
    constructor(name, prefix, text, opts) {
        super(labelProvider, name, { prefix, text, full: undefined }, opts);
    }
}

class Greeting extends pulumi.ComponentResource {
    constructor(name, text, opts) {
        super("demo:index:Greeting", name, {}, opts);
        this.label = new Label("greeting-label", "greeting", text, { parent: this });
        this.text = this.label.full;
        this.registerOutputs({ text: this.text });
    }
}

const config = new pulumi.Config();
const version = config.getNumber("version") || 1;
const greeting = config.get("greeting") || "hello";
const token = config.requireSecret("token");

const pet = new random.RandomPet("pet", { length: 2 });
const password = new random.RandomPassword("password", { length: 16 });
const uid = new random.RandomUuid("id", {}, { protect: true });

const label = new Label("label", `v${version}`, "stable text");
const message = new Label("message", "msg", `${greeting} from version ${version}`, { dependsOn: [pet] });
const greeter = new Greeting(version === 1 ? "greeter" : "welcome", greeting, {
    aliases: version === 2 ? [{ name: "greeter" }] : [],
});

exports.version = version;
exports.pet = pet.id;
exports.label = label.full;
exports.message = message.full;
exports.greeting = greeter.text;
exports.password = password.result;
exports.token = token;
exports.id = uid.result;
