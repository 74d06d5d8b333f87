"""Scenario 1: a resource renamed, with an alias to its old name: before the edit."""

import pulumi
from pulumi import Alias, ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


Resource("res1")
