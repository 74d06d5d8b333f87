# Version 2 of the component names its disk `<name>-disk`. Its state migration renames the
# recorded disk and names the new URN its successor: the engine moves the state, and every
# reference to the old URN (the backup's dependency), to the new one, so the upgrade neither
# creates nor deletes the disk (without it, the disk would be replaced: a new one created, the
# old one deleted).
import pulumi

from disk import Disk


def rename_disk(args: pulumi.StateMigrationArgs):
    pulumi.log.info(f"migrating {len(args.old_state)} resources of {args.urn.split('::')[-1]}")
    successors = {}
    for resource in args.old_state:
        old = resource["urn"]
        if old.endswith("-volume"):
            resource["urn"] = old[: -len("-volume")] + "-disk"
            successors[old] = resource["urn"]
    if not successors:
        return None  # Already migrated: the state stays as it is.
    return pulumi.StateMigrationResult(new_state=args.old_state, successors=successors)


class Storage(pulumi.ComponentResource):
    def __init__(self, name, size, opts=None):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(state_migrations=[rename_disk]))
        super().__init__("acme:index:Storage", name, {}, opts)
        self.disk = Disk(f"{name}-disk", {"label": name, "size": size}, pulumi.ResourceOptions(parent=self))
        self.register_outputs({"diskId": self.disk.id})


storage = Storage("data", 10)
backup = Disk("backup", {"label": "backup", "source": storage.disk.id}, pulumi.ResourceOptions(depends_on=[storage.disk]))
pulumi.export("diskId", storage.disk.id)
