"""Scenario 3: a component renamed with an alias; its children (one named after it) follow.

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class ComponentThree(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentThree", name, None, opts)
        # The child named after the component takes the parent's alias with the old prefix.
        Resource(f"{name}-child", ResourceOptions(parent=self))
        Resource("otherchild", ResourceOptions(parent=self))


ComponentThree("newcomp3", ResourceOptions(aliases=[Alias(name="comp3")]))
