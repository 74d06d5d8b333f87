"""Scenario 3: a component renamed with an alias; its children (one named after it) follow: before the edit."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class ComponentThree(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentThree", name, None, opts)
        Resource(f"{name}-child", ResourceOptions(parent=self))
        Resource("otherchild", ResourceOptions(parent=self))


ComponentThree("comp3")
