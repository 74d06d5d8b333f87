"""The ignored properties change (nothing happens); the unignored name changes (an update)."""

from pulumi import ResourceOptions

from conformance import MapContainer, Receiver, Target

Receiver("receiverIgnore", [{"key": "changed", "value": "b"}], ResourceOptions(ignore_changes=["details[0].key"]))
MapContainer(
    "mapIgnore",
    {"env": "staging", "with.dot": "new"},
    ResourceOptions(ignore_changes=['tags["env"]', 'tags["with.dot"]', 'tags["with escaped \\""]']),
)
Target("noIgnore", "something")
