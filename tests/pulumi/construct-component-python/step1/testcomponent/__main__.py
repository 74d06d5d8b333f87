"""`testcomponent`: a component provider written with the Python SDK. Its component holds one
`testprovider:index:Echo` child and outputs its input `echo`, the child's ID and the stack's
secret config `secret`."""

import sys
from typing import Any, Optional

import pulumi
import pulumi.provider as provider
import pulumi.runtime.config as config
from pulumi import ComponentResource, Input, Inputs, ResourceOptions


class Echo(pulumi.CustomResource):
    echo: pulumi.Output[Any]

    def __init__(self, name: str, echo: Input[Any], opts: Optional[ResourceOptions] = None):
        super().__init__("testprovider:index:Echo", name, {"echo": echo}, opts)


class Component(ComponentResource):
    def __init__(self, name: str, echo: Input[Any], secret: Input[str], opts: Optional[ResourceOptions] = None):
        super().__init__("testcomponent:index:Component", name, {}, opts)
        self.echo = pulumi.Output.from_input(echo)
        self.child_id = Echo(f"child-{name}", echo, ResourceOptions(parent=self)).id
        self.secret = secret
        self.register_outputs({"childId": self.child_id, "echo": self.echo, "secret": self.secret})


class Provider(provider.Provider):
    def __init__(self):
        super().__init__("0.0.1")

    def construct(self, name: str, resource_type: str, inputs: Inputs,
                  options: Optional[ResourceOptions] = None) -> provider.ConstructResult:
        if resource_type != "testcomponent:index:Component":
            raise Exception(f"unknown resource type {resource_type}")
        cfg = pulumi.Config()
        if not config.is_config_secret(cfg.full_key("secret")):
            raise Exception(f"expected config for key to be secret: {cfg.full_key('secret')}")
        component = Component(name, inputs["echo"], cfg.require_secret("secret"), options)
        return provider.ConstructResult(
            urn=component.urn,
            state={"echo": component.echo, "childId": component.child_id, "secret": component.secret},
        )


if __name__ == "__main__":
    provider.main(Provider(), sys.argv[1:])
