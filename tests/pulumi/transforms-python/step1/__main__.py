"""Transforms: on a custom resource, through a component to its children, for the whole stack,
in order of specificity, changing properties, providers (of a custom resource and of a remote
component) and the import ID, and on invokes."""

from pulumi import (InvokeTransformArgs, InvokeTransformResult, Output, ComponentResource,
                    ResourceOptions, ResourceTransformArgs, ResourceTransformResult)
from pulumi.runtime import invoke_async, register_invoke_transform, register_stack_transform
from pulumi.runtime.sync_await import _sync_await

from testprovider import Component, Provider, Random

RANDOM = "testprovider:index:Random"


class Pair(ComponentResource):
    """A component with one Random child whose length is a secret output."""

    def __init__(self, name, opts=None):
        super().__init__("my:component:MyComponent", name, {}, opts)
        self.child = Random(f"{name}-child", 5, None,
                            ResourceOptions(parent=self, additional_secret_outputs=["length"]))
        self.register_outputs({})


def with_secret_result(args: ResourceTransformArgs):
    return ResourceTransformResult(
        props=args.props,
        opts=ResourceOptions.merge(args.opts, ResourceOptions(additional_secret_outputs=["result"])))


# 1. A transform of a custom resource.
Random("res1", 5, None, ResourceOptions(transforms=[with_secret_result]))


# 2. A component's transform reaches its children.
def children_default_prefix(args: ResourceTransformArgs):
    if args.type_ == RANDOM:
        return ResourceTransformResult(
            props={"prefix": "newDefault", **args.props},
            opts=ResourceOptions.merge(args.opts, ResourceOptions(additional_secret_outputs=["result"])))
    return None


Pair("res2", ResourceOptions(transforms=[children_default_prefix]))


# 3. A stack transform reaches every resource registered after it.
def stack_prefix(args: ResourceTransformArgs):
    if args.type_ == RANDOM:
        return ResourceTransformResult(
            props={**args.props, "prefix": "stackDefault"},
            opts=ResourceOptions.merge(args.opts, ResourceOptions(additional_secret_outputs=["result"])))
    return None


register_stack_transform(stack_prefix)
Random("res3", Output.secret(5))


# 4. Own, then the parents' (in the order given), then the stack's: the stack's prefix wins.
def prefix(value):
    def transform(args: ResourceTransformArgs):
        if args.type_ == RANDOM:
            return ResourceTransformResult(props={**args.props, "prefix": value}, opts=args.opts)
        return None
    return transform


Pair("res4", ResourceOptions(transforms=[prefix("default1"), prefix("default2")]))


# 5. A transform changes a property.
def double_length(args: ResourceTransformArgs):
    if args.type_ == RANDOM:
        args.props["length"] = args.props["length"] * 2
        return ResourceTransformResult(props=args.props, opts=args.opts)
    return None


Random("res5", 10, None, ResourceOptions(transforms=[double_length]))

# 6 and 7. A transform changes the provider of a custom resource and of a remote component.
first = Provider("provider1")
second = Provider("provider2")


def to_second(args: ResourceTransformArgs):
    return ResourceTransformResult(
        props=args.props, opts=ResourceOptions.merge(args.opts, ResourceOptions(provider=second)))


res6 = Random("res6", 10, None, ResourceOptions(provider=first, transforms=[to_second]))
Component("res7", 10, ResourceOptions(provider=first, transforms=[to_second]))
# (The original checks res6's provider in the state; its ID is not known here, so the program
# asks the engine for res6's state instead.)
state = _sync_await(invoke_async("pulumi:pulumi:getResource", {"urn": _sync_await(res6.urn.future())}))
if "::provider2::" not in state["provider"]:
    raise Exception(f"res6 is not managed by provider2: {state['provider']}")


# 8. An invoke transform changes an invoke's arguments.
def length_eleven(args: InvokeTransformArgs):
    return InvokeTransformResult(args={**args.args, "length": 11}, opts=args.opts)


register_invoke_transform(length_eleven)
res8 = Random("res8", length=10)
answer = _sync_await(res8.return_args({"length": 10, "prefix": "test"}))
if answer["length"] != 11 or answer["prefix"] != "test":
    raise Exception(f"the invoke transform did not run: {answer}")


# 9. A transform sets the import ID.
def import_it(args: ResourceTransformArgs):
    args.opts.import_ = "stackDefault:test-id"
    return ResourceTransformResult(props=args.props, opts=args.opts)


Random("res9", length=7, opts=ResourceOptions(transforms=[import_it]))
