"""Primitive config values read with their types; optional ones fall back to defaults."""

import pulumi

cfg = pulumi.Config()
pulumi.export("theNumber", cfg.require_float("aNumber") + 1.25)
pulumi.export("theInteger", cfg.require_int("anInt") + 4)
pulumi.export("theString", cfg.require("aString") + " World")
pulumi.export("theBool", not cfg.require_bool("aBool"))

optional_number = cfg.get_float("optionalNumber")
pulumi.export("defaultNumber", (41.5 if optional_number is None else optional_number) + 1.2)
optional_int = cfg.get_int("optionalInt")
pulumi.export("defaultInteger", (1 if optional_int is None else optional_int) + 2)
pulumi.export("defaultString", cfg.get("optionalString") or "defaultStringValue")
optional_bool = cfg.get_bool("optionalBool")
pulumi.export("defaultBool", False if optional_bool is None else optional_bool)
