"""Three remote components (built by the testcomponent plugin); b's input is a's output, c's is
a's child's ID: the dependencies reach the components' children."""

from typing import Any, Optional

import pulumi


class Component(pulumi.ComponentResource):
    echo: pulumi.Output[Any]
    childId: pulumi.Output[str]

    def __init__(self, name: str, echo: pulumi.Input[Any], opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testcomponent:index:Component", name,
                         {"echo": echo, "childId": None, "secret": None}, opts, True)


a = Component("a", echo=42)
b = Component("b", echo=a.echo)
c = Component("c", echo=a.childId)
