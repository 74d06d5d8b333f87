"""Scenario 4: a component's type changes, with an alias to the old type; its child follows: before the edit."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class ComponentFour(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentFour", name, None, opts)
        Resource("otherchild", ResourceOptions(parent=self))


ComponentFour("comp4")
