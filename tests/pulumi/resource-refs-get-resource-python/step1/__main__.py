"""A component whose output is a resource reference to another component, read back by URN:
the reference resolves (through a registered resource module) to the child, with its URN and
its outputs."""

import time
from typing import Optional

import pulumi
from pulumi.runtime.sync_await import _sync_await


class Child(pulumi.ComponentResource):
    def __init__(self, name: str, message: Optional[str] = None, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("test:index:Child", name, {"message": message}, opts)
        if opts and opts.urn:
            return
        self.register_outputs({"message": message})

    @property
    @pulumi.getter
    def message(self) -> pulumi.Output[str]:
        return pulumi.get(self, "message")


class Container(pulumi.ComponentResource):
    def __init__(self, name: str, child: Optional[Child] = None, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("test:index:Container", name, {"child": child}, opts)
        if opts and opts.urn:
            return
        self.register_outputs({"child": child})

    @property
    @pulumi.getter
    def child(self) -> pulumi.Output[Child]:
        return pulumi.get(self, "child")


class Module(pulumi.runtime.ResourceModule):
    def version(self):
        return "0.0.1"

    def construct(self, name: str, typ: str, urn: str) -> pulumi.Resource:
        if typ == "test:index:Child":
            return Child(name, opts=pulumi.ResourceOptions(urn=urn))
        raise Exception(f"unknown resource type {typ}")


pulumi.runtime.register_resource_module("test", "index", Module())

child = Child("mychild", message="hello world!")
container = Container("mycontainer", child=child)


def check(args):
    assert args["expected_urn"] == args["actual_urn"], f"{args['actual_urn']} is not {args['expected_urn']}"
    assert args["actual_message"] == "hello world!", f"the message is {args['actual_message']!r}"


def round_trip(urn: str):
    again = Container("mycontainer", opts=pulumi.ResourceOptions(urn=urn))
    pulumi.Output.all(
        expected_urn=child.urn, actual_urn=again.child.urn, actual_message=again.child.message
    ).apply(check)


# The container's outputs are registered asynchronously (pulumi#16896): wait until a read of it
# sees its child, for at most half a second.
started = time.time()
while True:
    urn = _sync_await(container.urn._future)
    if _sync_await(Container("mycontainer", opts=pulumi.ResourceOptions(urn=urn)).child._future):
        break
    if time.time() - started > 0.5:
        raise Exception("timed out waiting for the container's outputs")

container.urn.apply(round_trip)
