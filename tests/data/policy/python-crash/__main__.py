"""A pack that dies in the middle of analyzing resource b."""
import os

from pulumi_policy import PolicyPack, ResourceValidationPolicy


def crash(args, report):
    if args.name == "b":
        os._exit(3)


PolicyPack(name="crash-pack", policies=[
    ResourceValidationPolicy(name="crash", description="Crashes.", validate=crash)])
