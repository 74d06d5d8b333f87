"""Plain, secret and structured configuration, read as text and as objects."""

import pulumi

config = pulumi.Config("config_basic_py")

assert config.require("aConfigValue") == "this value is a Pythonic value"
assert config.require("bEncryptedSecret") == "this super Pythonic secret is encrypted"

# Each structured value: its JSON text and the object.
expected = {
    "outer": ('{"inner":"value"}', {"inner": "value"}),
    "names": ('["a","b","c","super secret name"]', ["a", "b", "c", "super secret name"]),
    "servers": ('[{"host":"example","port":80}]', [{"host": "example", "port": 80}]),
    "a": ('{"b":[{"c":true},{"c":false}]}', {"b": [{"c": True}, {"c": False}]}),
    "tokens": ('["shh"]', ["shh"]),
    "foo": ('{"bar":"don\'t tell"}', {"bar": "don't tell"}),
}
for key, (text, obj) in expected.items():
    assert config.require(key) == text, f"{key}: {config.require(key)!r} is not {text!r}"
    assert config.require_object(key) == obj, f"{key}: {config.require_object(key)!r} is not {obj!r}"
