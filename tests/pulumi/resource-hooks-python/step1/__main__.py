# A resource with before-create and before-delete hooks, and a component whose after-create
# hook sees its registered outputs.
from pulumi import ResourceHook, ResourceHookArgs, ResourceHookBinding, ResourceOptions, log

from things import Component, Random


def before_create(args: ResourceHookArgs) -> None:
    log.info(f"before_create was called with length = {args.new_inputs.get('length')}")
    assert args.name == "res", f"Expected name 'res', got {args.name}"
    assert args.type == "pulumi-python:dynamic/testprovider:Random", args.type


before_create_hook = ResourceHook("before_create", before_create)


def before_delete(args: ResourceHookArgs) -> None:
    log.info(f"before_delete was called with length = {args.old_inputs.get('length')}")
    assert args.name == "res", f"Expected name 'res', got {args.name}"


before_delete_hook = ResourceHook("before_delete", before_delete)

res = Random(
    "res",
    length=10,
    opts=ResourceOptions(
        hooks=ResourceHookBinding(before_create=[before_create_hook], before_delete=[before_delete_hook])
    ),
)


def fun_comp(args: ResourceHookArgs) -> None:
    child_id = args.new_outputs.get("childId")
    log.info(f"fun_comp was called with child = {child_id}")
    if not child_id:
        raise ValueError(f"expected non empty childId, got '{child_id}'")
    assert args.name == "comp", f"Expected name 'comp', got {args.name}"
    assert args.type == "testprovider:index:Component", args.type


comp = Component("comp", length=7, opts=ResourceOptions(hooks=ResourceHookBinding(after_create=[ResourceHook("hook_fun_comp", fun_comp)])))
