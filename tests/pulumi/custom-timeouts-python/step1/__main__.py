"""Custom timeouts on components, given as CustomTimeouts and as a plain dict."""

from pulumi import ComponentResource, CustomTimeouts, ResourceOptions


class Resource(ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:module:Resource", name, None, opts)


Resource("res1", ResourceOptions(custom_timeouts=CustomTimeouts(create="30m")))
# The older form, a dict, still works.
Resource("res2", ResourceOptions(custom_timeouts={"create": "15m", "delete": "15m"}))
Resource("res3", ResourceOptions(custom_timeouts=CustomTimeouts(update="30m")))
Resource("res4", ResourceOptions(custom_timeouts=CustomTimeouts(delete="30m")))
