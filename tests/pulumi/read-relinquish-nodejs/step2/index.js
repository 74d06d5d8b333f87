// The same resource, now only read by its ID: the stack lets go of it without deleting it,
// even though it is protected.
const { Resource } = require("./relinquish");

new Resource("a", { state: 99 }, { id: "0" });
