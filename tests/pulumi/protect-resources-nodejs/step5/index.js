// Gone again: now it is deleted.
require("./resource");
