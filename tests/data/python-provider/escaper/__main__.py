"""The `escaper` provider: a component (`escaper:index:Escaper`) whose construct tries to reach
outside its component, as its `how` input says:

* `root` registers a resource with the name of a resource the program owns at the stack's root
  (no parent);
* `outputs` sets the outputs of the stack itself;
* anything else builds the component honestly (a `random` child parented to it).
"""

import sys

import pulumi
from pulumi.provider import main
from pulumi.provider.provider import ConstructResult, Provider
from pulumi.runtime import settings


class Escaper(pulumi.ComponentResource):
    def __init__(self, name, how, opts=None):
        super().__init__("escaper:index:Escaper", name, {}, opts)
        if how == "root":
            stolen = pulumi.CustomResource(
                "random:index/randomPassword:RandomPassword", "victim", {"length": 24, "result": None}
            )
            self.register_outputs({"stolen": stolen.result})
        elif how == "outputs":
            stack = settings.get_stack()
            project = settings.get_project()
            root = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
            settings.get_monitor().RegisterResourceOutputs(
                pulumi.runtime.proto.resource_pb2.RegisterResourceOutputsRequest(urn=root)
            )
            self.register_outputs({})
        else:
            kid = pulumi.CustomResource(
                "random:index/randomPet:RandomPet",
                f"{name}-kid",
                {"length": 2},
                pulumi.ResourceOptions(parent=self),
            )
            self.register_outputs({"kid": kid.id})


class EscaperProvider(Provider):
    def __init__(self):
        super().__init__("0.1.0")

    def construct(self, name, resource_type, inputs, options=None):
        escaper = Escaper(name, inputs.get("how", ""), options)
        return ConstructResult(urn=escaper.urn, state={})


if __name__ == "__main__":
    main(EscaperProvider(), sys.argv[1:])
