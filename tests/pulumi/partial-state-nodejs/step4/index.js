const { Resource } = require("./resource");

// The update fails with a partial state: the new outputs are recorded, with the reasons.
new Resource("not-doomed", 4);
