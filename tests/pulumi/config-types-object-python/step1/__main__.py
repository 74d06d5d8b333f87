"""Structured config: maps, objects with lists and untyped objects, read as objects; the
optional ones are reported as JSON, or "null" when unset."""

import json

import pulumi

cfg = pulumi.Config()
a_map = cfg.require_object("aMap")
pulumi.export("theMap", {"a": a_map["a"] + 1, "b": a_map["b"] + 1})
pulumi.export("theObject", cfg.require_object("anObject")["prop"][0])
any_object = cfg.require_object("anyObject")
pulumi.export("theThing", float(any_object["a"]) + float(any_object["b"]))
pulumi.export("defaultUntypedObject", cfg.get_object("optionalUntypedObject") or {"key": "value"})


def as_json(value):
    return "null" if value is None else json.dumps(value, separators=(",", ":"), sort_keys=True)


for key in ["optionalList", "optionalMap", "optionalObject"]:
    pulumi.export(key, as_json(cfg.get_object(key)))
