"""A component and a resource parented to it."""

import pulumi

from testresources import Echo


class MyComponent(pulumi.ComponentResource):
    def __init__(self, name):
        super().__init__("my:index:MyComponent", name)


component = MyComponent("component")
Echo("res1", echo="hello", opts=pulumi.ResourceOptions(parent=component))
