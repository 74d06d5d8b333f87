const { Resource } = require("./resource");

new Resource("doomed", 4);
