// Prints a required configuration value, given on the command line with `--config`.
const pulumi = require("@pulumi/pulumi");

const config = new pulumi.Config();
console.log(config.require("example"));
