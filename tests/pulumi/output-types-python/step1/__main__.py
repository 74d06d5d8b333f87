"""Stack outputs of every kind: strings with escapes, emoji and control characters, numbers at
the edges of float64, booleans, arrays (nested, with null) and maps with keys the engine itself
uses (`__provider`, the empty key)."""

import pulumi

ESCAPES = ("Some ${common} \"characters\" 'that' need escaping: \\ (backslash), \t (tab), "
           "\u001b (escape), \u0007 (bell), \u0000 (null), \U000e0021 (tag space)")

pulumi.export("empty", "")
pulumi.export("small", "Hello world!")
pulumi.export("emoji", "👋 \"Hello \U0001019b!\" 😊")
pulumi.export("escape", ESCAPES)

pulumi.export("zero", 0)
pulumi.export("one", 1)
pulumi.export("e", 2.718)
pulumi.export("minInt32", -2147483648)
pulumi.export("max", 1.7976931348623157e308)
pulumi.export("min", 5e-324)

pulumi.export("output_true", True)
pulumi.export("output_false", False)

pulumi.export("emptyArray", [])
pulumi.export("numbers", [0, 1, 2, 3, 4, 5])
pulumi.export("nested", [["Hello", "World"], ["Goodbye", "World"]])
pulumi.export("withNull", [None])

pulumi.export("emptyMap", {})
pulumi.export("adversarialStrings", {
    "__type": "dunder type",
    "__internal": "dunder internal",
    "__provider": "dunder provider",
    "__version": "dunder version",
    "": "empty key",
    "empty value": "",
    "dunder value": "__dunder",
    ESCAPES: ESCAPES,
})
