// Follows pulumi/pulumi tests/integration/policy/mandatory_policy_pack (in JavaScript), with a
// resource policy whose forbidden name comes from the configuration.
const { PolicyPack } = require("@pulumi/policy");

new PolicyPack("typescript", {
    policies: [{
        name: "mandatory-policy-pack",
        description: "Failing mandatory policy pack for testing",
        enforcementLevel: "mandatory",
        validateStack: (stack, reportViolation) => {
            reportViolation("mandatory-policy-pack");
        },
    }, {
        name: "forbidden-name",
        description: "Names the configuration forbids.",
        enforcementLevel: "mandatory",
        configSchema: { properties: { name: { type: "string", default: "none" } } },
        validateResource: (args, reportViolation) => {
            if (args.name === args.getConfig().name) {
                reportViolation("forbidden name " + args.name);
            }
        },
    }],
});
