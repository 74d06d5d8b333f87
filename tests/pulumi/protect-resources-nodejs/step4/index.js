const { Resource } = require("./resource");

// Back, and no longer protected.
new Resource("eternal", { state: 2 }, { protect: false });
