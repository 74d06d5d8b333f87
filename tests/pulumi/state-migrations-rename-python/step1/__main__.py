# Version 1 of the component: its disk is named `<name>-volume`; a backup outside the component
# depends on it.
import pulumi

from disk import Disk


class Storage(pulumi.ComponentResource):
    def __init__(self, name, size, opts=None):
        super().__init__("acme:index:Storage", name, {}, opts)
        self.disk = Disk(f"{name}-volume", {"label": name, "size": size}, pulumi.ResourceOptions(parent=self))
        self.register_outputs({"diskId": self.disk.id})


storage = Storage("data", 10)
backup = Disk("backup", {"label": "backup", "source": storage.disk.id}, pulumi.ResourceOptions(depends_on=[storage.disk]))
pulumi.export("diskId", storage.disk.id)
