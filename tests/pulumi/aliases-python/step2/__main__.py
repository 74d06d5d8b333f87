"""The components of step 1 renamed, retyped, re-parented and nested, each with aliases that
name where it was: nothing changes."""

from pulumi import ROOT_STACK_RESOURCE, Alias, ComponentResource, ResourceOptions, create_urn


def component(type_, name, opts=None):
    return ComponentResource(type_, name, None, opts)


# Renamed.
component("my:module:Resource", "newres1", ResourceOptions(aliases=[Alias(name="res1")]))

# Adopted into a component: res2 by the URN it had, the others by their old parent.
comp2 = component("my:module:Component", "comp2")
component(
    "my:module:Resource",
    "comp2-child",
    ResourceOptions(parent=comp2, aliases=[create_urn("res2", "my:module:Resource")]),
)
component(
    "my:module:Component2",
    "unparented",
    ResourceOptions(parent=comp2, aliases=[Alias(parent=ROOT_STACK_RESOURCE)]),
)


def component3(name, opts=ResourceOptions()):
    me = component("my:module:Component3", name, opts)
    component(
        "my:module:Component2",
        name + "-child",
        ResourceOptions(parent=me, aliases=[Alias(parent=opts.parent)]),
    )
    return me


component3("parentedbystack")
component3("parentedbycomponent", ResourceOptions(parent=comp2))
# Two identical aliases name one old resource.
component(
    "my:module:Component4",
    "duplicateAliases",
    ResourceOptions(
        parent=comp2,
        aliases=[Alias(parent=ROOT_STACK_RESOURCE), Alias(parent=ROOT_STACK_RESOURCE)],
    ),
)

# Renamed component and child.
comp5 = component("my:module:ComponentFive", "newcomp5", ResourceOptions(aliases=[Alias(name="comp5")]))
component(
    "my:module:Resource",
    "otherchildrenamed",
    ResourceOptions(parent=comp5, aliases=[Alias(name="otherchild", parent=comp5)]),
)

# Retyped component: its child follows through the parent's alias.
comp4 = component(
    "my:differentmodule:ComponentFourWithADifferentTypeName",
    "comp4",
    ResourceOptions(aliases=[Alias(type_="my:module:ComponentFour")]),
)
component("my:module:Resource", "otherchild", ResourceOptions(parent=comp4))

# Renamed component: a child named after it follows with its name prefix replaced.
comp3 = component("my:module:ComponentThree", "newcomp3", ResourceOptions(aliases=[Alias(name="comp3")]))
component("my:module:Resource", "newcomp3-child", ResourceOptions(parent=comp3))
component("my:module:Resource", "otherchild", ResourceOptions(parent=comp3))

# Retyped parents, over many versions: the child's aliases combine with its parent's.
comp6 = component(
    "my:module:ComponentSixParent-v10",
    "comp6",
    ResourceOptions(aliases=[Alias(type_=f"my:module:ComponentSixParent-v{i}") for i in range(10)]),
)
six = component(
    "my:module:ComponentSix-v100",
    "child",
    ResourceOptions(parent=comp6, aliases=[Alias(type_=f"my:module:ComponentSix-v{i}") for i in range(100)]),
)
component("my:module:Resource", "otherchild", ResourceOptions(parent=six))

# A child adopted by a component.
adopt = component("my:module:ComponentResource", "compAdoptChild")
component(
    "my:module:FooResource",
    "childAdoptChild",
    ResourceOptions(parent=adopt, aliases=[Alias(parent=ROOT_STACK_RESOURCE)]),
)

# A child extracted from a component.
extract = component("my:module:ComponentResource", "compExtractChild")
component("my:module:FooResource", "childExtractChild", ResourceOptions(aliases=[Alias(parent=extract)]))

# A child renamed.
rename = component("my:module:ComponentResource", "compRenameChild")
component(
    "my:module:FooResource",
    "childRenameChildRenamed",
    ResourceOptions(parent=rename, aliases=[Alias(name="childRenameChild")]),
)

# A child retyped: its own type alias, under a parent that did not change.
retype = component("my:module:ComponentResource", "compRetypeChild")
component(
    "my:module:FooResourceNew",
    "childRetypeChild",
    ResourceOptions(parent=retype, aliases=[Alias(type_="my:module:FooResource")]),
)
