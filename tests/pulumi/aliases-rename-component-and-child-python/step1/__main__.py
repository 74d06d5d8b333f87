"""Scenario 5: a component and its child renamed at once, each with a name alias: before the edit."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class ComponentFive(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentFive", name, None, opts)
        Resource("otherchild", ResourceOptions(parent=self))


ComponentFive("comp5")
