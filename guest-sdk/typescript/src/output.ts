// `Output<T>`: a value that becomes known later, with the resources it depends on and whether
// it is secret; `Input<T>`: a plain value, a promise or an output, as resource arguments take
// them.
//
// The rules are the type system's (the Rust SDK's `Output`):
// * dependencies are resource URNs; a derived output depends on everything its sources do;
// * unknown (in a preview, before the resource exists): callbacks never run on an unknown
//   value, what derives from it is unknown, `all` is unknown when any part is;
// * secret: what derives from a secret is secret, `all` is secret when any part is;
// * failed (a registration failed, a callback threw): everything derived fails the same way,
//   and the program fails once its outstanding requests finish.
//
// Outputs resolve through callbacks run by the SDK's event loop (program.ts) as the engine's
// answers arrive, not through promises: an output carries what a promise cannot (unknown in a
// preview, secret, dependencies). Promises meet outputs at the edges: `output(promise)` and
// inputs that are promises become outputs once they settle, and an `apply` callback may return
// a promise (be `async`); the SDK's promise queue (promise.ts) runs between the loop's turns.
// Promises that were turned into outputs and never settled are counted, so the program can
// say so instead of silently leaving what depends on them out.

import { SdkPromise, isThenable } from "./promise";
import {
  type PropertyMap,
  type Value,
  OutputValue,
  Secret,
  UNKNOWN,
  containsUnknowns,
  emptyMap,
  isPlainObject,
  unsecret,
} from "./values";

/** What an output resolved to. */
export type Known<T> = { value: T } | { unknown: true } | { failed: string };

/** A resolved output: its value and metadata. */
export interface Resolved<T> {
  known: Known<T>;
  secret: boolean;
  deps: ReadonlySet<string>;
}

/** Why a program fails; the runtime records the first one (set by program.ts). */
let recordError: (message: string) => void = () => {};

/** @internal Lets the runtime learn of callback failures. */
export function setErrorRecorder(f: (message: string) => void): void {
  recordError = f;
}

/** Promises turned into outputs that have not settled yet (see `unsettledPromises`). */
let unsettled = 0;

/** @internal How many promises given as inputs or returned by `apply` callbacks are still
 * pending: once nothing else can run, they never will settle. */
export function unsettledPromises(): number {
  return unsettled;
}

/** @internal Forgets the count (a new run). */
export function resetUnsettledPromises(): void {
  unsettled = 0;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Follows a promise: `then` gets its value, `failed` its rejection, each once. */
function follow<T>(p: PromiseLike<T>, then: (value: T) => void, failed: (reason: unknown) => void): void {
  unsettled++;
  // The SDK's own promise follows any thenable (and runs on the SDK's queue, wherever `p` came
  // from).
  SdkPromise.resolve(p).then(
    (value) => {
      unsettled--;
      then(value as T);
    },
    (reason: unknown) => {
      unsettled--;
      failed(reason);
    },
  );
}

const NO_DEPS: ReadonlySet<string> = new Set();

function union(a: ReadonlySet<string>, b: ReadonlySet<string>): ReadonlySet<string> {
  if (b.size === 0) return a;
  if (a.size === 0) return b;
  const out = new Set(a);
  for (const d of b) out.add(d);
  return out;
}

/** A value known later; cheap to share (derived outputs share nothing mutable). */
export class Output<T> {
  // `any`: a waiter only ever gets this output's own resolution, and typing it by `T` would
  // make `Output<T>` invariant (an `Output<string>` would not be an `Output<unknown>`).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private waiters: Array<(r: Resolved<any>) => void> | undefined = [];
  private result: Resolved<T> | undefined;

  private constructor() {}

  /** @internal An output and the function that settles it (once). */
  static pending<T>(): [Output<T>, (r: Resolved<T>) => void] {
    const out = new Output<T>();
    const settle = (r: Resolved<T>) => {
      if (out.result !== undefined) return;
      out.result = r;
      const waiters = out.waiters ?? [];
      out.waiters = undefined;
      for (const w of waiters) w(r);
    };
    return [out, settle];
  }

  /** @internal An output already resolved. */
  static resolved<T>(r: Resolved<T>): Output<T> {
    const [out, settle] = Output.pending<T>();
    settle(r);
    return out;
  }

  /** A known, plain output with no dependencies. */
  static create<T>(value: T): Output<T> {
    return Output.resolved({ known: { value }, secret: false, deps: NO_DEPS });
  }

  /** A known secret output. */
  static secret<T>(value: T): Output<T> {
    return Output.resolved({ known: { value }, secret: true, deps: NO_DEPS });
  }

  /** An output whose value is not known (as in a preview). */
  static unknown<T>(): Output<T> {
    return Output.resolved<T>({ known: { unknown: true }, secret: false, deps: NO_DEPS });
  }

  /** An output that failed with `message`. */
  static failed<T>(message: string): Output<T> {
    return Output.resolved<T>({ known: { failed: message }, secret: false, deps: NO_DEPS });
  }

  /** @internal Runs `f` once resolved (at once when it is). */
  onResolved(f: (r: Resolved<T>) => void): void {
    if (this.result !== undefined) f(this.result);
    else this.waiters!.push(f);
  }

  /** The resolution, if resolved yet (tests, and reading settled results). */
  peek(): Resolved<T> | undefined {
    return this.result;
  }

  /** True once resolved and unknown. */
  isUnknown(): boolean {
    return this.result !== undefined && "unknown" in this.result.known;
  }

  /** True once resolved and secret. */
  isSecret(): boolean {
    return this.result?.secret ?? false;
  }

  /** The URNs the output depends on (those known so far). */
  dependencies(): string[] {
    return [...(this.result?.deps ?? NO_DEPS)];
  }

  /**
   * Derives an output: `f` runs on the value once it is known, never on an unknown. It may
   * return a plain value, another output (flattened) or a promise of either (an `async`
   * callback). A thrown error or a rejection fails the derived output and the program.
   */
  apply<U>(f: (value: T) => Input<U>): Output<U> {
    const [out, settle] = Output.pending<U>();
    this.onResolved((r) => {
      if (!("value" in r.known)) {
        settle({ known: r.known as Known<U>, secret: r.secret, deps: r.deps });
        return;
      }
      let produced: Input<U>;
      try {
        produced = f(r.known.value);
      } catch (e) {
        const message = `apply failed: ${e instanceof Error ? e.message : String(e)}`;
        recordError(message);
        settle({ known: { failed: message }, secret: r.secret, deps: r.deps });
        return;
      }
      const finish = (value: unknown) => {
        if (value instanceof Output) {
          value.onResolved((inner) =>
            settle({
              known: inner.known as Known<U>,
              secret: inner.secret || r.secret,
              deps: union(r.deps, inner.deps),
            }),
          );
          return;
        }
        settle({ known: { value: value as U }, secret: r.secret, deps: r.deps });
      };
      if (!(produced instanceof Output) && isThenable(produced)) {
        // The derived output keeps the source's secrecy and dependencies, whatever the
        // promise resolves to.
        follow(produced, finish, (e) => {
          const message = `apply failed: ${describe(e)}`;
          recordError(message);
          settle({ known: { failed: message }, secret: r.secret, deps: r.deps });
        });
        return;
      }
      finish(produced);
    });
    return out;
  }

  /** Property `key` of an object output (lifted: null when absent). */
  get<K extends keyof T>(key: K): Output<T[K]> {
    return this.apply((v) => {
      const x = (v as Record<PropertyKey, unknown> | null | undefined)?.[key as PropertyKey];
      return (x === undefined ? null : x) as T[K];
    });
  }

  /** The same value, marked secret. */
  asSecret(): Output<T> {
    return this.meta((r) => ({ ...r, secret: true }));
  }

  /** The same value, no longer secret (explicitly revealing it). */
  unsecret(): Output<T> {
    return this.meta((r) => ({ ...r, secret: false }));
  }

  /** @internal The same value, depending on `urns` as well. */
  withDependencies(urns: Iterable<string>): Output<T> {
    return this.meta((r) => ({ ...r, deps: union(r.deps, new Set(urns)) }));
  }

  private meta(f: (r: Resolved<T>) => Resolved<T>): Output<T> {
    const [out, settle] = Output.pending<T>();
    this.onResolved((r) => settle(f(r)));
    return out;
  }

  /** Outputs are not strings: reading one needs `apply`. */
  toString(): string {
    return "Output<T>: read its value with .apply(value => ...) or interpolate`...`";
  }

  toJSON(): string {
    return this.toString();
  }
}

/** A plain value, a promise of it or an output of it. */
export type Input<T> = T | Promise<T> | Output<T>;

/** Values whose nested outputs and promises `output()` lifts. */
export type Unwrap<T> = T extends Output<infer U>
  ? U
  : T extends Promise<infer P>
    ? Unwrap<P>
  : T extends Array<infer E>
    ? Array<Unwrap<E>>
    : T extends Record<string, unknown>
      ? { [K in keyof T]: Unwrap<T[K]> }
      : T;

/** Calls `f` with every output's resolution, in order, once all are resolved. */
export function whenAll(items: Array<Output<unknown>>, f: (settled: Array<Resolved<unknown>>) => void): void {
  const slots: Array<Resolved<unknown>> = new Array(items.length);
  let left = items.length;
  if (left === 0) {
    f(slots);
    return;
  }
  items.forEach((item, i) => {
    item.onResolved((r) => {
      slots[i] = r;
      left -= 1;
      if (left === 0) f(slots);
    });
  });
}

/** Joins resolutions: the first failure, else unknown if any is, else the values. */
function join<U>(settled: Array<Resolved<unknown>>, finish: (values: unknown[]) => U): Resolved<U> {
  let secret = false;
  let deps: ReadonlySet<string> = NO_DEPS;
  let failure: string | undefined;
  let unknown = false;
  const values: unknown[] = [];
  for (const r of settled) {
    secret ||= r.secret;
    deps = union(deps, r.deps);
    if ("value" in r.known) values.push(r.known.value);
    else if ("unknown" in r.known) unknown = true;
    else failure ??= r.known.failed;
  }
  const known: Known<U> =
    failure !== undefined ? { failed: failure } : unknown ? { unknown: true } : { value: finish(values) };
  return { known, secret, deps };
}

/**
 * Every output of an array (or tuple) or of an object's values, as one output: unknown if any
 * part is, secret if any is, depending on all of them. Plain values count as known outputs.
 */
export function all<T extends readonly unknown[]>(items: [...T]): Output<{ [K in keyof T]: Unwrap<T[K]> }>;
export function all<T extends Record<string, unknown>>(items: T): Output<{ [K in keyof T]: Unwrap<T[K]> }>;
export function all(items: unknown): Output<unknown> {
  if (Array.isArray(items)) {
    const parts = items.map((i) => output(i) as Output<unknown>);
    const [out, settle] = Output.pending<unknown>();
    whenAll(parts, (settled) => settle(join(settled, (values) => values)));
    return out;
  }
  if (isPlainObject(items)) {
    const keys = Object.keys(items);
    const parts = keys.map((k) => output(items[k]) as Output<unknown>);
    const [out, settle] = Output.pending<unknown>();
    whenAll(parts, (settled) =>
      settle(
        join(settled, (values) => {
          const o: Record<string, unknown> = {};
          keys.forEach((k, i) => (o[k] = values[i]));
          return o;
        }),
      ),
    );
    return out;
  }
  return output(items) as Output<unknown>;
}

/**
 * An input as an output, with the outputs and promises nested in arrays and plain objects
 * lifted (the result depends on all of them). Secret and unknown markers of property values
 * (`Secret`, `UNKNOWN`, `OutputValue`) become the output's own. A promise's output resolves
 * when it settles (to what `output` makes of its value); a rejection fails the output and the
 * program.
 */
export function output<T>(value: Input<T>): Output<Unwrap<T>>;
export function output(value: unknown): Output<unknown> {
  if (value instanceof Output) return value;
  if (isThenable(value)) {
    const [out, settle] = Output.pending<unknown>();
    follow(
      value,
      (v) => output(v).onResolved(settle),
      (e) => {
        const message = `a promise given as an input was rejected: ${describe(e)}`;
        recordError(message);
        settle({ known: { failed: message }, secret: false, deps: NO_DEPS });
      },
    );
    return out;
  }
  if (Array.isArray(value) || isPlainObject(value)) {
    if (!hasNested(value, 0)) return lifted(value as Value);
    return all(value as Record<string, unknown>) as Output<unknown>;
  }
  return lifted(value as Value);
}

/** Whether a value holds outputs (bounded: values nest at most 512 levels). */
function hasNested(v: unknown, depth: number): boolean {
  if (v instanceof Output || isThenable(v)) return true;
  if (depth > 512) return false;
  if (Array.isArray(v)) return v.some((e) => hasNested(e, depth + 1));
  if (isPlainObject(v)) return Object.keys(v).some((k) => hasNested(v[k], depth + 1));
  return false;
}

/** A plain value as a resolved output, its markers moved onto the output. */
export function lifted<T = Value>(v: Value): Output<T> {
  const secret = hasSecret(v);
  if (containsUnknowns(v)) {
    return Output.resolved<T>({ known: { unknown: true }, secret, deps: outputDeps(v) });
  }
  return Output.resolved<T>({ known: { value: stripMarkers(v) as T }, secret, deps: outputDeps(v) });
}

function hasSecret(v: Value): boolean {
  if (v instanceof Secret) return true;
  if (v instanceof OutputValue) return v.secret || hasSecret(v.value);
  if (Array.isArray(v)) return v.some(hasSecret);
  if (isPlainObject(v)) return Object.keys(v).some((k) => hasSecret((v as PropertyMap)[k]));
  return false;
}

function outputDeps(v: Value): ReadonlySet<string> {
  if (v instanceof OutputValue) return union(new Set(v.dependencies), outputDeps(v.value));
  if (v instanceof Secret) return outputDeps(v.value);
  if (Array.isArray(v)) return v.reduce<ReadonlySet<string>>((d, e) => union(d, outputDeps(e)), NO_DEPS);
  if (isPlainObject(v)) {
    return Object.keys(v).reduce<ReadonlySet<string>>((d, k) => union(d, outputDeps((v as PropertyMap)[k])), NO_DEPS);
  }
  return NO_DEPS;
}

/** The value without secret and output wrappers (unknowns are handled before). */
function stripMarkers(v: Value): Value {
  if (v instanceof OutputValue) return stripMarkers(v.value);
  const plain = unsecret(v);
  if (Array.isArray(plain)) return plain.map(stripMarkers);
  if (isPlainObject(plain)) {
    const out = emptyMap();
    for (const k of Object.keys(plain)) out[k] = stripMarkers((plain as PropertyMap)[k]);
    return out;
  }
  return plain;
}

/** A resolved output as a property value for the engine: secret wrapped, unknown as
 * `UNKNOWN`; a failed one is undefined. */
export function propertyValue(r: Resolved<unknown>): Value | undefined {
  if ("failed" in r.known) return undefined;
  if ("unknown" in r.known) return UNKNOWN;
  const v = r.known.value as Value;
  return r.secret ? new Secret(v) : v;
}

/** A secret output of `value` (an input: an output becomes secret too). */
export function secret<T>(value: Input<T>): Output<Unwrap<T>> {
  return output(value).asSecret();
}

/** `interpolate\`https://${host}:${port}/\``: a string output from a template with inputs. */
export function interpolate(literals: TemplateStringsArray, ...values: unknown[]): Output<string> {
  return all(values).apply((resolved) => {
    let s = literals[0];
    resolved.forEach((v, i) => (s += String(v) + literals[i + 1]));
    return s;
  });
}

/** Concatenates inputs into a string output. */
export function concat(...parts: unknown[]): Output<string> {
  return all(parts).apply((resolved) => resolved.map(String).join(""));
}
