// Installs the SDK's promises as the globals `Promise` and `queueMicrotask`. The build imports
// this module first, before the guest's own modules, so every promise guest code makes — and
// every one the build's lowered `async` functions make — is the SDK's, whose jobs the SDK runs
// (promise.ts says why QuickJS's own never run inside a call).

import { SdkPromise, queueMicrotask } from "./promise";

for (const [name, value] of [
  ["Promise", SdkPromise],
  ["queueMicrotask", queueMicrotask],
] as const) {
  // As the standard globals are: writable and configurable, not enumerable.
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
}
