"""A dynamic resource class with its own module and name: its type is
pulumi-python:dynamic/custom-provider:CustomResource."""

import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class DummyProvider(ResourceProvider):
    def create(self, props):
        return CreateResult("resource-id", {})


class CustomResource(Resource, module="custom-provider", name="CustomResource"):
    def __init__(self, name, opts=None):
        super().__init__(DummyProvider(), name, {}, opts)


resource = CustomResource("resource-name")
pulumi.export("urn", resource.urn)
