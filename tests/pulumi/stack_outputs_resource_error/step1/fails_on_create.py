"""A dynamic resource whose create always fails."""

import pulumi
from pulumi.dynamic import Resource, ResourceProvider


class _Provider(ResourceProvider):
    def create(self, props):
        raise Exception("FailsOnCreate always fails")


class FailsOnCreate(Resource):
    value: pulumi.Output[float]

    def __init__(self, name):
        super().__init__(_Provider(), name, {"value": None})
