// The SDK's own `Promise`: Promises/A+ and the ECMAScript specification's promise (the
// constructor, `then` / `catch` / `finally`, `resolve`, `reject`, `all`, `allSettled`, `race`,
// `any`, `withResolvers`, `try`; thenables assimilated through a job, species, subclassing),
// with its own microtask queue, which the SDK drains.
//
// Why: componentize-qjs's sync runtime (the only one wasmtime 48 without component-model async
// can call) never runs QuickJS's promise job queue inside an export call — only its
// component-model-async path does — so a native promise's reactions never run and an `await`
// never resumes. `install.ts` makes this class `globalThis.Promise` (and `queueMicrotask` a
// job on this queue) before any guest module runs, and the build lowers `async` / `await`,
// async generators and `for await` to generators (esbuild), whose helpers create their
// promises through the global `Promise`: this one. A provider's export drains the queue until
// the method's promise settles; a program drains it between turns of `monitor.wait`.
//
// A loop of jobs that never ends (a job queueing itself forever) is an infinite loop like any
// other: the host's deadline interrupts the call. A promise still pending once the queue is
// empty never settles — nothing else can run during a call: no timers, no I/O events — and
// `settle` says so instead of waiting.

declare global {
  /** Queues `callback` on the SDK's microtask queue (install.ts makes it the global; the
   * ECMAScript library the build type-checks against does not declare it). */
  function queueMicrotask(callback: () => void): void;
}

/** A promise's state, kept out of reach in a private field (see `slotOf`). */
interface Slot {
  state: 0 | 1 | 2;
  result: unknown;
  /** Reactions waiting while pending; undefined once settled. */
  reactions: Reaction[] | undefined;
  /** Whether a reaction was ever attached (the spec's [[PromiseIsHandled]]). */
  handled: boolean;
}

const PENDING = 0;
const FULFILLED = 1;
const REJECTED = 2;

/** A capability: a promise (absent for the SDK's own reactions) and its resolving functions. */
interface Capability<T> {
  promise: SdkPromise<T> | undefined;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

interface Reaction {
  capability: Capability<unknown> | undefined;
  onFulfilled: ((value: unknown) => unknown) | undefined;
  onRejected: ((reason: unknown) => unknown) | undefined;
}

// ---------------------------------------------------------------------------------------------
// The queue.

let queue: Array<() => void> = [];
let draining = false;

/** Rejections with no handler, in the order they happened; reported after a drain. */
const unhandled = new Set<Slot>();

/** What reports a rejection nobody handled, or an exception a job threw (`queueMicrotask`). */
export type Reporter = (kind: "rejection" | "exception", reason: unknown) => void;

let reporter: Reporter = () => {};

/** Sets where unhandled rejections and exceptions thrown by jobs go (provider: the log;
 * program: the run's first error). */
export function setReporter(f: Reporter): void {
  reporter = f;
}

function enqueue(job: () => void): void {
  queue.push(job);
}

/** Whether jobs are waiting to run. */
export function hasPendingJobs(): boolean {
  return queue.length > 0;
}

/**
 * Runs jobs until none are left (jobs a job queues run after the ones before them), then
 * reports rejections nobody handled. Re-entrant calls (a job that drains) return at once: the
 * outer drain runs what they would have.
 */
export function runMicrotasks(): void {
  if (draining) return;
  draining = true;
  try {
    while (queue.length > 0) {
      // A batch at a time: what runs appends to a fresh array, so a loop that never ends
      // holds at most one batch in memory instead of an ever-growing queue.
      const batch = queue;
      queue = [];
      for (let i = 0; i < batch.length; i++) {
        try {
          batch[i]();
        } catch (e) {
          // Only a job the guest wrote throws (queueMicrotask, or a subclass's resolve):
          // reported as an uncaught exception, and the queue goes on.
          report("exception", e);
        }
      }
    }
  } finally {
    draining = false;
  }
  if (unhandled.size > 0) {
    const slots = [...unhandled];
    unhandled.clear();
    for (const s of slots) if (!s.handled) report("rejection", s.result);
  }
}

function report(kind: "rejection" | "exception", reason: unknown): void {
  try {
    reporter(kind, reason);
  } catch {
    // A reporter that fails has nowhere to report to.
  }
}

/** `queueMicrotask` over the SDK's queue (QuickJS's own queues on the queue nothing runs). */
export function queueMicrotask(callback: () => void): void {
  if (typeof callback !== "function") {
    throw new TypeError("queueMicrotask: the callback must be a function");
  }
  enqueue(() => callback());
}

// ---------------------------------------------------------------------------------------------
// The promise.

function isObject(v: unknown): v is object {
  return (typeof v === "object" && v !== null) || typeof v === "function";
}

function isConstructor(v: unknown): v is new (...args: never[]) => unknown {
  if (typeof v !== "function") return false;
  try {
    // Reflect.construct with a target that is not a constructor throws before calling it.
    Reflect.construct(String, [], v);
    return true;
  } catch {
    return false;
  }
}

let slotOf: (p: unknown) => Slot | undefined;

type Executor<T> = (resolve: (value: T | PromiseLike<T>) => void, reject: (reason?: unknown) => void) => void;

/** The SDK's promise; installed as `globalThis.Promise` in a component. */
export class SdkPromise<T> implements Promise<T> {
  readonly #slot: Slot;

  static {
    slotOf = (p) => (isObject(p) && #slot in p ? (p as SdkPromise<unknown>).#slot : undefined);
  }

  constructor(executor: Executor<T>) {
    if (typeof executor !== "function") {
      throw new TypeError("Promise resolver is not a function");
    }
    this.#slot = { state: PENDING, result: undefined, reactions: [], handled: false };
    const [resolve, reject] = resolvingFunctions(this, this.#slot);
    try {
      executor(resolve, reject);
    } catch (e) {
      reject(e);
    }
  }

  declare readonly [Symbol.toStringTag]: string;

  static get [Symbol.species](): unknown {
    return this;
  }

  then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    // `any`, as the standard library types a rejection's reason.
    onRejected?: ((reason: any) => R2 | PromiseLike<R2>) | null,
  ): SdkPromise<R1 | R2> {
    const slot = slotOf(this);
    if (slot === undefined) throw new TypeError("Promise.prototype.then called on an object that is not a promise");
    const C = speciesConstructor(this, SdkPromise);
    const capability = newCapability<R1 | R2>(C);
    performThen(slot, onFulfilled, onRejected, capability as Capability<unknown>);
    return capability.promise!;
  }

  catch<R = never>(onRejected?: ((reason: any) => R | PromiseLike<R>) | null): SdkPromise<T | R> {
    return this.then(undefined, onRejected);
  }

  finally(onFinally?: (() => void) | null): SdkPromise<T> {
    if (!isObject(this)) throw new TypeError("Promise.prototype.finally called on a non-object");
    const C = speciesConstructor(this, SdkPromise) as typeof SdkPromise;
    if (typeof onFinally !== "function") return this.then(onFinally, onFinally) as SdkPromise<T>;
    const thenFinally = (value: T) => promiseResolve(C, onFinally()).then(() => value);
    const catchFinally = (reason: unknown) =>
      promiseResolve(C, onFinally()).then(() => {
        throw reason;
      });
    return this.then(thenFinally, catchFinally);
  }

  static resolve(): SdkPromise<void>;
  static resolve<T>(value: T): SdkPromise<Awaited<T>>;
  static resolve<T>(value: T | PromiseLike<T>): SdkPromise<Awaited<T>>;
  static resolve(value?: unknown): SdkPromise<unknown> {
    if (!isObject(this)) throw new TypeError("Promise.resolve called on a non-object");
    return promiseResolve(this as unknown as typeof SdkPromise, value);
  }

  static reject<T = never>(reason?: unknown): SdkPromise<T> {
    const capability = newCapability<T>(this);
    capability.reject(reason);
    return capability.promise!;
  }

  static withResolvers<T>(): { promise: SdkPromise<T>; resolve: (value: T | PromiseLike<T>) => void; reject: (reason?: unknown) => void } {
    const capability = newCapability<T>(this);
    return { promise: capability.promise!, resolve: capability.resolve, reject: capability.reject };
  }

  /** ES2025's `Promise.try`: `f`'s result as a promise, a throw as a rejection. */
  static try<T>(f: (...args: unknown[]) => T | PromiseLike<T>, ...args: unknown[]): SdkPromise<Awaited<T>> {
    const capability = newCapability<Awaited<T>>(this);
    try {
      capability.resolve(f(...args));
    } catch (e) {
      capability.reject(e);
    }
    return capability.promise!;
  }

  static all<T extends readonly unknown[] | []>(values: T): SdkPromise<{ -readonly [P in keyof T]: Awaited<T[P]> }>;
  static all<T>(values: Iterable<T | PromiseLike<T>>): SdkPromise<Array<Awaited<T>>>;
  static all(iterable: Iterable<unknown>): SdkPromise<unknown[]> {
    return combine(this, iterable, (capability, resolveFn, C) => {
      const values: unknown[] = [];
      let remaining = 1;
      let index = 0;
      for (const next of iterable) {
        const i = index++;
        values.push(undefined);
        remaining++;
        let called = false;
        thenOf(resolveFn.call(C, next))(
          (x: unknown) => {
            if (called) return;
            called = true;
            values[i] = x;
            if (--remaining === 0) capability.resolve(values);
          },
          capability.reject,
        );
      }
      if (--remaining === 0) capability.resolve(values);
    });
  }

  static allSettled<T extends readonly unknown[] | []>(values: T): SdkPromise<{ -readonly [P in keyof T]: PromiseSettledResult<Awaited<T[P]>> }>;
  static allSettled<T>(values: Iterable<T | PromiseLike<T>>): SdkPromise<Array<PromiseSettledResult<Awaited<T>>>>;
  static allSettled(iterable: Iterable<unknown>): SdkPromise<unknown[]> {
    return combine(this, iterable, (capability, resolveFn, C) => {
      const values: unknown[] = [];
      let remaining = 1;
      let index = 0;
      for (const next of iterable) {
        const i = index++;
        values.push(undefined);
        remaining++;
        let called = false;
        const settled = (entry: object) => {
          if (called) return;
          called = true;
          values[i] = entry;
          if (--remaining === 0) capability.resolve(values);
        };
        thenOf(resolveFn.call(C, next))(
          (value: unknown) => settled({ status: "fulfilled", value }),
          (reason: unknown) => settled({ status: "rejected", reason }),
        );
      }
      if (--remaining === 0) capability.resolve(values);
    });
  }

  static race<T extends readonly unknown[] | []>(values: T): SdkPromise<Awaited<T[number]>>;
  static race<T>(values: Iterable<T | PromiseLike<T>>): SdkPromise<Awaited<T>>;
  static race(iterable: Iterable<unknown>): SdkPromise<unknown> {
    return combine(this, iterable, (capability, resolveFn, C) => {
      for (const next of iterable) thenOf(resolveFn.call(C, next))(capability.resolve, capability.reject);
    });
  }

  static any<T extends readonly unknown[] | []>(values: T): SdkPromise<Awaited<T[number]>>;
  static any<T>(values: Iterable<T | PromiseLike<T>>): SdkPromise<Awaited<T>>;
  static any(iterable: Iterable<unknown>): SdkPromise<unknown> {
    return combine(this, iterable, (capability, resolveFn, C) => {
      const errors: unknown[] = [];
      let remaining = 1;
      let index = 0;
      const rejectAll = () => capability.reject(aggregate(errors));
      for (const next of iterable) {
        const i = index++;
        errors.push(undefined);
        remaining++;
        let called = false;
        thenOf(resolveFn.call(C, next))(capability.resolve, (reason: unknown) => {
          if (called) return;
          called = true;
          errors[i] = reason;
          if (--remaining === 0) rejectAll();
        });
      }
      if (--remaining === 0) rejectAll();
    });
  }
}

Object.defineProperty(SdkPromise.prototype, Symbol.toStringTag, { value: "Promise", configurable: true });
// As the global `Promise` it should read as one (`constructor.name`, error messages).
Object.defineProperty(SdkPromise, "name", { value: "Promise", configurable: true });

/** `p.then` bound, read once (the spec's Invoke(p, "then", ...)). */
function thenOf(p: unknown): (onFulfilled: (v: unknown) => unknown, onRejected: (r: unknown) => unknown) => unknown {
  const then = (p as { then?: unknown }).then;
  if (typeof then !== "function") throw new TypeError("a promise's then is not a function");
  return (f, r) => then.call(p, f, r);
}

function aggregate(errors: unknown[]): Error {
  const message = "All promises were rejected";
  const Aggregate = (globalThis as { AggregateError?: new (errors: unknown[], message: string) => Error }).AggregateError;
  if (typeof Aggregate === "function") return new Aggregate(errors, message);
  return Object.assign(new Error(message), { name: "AggregateError", errors });
}

/** The common part of `all`, `allSettled`, `race` and `any`: the capability, the
 * constructor's `resolve`, and an abrupt completion (the iteration's or the body's) rejecting
 * the result — `for ... of` closes the iterator when the body throws, as IteratorClose. */
function combine<T>(
  C: unknown,
  iterable: Iterable<unknown>,
  body: (capability: Capability<T>, resolveFn: (this: unknown, v: unknown) => unknown, C: unknown) => void,
): SdkPromise<T> {
  const capability = newCapability<T>(C);
  try {
    const resolveFn = (C as { resolve?: unknown }).resolve;
    if (typeof resolveFn !== "function") throw new TypeError("the promise constructor's resolve is not a function");
    if (iterable === null || iterable === undefined || typeof (iterable as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== "function") {
      throw new TypeError(`${String(iterable)} is not iterable`);
    }
    body(capability, resolveFn as (this: unknown, v: unknown) => unknown, C);
  } catch (e) {
    capability.reject(e);
  }
  return capability.promise!;
}

/** The spec's PromiseResolve(C, x): `x` itself when it is a promise made by `C`. */
function promiseResolve<T>(C: typeof SdkPromise, x: unknown): SdkPromise<T> {
  if (slotOf(x) !== undefined && (x as { constructor?: unknown }).constructor === C) return x as SdkPromise<T>;
  const capability = newCapability<T>(C);
  capability.resolve(x);
  return capability.promise!;
}

/** The spec's NewPromiseCapability(C). */
function newCapability<T>(C: unknown): Capability<T> & { promise: SdkPromise<T> } {
  if (C !== SdkPromise && !isConstructor(C)) throw new TypeError("the promise constructor is not a constructor");
  let resolve: ((v: unknown) => void) | undefined;
  let reject: ((r: unknown) => void) | undefined;
  const promise = new (C as new (executor: Executor<T>) => SdkPromise<T>)((res, rej) => {
    if (resolve !== undefined || reject !== undefined) throw new TypeError("the promise executor was called twice");
    resolve = res as (v: unknown) => void;
    reject = rej;
  });
  if (typeof resolve !== "function" || typeof reject !== "function") {
    throw new TypeError("the promise constructor did not pass resolving functions to its executor");
  }
  return { promise, resolve, reject };
}

/** The spec's SpeciesConstructor(O, default). */
function speciesConstructor(o: object, fallback: unknown): unknown {
  const C = (o as { constructor?: unknown }).constructor;
  if (C === undefined) return fallback;
  if (!isObject(C)) throw new TypeError("a promise's constructor is not an object");
  const S = (C as { [Symbol.species]?: unknown })[Symbol.species];
  if (S === undefined || S === null) return fallback;
  if (S === SdkPromise || isConstructor(S)) return S;
  throw new TypeError("a promise's species is not a constructor");
}

/** The resolving functions of a promise: the first call wins. */
function resolvingFunctions(promise: object, slot: Slot): [(value: unknown) => void, (reason: unknown) => void] {
  let done = false;
  return [
    (resolution) => {
      if (done) return;
      done = true;
      resolvePromise(promise, slot, resolution);
    },
    (reason) => {
      if (done) return;
      done = true;
      settle(slot, REJECTED, reason);
    },
  ];
}

/** Resolves with `x`: a value fulfills; a thenable is followed, through a job (so even an
 * already settled one takes its turn, as the spec orders it). */
function resolvePromise(promise: object, slot: Slot, x: unknown): void {
  if (x === promise) {
    settle(slot, REJECTED, new TypeError("Chaining cycle detected for promise"));
    return;
  }
  if (!isObject(x)) {
    settle(slot, FULFILLED, x);
    return;
  }
  let then: unknown;
  try {
    then = (x as { then?: unknown }).then;
  } catch (e) {
    settle(slot, REJECTED, e);
    return;
  }
  if (typeof then !== "function") {
    settle(slot, FULFILLED, x);
    return;
  }
  enqueue(() => {
    const [resolve, reject] = resolvingFunctions(promise, slot);
    try {
      then.call(x, resolve, reject);
    } catch (e) {
      reject(e);
    }
  });
}

function settle(slot: Slot, state: 1 | 2, result: unknown): void {
  const reactions = slot.reactions!;
  slot.state = state;
  slot.result = result;
  slot.reactions = undefined;
  if (state === REJECTED && !slot.handled) unhandled.add(slot);
  for (const reaction of reactions) enqueueReaction(reaction, state, result);
}

function performThen(slot: Slot, onFulfilled: unknown, onRejected: unknown, capability: Capability<unknown> | undefined): void {
  const reaction: Reaction = {
    capability,
    onFulfilled: typeof onFulfilled === "function" ? (onFulfilled as (v: unknown) => unknown) : undefined,
    onRejected: typeof onRejected === "function" ? (onRejected as (r: unknown) => unknown) : undefined,
  };
  if (slot.state === PENDING) {
    slot.reactions!.push(reaction);
  } else {
    if (slot.state === REJECTED && !slot.handled) unhandled.delete(slot);
    enqueueReaction(reaction, slot.state, slot.result);
  }
  slot.handled = true;
}

function enqueueReaction(reaction: Reaction, state: 1 | 2, argument: unknown): void {
  enqueue(() => {
    const handler = state === FULFILLED ? reaction.onFulfilled : reaction.onRejected;
    const capability = reaction.capability;
    if (handler === undefined) {
      if (capability === undefined) return;
      if (state === FULFILLED) capability.resolve(argument);
      else capability.reject(argument);
      return;
    }
    let value: unknown;
    try {
      value = handler(argument);
    } catch (e) {
      capability?.reject(e);
      return;
    }
    capability?.resolve(value);
  });
}

// ---------------------------------------------------------------------------------------------
// Waiting for a promise within one call.

/** QuickJS's own `Promise`, kept before `install.ts` replaces the global: a promise of its
 * kind (from code the build did not lower, e.g. `eval`) never settles here. */
const NativePromise: unknown = (globalThis as { Promise?: unknown }).Promise;

/** What a thenable is: an object or function with a callable `then`. */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return isObject(v) && typeof (v as { then?: unknown }).then === "function";
}

/** A promise that cannot settle because nothing is left to run. */
export class NeverSettled extends Error {
  constructor(what: string, value: unknown) {
    super(
      `the promise that ${what} returned never settled: ` +
        (isNative(value)
          ? "it is the JavaScript engine's own Promise, whose jobs the component's runtime never runs (code the build did not compile, such as eval, made it): use the global Promise"
          : "it waits for something that nothing in the component will ever settle (a component has no timers or I/O events between calls; only code running in the call settles promises)"),
    );
    this.name = "NeverSettled";
  }
}

function isNative(value: unknown): boolean {
  return typeof NativePromise === "function" && NativePromise !== SdkPromise && value instanceof (NativePromise as new () => object);
}

/**
 * `value` itself, or what the promise it is settles to: runs the queue until it has, and
 * throws its rejection. When the queue empties with the promise still pending it never will
 * settle, and a `NeverSettled` naming `what` is thrown. The queue is drained either way, so
 * work a call started (and unhandled rejections) does not spill into the next call.
 */
export function settleNow<T>(value: T | PromiseLike<T>, what: string): T {
  if (!isThenable(value)) {
    runMicrotasks();
    return value as T;
  }
  let state = PENDING;
  let result: unknown;
  // As `await` does: a promise of another kind (a subclass, a thenable) is followed by one of ours.
  performThen(
    slotOf(promiseResolve(SdkPromise, value))!,
    (v: unknown) => {
      state = FULFILLED;
      result = v;
    },
    (e: unknown) => {
      state = REJECTED;
      result = e;
    },
    undefined,
  );
  runMicrotasks();
  if (state === FULFILLED) return result as T;
  if (state === REJECTED) throw result;
  throw new NeverSettled(what, value);
}
