"""A dynamic `Volume` whose input is `size`; `capacity` in version 2 of the component."""

from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult


class _Provider(ResourceProvider):
    def create(self, props):
        return CreateResult(f"vol-{props['name']}", dict(props))

    def diff(self, _id, olds, news):
        changed = [k for k in set(olds) | set(news) if k != "__provider" and olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=changed)

    def update(self, _id, _olds, news):
        return UpdateResult(dict(news))

    def delete(self, _id, _props):
        pass


class Volume(Resource, module="store", name="Volume"):
    def __init__(self, name, props, opts=None):
        super().__init__(_Provider(), name, {"name": name, **props}, opts)
