// A secret config number, exported as is and computed on: both outputs are secret.
const pulumi = require("@pulumi/pulumi");

const aNumber = new pulumi.Config().requireSecretNumber("aNumber");
exports.roundtrip = aNumber;
exports.theSecretNumber = aNumber.apply((n) => n + 1.25);
