const { Resource } = require("./resource");

// An update of the protected resource is allowed.
new Resource("eternal", { state: 2 }, { protect: true });
