// Fake `cairn:deploy/monitor`: an engine that answers every registration with the resource's
// inputs as its outputs (or the failure the test named for it), every invoke and call with
// its arguments, in the order they came, one batch per `wait`, as the real host may.
import { state } from "./state.mjs";

function urn(type, name, parent) {
  const d = state().deployment;
  const qualified = parent ? `${parent.split("::")[2]}$${type}` : type;
  return `urn:pulumi:${d.stack}::${d.project}::${qualified}::${name}`;
}

function complete(handle, outcome) {
  state().pending.push({ handle, outcome });
  return handle;
}

export function registerResource(request) {
  const s = state();
  const handle = s.nextHandle++;
  s.requests.push({ kind: "register", handle, request });
  const failure = s.failures[request.name];
  if (failure !== undefined) return complete(handle, { tag: "failed", val: failure });
  const id = request.custom && !s.deployment.dryRun ? `${request.name}-id` : null;
  return complete(handle, {
    tag: "state",
    val: { urn: urn(request.resourceType, request.name, request.options.parent), id, outputs: request.inputs, propertyDependencies: [] },
  });
}

export function readResource(request) {
  const s = state();
  const handle = s.nextHandle++;
  s.requests.push({ kind: "read", handle, request });
  return complete(handle, {
    tag: "state",
    val: { urn: urn(request.resourceType, request.name, request.parent), id: request.id, outputs: request.properties, propertyDependencies: [] },
  });
}

export function invoke(request) {
  const s = state();
  const handle = s.nextHandle++;
  s.requests.push({ kind: "invoke", handle, request });
  const failure = s.failures[request.token];
  if (failure !== undefined) return complete(handle, { tag: "failed", val: failure });
  return complete(handle, { tag: "outputs", val: { outputs: request.args, propertyDependencies: [] } });
}

export function call(request) {
  const s = state();
  const handle = s.nextHandle++;
  s.requests.push({ kind: "call", handle, request });
  const failure = s.failures[request.token];
  if (failure !== undefined) return complete(handle, { tag: "failed", val: failure });
  // The method answers with its arguments and the dependencies the test named.
  return complete(handle, { tag: "outputs", val: { outputs: request.args, propertyDependencies: s.callDependencies } });
}

export function wait() {
  const s = state();
  const done = s.pending;
  s.pending = [];
  return done;
}

export function registerResourceOutputs(urn, outputs) {
  state().outputs.push({ urn, outputs });
}
