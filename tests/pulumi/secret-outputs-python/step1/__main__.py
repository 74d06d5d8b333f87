"""Resources exported whole as stack outputs: a property made secret by `Output.secret` or by
`additional_secret_outputs` stays secret in the stack's outputs; a plain one does not."""

import pulumi
from pulumi import Output, ResourceOptions
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class Provider(ResourceProvider):
    def create(self, props):
        return CreateResult("1", {"prefix": props["prefix"]})


class R(Resource):
    prefix: pulumi.Output[str]

    def __init__(self, name, prefix, opts=None):
        super().__init__(Provider(), name, {"prefix": prefix}, opts)


text = "it's a secret to everybody"
without_secret = R("without_secret", Output.from_input(text))
with_secret = R("with_secret", Output.secret(text))
with_secret_additional = R(
    "with_secret_additional", Output.from_input(text), ResourceOptions(additional_secret_outputs=["prefix"])
)

pulumi.export("withoutSecret", without_secret)
pulumi.export("withSecret", with_secret)
pulumi.export("withSecretAdditional", with_secret_additional)
