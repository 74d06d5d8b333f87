"""Scenarios 2 to 5: resources adopted into components (by an absolute URN alias, by a: before the edit."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class Component(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Component", name, None, opts)


class Component2(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Component2", name, None, opts)


class Component3(ComponentResource):
    """Its child takes the options given to the component (so the component's own parent)."""

    def __init__(self, name, opts=None):
        super().__init__("my:module:Component3", name, None, opts)
        Component2(f"{name}-child", opts)


class Component4(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Component4", name)


res2 = Resource("res2")
comp2 = Component("comp2")
Component2("unparented")
Component3("parentedbystack")
Component3("parentedbycomponent", ResourceOptions(parent=comp2))
Component4("duplicateAliases", ResourceOptions(parent=comp2))
