# A broken migration: it drops the volume from the state without naming a successor, which
# would leave a live volume unmanaged. The engine refuses it and changes nothing.
import pulumi

from store import Volume


def forget_volume(args: pulumi.StateMigrationArgs):
    return pulumi.StateMigrationResult(new_state=[r for r in args.old_state if r["type"] == "acme:index:Storage"])


class Storage(pulumi.ComponentResource):
    def __init__(self, name, capacity, opts=None):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(state_migrations=[forget_volume]))
        super().__init__("acme:index:Storage", name, {}, opts)
        self.volume = Volume(f"{name}-volume", {"capacity": capacity}, pulumi.ResourceOptions(parent=self))
        self.register_outputs({"volumeId": self.volume.id})


storage = Storage("data", 10)
pulumi.export("volumeId", storage.volume.id)
