// ignoreChanges on a nested list element's key and on map keys (plain, with a dot, with an
// escaped quote); a resource without it.
const { MapContainer, Receiver, Target } = require("./conformance");

const ignored = ['tags["env"]', 'tags["with.dot"]', 'tags["with escaped \\""]'];
new Receiver("receiverIgnore", { details: [{ key: "a", value: "b" }] }, { ignoreChanges: ["details[0].key"] });
new MapContainer("mapIgnore", { tags: { env: "prod" } }, { ignoreChanges: ignored });
new Target("noIgnore", { name: "nothing" });
