// A resource fails to create, but the outputs do not wait for it: both are updated.
const { FailsOnCreate } = require("./testresources");

new FailsOnCreate("test");
module.exports = { xyz: "DEF", foo: 1 };
