// The SDK's own Promise (src/promise.ts): the Promises/A+ rules (states settle once, handlers
// run asynchronously, in order, as functions; `then` returns a promise resolved by what the
// handler returns or rejected by what it throws; thenables assimilated with the first call
// winning), the ECMAScript statics, and — the strongest check — the same programs run on it
// and on V8's native Promise log their reactions in the same order. The async functions here
// are lowered to generators as the build lowers them (the bundle is made with
// `--supported:async-await=false`), so they too run on whichever `Promise` is the global —
// for as long as it is (`withSdkPromises` around everything that runs them).

import assert from "node:assert/strict";
import { test } from "node:test";
import { NeverSettled, SdkPromise, queueMicrotask, runMicrotasks, setReporter, settleNow } from "../src/promise";
import { withSdkPromises } from "./sdk-promises";

const P = SdkPromise as unknown as PromiseConstructor;
const NativePromise = globalThis.Promise;

/** A Promises/A+ adapter's `deferred`. */
function deferred<T>() {
  let resolve!: (v: T | PromiseLike<T>) => void;
  let reject!: (e: unknown) => void;
  const promise = new P<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test("2.1: a promise settles once; later resolutions and rejections are ignored", () => {
  const seen: string[] = [];
  const d = deferred<number>();
  d.promise.then(
    (v) => seen.push(`fulfilled ${v}`),
    (e) => seen.push(`rejected ${e}`),
  );
  d.resolve(1);
  d.reject(2);
  d.resolve(3);
  runMicrotasks();
  const r = deferred<number>();
  r.promise.then(
    (v) => seen.push(`fulfilled ${v}`),
    (e) => seen.push(`rejected ${e}`),
  );
  r.reject(4);
  r.resolve(5);
  runMicrotasks();
  assert.deepEqual(seen, ["fulfilled 1", "rejected 4"]);
});

test("2.2.1, 2.2.7.3–4: handlers that are not functions are ignored and the value passes through", () => {
  const seen: unknown[] = [];
  P.resolve(1)
    .then(5 as never, null)
    .then((v) => seen.push(v));
  P.reject(2)
    .then(undefined, {} as never)
    .then(undefined, (e) => seen.push(e));
  runMicrotasks();
  assert.deepEqual(seen, [1, 2]);
});

test("2.2.4–2.2.6: handlers run after the current code, once each, in the order attached, as plain functions", () => {
  const seen: unknown[] = [];
  const p = P.resolve("v");
  p.then(function (this: unknown, v) {
    seen.push(["first", v, this]);
  });
  p.then(() => seen.push("second"));
  seen.push("synchronous");
  assert.deepEqual(seen, ["synchronous"], "no handler runs before the queue does");
  runMicrotasks();
  p.then(() => seen.push("third, attached after settling"));
  runMicrotasks();
  runMicrotasks();
  assert.deepEqual(seen, ["synchronous", ["first", "v", undefined], "second", "third, attached after settling"]);
});

test("2.2.7: then returns a promise: a handler's value resolves it, a throw rejects it", () => {
  const seen: unknown[] = [];
  const error = new Error("thrown");
  const p = P.resolve(1);
  assert.ok(p.then() instanceof SdkPromise);
  p.then(() => {
    throw error;
  }).then(undefined, (e) => seen.push(e === error));
  P.reject(1)
    .then(undefined, () => "recovered")
    .then((v) => seen.push(v));
  runMicrotasks();
  assert.deepEqual(seen, [true, "recovered"]);
});

test("2.3.1: resolving a promise with itself rejects it with a TypeError", () => {
  let seen: unknown;
  const d = deferred<unknown>();
  d.resolve(d.promise);
  d.promise.then(undefined, (e) => (seen = e));
  runMicrotasks();
  assert.ok(seen instanceof TypeError);
});

test("2.3.3: thenables are assimilated: then read once, the first call wins, a throw after it is ignored", () => {
  const seen: unknown[] = [];
  let reads = 0;
  const thenable = {
    get then() {
      reads++;
      return (resolve: (v: unknown) => void, reject: (e: unknown) => void) => {
        resolve("first");
        resolve("second");
        reject("third");
        throw new Error("ignored");
      };
    },
  };
  P.resolve(thenable).then((v) => seen.push(v));
  // A then getter that throws, and a then that throws before calling back, reject.
  P.resolve({
    get then() {
      throw new Error("getter");
    },
  }).then(undefined, (e: Error) => seen.push(e.message));
  P.resolve({
    then() {
      throw new Error("then threw");
    },
  }).then(undefined, (e: Error) => seen.push(e.message));
  // A thenable that resolves with another thenable is followed all the way.
  P.resolve({ then: (r: (v: unknown) => void) => r({ then: (r2: (v: unknown) => void) => r2("deep") }) }).then((v) =>
    seen.push(v),
  );
  // Objects and functions without a callable then are plain values.
  const fn = Object.assign(() => 1, { then: 5 });
  P.resolve(fn).then((v) => seen.push(v === fn));
  runMicrotasks();
  assert.equal(reads, 1);
  // In the spec's order: a rejection or plain value settles at once; a thenable takes a job.
  assert.deepEqual(seen, ["getter", true, "first", "then threw", "deep"]);
});

test("the statics: all, allSettled, race, any, withResolvers, try, reject", () => {
  const seen: Record<string, unknown> = {};
  const late = deferred<string>();
  P.all([1, P.resolve(2), { then: (r: (v: number) => void) => r(3) }, late.promise]).then((v) => (seen.all = v));
  P.all([]).then((v) => (seen.empty = v));
  P.all([P.resolve(1), P.reject(new Error("no"))]).catch((e: Error) => (seen.allRejected = e.message));
  P.allSettled([P.resolve(1), P.reject("r")]).then((v) => (seen.allSettled = v));
  P.race([new P(() => {}), late.promise, P.resolve("fast")]).then((v) => (seen.race = v));
  P.any([P.reject(1), P.resolve("any")]).then((v) => (seen.any = v));
  P.any([P.reject(1), P.reject(2)]).catch((e: { name: string; errors: unknown[] }) => (seen.anyRejected = [e.name, e.errors]));
  P.any([]).catch((e: { errors: unknown[] }) => (seen.anyEmpty = e.errors));
  const w = (P as unknown as typeof SdkPromise).withResolvers<string>();
  w.promise.then((v) => (seen.withResolvers = v));
  w.resolve("resolved outside");
  (P as unknown as typeof SdkPromise)
    .try(() => {
      throw new Error("tried");
    })
    .catch((e: Error) => (seen.try = e.message));
  P.all(5 as never).catch((e) => (seen.notIterable = e instanceof TypeError));
  late.resolve("late");
  runMicrotasks();
  assert.deepEqual(seen, {
    all: [1, 2, 3, "late"],
    empty: [],
    allRejected: "no",
    allSettled: [
      { status: "fulfilled", value: 1 },
      { status: "rejected", reason: "r" },
    ],
    race: "fast",
    any: "any",
    anyRejected: ["AggregateError", [1, 2]],
    anyEmpty: [],
    withResolvers: "resolved outside",
    try: "tried",
    notIterable: true,
  });
});

test("an iterator is closed when a step of all throws, and not when it throws itself", () => {
  const closed: string[] = [];
  const iterable = (failAt: number, nextThrows: boolean) => ({
    [Symbol.iterator]() {
      let i = 0;
      return {
        next() {
          if (nextThrows && i === failAt) throw new Error("next");
          return { done: i > 3, value: i++ === failAt ? { get then() { throw new Error("then"); } } : i };
        },
        return() {
          closed.push(`closed at ${failAt}`);
          return { done: true, value: undefined };
        },
      };
    },
  });
  const seen: string[] = [];
  // A constructor whose resolve throws for one element: `all` must close the iterator.
  class Failing extends SdkPromise<unknown> {}
  Object.defineProperty(Failing, "resolve", {
    value: (v: unknown) => {
      if (isThrowingThenable(v)) throw new Error("resolve threw");
      return SdkPromise.resolve(v);
    },
  });
  const isThrowingThenable = (v: unknown) => typeof v === "object" && v !== null && Object.getOwnPropertyDescriptor(v, "then")?.get !== undefined;
  Failing.all(iterable(1, false)).catch((e: Error) => seen.push(e.message));
  P.all(iterable(2, true)).catch((e: Error) => seen.push(e.message));
  runMicrotasks();
  assert.deepEqual(closed, ["closed at 1"]);
  assert.deepEqual(seen.sort(), ["next", "resolve threw"]);
});

test("subclasses: then and the statics make instances of the subclass (species)", () => {
  class Mine<T> extends SdkPromise<T> {}
  const m = Mine.resolve(1);
  assert.ok(m instanceof Mine);
  assert.ok(m.then((x) => x) instanceof Mine);
  assert.ok(Mine.all([1]) instanceof Mine);
  assert.equal(Mine.resolve(m), m, "resolve returns a promise of its own constructor as it is");
  assert.notEqual(SdkPromise.resolve(m), m);
  assert.equal(Object.prototype.toString.call(m), "[object Promise]");
  assert.equal(SdkPromise.name, "Promise");
  assert.throws(() => new (SdkPromise as unknown as new (x: unknown) => unknown)(5), TypeError);
  assert.throws(() => SdkPromise.prototype.then.call({}, () => {}), TypeError);
});

test("finally: runs on either outcome, passes the outcome through, waits for what it returns", () => {
  const seen: unknown[] = [];
  P.resolve("kept")
    .finally(() => {
      seen.push("finally 1");
      return P.resolve("ignored");
    })
    .then((v) => seen.push(v));
  P.reject("reason")
    .finally(() => seen.push("finally 2"))
    .catch((e) => seen.push(e));
  P.resolve(1)
    .finally(() => {
      throw "replaced";
    })
    .catch((e) => seen.push(e));
  runMicrotasks();
  assert.deepEqual(seen.sort(), ["finally 1", "finally 2", "kept", "reason", "replaced"].sort());
});

/** A program exercising reaction order; `tick` queues a microtask. */
function orderProgram(Promise: PromiseConstructor, tick: (f: () => void) => void, log: string[]): void {
  const a = Promise.resolve("a");
  a.then((v) => log.push(`1:${v}`)).then(() => log.push("1b")).then(() => log.push("1c"));
  a.then((v) => log.push(`2:${v}`));
  tick(() => log.push("microtask"));
  Promise.resolve({ then: (r: (v: string) => void) => (log.push("thenable.then"), r("t")) }).then((v) => log.push(`t:${v}`));
  new Promise((r) => r(a)).then((v) => log.push(`resolved with a promise:${v}`));
  Promise.resolve(a).then(() => log.push("Promise.resolve(a) is a"));
  Promise.reject(new Error("x"))
    .catch(() => log.push("caught"))
    .finally(() => log.push("finally"));
  Promise.all([1, a, Promise.resolve(3)]).then((v) => log.push(`all:${v.join(",")}`));
  Promise.race([new Promise(() => {}), a]).then((v) => log.push(`race:${v}`));
  Promise.allSettled([a, Promise.reject(2)]).then((v) => log.push(`allSettled:${v.map((s) => s.status)}`));
  Promise.any([Promise.reject(1), a]).then((v) => log.push(`any:${v}`));
  const f = async (name: string, n: number) => {
    log.push(`${name} starts`);
    for (let i = 0; i < n; i++) {
      await null;
      log.push(`${name} after await ${i}`);
    }
    await a;
    return name;
  };
  f("f", 2).then((v) => log.push(`${v} returned`));
  f("g", 1).then((v) => log.push(`${v} returned`));
  (async () => {
    try {
      await Promise.reject(new Error("awaited"));
    } catch (e) {
      log.push(`try/catch: ${(e as Error).message}`);
    }
    async function* gen() {
      yield 1;
      await null;
      yield 2;
    }
    for await (const x of gen()) log.push(`for await ${x}`);
  })();
  log.push("synchronous end");
}

test("reactions run in the order V8's native Promise runs them", async () => {
  const native: string[] = [];
  orderProgram(NativePromise, (f) => globalThis.queueMicrotask(f), native);
  await new NativePromise((r) => setImmediate(r));
  const ours: string[] = [];
  withSdkPromises(() => {
    orderProgram(P, queueMicrotask, ours);
    runMicrotasks();
  });
  assert.ok(native.length > 25, native.join("\n"));
  assert.deepEqual(ours, native);
});

test("rejections nobody handled are reported after the queue drains; handled later in the drain, they are not", () => {
  const reports: Array<[string, unknown]> = [];
  setReporter((kind, reason) => reports.push([kind, reason]));
  try {
    P.reject("lost");
    const late = P.reject("handled later in the same drain");
    P.resolve().then(() => late.catch(() => {}));
    queueMicrotask(() => {
      throw new Error("a job threw");
    });
    queueMicrotask(() => reports.push(["ran", "the queue went on"]));
    runMicrotasks();
    assert.deepEqual(
      reports.map(([kind, reason]) => [kind, reason instanceof Error ? reason.message : reason]),
      [
        ["exception", "a job threw"],
        ["ran", "the queue went on"],
        ["rejection", "lost"],
      ],
    );
  } finally {
    setReporter(() => {});
  }
  assert.throws(() => queueMicrotask(5 as never), TypeError);
});

test("settleNow: values, fulfilled and rejected promises, and promises that never settle", () => {
  assert.equal(settleNow(5, "m"), 5);
  assert.equal(settleNow(P.resolve(6), "m"), 6);
  assert.equal(settleNow({ then: (r: (v: number) => void) => r(7) } as PromiseLike<number>, "m"), 7);
  assert.throws(() => settleNow(P.reject(new RangeError("r")), "m"), RangeError);
  const sum = withSdkPromises(() => {
    const chain = (async () => {
      let n = 0;
      for (let i = 0; i < 1000; i++) n += await i;
      return n;
    })();
    return settleNow(chain, "m");
  });
  assert.equal(sum, 499500);
  assert.throws(
    () => settleNow(new P(() => {}), "create"),
    (e: NeverSettled) =>
      e instanceof NeverSettled && e.message.startsWith("the promise that create returned never settled: it waits for something that nothing"),
  );
  // QuickJS's own promises never run their jobs in a component; Node's stand in for them here.
  assert.throws(() => settleNow(new NativePromise(() => {}), "read"), /JavaScript engine's own Promise/);
});

test("a long chain leaves no queue behind", () => {
  let p: Promise<number> = P.resolve(0);
  for (let i = 0; i < 10_000; i++) p = p.then((v) => v + 1);
  assert.equal(settleNow(p, "m"), 10_000);
  runMicrotasks();
});
