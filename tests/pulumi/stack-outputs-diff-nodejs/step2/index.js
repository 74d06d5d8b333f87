// xyz changes, gone goes, added comes, foo, same and the empty one stay.
module.exports = { xyz: "DEF", foo: 42, added: "hi", same: "s", empty: "" };
