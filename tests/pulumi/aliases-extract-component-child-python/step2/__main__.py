"""A component's child moved to the top level, with a parent alias of the component.

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class FooResource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:FooResource", name, None, opts)


class Component(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentResource", name, None, opts)


comp = Component("compExtractChild")
FooResource("childExtractChild", ResourceOptions(aliases=[Alias(parent=comp)]))
