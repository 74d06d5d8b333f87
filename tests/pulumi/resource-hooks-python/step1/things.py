"""A dynamic stand-in for the test provider's Random (`length` in, `result` out) and a local
component with one such child, whose outputs carry the child's ID (`childId`)."""

import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class _RandomProvider(ResourceProvider):
    def create(self, props):
        return CreateResult(f"random-{int(props['length'])}", {"length": props["length"], "result": "x" * int(props["length"])})

    def delete(self, _id, _props):
        pass


class Random(Resource, module="testprovider", name="Random"):
    def __init__(self, name, length, opts=None):
        super().__init__(_RandomProvider(), name, {"length": length, "result": None}, opts)


class Component(pulumi.ComponentResource):
    def __init__(self, name, length, opts=None):
        super().__init__("testprovider:index:Component", name, {"length": length}, opts)
        child = Random(f"{name}-child", length, pulumi.ResourceOptions(parent=self))
        self.register_outputs({"childId": child.id})
