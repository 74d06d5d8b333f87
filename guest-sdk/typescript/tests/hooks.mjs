// Module resolution hooks for the SDK's unit tests: each WIT interface the SDK imports is a
// fake module here (the state they share is `globalThis.fake`, see fake/state.mjs).
const FAKES = {
  "cairn:deploy/host@0.3.0": "host.mjs",
  "cairn:deploy/engine@0.3.0": "engine.mjs",
  "cairn:deploy/monitor@0.3.0": "monitor.mjs",
  "cairn:deploy/context@0.3.0": "context.mjs",
  "wasi:filesystem/preopens@0.2.12": "preopens.mjs",
  "wasi:cli/environment@0.2.12": "environment.mjs",
  "wasi:random/random@0.2.12": "random.mjs",
};

export async function resolve(specifier, context, next) {
  const fake = FAKES[specifier];
  if (fake !== undefined) {
    return { url: new URL(`./fake/${fake}`, import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
