// Eight resources that all depend, directly or not, on `a`: through inputs, `dependsOn` and
// parents.
const pulumi = require("@pulumi/pulumi");
const { Resource } = require("./resource");

const a = new Resource("a", {});
const b = new Resource("b", { input: a.urn });
const c = new Resource("c", {}, { dependsOn: a });
const d = new Resource("d", { input: b.urn });
const e = new Resource("e", {}, { dependsOn: b });
const f = new Resource("f", {}, { parent: a });
const g = new Resource("g", {}, { parent: b });
const h = new Resource("h",
    { input: pulumi.all([c.urn, d.urn]).apply(([curn]) => curn) },
    { dependsOn: [a, b], parent: f },
);
