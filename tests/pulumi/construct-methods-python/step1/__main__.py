"""A remote component with a method, getMessage, called through the engine (Call)."""

from typing import Optional

import pulumi


class Component(pulumi.ComponentResource):
    def __init__(self, name: str, first: pulumi.Input[str], second: pulumi.Input[str],
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testcomponent:index:Component", name,
                         {"first": first, "second": second}, opts, True)

    @pulumi.output_type
    class GetMessageResult:
        def __init__(self, message: str):
            pulumi.set(self, "message", message)

        @property
        @pulumi.getter
        def message(self) -> str:
            return pulumi.get(self, "message")

    def get_message(self, name: pulumi.Input[str]) -> pulumi.Output["Component.GetMessageResult"]:
        return pulumi.runtime.call("testcomponent:index:Component/getMessage",
                                   {"__self__": self, "name": name},
                                   res=self, typ=Component.GetMessageResult)


component = Component("component", first="Hello", second="World")
pulumi.export("message", component.get_message("Alice").message)
