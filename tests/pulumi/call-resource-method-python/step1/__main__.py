"""The test provider's functions, a method of its Echo resource (Call), and a Random read by ID
(`get`), as a generated SDK would call them."""

from typing import Any, Optional

import pulumi


class Random(pulumi.CustomResource):
    length: pulumi.Output[int]
    result: pulumi.Output[str]

    def __init__(self, name: str, length: Optional[int] = None, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:Random", name, {"length": length, "result": None}, opts)

    @staticmethod
    def get(name: str, id: str) -> "Random":
        return Random(name, opts=pulumi.ResourceOptions(id=id))


class Echo(pulumi.CustomResource):
    echo: pulumi.Output[Any]

    def __init__(self, name: str, echo: Any = None, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:Echo", name, {"echo": echo}, opts)

    def do_echo_method(self, echo: pulumi.Input[str]) -> pulumi.Output[Any]:
        return pulumi.runtime.call("testprovider:index:Echo/doEchoMethod",
                                   {"__self__": self, "echo": echo}, res=self)


pulumi.export("res1", Random("res1", length=5).length)
pulumi.export("res2", pulumi.runtime.invoke_output("testprovider:index:doEcho", {"echo": "hello"})["echo"])
pulumi.export("res7", Echo("echo").do_echo_method("hello")["echo"])
# The test provider's read of a Random makes its state from the ID: it need not exist.
pulumi.export("res8", Random.get("res8", "banana").result)
