// Dynamic stand-ins for the language conformance tests' providers: the same properties and
// behaviour, as Node.js dynamic resources (types pulumi-nodejs:dynamic/<package>:<Resource>).
//
// * `simple:Resource` (`value`): an update in place when `value` changes.
// * `replaceonchanges:ResourceA` (`value`, `replaceProp`): `replaceProp` is replace-on-change
//   (as its schema says); `value` updates in place. `ResourceB` (`value`) updates in place.
// * `nestedobject:Receiver` (`details`), `MapContainer` (`tags`), `Target` (`name`).
const pulumi = require("@pulumi/pulumi");

// Outputs are the inputs; a change of a property in `replaces` replaces the resource. The
// diff leaves `changes` open: the engine compares the inputs itself.
function provider(replaces) {
    return {
        async create(inputs) {
            return { id: `${Date.now()}-${Math.random().toString(16).slice(2)}`, outs: inputs };
        },
        async diff(id, olds, news) {
            return { replaces: replaces.filter((k) => olds[k] !== news[k]) };
        },
        async update(id, olds, news) {
            return { outs: news };
        },
    };
}

function kind(module, type, replaces) {
    return class extends pulumi.dynamic.Resource {
        constructor(name, props, opts) {
            super(provider(replaces), name, props, opts, module, type);
        }
    };
}

module.exports = {
    SimpleResource: kind("simple", "Resource", []),
    ResourceA: kind("replaceonchanges", "ResourceA", ["replaceProp"]),
    ResourceB: kind("replaceonchanges", "ResourceB", []),
    Receiver: kind("nestedobject", "Receiver", []),
    MapContainer: kind("nestedobject", "MapContainer", []),
    Target: kind("nestedobject", "Target", []),
};
