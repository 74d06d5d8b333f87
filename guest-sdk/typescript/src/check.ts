// Typed reads from property maps and `Checker`, which validates a resource's inputs in `check`
// (the Rust SDK's `PropertyMapExt` and `Checker`).
//
// Reads see through secrets and outputs. Paths are property paths: `length`, `tags.env`,
// `ports[0]`, `tags["a.b"]`. `get*` are lenient (undefined when absent, null, unknown or of
// another type); `require*` throw a `CheckFailure` naming the property.

import {
  type PropertyMap,
  type Value,
  UNKNOWN,
  emptyMap,
  isMap,
  kindOf,
  reveal,
} from "./values";

/** A validation failure: the property path at fault (empty for the whole resource) and why. */
export class CheckFailure extends Error {
  constructor(
    readonly property: string,
    readonly reason: string,
  ) {
    super(property ? `${property}: ${reason}` : reason);
    this.name = "CheckFailure";
  }
}

/** What a path leads to. */
export type Lookup = { found: Value } | "missing" | "unknown";

/** The segments of a property path, or undefined when it is malformed. */
export function parsePath(path: string): Array<string | number> | undefined {
  const out: Array<string | number> = [];
  let i = 0;
  let expectName = true;
  while (i < path.length) {
    const c = path[i];
    if (c === "[") {
      const close = path.indexOf("]", i);
      if (close < 0) return undefined;
      const inner = path.slice(i + 1, close);
      if (inner.startsWith('"')) {
        try {
          const key: unknown = JSON.parse(inner);
          if (typeof key !== "string") return undefined;
          out.push(key);
        } catch {
          return undefined;
        }
      } else if (/^[0-9]+$/.test(inner)) {
        out.push(Number(inner));
      } else {
        return undefined;
      }
      i = close + 1;
      expectName = false;
    } else if (c === ".") {
      if (expectName) return undefined;
      i++;
      expectName = true;
    } else {
      let end = i;
      while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
      out.push(path.slice(i, end));
      i = end;
      expectName = false;
    }
  }
  return expectName && out.length > 0 ? undefined : out;
}

/** Looks `path` up in `map`; a malformed path is missing. */
export function lookup(map: PropertyMap, path: string): Lookup {
  const segments = parsePath(path);
  if (segments === undefined) return "missing";
  let here: Value | undefined = map;
  for (const segment of segments) {
    const x = reveal(here);
    if (x === UNKNOWN) return "unknown";
    if (typeof segment === "number") {
      if (!Array.isArray(x) || segment >= x.length) return "missing";
      here = x[segment];
    } else {
      if (!isMap(x) || !Object.prototype.hasOwnProperty.call(x, segment)) return "missing";
      here = x[segment];
    }
  }
  const value = reveal(here);
  if (value === UNKNOWN) return "unknown";
  if (value === undefined || value === null) return "missing";
  return { found: value };
}

/** The value at `path` (secrets and outputs seen through), unless absent, null or unknown. */
export function get(map: PropertyMap, path: string): Value | undefined {
  const r = lookup(map, path);
  return typeof r === "object" ? r.found : undefined;
}

/** True when the property (or something on the way to it) is not known yet. */
export function isUnknown(map: PropertyMap, path: string): boolean {
  return lookup(map, path) === "unknown";
}

export function getString(map: PropertyMap, path: string): string | undefined {
  const v = get(map, path);
  return typeof v === "string" ? v : undefined;
}

export function getNumber(map: PropertyMap, path: string): number | undefined {
  const v = get(map, path);
  return typeof v === "number" ? v : undefined;
}

/** The number when it is an integer. */
export function getInteger(map: PropertyMap, path: string): number | undefined {
  const v = get(map, path);
  return typeof v === "number" && Number.isInteger(v) ? v : undefined;
}

export function getBoolean(map: PropertyMap, path: string): boolean | undefined {
  const v = get(map, path);
  return typeof v === "boolean" ? v : undefined;
}

export function getArray(map: PropertyMap, path: string): Value[] | undefined {
  const v = get(map, path);
  return Array.isArray(v) ? v : undefined;
}

export function getObject(map: PropertyMap, path: string): PropertyMap | undefined {
  const v = get(map, path);
  return isMap(v) ? v : undefined;
}

function required<T>(
  map: PropertyMap,
  path: string,
  expected: string,
  read: (v: Value) => T | undefined,
): T {
  const r = lookup(map, path);
  if (r === "missing") throw new CheckFailure(path, "missing required property");
  if (r === "unknown") throw new CheckFailure(path, "is not known yet");
  const v = read(r.found);
  if (v === undefined) throw new CheckFailure(path, `expected ${expected}, found ${kindOf(r.found)}`);
  return v;
}

export function requireString(map: PropertyMap, path: string): string {
  return required(map, path, "a string", (v) => (typeof v === "string" ? v : undefined));
}

export function requireNumber(map: PropertyMap, path: string): number {
  return required(map, path, "a number", (v) => (typeof v === "number" ? v : undefined));
}

export function requireInteger(map: PropertyMap, path: string): number {
  return required(map, path, "an integer", (v) =>
    typeof v === "number" && Number.isInteger(v) ? v : undefined,
  );
}

export function requireBoolean(map: PropertyMap, path: string): boolean {
  return required(map, path, "a boolean", (v) => (typeof v === "boolean" ? v : undefined));
}

export function requireObject(map: PropertyMap, path: string): PropertyMap {
  return required(map, path, "an object", (v) => (isMap(v) ? v : undefined));
}

/** `<name>-<7 hex characters>`, the hex an FNV-1a hash of `seed`: a generated physical name
 * that is the same every time for the same seed (the Rust SDK's `auto_name`). */
export function autoName(name: string, seed: Uint8Array): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of seed) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `${name}-${(hash >> 36n).toString(16).padStart(7, "0")}`;
}

/** What `check` returns: the checked inputs and any failures. */
export interface CheckResult {
  inputs: PropertyMap;
  failures: CheckFailure[];
}

/**
 * Validates inputs in `check`: typed reads that record failures, defaults, and the result.
 * Reads return undefined when the property is absent, unknown (a preview) or invalid; only
 * invalid values (and absent required ones) are failures, so unknowns pass through.
 */
export class Checker {
  readonly inputs: PropertyMap;
  readonly failures: CheckFailure[] = [];

  /** Starts checking `inputs` (a copy: the request's map is left alone). */
  constructor(inputs: PropertyMap) {
    this.inputs = emptyMap();
    for (const k of Object.keys(inputs)) this.inputs[k] = inputs[k];
  }

  /** Records a failure. */
  fail(property: string, reason: string): void {
    this.failures.push(new CheckFailure(property, reason));
  }

  private read<T>(path: string, required: boolean, expected: string, test: (v: Value) => T | undefined): T | undefined {
    const r = lookup(this.inputs, path);
    if (r === "unknown") return undefined;
    if (r === "missing") {
      if (required) this.fail(path, "missing required property");
      return undefined;
    }
    const v = test(r.found);
    if (v === undefined) this.fail(path, `expected ${expected}, found ${kindOf(r.found)}`);
    return v;
  }

  string(path: string): string | undefined {
    return this.read(path, false, "a string", (v) => (typeof v === "string" ? v : undefined));
  }

  requiredString(path: string): string | undefined {
    return this.read(path, true, "a string", (v) => (typeof v === "string" ? v : undefined));
  }

  number(path: string): number | undefined {
    return this.read(path, false, "a number", (v) => (typeof v === "number" ? v : undefined));
  }

  requiredNumber(path: string): number | undefined {
    return this.read(path, true, "a number", (v) => (typeof v === "number" ? v : undefined));
  }

  integer(path: string): number | undefined {
    return this.read(path, false, "an integer", (v) =>
      typeof v === "number" && Number.isInteger(v) ? v : undefined,
    );
  }

  requiredInteger(path: string): number | undefined {
    return this.read(path, true, "an integer", (v) =>
      typeof v === "number" && Number.isInteger(v) ? v : undefined,
    );
  }

  boolean(path: string): boolean | undefined {
    return this.read(path, false, "a boolean", (v) => (typeof v === "boolean" ? v : undefined));
  }

  object(path: string): PropertyMap | undefined {
    return this.read(path, false, "an object", (v) => (isMap(v) ? v : undefined));
  }

  array(path: string): Value[] | undefined {
    return this.read(path, false, "an array", (v) => (Array.isArray(v) ? v : undefined));
  }

  /** Sets a top-level property when it is absent or null (not when it is unknown). */
  default(key: string, value: Value): void {
    const v = this.inputs[key];
    if (v === undefined || v === null) this.inputs[key] = value;
  }

  /**
   * Auto-names the resource when `key` is absent or null: the old inputs' value when there is
   * one (a name is stable across updates), else `<logical name>-<7 hex>` from the request's
   * random seed (the same in a preview and the update that follows).
   */
  autoName(key: string, name: string, oldInputs: PropertyMap, seed: Uint8Array): void {
    const v = this.inputs[key];
    if (v !== undefined && v !== null) return;
    const old = oldInputs[key];
    this.inputs[key] = old !== undefined && old !== null ? old : autoName(name, seed);
  }

  /** The checked inputs and the failures. */
  finish(): CheckResult {
    return { inputs: this.inputs, failures: this.failures };
  }
}
