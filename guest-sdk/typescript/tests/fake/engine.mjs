// Fake `cairn:deploy/engine` (a provider's construct and call): registrations are recorded and
// answered at once with the resource's inputs as its outputs (an ID for a custom resource,
// none in a preview), or refused with the message the test named for the resource, thrown as
// the runtime throws a WIT error: an `Error` whose `payload` is the message.
import { state } from "./state.mjs";

export function registerResource(request) {
  const s = state();
  s.engine.push({ kind: "register", request });
  const failure = s.failures[request.name];
  if (failure !== undefined) throw Object.assign(new Error("engine error"), { payload: failure });
  const d = s.deployment;
  // A URN's type names the parent's type, except the stack's (as the engine writes URNs).
  const parentType = request.parent ? request.parent.split("::")[2] : "pulumi:pulumi:Stack";
  const qualified = parentType === "pulumi:pulumi:Stack" ? request.resourceType : `${parentType}$${request.resourceType}`;
  const urn = `urn:pulumi:${d.stack}::${d.project}::${qualified}::${request.name}`;
  const id = request.custom && !d.dryRun ? `${request.name}-id` : null;
  return { urn, id, outputs: request.inputs };
}

export function registerResourceOutputs(urn, outputs) {
  state().engine.push({ kind: "outputs", urn, outputs });
}
