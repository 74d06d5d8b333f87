"""Invokes of the test provider's returnArgs (which returns its arguments): plain, with a
secret argument, with an argument from a resource, and with depends_on."""

from typing import Any, Optional

import pulumi
from pulumi.runtime import invoke_output


class Echo(pulumi.CustomResource):
    echo: pulumi.Output[Any]

    def __init__(self, name: str, echo: pulumi.Input[Any], opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:Echo", name, {"echo": echo}, opts)


def return_args(value, opts=None) -> pulumi.Output[Any]:
    return invoke_output("testprovider:index:returnArgs", {"value": value}, opts)["value"]


pulumi.export("hello", return_args("hello").apply(lambda v: v + " world"))
pulumi.export("goodbye", return_args("goodbye").apply(lambda v: v + " world"))
pulumi.export("secretArgument", return_args(pulumi.Output.secret("goodbye")).apply(lambda v: v + " world"))

first = Echo("first", "first hello")
from_first = return_args(first.echo)
second = Echo("second", from_first)
pulumi.export("fromResource", from_first)

after_first = return_args("hello", pulumi.InvokeOutputOptions(depends_on=[first]))
third = Echo("third", after_first)
pulumi.export("afterFirst", after_first)
