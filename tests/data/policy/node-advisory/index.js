// Follows pulumi/pulumi tests/integration/policy/advisory_policy_pack (in JavaScript).
const { PolicyPack } = require("@pulumi/policy");

new PolicyPack("typescript", {
    policies: [{
        name: "advisory-policy-pack",
        description: "Failing advisory policy pack for testing",
        enforcementLevel: "advisory",
        validateStack: (stack, reportViolation) => {
            reportViolation("foobar");
        },
    }],
});
