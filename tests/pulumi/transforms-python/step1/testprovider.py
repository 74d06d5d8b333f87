"""Typed wrappers of the test provider's Random, Component and provider resource."""

from typing import Optional

import pulumi


class Random(pulumi.CustomResource):
    length: pulumi.Output[int]
    prefix: pulumi.Output[Optional[str]]
    result: pulumi.Output[str]

    def __init__(self, name: str, length: pulumi.Input[int],
                 prefix: Optional[pulumi.Input[str]] = None,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:Random", name,
                         {"length": length, "prefix": prefix, "result": None}, opts)

    def return_args(self, args):
        return pulumi.runtime.invoke("testprovider:index:returnArgs", args)


class Component(pulumi.ComponentResource):
    length: pulumi.Output[int]
    child_id: pulumi.Output[str]

    def __init__(self, name: str, length: pulumi.Input[int],
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:Component", name,
                         {"length": length, "childId": None}, opts, remote=True)


class Provider(pulumi.ProviderResource):
    def __init__(self, name: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider", name, None, opts)
