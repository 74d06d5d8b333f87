// The stack the other one references: a plain output and a secret one.
const pulumi = require("@pulumi/pulumi");

exports.plain = "plain";
exports.secret = pulumi.secret("hidden-value");
