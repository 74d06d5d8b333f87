# `res` is gone: its before-delete hook (recorded in the state by name, registered again here)
# runs as it is deleted.
from pulumi import ResourceHook, ResourceHookArgs, ResourceHookBinding, ResourceOptions, log

from things import Component


def before_delete(args: ResourceHookArgs) -> None:
    log.info(f"before_delete was called with length = {args.old_inputs.get('length')}")
    assert args.name == "res", f"Expected name 'res', got {args.name}"


before_delete_hook = ResourceHook("before_delete", before_delete)


def fun_comp(args: ResourceHookArgs) -> None:
    log.info(f"fun_comp was called with child = {args.new_outputs.get('childId')}")


comp = Component("comp", length=7, opts=ResourceOptions(hooks=ResourceHookBinding(after_create=[ResourceHook("hook_fun_comp", fun_comp)])))
