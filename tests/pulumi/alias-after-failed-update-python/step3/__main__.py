"""res1, unparented, now has an alias to its old parent: the update succeeds."""

import pulumi

from testresources import Echo


class MyComponent(pulumi.ComponentResource):
    def __init__(self, name):
        super().__init__("my:index:MyComponent", name)


component = MyComponent("component")
Echo("res1", echo="hello", opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(parent=component)]))
