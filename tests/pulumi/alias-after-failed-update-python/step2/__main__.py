"""res1 loses its parent (a create and a delete), and a resource that fails to create stops the
update before the old res1 is deleted."""

import pulumi

from testresources import Echo, FailsOnCreate


class MyComponent(pulumi.ComponentResource):
    def __init__(self, name):
        super().__init__("my:index:MyComponent", name)


component = MyComponent("component")
res1 = Echo("res1", echo="hello")
# After res1 (the original leaves the order to chance): the new res1 is created before the
# update fails, whatever the timing.
FailsOnCreate("res2", opts=pulumi.ResourceOptions(depends_on=[res1]))
