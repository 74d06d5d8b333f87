// Structured config: maps, objects with lists and untyped objects, read as objects; the
// optional ones are reported as JSON (keys sorted), or "null" when unset.
const pulumi = require("@pulumi/pulumi");

const cfg = new pulumi.Config();
const aMap = cfg.requireObject("aMap");
exports.theMap = { a: aMap.a + 1, b: aMap.b + 1 };
exports.theObject = cfg.requireObject("anObject").prop[0];
const anyObject = cfg.requireObject("anyObject");
exports.theThing = Number(anyObject.a) + Number(anyObject.b);
exports.defaultUntypedObject = cfg.getObject("optionalUntypedObject") ?? { key: "value" };

function sorted(value) {
    if (Array.isArray(value)) {
        return value.map(sorted);
    }
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted(value[k])]));
    }
    return value;
}

for (const key of ["optionalList", "optionalMap", "optionalObject"]) {
    const value = cfg.getObject(key);
    exports[key] = value === undefined ? "null" : JSON.stringify(sorted(value));
}
