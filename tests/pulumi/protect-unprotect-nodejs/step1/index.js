// Two resources, one protected by the program, one not.
const { Resource } = require("./resource");

new Resource("eternal", { state: 42 }, { protect: true });
new Resource("mortal", { state: 1 });
