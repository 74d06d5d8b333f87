"""A component's child changes type, with a type alias (its parent unchanged).

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class FooResource(ComponentResource):
    def __init__(self, name, opts=None):
        aliased = ResourceOptions(aliases=[Alias(type_="my:module:FooResource")])
        super().__init__("my:module:FooResourceNew", name, None, ResourceOptions.merge(opts, aliased))


class Component(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentResource", name, None, opts)
        FooResource("childRetypeChild", ResourceOptions(parent=self))


Component("compRetypeChild")
