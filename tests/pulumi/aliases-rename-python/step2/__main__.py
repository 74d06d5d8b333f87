"""Scenario 1: a resource renamed, with an alias to its old name.

Step 2: the edit; nothing changes."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


# Formerly `res1`.
Resource("newres1", ResourceOptions(aliases=[Alias(name="res1")]))
