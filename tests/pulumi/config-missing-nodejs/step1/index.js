// A required secret that is not set.
const pulumi = require("@pulumi/pulumi");

new pulumi.Config("config_missing_js").requireSecret("notFound");
