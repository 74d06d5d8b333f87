# Every hook kind around a dynamic resource's create, update (value 1 -> 2) and delete (step 3
# drops it), and a component's (its after hooks run when it registers its outputs); each hook
# logs what it was told. `dry_before_create` also runs in previews.
import pulumi
from pulumi import ResourceHook, ResourceHookArgs, ResourceHookBinding, ResourceOptions, log
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

STEP = 3


class Provider(ResourceProvider):
    def create(self, props):
        return CreateResult("id-" + props["label"], {"label": props["label"], "value": props["value"], "out": props["value"] * 10})

    def diff(self, _id, olds, news):
        return DiffResult(changes=olds.get("value") != news.get("value"))

    def update(self, _id, _olds, news):
        return UpdateResult({"label": news["label"], "value": news["value"], "out": news["value"] * 10})

    def delete(self, _id, _props):
        pass


class Thing(Resource):
    def __init__(self, name, value, opts=None):
        super().__init__(Provider(), name, {"label": name, "value": value, "out": None}, opts)


def pick(m, k):
    return None if m is None else m.get(k)


def report(kind):
    def hook(args: ResourceHookArgs):
        log.info(
            f"{kind}: name={args.name} type={args.type} id={args.id!r} "
            f"new_inputs.value={pick(args.new_inputs, 'value')} old_inputs.value={pick(args.old_inputs, 'value')} "
            f"new_outputs.out={pick(args.new_outputs, 'out')} old_outputs.out={pick(args.old_outputs, 'out')} "
            f"size={pick(args.new_inputs, 'size')}/{pick(args.new_outputs, 'size')} "
            f"keys={sorted((args.new_inputs or args.old_inputs or {}).keys())} dry={pulumi.runtime.is_dry_run()}"
        )
    return hook


hooks = {k: ResourceHook(k, report(k)) for k in
         ["before_create", "after_create", "before_update", "after_update", "before_delete", "after_delete"]}
dry = ResourceHook("dry_before_create", report("dry_before_create"), opts=pulumi.ResourceHookOptions(on_dry_run=True))

binding = ResourceHookBinding(**{k: [h] for k, h in hooks.items()})

if STEP < 3:
    Thing("res", STEP, ResourceOptions(hooks=binding))


class Comp(pulumi.ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("my:index:Comp", name, {"size": STEP}, opts)
        self.register_outputs({"size": STEP})


Comp("comp", ResourceOptions(hooks=ResourceHookBinding(
    before_create=[hooks["before_create"], dry], after_create=[hooks["after_create"]],
    before_update=[hooks["before_update"]], after_update=[hooks["after_update"]])))
