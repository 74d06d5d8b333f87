const { Resource } = require("./resource");

// A resource, protected.
new Resource("eternal", { state: 1 }, { protect: true });
