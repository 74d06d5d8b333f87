// Changes to the ignored paths, and to the resource without ignoreChanges.
const { MapContainer, Receiver, Target } = require("./conformance");

const ignored = ['tags["env"]', 'tags["with.dot"]', 'tags["with escaped \\""]'];
new Receiver("receiverIgnore", { details: [{ key: "changed", value: "b" }] }, { ignoreChanges: ["details[0].key"] });
new MapContainer("mapIgnore", { tags: { env: "staging", "with.dot": "new" } }, { ignoreChanges: ignored });
new Target("noIgnore", { name: "something" });
