"""`testcomponent`: a component provider with a method. The component is rebuilt from its
reference (a resource module) when a method is called on it."""

import sys
from typing import Optional

import pulumi
import pulumi.provider as provider

VERSION = "0.0.1"


class Component(pulumi.ComponentResource):
    def __init__(self, name: str, opts: Optional[pulumi.ResourceOptions] = None,
                 first: Optional[pulumi.Input[str]] = None,
                 second: Optional[pulumi.Input[str]] = None):
        args = {"first": first, "second": second}
        super().__init__("testcomponent:index:Component", name, args, opts)
        if opts and opts.urn:
            # Rehydrated from a reference: its outputs are the recorded ones.
            return
        self.register_outputs(args)

    @property
    @pulumi.getter
    def first(self) -> pulumi.Output[str]:
        return pulumi.get(self, "first")

    @property
    @pulumi.getter
    def second(self) -> pulumi.Output[str]:
        return pulumi.get(self, "second")

    def get_message(self, name: pulumi.Input[str]) -> pulumi.Output[str]:
        return pulumi.Output.concat(self.first, " ", self.second, ", ", name, "!")


class Module(pulumi.runtime.ResourceModule):
    def version(self):
        return VERSION

    def construct(self, name: str, typ: str, urn: str) -> pulumi.Resource:
        if typ != "testcomponent:index:Component":
            raise Exception(f"unknown resource type {typ}")
        return Component(name, pulumi.ResourceOptions(urn=urn))


class Provider(provider.Provider):
    def __init__(self):
        super().__init__(VERSION)
        pulumi.runtime.register_resource_module("testcomponent", "index", Module())

    def construct(self, name: str, resource_type: str, inputs: pulumi.Inputs,
                  options: Optional[pulumi.ResourceOptions] = None) -> provider.ConstructResult:
        if resource_type != "testcomponent:index:Component":
            raise Exception(f"unknown resource type {resource_type}")
        component = Component(name, opts=options, first=inputs["first"], second=inputs["second"])
        return provider.ConstructResult(urn=component.urn, state=inputs)

    def call(self, token: str, args: pulumi.Inputs) -> provider.CallResult:
        if token != "testcomponent:index:Component/getMessage":
            raise Exception(f"unknown method {token}")
        component: Component = args["__self__"]
        return provider.CallResult(outputs={"message": component.get_message(args["name"])})


if __name__ == "__main__":
    provider.main(Provider(), sys.argv[1:])
