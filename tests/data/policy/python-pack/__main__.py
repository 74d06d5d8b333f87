"""test-pack: resource and stack policies at every enforcement level, with configuration."""
from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    ResourceValidationPolicy,
    StackValidationPolicy,
)


def no_public(args, report):
    if args.props.get("public"):
        report("resource is public")


def tags(args, report):
    if args.resource_type.startswith("pulumi-python:dynamic") and "tags" not in args.props:
        report("missing tags; need " + str(args.get_config().get("required")))


def never(args, report):
    report("a disabled policy ran")


def seen(args, report):
    report("saw " + args.resource_type + " " + args.name)


def count(args, report):
    report(f"stack has {len(args.resources)} resources")


def stack_guard(args, report):
    forbidden = (args.get_config() or {}).get("forbidStack")
    for r in args.resources:
        if r.name == forbidden:
            report(f"{r.name} is forbidden", r.urn)


PolicyPack(
    name="test-pack",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[
        ResourceValidationPolicy(
            name="no-public", description="No public things.", validate=no_public,
            enforcement_level=EnforcementLevel.MANDATORY),
        ResourceValidationPolicy(
            name="tags", description="Things need tags.", validate=tags,
            config_schema=PolicyConfigSchema(
                properties={"required": {"type": "string", "default": "owner"}})),
        ResourceValidationPolicy(
            name="never", description="Never runs.", validate=never,
            enforcement_level=EnforcementLevel.DISABLED),
        ResourceValidationPolicy(name="seen", description="Sees.", validate=seen),
        StackValidationPolicy(name="count", description="Counts resources.", validate=count),
        StackValidationPolicy(
            name="stack-guard", description="Forbidden names.", validate=stack_guard,
            enforcement_level=EnforcementLevel.MANDATORY,
            config_schema=PolicyConfigSchema(properties={"forbidStack": {"type": "string"}})),
    ],
)
