"""Scenario 6: nested parents both change type (aliases to 100 and 10 old types).

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class ComponentSix(ComponentResource):
    def __init__(self, name, opts=None):
        aliases = [Alias(type_=f"my:module:ComponentSix-v{v}") for v in range(100)]
        super().__init__(
            "my:module:ComponentSix-v100", name, None, ResourceOptions.merge(opts, ResourceOptions(aliases=aliases))
        )
        Resource("otherchild", ResourceOptions(parent=self))


class ComponentSixParent(ComponentResource):
    def __init__(self, name, opts=None):
        aliases = [Alias(type_=f"my:module:ComponentSixParent-v{v}") for v in range(10)]
        super().__init__("my:module:ComponentSixParent-v10", name, None, ResourceOptions(aliases=aliases))
        ComponentSix("child", ResourceOptions(parent=self))


ComponentSixParent("comp6")
