"""A dynamic `Disk` whose physical identity is its `label` (not its resource name), so a
component may rename the resource without touching what it manages."""

from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult


class _Provider(ResourceProvider):
    def create(self, props):
        return CreateResult(f"disk-{props['label']}", dict(props))

    def diff(self, _id, olds, news):
        changed = [k for k in set(olds) | set(news) if k != "__provider" and olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=changed)

    def update(self, _id, _olds, news):
        return UpdateResult(dict(news))

    def delete(self, _id, _props):
        pass


class Disk(Resource, module="store", name="Disk"):
    def __init__(self, name, props, opts=None):
        super().__init__(_Provider(), name, props, opts)
