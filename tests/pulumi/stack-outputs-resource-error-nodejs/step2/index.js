// xyz changes, and foo is exported as an output of a resource that fails to create: the update
// fails before the stack's outputs are registered, so both keep their old values.
const { FailsOnCreate } = require("./testresources");

module.exports = { xyz: "DEF", foo: new FailsOnCreate("test").value };
