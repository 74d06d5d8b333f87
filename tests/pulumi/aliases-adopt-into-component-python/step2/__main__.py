"""Scenarios 2 to 5: resources adopted into components (by an absolute URN alias, by a
parent alias of the stack, by the parent the options gave), and duplicate aliases.

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


class Component(ComponentResource):
    """Now holds the resource that was `res2` at the top level (an absolute URN alias)."""

    def __init__(self, name, opts=None):
        super().__init__("my:module:Component", name, None, opts)
        Resource(
            f"{name}-child",
            ResourceOptions(parent=self, aliases=[pulumi.create_urn("res2", "my:module:Resource")]),
        )


class Component2(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Component2", name, None, opts)


class Component3(ComponentResource):
    """Its child is now its own, aliased to the parent it had."""

    def __init__(self, name, opts=None):
        opts = opts or ResourceOptions()
        super().__init__("my:module:Component3", name, None, opts)
        Component2(f"{name}-child", ResourceOptions(parent=self, aliases=[Alias(parent=opts.parent)]))


class Component4(ComponentResource):
    """Two identical aliases."""

    def __init__(self, name, opts=None):
        opts = opts or ResourceOptions()
        aliases = opts.aliases or [Alias(parent=pulumi.ROOT_STACK_RESOURCE), Alias(parent=pulumi.ROOT_STACK_RESOURCE)]
        super().__init__("my:module:Component4", name, None, ResourceOptions.merge(opts, ResourceOptions(aliases=aliases)))


comp2 = Component("comp2")
# No parent before (a parent alias of the stack), comp2 now.
Component2("unparented", ResourceOptions(aliases=[Alias(parent=pulumi.ROOT_STACK_RESOURCE)], parent=comp2))
Component3("parentedbystack")
Component3("parentedbycomponent", ResourceOptions(parent=comp2))
Component4("duplicateAliases", ResourceOptions(parent=comp2))
