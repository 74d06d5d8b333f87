// A resource that fails to delete, deleted with another: destroying the stack skips it.
const { FailsOnDelete, Random } = require("./testresources");

const rand = new Random("random", { length: 10 });
new FailsOnDelete("failsondelete", { deletedWith: rand });
