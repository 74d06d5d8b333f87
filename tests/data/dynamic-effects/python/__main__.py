"""A dynamic provider with real side effects (see ../README.md)."""

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult


class EffectProvider(ResourceProvider):
    """Each resource is a file; every operation is logged in `calls.log`."""

    def create(self, props):
        import os
        import time

        path = os.path.join(props["dir"], props["name"])
        with open(os.path.join(props["dir"], "calls.log"), "a") as log:
            log.write(f"create {props['name']}\n")
        if props.get("gate"):
            open(path + ".started", "w").close()
            while not os.path.exists(props["gate"]):
                time.sleep(0.02)
        with open(path, "w") as f:
            f.write(props["content"])
        return CreateResult(id_=props["name"], outs=dict(props))

    def diff(self, _id, olds, news):
        return DiffResult(changes=olds.get("content") != news.get("content"))

    def update(self, _id, _olds, news):
        import os

        with open(os.path.join(news["dir"], "calls.log"), "a") as log:
            log.write(f"update {news['name']}\n")
        with open(os.path.join(news["dir"], news["name"]), "w") as f:
            f.write(news["content"])
        return UpdateResult(outs=dict(news))

    def delete(self, _id, props):
        import os

        with open(os.path.join(props["dir"], "calls.log"), "a") as log:
            log.write(f"delete {props['name']}\n")
        os.remove(os.path.join(props["dir"], props["name"]))


class Effect(Resource):
    def __init__(self, name, props, opts=None):
        super().__init__(EffectProvider(), name, props, opts)


config = pulumi.Config()
Effect(
    "a",
    {"dir": config.require("dir"), "name": "a", "content": config.require("content"), "gate": config.get("gate")},
)
big = config.get("big")
if big is not None:
    pulumi.export("bigLength", len(big))
