// Primitive config values read with their types; optional ones fall back to defaults.
const pulumi = require("@pulumi/pulumi");

const cfg = new pulumi.Config();
exports.theNumber = cfg.requireNumber("aNumber") + 1.25;
exports.theInteger = cfg.requireNumber("anInt") + 4;
exports.theString = `${cfg.require("aString")} World`;
exports.theBool = !cfg.requireBoolean("aBool");

exports.defaultNumber = (cfg.getNumber("optionalNumber") ?? 41.5) + 1.2;
exports.defaultInteger = (cfg.getNumber("optionalInt") ?? 1) + 2;
exports.defaultString = cfg.get("optionalString") ?? "defaultStringValue";
exports.defaultBool = cfg.getBoolean("optionalBool") ?? false;
