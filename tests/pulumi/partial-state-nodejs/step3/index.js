const { Resource } = require("./resource");

new Resource("not-doomed", 5);
