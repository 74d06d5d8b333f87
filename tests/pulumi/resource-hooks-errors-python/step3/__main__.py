# Hooks that fail: an after-create hook fails: the resource is created and recorded, the update fails.
import pulumi
from pulumi import ResourceHook, ResourceHookBinding, ResourceHookOptions, ResourceOptions
from pulumi.dynamic import CreateResult, Resource, ResourceProvider

MODE = "after"


class Provider(ResourceProvider):
    def create(self, props):
        return CreateResult("id-" + props["label"], dict(props))

    def delete(self, _id, _props):
        pass


class Thing(Resource):
    def __init__(self, name, opts=None):
        super().__init__(Provider(), name, {"label": name}, opts)


def fails(args):
    raise Exception(f"{args.name} is not welcome")


gate = ResourceHook("gate", fails, opts=ResourceHookOptions(ignore_errors=MODE == "ignore"))
keep = ResourceHook("keep", lambda args: pulumi.log.info(f"keep saw {args.name} go"))

if MODE in ("before", "ignore"):
    Thing("res", ResourceOptions(hooks=ResourceHookBinding(before_create=[gate])))
elif MODE == "after":
    Thing("res")
    Thing("late", ResourceOptions(hooks=ResourceHookBinding(after_create=[gate])))
else:
    Thing("res", ResourceOptions(hooks=ResourceHookBinding(before_delete=[keep])))
