"""A component's child changes type, with a type alias (its parent unchanged): before the edit."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class FooResource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:FooResource", name, None, opts)


class Component(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentResource", name, None, opts)
        FooResource("childRetypeChild", ResourceOptions(parent=self))


Component("compRetypeChild")
