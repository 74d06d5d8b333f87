// Stack outputs and no resources; step2 changes, adds and removes some.
module.exports = { xyz: "ABC", foo: 42, gone: "bye", same: "s", empty: "" };
