"""Resources of the test provider (package `testprovider`, a Cairn wasm provider)."""

from typing import Optional

import pulumi


class Random(pulumi.CustomResource):
    """A random string of `length` characters (after `prefix`); `result` is secret."""

    length: pulumi.Output[int]
    result: pulumi.Output[str]

    def __init__(self, name: str, length: pulumi.Input[int], prefix: Optional[pulumi.Input[str]] = None,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:Random", name, {"length": length, "prefix": prefix, "result": None}, opts)


class Echo(pulumi.CustomResource):
    """Outputs its input `echo`."""

    echo: pulumi.Output[object]

    def __init__(self, name: str, echo: pulumi.Input[object], opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:Echo", name, {"echo": echo}, opts)


class FailsOnCreate(pulumi.CustomResource):
    """Its creation always fails."""

    value: pulumi.Output[object]

    def __init__(self, name: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:FailsOnCreate", name, {"value": None}, opts)


class FailsOnDelete(pulumi.CustomResource):
    """Its deletion always fails."""

    def __init__(self, name: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("testprovider:index:FailsOnDelete", name, {}, opts)
