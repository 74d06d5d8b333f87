"""The `greeter` provider: a component (`greeter:index:Greeter`) holding a random pet name,
and a function (`greeter:index:shout`)."""

import sys

import pulumi
from pulumi.provider import main
from pulumi.provider.provider import ConstructResult, InvokeResult, Provider


class Greeter(pulumi.ComponentResource):
    def __init__(self, name, args, opts=None):
        super().__init__("greeter:index:Greeter", name, {}, opts)
        pet = pulumi.CustomResource(
            "random:index/randomPet:RandomPet",
            f"{name}-pet",
            {"length": 2},
            pulumi.ResourceOptions(parent=self),
        )
        self.message = pulumi.Output.concat(args.get("greeting", "hello"), ", ", pet.id)
        self.register_outputs({"message": self.message})


class GreeterProvider(Provider):
    def __init__(self):
        super().__init__("0.3.0")

    def construct(self, name, resource_type, inputs, options=None):
        if resource_type != "greeter:index:Greeter":
            raise ValueError(f"unknown component {resource_type}")
        greeter = Greeter(name, inputs, options)
        return ConstructResult(urn=greeter.urn, state={"message": greeter.message})

    def invoke(self, token, args):
        if token != "greeter:index:shout":
            raise ValueError(f"unknown function {token}")
        return InvokeResult({"text": str(args.get("text", "")).upper()})


if __name__ == "__main__":
    main(GreeterProvider(), sys.argv[1:])
