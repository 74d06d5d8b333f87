// A dynamic resource whose inputs are assets and archives, echoed as its outputs.
const pulumi = require("@pulumi/pulumi");

const provider = {
    async create(inputs) {
        return { id: "1", outs: inputs };
    },
};

class Holder extends pulumi.dynamic.Resource {
    constructor(name, props) {
        super(provider, name, props);
    }
}

new Holder("holder", {
    text: new pulumi.asset.StringAsset("some text"),
    file: new pulumi.asset.FileAsset("file.txt"),
    dir: new pulumi.asset.FileArchive("dir"),
    assets: new pulumi.asset.AssetArchive({
        "a.txt": new pulumi.asset.StringAsset("a"),
        sub: new pulumi.asset.FileArchive("dir"),
    }),
});
