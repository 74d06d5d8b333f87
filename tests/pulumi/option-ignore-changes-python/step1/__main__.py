"""`ignore_changes` with nested paths: a list element's key, and map keys (one with a dot, one
with an escaped quote)."""

from pulumi import ResourceOptions

from conformance import MapContainer, Receiver, Target

Receiver("receiverIgnore", [{"key": "a", "value": "b"}], ResourceOptions(ignore_changes=["details[0].key"]))
MapContainer(
    "mapIgnore",
    {"env": "prod"},
    ResourceOptions(ignore_changes=['tags["env"]', 'tags["with.dot"]', 'tags["with escaped \\""]']),
)
Target("noIgnore", "nothing")
