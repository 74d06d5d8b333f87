// Reads the outputs of stack `other` of this project through a StackReference.
const pulumi = require("@pulumi/pulumi");

const ref = new pulumi.StackReference("ref", { name: "organization/stackrefjs/other" });
exports.plain = ref.getOutput("plain");
exports.secret = ref.getOutput("secret");
exports.secret_unsecret = pulumi.unsecret(ref.getOutput("secret"));
