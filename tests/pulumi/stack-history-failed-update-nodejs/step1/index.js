// The first update fails after registering a component: the stack and the component are
// created all the same.
const pulumi = require("@pulumi/pulumi");

new pulumi.ComponentResource("my:component:Component", "a", {});

throw new Error("This is a test error");
