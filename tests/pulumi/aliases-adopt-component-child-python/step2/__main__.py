"""A top-level resource moved into a component, with a parent alias of the stack.

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class FooResource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:FooResource", name, None, opts)


class Component(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentResource", name, None, opts)
        FooResource(
            "childAdoptChild",
            ResourceOptions(parent=self, aliases=[Alias(parent=pulumi.ROOT_STACK_RESOURCE)]),
        )


Component("compAdoptChild")
