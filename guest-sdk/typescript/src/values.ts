// Property values: the engine's value model in TypeScript, and the WIT node table
// (`cairn:deploy/types.value`, see wit/provider.wit) they cross the component boundary as.
//
// Plain values are JavaScript's own: `null`, booleans, numbers (every number is an IEEE-754
// double), strings, arrays and objects. Objects decoded from the host have no prototype, so a
// key such as `__proto__` or `constructor` is an ordinary property. The rest have classes:
// `Secret`, `Unknown` (the singleton `UNKNOWN`: a value not known during a preview), `Asset`,
// `Archive`, `ResourceReference` and `OutputValue`.
//
// Tables from the host are validated before anything reads them, with the strict rules of
// `cairn-wire` (every node and extra used once, children after their parent, spans inside the
// string buffer and valid UTF-8, no duplicate keys, at most 512 levels): a malformed table is
// a `MalformedValue`, never a trap. Encoding is iterative and refuses what is not a property
// value (functions, symbols, `undefined` inside arrays, cycles).

import type { Extra, Value as WitValue } from "cairn:deploy/types@0.3.0";

/** How deep a value may nest (`cairn-wire`'s `MAX_DEPTH`). */
export const MAX_DEPTH = 512;

/** Node kinds (the first word of a node). */
export const Kind = {
  NULL: 0,
  BOOL: 1,
  NUMBER: 2,
  TEXT: 3,
  ARRAY: 4,
  OBJECT: 5,
  SECRET: 6,
  UNKNOWN: 7,
  ASSET: 8,
  ARCHIVE: 9,
  REFERENCE: 10,
  OUTPUT: 11,
} as const;

const KIND_NAMES = [
  "null",
  "bool",
  "number",
  "text",
  "array",
  "object",
  "secret",
  "unknown",
  "asset",
  "archive",
  "resource reference",
  "output",
];

/** A value table that breaks the WIT's rules. */
export class MalformedValue extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedValue";
  }
}

/** A value to keep secret: never shown, encrypted in the state. */
export class Secret {
  constructor(readonly value: Value) {}
}

/** A value not known yet (in a preview, another resource's output). Use `UNKNOWN`. */
export class Unknown {
  private constructor() {}
  /** The one instance. */
  static readonly instance: Unknown = new Unknown();
  toString(): string {
    return "UNKNOWN";
  }
  toJSON(): string {
    return "UNKNOWN";
  }
}

/** The unknown value. */
export const UNKNOWN: Unknown = Unknown.instance;

/** A blob: its text, a path or a URI (or only its hash), and its SHA-256 when known. */
export class Asset {
  constructor(
    readonly source: { text: string } | { path: string } | { uri: string } | { hashOnly: true },
    readonly hash?: string,
  ) {}
  static fromText(text: string): Asset {
    return new Asset({ text });
  }
  static fromPath(path: string): Asset {
    return new Asset({ path });
  }
  static fromUri(uri: string): Asset {
    return new Asset({ uri });
  }
}

/** A collection of assets and archives by name, a path or a URI (or only its hash). */
export class Archive {
  constructor(
    readonly source:
      | { assets: Record<string, Asset | Archive> }
      | { path: string }
      | { uri: string }
      | { hashOnly: true },
    readonly hash?: string,
  ) {}
  static fromAssets(assets: Record<string, Asset | Archive>): Archive {
    return new Archive({ assets });
  }
  static fromPath(path: string): Archive {
    return new Archive({ path });
  }
  static fromUri(uri: string): Archive {
    return new Archive({ uri });
  }
}

/** A reference to a resource: its URN, and its ID (custom resources). */
export class ResourceReference {
  constructor(
    readonly urn: string,
    readonly id?: Value,
    readonly packageVersion?: string,
  ) {}
}

/** An output value as the engine passes it: its value (or `UNKNOWN`), secretness and the
 * URNs it depends on. */
export class OutputValue {
  constructor(
    readonly value: Value,
    readonly secret: boolean = false,
    readonly dependencies: string[] = [],
  ) {}
}

/** Any property value. */
export type Value =
  | null
  | boolean
  | number
  | string
  | Value[]
  | PropertyMap
  | Secret
  | Unknown
  | Asset
  | Archive
  | ResourceReference
  | OutputValue;

/** An object value: property names and values, in order. */
export interface PropertyMap {
  [key: string]: Value;
}

/** A new, empty map without a prototype (any key is an ordinary property). */
export function emptyMap(): PropertyMap {
  return Object.create(null) as PropertyMap;
}

// ---------------------------------------------------------------------------------------------
// UTF-8: QuickJS has no TextEncoder / TextDecoder.

/** The UTF-8 bytes of `text` (lone surrogates become U+FFFD, as TextEncoder does). */
export function utf8Encode(text: string): Uint8Array {
  const out = new Uint8Array(utf8Length(text));
  writeUtf8(text, out, 0);
  return out;
}

/** How many bytes `text` takes in UTF-8. */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c < 0xe000;
}

/** Writes `text` as UTF-8 into `out` at `at`; returns the offset after it. */
function writeUtf8(text: string, out: Uint8Array, at: number): number {
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      out[at++] = c;
      continue;
    }
    if (c < 0x800) {
      out[at++] = 0xc0 | (c >> 6);
      out[at++] = 0x80 | (c & 63);
      continue;
    }
    if (c >= 0xd800 && c < 0xe000) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (c < 0xdc00 && isLow(next)) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        out[at++] = 0xf0 | (c >> 18);
        out[at++] = 0x80 | ((c >> 12) & 63);
        out[at++] = 0x80 | ((c >> 6) & 63);
        out[at++] = 0x80 | (c & 63);
        continue;
      }
      c = 0xfffd;
    }
    out[at++] = 0xe0 | (c >> 12);
    out[at++] = 0x80 | ((c >> 6) & 63);
    out[at++] = 0x80 | (c & 63);
  }
  return at;
}

/** The text of `bytes[start, end)`, or `undefined` when it is not valid UTF-8 (overlong forms,
 * surrogates, code points past U+10FFFF and truncated sequences are all invalid). */
export function utf8Decode(bytes: Uint8Array, start = 0, end = bytes.length): string | undefined {
  let out = "";
  // Code units are gathered in chunks: one String.fromCharCode per chunk, not per character.
  const chunk: number[] = [];
  let i = start;
  while (i < end) {
    const b = bytes[i];
    let cp: number;
    if (b < 0x80) {
      cp = b;
      i += 1;
    } else if (b >= 0xc2 && b < 0xe0) {
      if (i + 1 >= end || (bytes[i + 1] & 0xc0) !== 0x80) return undefined;
      cp = ((b & 31) << 6) | (bytes[i + 1] & 63);
      i += 2;
    } else if (b >= 0xe0 && b < 0xf0) {
      if (i + 2 >= end) return undefined;
      const b1 = bytes[i + 1];
      const b2 = bytes[i + 2];
      if ((b1 & 0xc0) !== 0x80 || (b2 & 0xc0) !== 0x80) return undefined;
      cp = ((b & 15) << 12) | ((b1 & 63) << 6) | (b2 & 63);
      if (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000)) return undefined;
      i += 3;
    } else if (b >= 0xf0 && b < 0xf5) {
      if (i + 3 >= end) return undefined;
      const b1 = bytes[i + 1];
      const b2 = bytes[i + 2];
      const b3 = bytes[i + 3];
      if ((b1 & 0xc0) !== 0x80 || (b2 & 0xc0) !== 0x80 || (b3 & 0xc0) !== 0x80) return undefined;
      cp = ((b & 7) << 18) | ((b1 & 63) << 12) | ((b2 & 63) << 6) | (b3 & 63);
      if (cp < 0x10000 || cp > 0x10ffff) return undefined;
      i += 4;
    } else {
      return undefined;
    }
    if (cp < 0x10000) {
      chunk.push(cp);
    } else {
      cp -= 0x10000;
      chunk.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 1023));
    }
    if (chunk.length >= 4096) {
      out += String.fromCharCode.apply(null, chunk);
      chunk.length = 0;
    }
  }
  if (chunk.length > 0) out += String.fromCharCode.apply(null, chunk);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Numbers: a node holds a double as two little-endian 32-bit words.

const F64 = new Float64Array(1);
const WORDS = new Uint32Array(F64.buffer);

function numberOf(low: number, high: number): number {
  WORDS[0] = low;
  WORDS[1] = high;
  return F64[0];
}

// ---------------------------------------------------------------------------------------------
// Decoding.

/** Decodes a table (validated first). An empty table is `undefined`. */
export function decode(table: WitValue): Value | undefined {
  const nodes = table.nodes;
  if (nodes.length === 0) {
    if (table.extras.length > 0) throw new MalformedValue("extra 0 is never used");
    return undefined;
  }
  return new Decoder(table).root();
}

/** Decodes a table meant as a property map: an object root, or an empty table or `null` root
 * (an empty map). */
export function decodeMap(table: WitValue): PropertyMap {
  const value = decode(table);
  if (value === undefined || value === null) return emptyMap();
  if (!isMap(value)) throw new MalformedValue(`the root is not an object but ${kindOf(value)}`);
  return value;
}

class Decoder {
  private readonly nodes: ArrayLike<number>;
  private readonly strings: Uint8Array;
  private readonly extras: Extra[];
  private readonly count: number;
  /** Each node's depth (the root's is 1); 0 while nothing refers to it. */
  private readonly depth: Uint16Array;
  private readonly extraUsed: Uint8Array;

  constructor(table: WitValue) {
    this.nodes = table.nodes;
    this.strings = table.strings;
    this.extras = table.extras;
    if (this.nodes.length % 5 !== 0) {
      throw new MalformedValue("the node table's length is not a multiple of 5");
    }
    this.count = this.nodes.length / 5;
    this.depth = new Uint16Array(this.count);
    this.extraUsed = new Uint8Array(this.extras.length);
  }

  /** Validates every node (in order: children come after their parent), then decodes. */
  root(): Value {
    this.depth[0] = 1;
    for (let i = 0; i < this.count; i++) this.check(i);
    const unused = this.extraUsed.indexOf(0);
    if (unused >= 0) throw new MalformedValue(`extra ${unused} is never used`);
    return this.value(0);
  }

  private word(i: number, w: number): number {
    return this.nodes[5 * i + w];
  }

  private refer(parent: number, child: number): void {
    if (child >= this.count) {
      throw new MalformedValue(`node ${parent} refers to node ${child}, past the table's ${this.count}`);
    }
    if (child <= parent) {
      throw new MalformedValue(`node ${parent} refers to node ${child}, which is not after it`);
    }
    if (this.depth[child] !== 0) throw new MalformedValue(`node ${child} is used twice`);
    this.depth[child] = this.depth[parent] + 1;
  }

  private text(node: number, offset: number, length: number): string {
    const end = offset + length;
    if (end > this.strings.length) {
      throw new MalformedValue(`node ${node}'s string span lies outside the strings`);
    }
    const text = utf8Decode(this.strings, offset, end);
    if (text === undefined) throw new MalformedValue(`node ${node}'s string is not UTF-8`);
    return text;
  }

  private extra(node: number, at: number, kind: number): Extra {
    if (at >= this.extras.length) {
      throw new MalformedValue(`node ${node} refers to extra ${at}, past the ${this.extras.length} extras`);
    }
    if (this.extraUsed[at]) throw new MalformedValue(`extra ${at} is used twice`);
    this.extraUsed[at] = 1;
    const extra = this.extras[at];
    const expected = EXTRA_TAGS[kind];
    if (extra === null || typeof extra !== "object" || extra.tag !== expected) {
      throw new MalformedValue(`node ${node} is ${KIND_NAMES[kind]} but extra ${at} is not`);
    }
    return extra;
  }

  private check(i: number): void {
    const depth = this.depth[i];
    if (depth === 0) throw new MalformedValue(`node ${i} is never referred to`);
    if (depth > MAX_DEPTH) throw new MalformedValue(`the value nests deeper than ${MAX_DEPTH} levels`);
    const kind = this.word(i, 0);
    const a = this.word(i, 1);
    const b = this.word(i, 2);
    switch (kind) {
      case Kind.NULL:
      case Kind.BOOL:
      case Kind.NUMBER:
      case Kind.UNKNOWN:
        return;
      case Kind.TEXT:
        this.text(i, a, b);
        return;
      case Kind.ARRAY:
      case Kind.OBJECT: {
        if (b > 0 && a + b > this.count) {
          throw new MalformedValue(`node ${i}'s children lie outside the table`);
        }
        for (let c = a; c < a + b; c++) this.refer(i, c);
        if (kind === Kind.OBJECT) {
          const seen = new Set<string>();
          for (let c = a; c < a + b; c++) {
            const key = this.text(c, this.word(c, 3), this.word(c, 4));
            if (seen.has(key)) throw new MalformedValue(`node ${i} has the key ${JSON.stringify(key)} twice`);
            seen.add(key);
          }
        }
        return;
      }
      case Kind.SECRET:
        this.refer(i, a);
        return;
      case Kind.ASSET:
      case Kind.ARCHIVE:
      case Kind.REFERENCE:
      case Kind.OUTPUT: {
        const extra = this.extra(i, a, kind);
        if (extra.tag === "archive" && extra.val.source.tag === "assets") {
          const names = new Set<string>();
          for (const [name, c] of extra.val.source.val) {
            this.refer(i, c);
            const member = this.word(c, 0);
            if (member !== Kind.ASSET && member !== Kind.ARCHIVE) {
              throw new MalformedValue(`archive member ${JSON.stringify(name)} is ${KIND_NAMES[member] ?? "unknown"}`);
            }
            if (names.has(name)) throw new MalformedValue(`archive member ${JSON.stringify(name)} appears twice`);
            names.add(name);
          }
        } else if (extra.tag === "resource-reference" && extra.val.id != null) {
          const c = extra.val.id;
          this.refer(i, c);
          const id = this.word(c, 0);
          if (id !== Kind.TEXT && id !== Kind.UNKNOWN) {
            throw new MalformedValue(`a resource reference's ID is ${KIND_NAMES[id] ?? "unknown"}`);
          }
        } else if (extra.tag === "output" && extra.val.value != null) {
          this.refer(i, extra.val.value);
        }
        return;
      }
      default:
        throw new MalformedValue(`node ${i} has unknown kind ${kind}`);
    }
  }

  /** Decodes a validated node (recursion is bounded by the validated depth). */
  private value(i: number): Value {
    const kind = this.word(i, 0);
    const a = this.word(i, 1);
    const b = this.word(i, 2);
    switch (kind) {
      case Kind.BOOL:
        return a === 1;
      case Kind.NUMBER:
        return numberOf(a, b);
      case Kind.TEXT:
        return this.text(i, a, b);
      case Kind.ARRAY: {
        const out: Value[] = new Array(b);
        for (let k = 0; k < b; k++) out[k] = this.value(a + k);
        return out;
      }
      case Kind.OBJECT: {
        const out = emptyMap();
        for (let k = 0; k < b; k++) {
          const m = a + k;
          out[this.text(m, this.word(m, 3), this.word(m, 4))] = this.value(m);
        }
        return out;
      }
      case Kind.SECRET:
        return new Secret(this.value(a));
      case Kind.UNKNOWN:
        return UNKNOWN;
      case Kind.ASSET:
      case Kind.ARCHIVE:
      case Kind.REFERENCE:
      case Kind.OUTPUT:
        return this.extraValue(this.extras[a]);
      default:
        return null;
    }
  }

  private extraValue(extra: Extra): Value {
    const hash = (h: string | null | undefined) => (h == null ? undefined : h);
    switch (extra.tag) {
      case "asset":
        return assetOf(extra.val.source, hash(extra.val.hash));
      case "archive": {
        const s = extra.val.source;
        const h = hash(extra.val.hash);
        if (s.tag === "assets") {
          const assets: Record<string, Asset | Archive> = Object.create(null);
          for (const [name, c] of s.val) assets[name] = this.value(c) as Asset | Archive;
          return new Archive({ assets }, h);
        }
        if (s.tag === "path") return new Archive({ path: s.val }, h);
        if (s.tag === "uri") return new Archive({ uri: s.val }, h);
        return new Archive({ hashOnly: true }, h);
      }
      case "resource-reference": {
        const r = extra.val;
        return new ResourceReference(
          r.urn,
          r.id == null ? undefined : this.value(r.id),
          r.packageVersion == null ? undefined : r.packageVersion,
        );
      }
      case "output": {
        const o = extra.val;
        return new OutputValue(o.value == null ? UNKNOWN : this.value(o.value), o.secret, [...o.dependencies]);
      }
    }
  }
}

const EXTRA_TAGS: Record<number, string> = {
  [Kind.ASSET]: "asset",
  [Kind.ARCHIVE]: "archive",
  [Kind.REFERENCE]: "resource-reference",
  [Kind.OUTPUT]: "output",
};

function assetOf(
  s: { tag: "text"; val: string } | { tag: "path"; val: string } | { tag: "uri"; val: string } | { tag: "hash-only" },
  hash: string | undefined,
): Asset {
  if (s.tag === "text") return new Asset({ text: s.val }, hash);
  if (s.tag === "path") return new Asset({ path: s.val }, hash);
  if (s.tag === "uri") return new Asset({ uri: s.val }, hash);
  return new Asset({ hashOnly: true }, hash);
}

// ---------------------------------------------------------------------------------------------
// Encoding.

/** A growable buffer of 32-bit words or bytes: one allocation per doubling, not per node. */
class Words {
  buf = new Uint32Array(64);
  len = 0;
  grow(by: number): number {
    const at = this.len;
    this.len += by;
    if (this.len > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < this.len) size *= 2;
      const next = new Uint32Array(size);
      next.set(this.buf.subarray(0, at));
      this.buf = next;
    }
    return at;
  }
}

class Bytes {
  buf = new Uint8Array(256);
  len = 0;
  /** Appends `text` as UTF-8; its span. */
  text(text: string): [number, number] {
    const at = this.len;
    // Three bytes per UTF-16 unit at most; a long text is measured instead, so a huge string
    // does not reserve three times its size.
    const need = text.length > 65536 ? utf8Length(text) : text.length * 3;
    if (at + need > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < at + need) size *= 2;
      const next = new Uint8Array(size);
      next.set(this.buf.subarray(0, at));
      this.buf = next;
    }
    this.len = writeUtf8(text, this.buf, at);
    return [at, this.len - at];
  }
}

/** Encodes a value. Throws a `TypeError` for what is not a property value, naming where it
 * is (`tags.env: a function is not a property value`). */
export function encode(value: Value): WitValue {
  try {
    return encodeValue(value);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    const at = locate(value, "", 0, new Set());
    throw at ? new TypeError(`${at}: ${e.message}`) : e;
  }
}

/** The path of the first thing `encodeValue` refuses (only searched for after a refusal). */
function locate(v: unknown, path: string, depth: number, seen: Set<unknown>): string | undefined {
  const here = path === "" ? undefined : path;
  if (depth > MAX_DEPTH) return here;
  if (typeof v === "function" || typeof v === "symbol" || typeof v === "bigint") return here;
  if (typeof v !== "object" || v === null) return undefined;
  if (seen.has(v)) return here;
  seen.add(v);
  const child = (key: string | number, x: unknown) =>
    locate(x, typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`, depth + 1, seen);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (v[i] === undefined) return `${path}[${i}]`;
      const found = child(i, v[i]);
      if (found !== undefined) return found;
    }
  } else if (v instanceof Secret) {
    return locate(v.value, path, depth + 1, seen);
  } else if (isPlainObject(v)) {
    for (const k of Object.keys(v)) {
      const found = child(k, v[k]);
      if (found !== undefined) return found;
    }
  } else if (!(v instanceof Asset || v instanceof Archive || v instanceof ResourceReference || v instanceof OutputValue || v === UNKNOWN)) {
    return here;
  }
  seen.delete(v);
  return undefined;
}

function encodeValue(value: Value): WitValue {
  const nodes = new Words();
  const strings = new Bytes();
  const extras: Extra[] = [];
  nodes.grow(5);
  // (node index, value, key or undefined, depth): a stack, so encoding never recurses.
  const stack: Array<[number, unknown, string | undefined, number]> = [[0, value, undefined, 1]];
  const allocate = (n: number) => nodes.grow(5 * n) / 5;
  while (stack.length > 0) {
    const [i, v, key, depth] = stack.pop()!;
    if (depth > MAX_DEPTH) throw new TypeError(`the value nests deeper than ${MAX_DEPTH} levels (a cycle?)`);
    let kind: number;
    let a = 0;
    let b = 0;
    if (v === null || v === undefined) {
      kind = Kind.NULL;
    } else if (typeof v === "boolean") {
      kind = Kind.BOOL;
      a = v ? 1 : 0;
    } else if (typeof v === "number") {
      kind = Kind.NUMBER;
      F64[0] = v;
      a = WORDS[0];
      b = WORDS[1];
    } else if (typeof v === "string") {
      kind = Kind.TEXT;
      [a, b] = strings.text(v);
    } else if (Array.isArray(v)) {
      kind = Kind.ARRAY;
      b = v.length;
      a = b > 0 ? allocate(b) : 0;
      for (let k = b - 1; k >= 0; k--) {
        if (v[k] === undefined) throw new TypeError(`element ${k} of an array is undefined`);
        stack.push([a + k, v[k], undefined, depth + 1]);
      }
    } else if (v instanceof Secret) {
      kind = Kind.SECRET;
      a = allocate(1);
      stack.push([a, v.value, undefined, depth + 1]);
    } else if (v === UNKNOWN) {
      kind = Kind.UNKNOWN;
    } else if (v instanceof Asset) {
      kind = Kind.ASSET;
      a = extras.length;
      extras.push({ tag: "asset", val: { hash: v.hash ?? null, source: assetSource(v) } });
    } else if (v instanceof Archive) {
      kind = Kind.ARCHIVE;
      a = extras.length;
      const s = v.source;
      if ("assets" in s) {
        const names = Object.keys(s.assets);
        const first = names.length > 0 ? allocate(names.length) : 0;
        const members: Array<[string, number]> = [];
        names.forEach((name, k) => {
          const member = s.assets[name];
          if (!(member instanceof Asset) && !(member instanceof Archive)) {
            throw new TypeError(`archive member ${JSON.stringify(name)} is not an asset or archive`);
          }
          members.push([name, first + k]);
          stack.push([first + k, member, undefined, depth + 1]);
        });
        extras.push({ tag: "archive", val: { hash: v.hash ?? null, source: { tag: "assets", val: members } } });
      } else {
        const source =
          "path" in s
            ? ({ tag: "path", val: s.path } as const)
            : "uri" in s
              ? ({ tag: "uri", val: s.uri } as const)
              : ({ tag: "hash-only" } as const);
        extras.push({ tag: "archive", val: { hash: v.hash ?? null, source } });
      }
    } else if (v instanceof ResourceReference) {
      kind = Kind.REFERENCE;
      a = extras.length;
      let id: number | null = null;
      if (v.id !== undefined && v.id !== null) {
        if (typeof v.id !== "string" && v.id !== UNKNOWN) {
          throw new TypeError("a resource reference's ID must be a string or UNKNOWN");
        }
        id = allocate(1);
        stack.push([id, v.id, undefined, depth + 1]);
      }
      extras.push({
        tag: "resource-reference",
        val: { urn: String(v.urn), id, packageVersion: v.packageVersion ?? null },
      });
    } else if (v instanceof OutputValue) {
      kind = Kind.OUTPUT;
      a = extras.length;
      let inner: number | null = null;
      if (v.value !== UNKNOWN) {
        inner = allocate(1);
        stack.push([inner, v.value, undefined, depth + 1]);
      }
      extras.push({
        tag: "output",
        val: { value: inner, secret: !!v.secret, dependencies: v.dependencies.map(String) },
      });
    } else if (typeof v === "object" && isPlainObject(v)) {
      kind = Kind.OBJECT;
      const entries = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined);
      b = entries.length;
      a = b > 0 ? allocate(b) : 0;
      for (let k = b - 1; k >= 0; k--) {
        stack.push([a + k, (v as Record<string, unknown>)[entries[k]], entries[k], depth + 1]);
      }
    } else {
      throw new TypeError(`${describeJs(v)} is not a property value`);
    }
    const [ko, kl] = key === undefined ? [0, 0] : strings.text(key);
    const w = nodes.buf;
    const at = 5 * i;
    w[at] = kind;
    w[at + 1] = a;
    w[at + 2] = b;
    w[at + 3] = ko;
    w[at + 4] = kl;
  }
  return {
    nodes: nodes.buf.slice(0, nodes.len),
    strings: strings.buf.slice(0, strings.len),
    extras,
  };
}

/** The empty table (no nodes): an empty map or no value. */
export function emptyTable(): WitValue {
  return { nodes: new Uint32Array(0), strings: new Uint8Array(0), extras: [] };
}

function assetSource(v: Asset) {
  const s = v.source;
  if ("text" in s) return { tag: "text", val: String(s.text) } as const;
  if ("path" in s) return { tag: "path", val: String(s.path) } as const;
  if ("uri" in s) return { tag: "uri", val: String(s.uri) } as const;
  return { tag: "hash-only" } as const;
}

function describeJs(v: unknown): string {
  if (typeof v === "object" && v !== null) {
    const name = (v as { constructor?: { name?: string } }).constructor?.name;
    return name ? `a ${name}` : "an object";
  }
  return `a ${typeof v}`;
}

/** An object literal or a map decoded from the host (not a class instance, array or date). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
}

/** A property map (an object value). */
export function isMap(v: unknown): v is PropertyMap {
  return isPlainObject(v);
}

// ---------------------------------------------------------------------------------------------
// Reading values.

/** What a value is, for messages: "a string", "an object", "the number 1.5". */
export function kindOf(v: Value | undefined): string {
  const x = reveal(v);
  if (x === undefined) return "nothing";
  if (x === null) return "null";
  if (typeof x === "number") return `the number ${x}`;
  if (typeof x === "string") return "a string";
  if (typeof x === "boolean") return "a boolean";
  if (Array.isArray(x)) return "an array";
  if (x === UNKNOWN) return "an unknown value";
  if (x instanceof Asset) return "an asset";
  if (x instanceof Archive) return "an archive";
  if (x instanceof ResourceReference) return "a resource reference";
  return "an object";
}

/** The value without its top-level secret and output wrappers. */
export function reveal(v: Value | undefined): Value | undefined {
  let x = v;
  for (;;) {
    if (x instanceof Secret) x = x.value;
    else if (x instanceof OutputValue) x = x.value;
    else return x;
  }
}

/** The value with every secret marker removed, anywhere inside it. */
export function unsecret<T extends Value>(v: T): T;
export function unsecret(v: Value): Value {
  if (v instanceof Secret) return unsecret(v.value);
  if (Array.isArray(v)) return v.map(unsecret);
  if (v instanceof OutputValue) return new OutputValue(unsecret(v.value), false, v.dependencies);
  if (isMap(v)) {
    const out = emptyMap();
    for (const k of Object.keys(v)) out[k] = unsecret(v[k]);
    return out;
  }
  return v;
}

/** True when the value is, or contains, an unknown. */
export function containsUnknowns(v: Value | undefined): boolean {
  if (v === UNKNOWN) return true;
  if (v instanceof Secret) return containsUnknowns(v.value);
  if (v instanceof OutputValue) return v.value === UNKNOWN || containsUnknowns(v.value);
  if (Array.isArray(v)) return v.some(containsUnknowns);
  if (isMap(v)) return Object.keys(v).some((k) => containsUnknowns(v[k]));
  return false;
}

/** True when the value is, or contains, a secret. */
export function containsSecrets(v: Value | undefined): boolean {
  if (v instanceof Secret) return true;
  if (v instanceof OutputValue) return v.secret || containsSecrets(v.value);
  if (Array.isArray(v)) return v.some(containsSecrets);
  if (isMap(v)) return Object.keys(v).some((k) => containsSecrets(v[k]));
  return false;
}

/** Whether two values are the same for a diff: secret and output markers are ignored, null
 * equals absent inside objects, and an unknown never equals anything. */
export function sameAs(a: Value | undefined, b: Value | undefined): boolean {
  const x = reveal(a);
  const y = reveal(b);
  if (x === UNKNOWN || y === UNKNOWN) return false;
  if (x === undefined || x === null) return y === undefined || y === null;
  if (y === undefined || y === null) return false;
  if (typeof x !== "object" || typeof y !== "object") return x === y;
  if (Array.isArray(x) || Array.isArray(y)) {
    return Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((e, i) => sameAs(e, y[i]));
  }
  if (isMap(x) && isMap(y)) {
    const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
    for (const k of keys) if (!sameAs(x[k], y[k])) return false;
    return true;
  }
  if (x instanceof Asset && y instanceof Asset) {
    return x.hash === y.hash && JSON.stringify(x.source) === JSON.stringify(y.source);
  }
  if (x instanceof Archive && y instanceof Archive) {
    if (x.hash !== undefined || y.hash !== undefined) return x.hash === y.hash;
    return JSON.stringify(x.source) === JSON.stringify(y.source);
  }
  if (x instanceof ResourceReference && y instanceof ResourceReference) {
    return x.urn === y.urn && sameAs(x.id, y.id) && x.packageVersion === y.packageVersion;
  }
  return false;
}
