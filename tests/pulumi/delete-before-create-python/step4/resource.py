"""A dynamic resource replaced when `state` changes, delete-before-replace unless `no_dbr`."""

import uuid

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource as DynamicResource, ResourceProvider


class _Provider(ResourceProvider):
    def create(self, props):
        return CreateResult(id_=str(uuid.uuid4()), outs=props)

    def diff(self, _id, olds, news):
        if olds.get("state") != news.get("state"):
            return DiffResult(
                changes=True,
                replaces=["state"],
                delete_before_replace=not news.get("no_dbr", False),
            )
        if olds.get("no_replace") != news.get("no_replace"):
            return DiffResult(changes=True)
        return DiffResult(changes=False)


class Resource(DynamicResource):
    state: pulumi.Output[float]

    def __init__(self, name, unique_key=None, state=None, no_replace=None, no_dbr=None, opts=None):
        props = {"unique_key": unique_key, "state": state, "no_replace": no_replace, "no_dbr": no_dbr}
        super().__init__(_Provider(), name, props, opts)
