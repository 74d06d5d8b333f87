"""Scenario 5: a component and its child renamed at once, each with a name alias.

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class ComponentFive(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentFive", name, None, opts)
        Resource("otherchildrenamed", ResourceOptions(parent=self, aliases=[Alias(name="otherchild", parent=self)]))


ComponentFive("newcomp5", ResourceOptions(aliases=[Alias(name="comp5")]))
