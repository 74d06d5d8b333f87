"""A dynamic provider that captures a secret config value: the serialized provider is secret."""

import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider

password = pulumi.Config().require_secret("password")


class SimpleProvider(ResourceProvider):
    def create(self, props):
        # The secret was captured when the provider was serialized, as a credential would be.
        return CreateResult("0", {"authenticated": "200" if password.get() == "s3cret" else "401"})


class SimpleResource(Resource):
    authenticated: pulumi.Output[str]

    def __init__(self, name):
        super().__init__(SimpleProvider(), name, {"authenticated": None})


r = SimpleResource("foo")
pulumi.export("out", r.authenticated)
