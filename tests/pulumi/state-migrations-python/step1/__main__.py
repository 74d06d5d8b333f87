# Version 1 of the component: its volume records its size as `size`.
import pulumi

from store import Volume


class Storage(pulumi.ComponentResource):
    def __init__(self, name, size, opts=None):
        super().__init__("acme:index:Storage", name, {}, opts)
        self.volume = Volume(f"{name}-volume", {"size": size}, pulumi.ResourceOptions(parent=self))
        self.register_outputs({"volumeId": self.volume.id})


storage = Storage("data", 10)
pulumi.export("volumeId", storage.volume.id)
