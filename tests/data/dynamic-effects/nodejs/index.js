// A dynamic provider with real side effects (see ../README.md).
"use strict";
const pulumi = require("@pulumi/pulumi");

const effectProvider = {
    async create(inputs) {
        const fs = require("fs");
        const path = require("path");
        const file = path.join(inputs.dir, inputs.name);
        fs.appendFileSync(path.join(inputs.dir, "calls.log"), `create ${inputs.name}\n`);
        if (inputs.gate) {
            fs.writeFileSync(`${file}.started`, "");
            while (!fs.existsSync(inputs.gate)) {
                await new Promise((resolve) => setTimeout(resolve, 20));
            }
        }
        fs.writeFileSync(file, inputs.content);
        return { id: inputs.name, outs: inputs };
    },
    async diff(id, olds, news) {
        return { changes: olds.content !== news.content };
    },
    async update(id, olds, news) {
        const fs = require("fs");
        const path = require("path");
        fs.appendFileSync(path.join(news.dir, "calls.log"), `update ${news.name}\n`);
        fs.writeFileSync(path.join(news.dir, news.name), news.content);
        return { outs: news };
    },
    async delete(id, props) {
        const fs = require("fs");
        const path = require("path");
        fs.appendFileSync(path.join(props.dir, "calls.log"), `delete ${props.name}\n`);
        fs.unlinkSync(path.join(props.dir, props.name));
    },
};

class Effect extends pulumi.dynamic.Resource {
    constructor(name, props, opts) {
        super(effectProvider, name, props, opts);
    }
}

const config = new pulumi.Config();
new Effect("a", {
    dir: config.require("dir"),
    name: "a",
    content: config.require("content"),
    gate: config.get("gate"),
});
const big = config.get("big");
if (big !== undefined) {
    exports.bigLength = big.length;
}
