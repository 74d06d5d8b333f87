"""Scenario 6: nested parents both change type (aliases to 100 and 10 old types): before the edit."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class ComponentSix(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentSix-v0", name, None, opts)
        Resource("otherchild", ResourceOptions(parent=self))


class ComponentSixParent(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:ComponentSixParent-v0", name, None, opts)
        ComponentSix("child", ResourceOptions(parent=self))


ComponentSixParent("comp6")
