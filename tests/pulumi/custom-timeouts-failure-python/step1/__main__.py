"""Custom timeouts that are neither CustomTimeouts nor a dict: the program fails."""

from pulumi import ComponentResource, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


Resource("res5", ResourceOptions(custom_timeouts="asdf"))
