"""Scenario 4: a component's type changes, with an alias to the old type; its child follows.

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class ComponentFour(ComponentResource):
    def __init__(self, name, opts=None):
        opts = opts or ResourceOptions()
        aliases = [Alias(type_="my:module:ComponentFour"), *(opts.aliases or [])]
        super().__init__(
            "my:differentmodule:ComponentFourWithADifferentTypeName",
            name,
            None,
            ResourceOptions.merge(opts, ResourceOptions(aliases=aliases)),
        )
        # The child's URN changes with its parent's type: an implicit alias from the parent's.
        Resource("otherchild", ResourceOptions(parent=self))


ComponentFour("comp4")
