"""Components before they move: step 2 renames, retypes, re-parents and nests them, with aliases
that keep every one of them (no changes)."""

from pulumi import ComponentResource, ResourceOptions


def component(type_, name, opts=None):
    return ComponentResource(type_, name, None, opts)


# Renamed.
component("my:module:Resource", "res1")

# Adopted into a component.
component("my:module:Resource", "res2")
comp2 = component("my:module:Component", "comp2")
component("my:module:Component2", "unparented")


def component3(name, opts=None):
    me = component("my:module:Component3", name, opts)
    component("my:module:Component2", name + "-child", opts)
    return me


component3("parentedbystack")
component3("parentedbycomponent", ResourceOptions(parent=comp2))
component("my:module:Component4", "duplicateAliases", ResourceOptions(parent=comp2))

# Renamed component and child.
comp5 = component("my:module:ComponentFive", "comp5")
component("my:module:Resource", "otherchild", ResourceOptions(parent=comp5))

# Retyped component.
comp4 = component("my:module:ComponentFour", "comp4")
component("my:module:Resource", "otherchild", ResourceOptions(parent=comp4))

# Renamed component (children named after it, or not).
comp3 = component("my:module:ComponentThree", "comp3")
component("my:module:Resource", "comp3-child", ResourceOptions(parent=comp3))
component("my:module:Resource", "otherchild", ResourceOptions(parent=comp3))

# Retyped parents, over many versions.
comp6 = component("my:module:ComponentSixParent-v0", "comp6")
six = component("my:module:ComponentSix-v0", "child", ResourceOptions(parent=comp6))
component("my:module:Resource", "otherchild", ResourceOptions(parent=six))

# A child adopted by a component.
component("my:module:ComponentResource", "compAdoptChild")
component("my:module:FooResource", "childAdoptChild")

# A child extracted from a component.
extract = component("my:module:ComponentResource", "compExtractChild")
component("my:module:FooResource", "childExtractChild", ResourceOptions(parent=extract))

# A child renamed.
rename = component("my:module:ComponentResource", "compRenameChild")
component("my:module:FooResource", "childRenameChild", ResourceOptions(parent=rename))

# A child retyped.
retype = component("my:module:ComponentResource", "compRetypeChild")
component("my:module:FooResource", "childRetypeChild", ResourceOptions(parent=retype))
