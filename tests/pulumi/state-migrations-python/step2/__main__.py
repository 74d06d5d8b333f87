# Version 2 of the component names the property `capacity`. Its state migration translates the
# recorded state of the volume (inputs and outputs) so the upgrade changes nothing: without it
# the provider would replace the volume.
import pulumi

from store import Volume


def rename_size(args: pulumi.StateMigrationArgs):
    pulumi.log.info(f"migrating {len(args.old_state)} resources of {args.urn.split('::')[-1]}")
    changed = False
    for resource in args.old_state:
        for field in ("inputs", "outputs"):
            props = resource.get(field) or {}
            if "size" in props:
                props["capacity"] = props.pop("size")
                changed = True
    if not changed:
        return None  # Already migrated: the state stays as it is.
    return pulumi.StateMigrationResult(new_state=args.old_state)


class Storage(pulumi.ComponentResource):
    def __init__(self, name, capacity, opts=None):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(state_migrations=[rename_size]))
        super().__init__("acme:index:Storage", name, {}, opts)
        self.volume = Volume(f"{name}-volume", {"capacity": capacity}, pulumi.ResourceOptions(parent=self))
        self.register_outputs({"volumeId": self.volume.id})


storage = Storage("data", 10)
pulumi.export("volumeId", storage.volume.id)
