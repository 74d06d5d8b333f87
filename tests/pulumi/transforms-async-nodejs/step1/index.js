// A resource declared after the program's main code has finished (from a timer), whose own
// transform still runs: the program serves its callbacks until the engine is done.
const pulumi = require("@pulumi/pulumi");
const { Random } = require("./testprovider");

setTimeout(() => {
    new Random("res", { length: 10 }, {
        transforms: [
            async ({ props, opts }) => ({ props: { ...props, length: 12 }, opts }),
        ],
    });
});
