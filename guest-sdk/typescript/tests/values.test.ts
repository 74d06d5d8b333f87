// The node table codec: every kind round-trips; malformed tables are refused with a message
// saying what is wrong (each case a table and the message's start); UTF-8 without TextEncoder.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { Extra, Value as WitValue } from "cairn:deploy/types@0.3.0";
import {
  Archive,
  Asset,
  OutputValue,
  ResourceReference,
  Secret,
  UNKNOWN,
  type Value,
  decode,
  decodeMap,
  encode,
  sameAs,
  utf8Decode,
  utf8Encode,
} from "../src/index";

const everyKind: Value = {
  null: null,
  bool: true,
  number: 1.5,
  negative: -0.25,
  big: 1e300,
  string: "héllo wörld 🌍",
  empty: "",
  array: [1, "two", [], {}],
  object: { z: 1, a: 2, m: {} },
  secret: new Secret({ password: "hunter2" }),
  unknown: UNKNOWN,
  asset: new Asset({ text: "hello" }, "ab".repeat(32)),
  uriAsset: Asset.fromUri("https://example.com/x"),
  hashOnly: new Asset({ hashOnly: true }, "00"),
  archive: Archive.fromAssets({ "a.txt": Asset.fromText("a"), nested: Archive.fromPath("./dir") }),
  reference: new ResourceReference("urn:pulumi:dev::p::t::n", "id-1", "1.2.3"),
  component: new ResourceReference("urn:pulumi:dev::p::c::n"),
  output: new OutputValue("v", true, ["urn:a", "urn:b"]),
  unknownOutput: new OutputValue(UNKNOWN, false, []),
  __proto__key: 1,
};

test("every kind round-trips", () => {
  const table = encode(everyKind);
  const back = decode(table);
  assert.deepEqual(JSON.parse(JSON.stringify(back)), JSON.parse(JSON.stringify(everyKind)));
  // The same for a diff, but for its unknowns (an unknown never equals anything).
  const { unknown: _u, unknownOutput: _o, ...known } = everyKind as Record<string, Value>;
  const { unknown: _bu, unknownOutput: _bo, ...backKnown } = back as Record<string, Value>;
  assert.ok(sameAs(backKnown, known));
  assert.ok(!sameAs(back as Value, everyKind));
  // Key order is kept.
  assert.deepEqual(Object.keys(back as object), Object.keys(everyKind as object));
  // Encoding the decoded value gives the same table.
  assert.deepEqual(encode(back as Value), table);
});

test("keys such as __proto__ are ordinary properties", () => {
  const map = decodeMap(encode(JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1}')));
  assert.equal(Object.getPrototypeOf(map), null);
  assert.deepEqual(Object.keys(map), ["__proto__", "constructor"]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("numbers keep every bit", () => {
  for (const n of [0, -0, 1, -1.5, 2 ** 53, Number.MAX_VALUE, Number.MIN_VALUE, Infinity, NaN]) {
    const back = decode(encode(n)) as number;
    assert.ok(Object.is(back, n), `${n}`);
  }
});

test("empty tables and null roots are empty maps", () => {
  assert.deepEqual(Object.keys(decodeMap({ nodes: [], strings: new Uint8Array(), extras: [] })), []);
  assert.deepEqual(Object.keys(decodeMap(encode(null))), []);
  assert.throws(() => decodeMap(encode([1])), /the root is not an object/);
});

/** A table from nodes given as [kind, a, b, keyOffset, keyLength] and a string buffer. */
function table(nodes: number[][], strings = "", extras: Extra[] = []): WitValue {
  return { nodes: nodes.flat(), strings: utf8Encode(strings), extras };
}

const deep: number[][] = [];
for (let i = 0; i < 513; i++) deep.push([4, i + 1, i < 512 ? 1 : 0, 0, 0]);

const malformed: Array<[string, WitValue, RegExp]> = [
  ["a partial node", { nodes: [0, 0, 0, 0], strings: new Uint8Array(), extras: [] }, /not a multiple of 5/],
  ["an unknown kind", table([[12, 0, 0, 0, 0]]), /unknown kind 12/],
  ["a child past the end", table([[4, 1, 2, 0, 0], [0, 0, 0, 0, 0]]), /outside the table/],
  ["a child before its parent", table([[6, 1, 0, 0, 0], [6, 1, 0, 0, 0]]), /not after it/],
  ["a shared node", table([[4, 1, 2, 0, 0], [6, 2, 0, 0, 0], [0, 0, 0, 0, 0]]), /node 2 is used twice/],
  ["an unreferenced node", table([[0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]), /node 1 is never referred to/],
  ["a node that refers to itself", table([[5, 1, 1, 0, 1], [6, 1, 0, 0, 1]], "k"), /not after it/],
  ["a span past the strings", table([[3, 0, 4, 0, 0]], "abc"), /outside the strings/],
  ["a span that is not UTF-8", { nodes: [3, 0, 2, 0, 0], strings: new Uint8Array([0xc0, 0x80]), extras: [] }, /not UTF-8/],
  ["a duplicate key", table([[5, 1, 2, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 1]], "k"), /key "k" twice/],
  ["an unused extra", table([[0, 0, 0, 0, 0]], "", [{ tag: "asset", val: { hash: null, source: { tag: "hash-only" } } }]), /extra 0 is never used/],
  ["an extra of another kind", table([[9, 0, 0, 0, 0]], "", [{ tag: "asset", val: { hash: null, source: { tag: "hash-only" } } }]), /archive but extra 0/],
  ["an extra past the end", table([[8, 3, 0, 0, 0]]), /past the 0 extras/],
  ["nesting past 512 levels", table(deep), /deeper than 512/],
  [
    "an archive member that is text",
    table([[9, 0, 0, 0, 0], [3, 0, 1, 0, 0]], "x", [{ tag: "archive", val: { hash: null, source: { tag: "assets", val: [["m", 1]] } } }]),
    /archive member "m" is text/,
  ],
  [
    "a reference ID that is a number",
    table([[10, 0, 0, 0, 0], [2, 0, 0, 0, 0]], "", [{ tag: "resource-reference", val: { urn: "u", id: 1, packageVersion: null } }]),
    /ID is number/,
  ],
];

for (const [what, value, message] of malformed) {
  test(`refuses ${what}`, () => {
    assert.throws(() => decode(value), (e: Error) => e.name === "MalformedValue" && message.test(e.message));
  });
}

test("UTF-8 without TextEncoder", () => {
  for (const text of ["", "ascii", "é", "€", "😀", "a😀b€c", "\u0000", "x".repeat(10000) + "é"]) {
    const bytes = utf8Encode(text);
    assert.deepEqual(Array.from(bytes), Array.from(Buffer.from(text, "utf8")), JSON.stringify(text.slice(0, 20)));
    assert.equal(utf8Decode(bytes), text);
  }
  // A lone surrogate becomes U+FFFD, as TextEncoder does.
  assert.deepEqual(Array.from(utf8Encode("\ud800")), [0xef, 0xbf, 0xbd]);
  for (const invalid of [[0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xf0, 0x8f, 0xbf, 0xbf]]) {
    assert.equal(utf8Decode(new Uint8Array(invalid)), undefined, `${invalid}`);
  }
});

test("encoding refuses what is not a property value", () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  for (const [value, message] of [
    [() => 1, /^TypeError: a function is not a property value/],
    [{ tags: { env: () => 1 } }, /^TypeError: tags\.env: a function is not a property value/],
    [{ when: [new Date(0)] }, /^TypeError: when\[0\]: a Date is not a property value/],
    [[1, undefined], /^TypeError: \[1\]: element 1 of an array is undefined/],
    [cycle, /^TypeError: self: the value nests deeper than 512 levels/],
    [Symbol("s"), /a symbol is not a property value/],
  ] as Array<[unknown, RegExp]>) {
    assert.throws(() => encode(value as Value), message);
  }
  // Undefined properties are left out, as JSON leaves them out.
  assert.deepEqual(Object.keys(decodeMap(encode({ a: 1, b: undefined } as unknown as Value))), ["a"]);
});

test("sameAs ignores markers; unknowns always differ", () => {
  const cases: Array<[Value, Value, boolean]> = [
    [1, 1, true],
    [new Secret("x"), "x", true],
    [new OutputValue("x", true, []), "x", true],
    [{ a: 1, b: null }, { a: 1 }, true],
    [{ a: 1 }, { a: 2 }, false],
    [[1, 2], [1, 2], true],
    [[1, 2], [2, 1], false],
    [UNKNOWN, UNKNOWN, false],
    [null, null, true],
    ["1", 1, false],
  ];
  for (const [a, b, same] of cases) assert.equal(sameAs(a, b), same, `${JSON.stringify(a)} ~ ${JSON.stringify(b)}`);
});
