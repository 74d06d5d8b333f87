"""A dynamic provider whose `read` returns inputs: after a refresh, nothing shows as changed."""

import pulumi
from pulumi.dynamic import CreateResult, ReadResult, Resource, ResourceProvider


class SimpleProvider(ResourceProvider):
    def create(self, props):
        return CreateResult(id_="test-resource-id", outs={"value": props["value"]})

    def read(self, id_, props):
        return ReadResult(id_=id_, outs=props, inputs={"value": props["value"]})


class SimpleResource(Resource):
    def __init__(self, name, value, opts=None):
        super().__init__(SimpleProvider(), name, {"value": value}, opts)


res = SimpleResource("test", value="hello")
pulumi.export("resource_id", res.id)
