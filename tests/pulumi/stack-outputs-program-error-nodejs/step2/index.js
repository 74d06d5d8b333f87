// The program fails after setting xyz and before foo: Node.js registers no outputs at all,
// so both keep their old values.
const pulumi = require("@pulumi/pulumi");

module.exports.xyz = "DEF";
throw new Error("program error");

module.exports.foo = 1;
