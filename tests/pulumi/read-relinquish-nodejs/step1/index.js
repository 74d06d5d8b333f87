// A protected resource the stack creates and manages.
const { Resource } = require("./relinquish");

new Resource("a", { state: 42 }, { protect: true });
