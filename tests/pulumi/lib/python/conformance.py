"""Dynamic stand-ins for the language conformance tests' providers: the same properties and
behaviour, as Python dynamic resources (types pulumi-python:dynamic/<package>:<Resource>).

* `simple:Resource` (`value`): an update in place when `value` changes.
* `replaceonchanges:ResourceA` (`value`, `replaceProp`): `replaceProp` is replace-on-change (as
  its schema says); `value` updates in place. `ResourceB` (`value`) updates in place.
"""

import uuid

from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult


class _Provider(ResourceProvider):
    """Outputs are the inputs; a change of a property in `replaces` replaces the resource."""

    replaces: list = []

    def create(self, props):
        return CreateResult(uuid.uuid4().hex, dict(props))

    def diff(self, _id, olds, news):
        # "Unknown" changes: the engine compares the inputs itself (and so knows which keys
        # changed, as a provider's detailed diff would tell it).
        return DiffResult(changes=None, replaces=[k for k in self.replaces if olds.get(k) != news.get(k)])

    def update(self, _id, _olds, news):
        return UpdateResult(outs=dict(news))

    def read(self, id_, props):
        return ReadResult(id_=id_, outs=dict(props))


class _ReplaceProvider(_Provider):
    replaces = ["replaceProp"]


class SimpleResource(Resource, module="simple", name="Resource"):
    def __init__(self, name, value, opts=None):
        super().__init__(_Provider(), name, {"value": value}, opts)


class ResourceA(Resource, module="replaceonchanges", name="ResourceA"):
    def __init__(self, name, value, replace_prop, opts=None):
        super().__init__(_ReplaceProvider(), name, {"value": value, "replaceProp": replace_prop}, opts)


class ResourceB(Resource, module="replaceonchanges", name="ResourceB"):
    def __init__(self, name, value, opts=None):
        super().__init__(_Provider(), name, {"value": value}, opts)


class Receiver(Resource, module="nestedobject", name="Receiver"):
    """`nestedobject:Receiver`: `details`, a list of `{key, value}`."""

    def __init__(self, name, details, opts=None):
        super().__init__(_Provider(), name, {"details": details}, opts)


class MapContainer(Resource, module="nestedobject", name="MapContainer"):
    """`nestedobject:MapContainer`: `tags`, a map of strings."""

    def __init__(self, name, tags, opts=None):
        super().__init__(_Provider(), name, {"tags": tags}, opts)


class Target(Resource, module="nestedobject", name="Target"):
    """`nestedobject:Target`: `name`."""

    def __init__(self, name, target_name, opts=None):
        super().__init__(_Provider(), name, {"name": target_name}, opts)
