"""400 dynamic resources in one program.

The Python SDK wraps pickle's dictionary writer once more for every dynamic resource it
serializes and never unwraps it, so without a higher recursion limit the program fails with
RecursionError at about the 314th resource, under Pulumi's engine as under Cairn's."""

import sys

sys.setrecursionlimit(20000)

import pulumi  # noqa: E402
from pulumi.dynamic import CreateResult, Resource, ResourceProvider  # noqa: E402


class Named(ResourceProvider):
    def create(self, props):
        return CreateResult(props["name"], props)


class Item(Resource):
    def __init__(self, name):
        super().__init__(Named(), name, {"name": name})


items = [Item(f"item-{i}") for i in range(400)]
pulumi.export("count", len(items))
