"""A dynamic resource whose provider reads its value back from `world.txt` in the project
directory when the file exists (a change made outside the program, for refresh to find)."""

import os

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult


class Provider(ResourceProvider):
    def create(self, props):
        return CreateResult("thing-0", {"value": props["value"]})

    def diff(self, _id, olds, news):
        return DiffResult(changes=olds.get("value") != news.get("value"))

    def update(self, _id, _olds, news):
        return UpdateResult({"value": news["value"]})

    def read(self, id_, props):
        if os.path.exists("world.txt"):
            with open("world.txt", encoding="utf-8") as world:
                return ReadResult(id_, {**props, "value": world.read().strip()})
        return ReadResult(id_, props)


class Thing(Resource):
    value: pulumi.Output[str]

    def __init__(self, name, value, opts=None):
        super().__init__(Provider(), name, {"value": value}, opts)


thing = Thing("thing", "desired")
pulumi.export("value", thing.value)
