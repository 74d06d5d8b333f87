// Two stack outputs and no resources.
module.exports = { xyz: "ABC", foo: 42 };
