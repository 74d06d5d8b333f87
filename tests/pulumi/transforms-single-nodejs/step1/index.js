// A stack transform that changes nothing (it answers undefined) and one resource.
const pulumi = require("@pulumi/pulumi");
const { Random } = require("./testprovider");

pulumi.runtime.registerStackTransform(async ({ type, props, opts }) => {
    console.log(`stack transform saw ${type}`);
    return undefined;
});

new Random("res1", { length: pulumi.secret(5) });
