// The protected resource is gone from the program: deleting it must fail.
require("./resource");
