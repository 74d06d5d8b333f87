"""A dynamic provider whose resource gets a random value when created."""

import binascii
import os

import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class RandomProvider(ResourceProvider):
    def create(self, props):
        val = binascii.b2a_hex(os.urandom(15)).decode("ascii")
        return CreateResult(val, {"val": val})


class Random(Resource):
    val: pulumi.Output[str]

    def __init__(self, name, opts=None):
        super().__init__(RandomProvider(), name, {"val": ""}, opts)


r = Random("foo")
pulumi.export("random_id", r.id)
pulumi.export("random_val", r.val)
