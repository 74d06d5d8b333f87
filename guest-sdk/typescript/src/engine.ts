// The engine's resource monitor, as a provider's `construct` and `call` reach it (the WIT
// `engine` interface of wit/provider.wit): register a component and its children, set a
// component's outputs. The calls are synchronous — each returns once the engine has run the
// resource's steps — so they work the same in plain and in `async` methods.
//
// The engine scopes what a provider registers to the component it is building: a child's
// `parent` must be the component's URN (or a descendant's), as in the Rust SDK's `engine`.

import * as wit from "cairn:deploy/engine@0.3.0";
import { type Dependencies, ProviderError, dependenciesToWit, message } from "./provider";
import { type PropertyMap, decodeMap, emptyMap, encode } from "./values";

/** A resource to register: the component itself (`custom: false`) or one of its children. */
export interface RegisterResource {
  resourceType: string;
  name: string;
  /** True for a custom resource (its provider creates it), false for a component. */
  custom?: boolean;
  /** The parent's URN: the component's for its children. */
  parent?: string;
  inputs?: PropertyMap;
  propertyDependencies?: Dependencies;
  dependencies?: string[];
  /** A provider reference (`<urn>::<id>`), e.g. `request.providers["pkg"]` of `construct`. */
  provider?: string;
  protect?: boolean;
}

/** A registered resource, after its steps have run (in a preview a new one has no ID and its
 * outputs may be unknown). */
export interface Registered {
  urn: string;
  id?: string;
  outputs: PropertyMap;
}

/** The engine's message from a failed import call (an `Error` whose `payload` is the text). */
function engineMessage(e: unknown): string {
  const payload = (e as { payload?: unknown } | null)?.payload;
  return typeof payload === "string" ? payload : message(e);
}

function text(v: unknown, what: string): string {
  if (typeof v !== "string") throw ProviderError.failed(`${what} must be a string`);
  return v;
}

function optionalText(v: unknown, what: string): string | null {
  return v === undefined || v === null ? null : text(v, what);
}

/** Registers a resource with the engine; returns once its steps have run. A refusal or a
 * failed step is a `ProviderError` with the engine's message. */
export function registerResource(request: RegisterResource): Registered {
  if (request === null || typeof request !== "object") throw ProviderError.failed("registerResource needs a request object");
  const type = text(request.resourceType, "registerResource: resourceType");
  const name = text(request.name, "registerResource: name");
  const what = `registering ${type} ${name}`;
  let inputs: wit.RegisterResourceRequest["inputs"];
  try {
    inputs = encode(request.inputs ?? emptyMap());
  } catch (e) {
    throw ProviderError.failed(`${what}: the inputs: ${message(e)}`);
  }
  const dependencies = request.dependencies ?? [];
  if (!Array.isArray(dependencies)) throw ProviderError.failed(`${what}: dependencies must be an array of URNs`);
  let response: wit.RegisterResourceResponse;
  try {
    response = wit.registerResource({
      resourceType: type,
      name,
      custom: !!request.custom,
      parent: optionalText(request.parent, `${what}: parent`),
      inputs,
      propertyDependencies: dependenciesToWit(request.propertyDependencies, `${what}: propertyDependencies`),
      dependencies: dependencies.map((d) => text(d, `${what}: a dependency`)),
      provider: optionalText(request.provider, `${what}: provider`),
      protect: !!request.protect,
    });
  } catch (e) {
    if (e instanceof ProviderError) throw e;
    throw ProviderError.failed(engineMessage(e));
  }
  return {
    urn: response.urn,
    id: response.id ?? undefined,
    // Validated as every table from the host is (a malformed one is a MalformedValue).
    outputs: decodeMap(response.outputs),
  };
}

/** Sets a component's outputs (secrets stay secret). */
export function registerResourceOutputs(urn: string, outputs: PropertyMap): void {
  let encoded: wit.RegisterResourceResponse["outputs"];
  try {
    encoded = encode(outputs ?? emptyMap());
  } catch (e) {
    throw ProviderError.failed(`the outputs of ${String(urn)}: ${message(e)}`);
  }
  try {
    wit.registerResourceOutputs(text(urn, "registerResourceOutputs: urn"), encoded);
  } catch (e) {
    if (e instanceof ProviderError) throw e;
    throw ProviderError.failed(engineMessage(e));
  }
}
