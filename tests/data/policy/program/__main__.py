"""Two dynamic resources; each create leaves a file so tests see what was created."""
import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class Files(ResourceProvider):
    def create(self, props):
        with open(f"created-{props['name']}", "w") as f:
            f.write("created")
        return CreateResult(id_="id-" + props["name"], outs=props)


class Thing(Resource):
    def __init__(self, name, props, opts=None):
        super().__init__(Files(), name, props, opts)


config = pulumi.Config()
a = Thing("a", {"name": "a", "public": config.get_bool("public") or False, "tags": {"owner": "me"}})
b = Thing("b", {"name": "b", "public": False})
extra = config.get("extra")
if extra:
    Thing(extra, {"name": extra})
pulumi.export("a", a.id)
