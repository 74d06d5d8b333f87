// Stack outputs of every kind: strings with escapes, emoji and control characters, numbers at
// the edges of float64, booleans, arrays (nested, with null) and maps with keys the engine
// itself uses (`__provider`, the empty key).
const ESCAPES = "Some ${common} \"characters\" 'that' need escaping: \\ (backslash), \t (tab), " +
    "\u001b (escape), \u0007 (bell), \u0000 (null), \u{e0021} (tag space)";

exports.empty = "";
exports.small = "Hello world!";
exports.emoji = "👋 \"Hello \u{1019b}!\" 😊";
exports.escape = ESCAPES;

exports.zero = 0;
exports.one = 1;
exports.e = 2.718;
exports.minInt32 = -2147483648;
exports.max = 1.7976931348623157e308;
exports.min = 5e-324;

exports.output_true = true;
exports.output_false = false;

exports.emptyArray = [];
exports.numbers = [0, 1, 2, 3, 4, 5];
exports.nested = [["Hello", "World"], ["Goodbye", "World"]];
exports.withNull = [null];

exports.emptyMap = {};
exports.adversarialStrings = {
    "__type": "dunder type",
    "__internal": "dunder internal",
    "__provider": "dunder provider",
    "__version": "dunder version",
    "": "empty key",
    "empty value": "",
    "dunder value": "__dunder",
    [ESCAPES]: ESCAPES,
};
