// The program throws after registering res1: res2 is not deleted (nothing is deleted after a
// program error).
const { Random } = require("./random");

new Random("res1", { length: 10 });

throw new Error("This is a test error");
