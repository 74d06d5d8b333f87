"""A resource read back by its URN (`urn` option): its outputs, a secret one still secret."""

import pulumi
from pulumi import Output, ResourceOptions
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class MyProvider(ResourceProvider):
    def create(self, props):
        return CreateResult("0", props)


class MyResource(Resource):
    foo: Output
    bar: Output

    def __init__(self, name, props, opts=None):
        super().__init__(MyProvider(), name, props, opts)


class GetResource(pulumi.Resource):
    """Any resource, looked up by URN."""

    foo: Output
    bar: Output

    def __init__(self, urn):
        super().__init__("unused", "unused:unused:unused", True, {"foo": None, "bar": None},
                         ResourceOptions(urn=urn), False, False)


a = MyResource("a", {"foo": "foo", "bar": Output.secret("my-$ecret")})


async def check_get():
    got = GetResource(await a.urn.future())
    assert await got.foo.future() == "foo"
    assert await got.bar.is_secret()


pulumi.export("o", check_get())
