// What the SDK's tests share about promises: running code as it runs in a component, where the
// SDK's `Promise` and `queueMicrotask` are the globals (install.ts) — swapped in only for the
// duration of a synchronous call, because Node's own test runner awaits native promises.

import { SdkPromise, queueMicrotask } from "../src/promise";

/** Runs `f` with the SDK's promises as the globals (as in a component), then restores Node's. */
export function withSdkPromises<T>(f: () => T): T {
  const g = globalThis as { Promise: unknown; queueMicrotask: unknown };
  const saved = [g.Promise, g.queueMicrotask];
  g.Promise = SdkPromise;
  g.queueMicrotask = queueMicrotask;
  try {
    return f();
  } finally {
    [g.Promise, g.queueMicrotask] = saved;
  }
}
