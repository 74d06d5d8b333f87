// Providers: the `Provider` class a provider extends, its request and result types, its
// errors, the default diff (`diffInputs`), and `exportProvider`, which turns a provider into
// the WIT `provider` interface the component exports.
//
// Naming follows the Rust SDK: `inputs` are the inputs the call is about (new, from the
// program; checked by `check` before `diff`, `create` and `update` see them), `oldInputs` /
// `oldOutputs` what the state recorded. A preview never reaches `create` or `update`: it goes
// to `previewCreate` / `previewUpdate`, whose defaults describe the result from the inputs.
//
// Every method may return its result or a promise of it (`async` methods): the export runs
// the SDK's promise queue until the promise settles (promise.ts: QuickJS's own queue never runs
// inside a call), and a promise that can no longer settle is the method's failure.
//
// Every ordinary failure, a thrown `ProviderError`, `CheckFailure` or any other exception,
// a rejected promise, reaches the engine as the WIT's `provider-error`, never as a trap: a
// trap is for bugs.

import type * as wit from "cairn:deploy/types@0.3.0";
import { CheckFailure } from "./check";
import { log } from "./log";
import { NeverSettled, runMicrotasks, setReporter, settleNow } from "./promise";
import {
  type PropertyMap,
  type Value,
  decodeMap,
  emptyMap,
  encode,
  MalformedValue,
  sameAs,
} from "./values";

/** The parts of a URN after `urn:pulumi:`: stack, project, qualified type, name. */
function urnParts(urn: string): [string, string, string, string] | undefined {
  if (!urn.startsWith("urn:pulumi:")) return undefined;
  const rest = urn.slice("urn:pulumi:".length);
  const one = rest.indexOf("::");
  if (one < 0) return undefined;
  const two = rest.indexOf("::", one + 2);
  if (two < 0) return undefined;
  const three = rest.indexOf("::", two + 2);
  if (three < 0) return undefined;
  return [rest.slice(0, one), rest.slice(one + 2, two), rest.slice(two + 2, three), rest.slice(three + 2)];
}

/** The resource's own type token (`random:index:RandomPet`), from its URN ("" if malformed). */
export function resourceTypeOf(urn: string): string {
  const parts = urnParts(urn);
  if (!parts) return "";
  const qualified = parts[2];
  return qualified.slice(qualified.lastIndexOf("$") + 1);
}

/** The resource's name (which may itself contain `::`), from its URN ("" if malformed). */
export function nameOf(urn: string): string {
  return urnParts(urn)?.[3] ?? "";
}

/** A method's result, or a promise of it: every `Provider` method may be `async`. */
export type Awaitable<T> = T | PromiseLike<T>;

/** What a property depends on: property name → the URNs of the resources it came from. */
export type Dependencies = Record<string, string[]>;

/** What an operation that partly succeeded left behind (e.g. created but not healthy). */
export interface PartialState {
  id: string;
  inputs: PropertyMap;
  outputs: PropertyMap;
}

/** Why a provider operation failed; one case per WIT `provider-error` case. */
export class ProviderError extends Error {
  private constructor(
    message: string,
    readonly kind: "failed" | "unimplemented" | "cancelled" | "timeout",
    readonly partial?: PartialState,
    readonly seconds?: number,
  ) {
    super(message);
    this.name = "ProviderError";
  }

  /** The operation failed. */
  static failed(message: string): ProviderError {
    return new ProviderError(message, "failed");
  }

  /** The operation failed after leaving a real resource behind, which the engine records. */
  static partial(message: string, state: PartialState): ProviderError {
    return new ProviderError(message, "failed", state);
  }

  /** The method (its WIT name, e.g. `construct`) is not implemented. */
  static unimplemented(method: string): ProviderError {
    return new ProviderError(method, "unimplemented");
  }

  static cancelled(): ProviderError {
    return new ProviderError("cancelled", "cancelled");
  }

  static timeout(seconds: number): ProviderError {
    return new ProviderError(`timed out after ${seconds} s`, "timeout", undefined, seconds);
  }
}

/** `check` / `checkConfig`: validate inputs and apply defaults. */
export interface CheckRequest {
  urn: string;
  /** The resource's type and name, from the URN. */
  resourceType: string;
  name: string;
  /** The last recorded inputs; empty for a new resource or a replacement. */
  oldInputs: PropertyMap;
  /** The new inputs, as the program gave them; may contain unknowns. */
  inputs: PropertyMap;
  /** A seed for generated values, stable for the resource. */
  randomSeed: Uint8Array;
}

/** The checked inputs and validation failures (failures name the property at fault). */
export interface CheckResult {
  inputs: PropertyMap;
  failures?: Array<CheckFailure | { property: string; reason: string }>;
}

export type DiffKind = wit.DiffKind;
export type DiffChanges = wit.DiffChanges;

/** One entry of a detailed diff. */
export interface PropertyDiff {
  /** A property path, e.g. `tags.env`. */
  path: string;
  kind: DiffKind;
  /** True when the old value is from the old inputs rather than the old state. */
  inputDiff: boolean;
}

/** `diff` / `diffConfig`: compare recorded state with new inputs. */
export interface DiffRequest {
  urn: string;
  resourceType: string;
  name: string;
  id: string;
  oldInputs: PropertyMap;
  oldOutputs: PropertyMap;
  /** The new inputs, from `check`; may contain unknowns. */
  inputs: PropertyMap;
  /** Property paths whose changes are to be ignored. */
  ignoreChanges: string[];
}

export interface DiffResult {
  /** `unknown` lets the engine compare old and new inputs itself. */
  changes: DiffChanges;
  /** Top-level input properties whose change requires replacement. */
  replaceKeys?: string[];
  /** Properties guaranteed not to change. */
  stableKeys?: string[];
  /** Top-level input properties that changed. */
  changedKeys?: string[];
  detailedDiff?: PropertyDiff[];
  /** The resource must be deleted before its replacement is created. */
  deleteBeforeReplace?: boolean;
}

/** `create` / `previewCreate`: the resource to make (or, in a preview, to describe). */
export interface CreateRequest {
  urn: string;
  resourceType: string;
  name: string;
  /** The checked inputs; in a preview they may contain unknowns. */
  inputs: PropertyMap;
  /** Seconds; 0 means the provider's default. */
  timeout: number;
}

export interface CreateResult {
  /** The new resource's ID; ignored in a preview. */
  id: string;
  outputs: PropertyMap;
}

/** `read`: the resource as recorded (empty when importing), to compare with what it is. */
export interface ReadRequest {
  urn: string;
  resourceType: string;
  name: string;
  id: string;
  oldInputs: PropertyMap;
  oldOutputs: PropertyMap;
}

export interface ReadResult {
  /** Empty when the resource no longer exists. */
  id: string;
  inputs: PropertyMap;
  outputs: PropertyMap;
}

/** `update` / `previewUpdate`: the resource to change in place. */
export interface UpdateRequest {
  urn: string;
  resourceType: string;
  name: string;
  id: string;
  oldInputs: PropertyMap;
  oldOutputs: PropertyMap;
  /** The new checked inputs; in a preview they may contain unknowns. */
  inputs: PropertyMap;
  timeout: number;
  ignoreChanges: string[];
}

export interface UpdateResult {
  outputs: PropertyMap;
}

/** `delete`: the resource as recorded. */
export interface DeleteRequest {
  urn: string;
  resourceType: string;
  name: string;
  id: string;
  oldInputs: PropertyMap;
  oldOutputs: PropertyMap;
  timeout: number;
}

/** A provider function call. */
export interface InvokeRequest {
  token: string;
  args: PropertyMap;
}

export interface InvokeResult {
  outputs: PropertyMap;
  failures?: Array<CheckFailure | { property: string; reason: string }>;
}

/** `construct`: build a component resource — register it and its children with the engine
 * (`engine.registerResource`, the children with the component's URN as `parent`), set its
 * outputs (`engine.registerResourceOutputs`), and return its URN and state. */
export interface ConstructRequest {
  project: string;
  stack: string;
  /** The component's type token and name, as the program declared it. */
  resourceType: string;
  name: string;
  /** The URN of the component's parent (undefined for the stack itself). */
  parent?: string;
  /** The component's inputs; in a preview they may contain unknowns. */
  inputs: PropertyMap;
  inputDependencies: Dependencies;
  /** URNs the component depends on (`dependsOn`). */
  dependencies: string[];
  protect: boolean;
  /** Provider references (`<urn>::<id>`) by package, for the children. */
  providers: Record<string, string>;
  dryRun: boolean;
}

export interface ConstructResult {
  /** The component's URN (from registering it). */
  urn?: string;
  /** Its outputs, as the program sees them. */
  state?: PropertyMap;
  stateDependencies?: Dependencies;
}

/** `call`: a component's method (`pkg:index:Component/method`); `args.__self__` is a
 * `ResourceReference` to the component. */
export interface CallRequest {
  token: string;
  args: PropertyMap;
  argDependencies: Dependencies;
  project: string;
  stack: string;
  dryRun: boolean;
}

export interface CallResult {
  outputs?: PropertyMap;
  outputDependencies?: Dependencies;
  failures?: Array<CheckFailure | { property: string; reason: string }>;
}

/**
 * A provider. Only `create`, `update` and `delete` must be implemented; the host calls one
 * method at a time, `configure` before any resource operation. Every method may return its
 * result or a promise of it (be `async`).
 *
 * | method | default |
 * | --- | --- |
 * | `getSchema` | undefined: the schema of the manifest (`cairn.json`) |
 * | `checkConfig`, `check` | accept the inputs as they are |
 * | `diffConfig` | `diffInputs` with no replacements |
 * | `diff` | `diffInputs` with `replaceOnChange` and `deleteBeforeReplace` |
 * | `configure` | keep the configuration in `this.config` |
 * | `previewCreate` | the inputs as the outputs, no ID |
 * | `previewUpdate` | the new inputs as the outputs |
 * | `read` | the recorded state unchanged |
 * | `construct`, `invoke`, `call` | `ProviderError.unimplemented` |
 */
export abstract class Provider {
  /** The configuration `configure` received. */
  config: PropertyMap = emptyMap();

  /** The package schema as JSON text; undefined serves the manifest's. */
  getSchema(): Awaitable<string | undefined> {
    return undefined;
  }

  checkConfig(request: CheckRequest): Awaitable<CheckResult> {
    return { inputs: request.inputs };
  }

  diffConfig(request: DiffRequest): Awaitable<DiffResult> {
    return diffInputs(request.oldInputs, request.inputs, [], request.ignoreChanges);
  }

  /** Applies checked configuration (unknowns possible in a preview). */
  configure(inputs: PropertyMap, preview: boolean): Awaitable<void> {
    void preview;
    this.config = inputs;
  }

  check(request: CheckRequest): Awaitable<CheckResult> {
    return { inputs: request.inputs };
  }

  /** Top-level inputs of `resourceType` whose change forces replacement (`"*"`: all). */
  replaceOnChange(resourceType: string): string[] {
    void resourceType;
    return [];
  }

  /** Whether a replacement of `resourceType` deletes the old resource first. */
  deleteBeforeReplace(resourceType: string): boolean {
    void resourceType;
    return false;
  }

  diff(request: DiffRequest): Awaitable<DiffResult> {
    const result = diffInputs(
      request.oldInputs,
      request.inputs,
      this.replaceOnChange(request.resourceType),
      request.ignoreChanges,
    );
    result.deleteBeforeReplace =
      (result.replaceKeys?.length ?? 0) > 0 && this.deleteBeforeReplace(request.resourceType);
    return result;
  }

  /** Creates a resource. Never called in a preview: see `previewCreate`. */
  abstract create(request: CreateRequest): Awaitable<CreateResult>;

  /** In a preview, instead of `create`: describes the resource without acting (no side
   * effects). Return `UNKNOWN` for outputs only creating tells. */
  previewCreate(request: CreateRequest): Awaitable<CreateResult> {
    return { id: "", outputs: request.inputs };
  }

  read(request: ReadRequest): Awaitable<ReadResult> {
    return { id: request.id, inputs: request.oldInputs, outputs: request.oldOutputs };
  }

  /** Updates a resource in place. Never called in a preview: see `previewUpdate`. */
  abstract update(request: UpdateRequest): Awaitable<UpdateResult>;

  /** In a preview, instead of `update`: describes the outputs the update would leave. */
  previewUpdate(request: UpdateRequest): Awaitable<UpdateResult> {
    return { outputs: request.inputs };
  }

  abstract delete(request: DeleteRequest): Awaitable<void>;

  invoke(request: InvokeRequest): Awaitable<InvokeResult> {
    void request;
    throw ProviderError.unimplemented("invoke");
  }

  /** Builds a component resource through the engine (see `ConstructRequest`). */
  construct(request: ConstructRequest): Awaitable<ConstructResult> {
    void request;
    throw ProviderError.unimplemented("construct");
  }

  /** Runs a component's method. */
  call(request: CallRequest): Awaitable<CallResult> {
    void request;
    throw ProviderError.unimplemented("call");
  }

  /** Asks the provider to stop outstanding work; advisory. */
  cancel(): Awaitable<void> {}
}

/**
 * Compares the top-level properties of the recorded inputs with the new ones. A key changed
 * when it was added, removed or its value differs (`sameAs`: markers ignored, null counts as
 * absent, an unknown always differs); changed keys in `replace` (or all, with `"*"`) are
 * replace keys; keys in `ignore` are skipped. The detailed diff has an input diff per key.
 */
export function diffInputs(
  oldInputs: PropertyMap,
  inputs: PropertyMap,
  replace: string[],
  ignore: string[],
): DiffResult {
  const changedKeys: string[] = [];
  const replaceKeys: string[] = [];
  const detailedDiff: PropertyDiff[] = [];
  const all = replace.includes("*");
  const visit = (key: string, old: Value | undefined, now: Value | undefined) => {
    if (ignore.includes(key)) return;
    const had = old !== undefined && old !== null;
    const has = now !== undefined && now !== null;
    let kind: "add" | "delete" | "update";
    if (!had && !has) return;
    if (!had) kind = "add";
    else if (!has) kind = "delete";
    else if (sameAs(old, now)) return;
    else kind = "update";
    const forces = all || replace.includes(key);
    changedKeys.push(key);
    if (forces) replaceKeys.push(key);
    detailedDiff.push({ path: key, kind: forces ? (`${kind}-replace` as DiffKind) : kind, inputDiff: true });
  };
  for (const key of Object.keys(oldInputs)) visit(key, oldInputs[key], inputs[key]);
  for (const key of Object.keys(inputs)) {
    if (!Object.prototype.hasOwnProperty.call(oldInputs, key)) visit(key, undefined, inputs[key]);
  }
  return {
    changes: changedKeys.length > 0 ? "some" : "none",
    replaceKeys,
    stableKeys: [],
    changedKeys,
    detailedDiff,
    deleteBeforeReplace: false,
  };
}

// ---------------------------------------------------------------------------------------------
// The export: WIT requests to SDK requests, results back, errors as `provider-error`.

declare const __CAIRN_MANIFEST__: string | undefined;

/** The manifest the build embedded (`cairn.json` with `version` and `wit` filled in). */
export function manifest(): Record<string, unknown> {
  const text = typeof __CAIRN_MANIFEST__ === "string" ? __CAIRN_MANIFEST__ : "{}";
  const parsed: unknown = JSON.parse(text);
  return parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
}

/** The schema `get-schema` serves by default: the manifest's, with `name` and `version` first. */
function manifestSchema(): string | undefined {
  const m = manifest();
  const schema = m.schema;
  if (schema === undefined || schema === null) return undefined;
  if (typeof schema !== "object" || Array.isArray(schema)) return JSON.stringify(schema);
  return JSON.stringify({ name: m.name, version: m.version, ...(schema as object) });
}

/** The WIT error for anything a method threw. */
function witError(e: unknown): wit.ProviderError {
  if (e instanceof ProviderError) {
    switch (e.kind) {
      case "unimplemented":
        return { tag: "unimplemented", val: e.message };
      case "cancelled":
        return { tag: "cancelled" };
      case "timeout":
        return { tag: "timeout", val: Number(e.seconds ?? 0) };
      default: {
        let partial: wit.PartialState | null = null;
        if (e.partial) {
          try {
            partial = {
              id: String(e.partial.id),
              inputs: encode(e.partial.inputs),
              outputs: encode(e.partial.outputs),
            };
          } catch (encoding) {
            return failed(`${e.message} (and its partial state could not be encoded: ${message(encoding)})`);
          }
        }
        return { tag: "failed", val: { message: String(e.message), partial } };
      }
    }
  }
  if (e instanceof CheckFailure || e instanceof NeverSettled) return failed(e.message);
  if (e instanceof MalformedValue) return failed(`the host sent a malformed property table: ${e.message}`);
  return failed(message(e, true));
}

function failed(text: string): wit.ProviderError {
  return { tag: "failed", val: { message: text, partial: null } };
}

/** An exception's text: `Name: message` for unexpected errors, as a stack trace would start. */
export function message(e: unknown, named = false): string {
  if (e instanceof Error) {
    return named && e.name && e.name !== "Error" ? `${e.name}: ${e.message}` : String(e.message);
  }
  try {
    return String(e);
  } catch {
    return "an exception that cannot be shown";
  }
}

/** The method running, for reports of rejections nobody handled. */
let running = "";

/**
 * Runs `method` of the provider (`body` calls it) and `finish` on its result: a promise is
 * settled first, the SDK's queue run until it has (a promise that can no longer settle is a
 * failure naming the method). A thrown error or rejection becomes the WIT's error, thrown as
 * the plain object the runtime lowers as `err`.
 */
function run<R, W>(method: string, body: () => Awaitable<R>, finish: (result: R) => W): W {
  running = method;
  try {
    // Jobs left from before the call (queued while the modules were evaluated, at build time)
    // run first, as they would have right after evaluation.
    runMicrotasks();
    return finish(settleNow(body(), method));
  } catch (e) {
    throw witError(e);
  } finally {
    running = "";
  }
}

function strings(list: unknown, what: string): string[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw ProviderError.failed(`${what} must be an array of strings`);
  return list.map(String);
}

function failures(list: CheckResult["failures"]): wit.CheckFailure[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw ProviderError.failed("failures must be an array");
  return list.map((f) => ({ property: String(f.property ?? ""), reason: String(f.reason ?? "") }));
}

function map(v: unknown, what: string): PropertyMap {
  if (v === undefined || v === null) return emptyMap();
  if (typeof v !== "object" || Array.isArray(v)) throw ProviderError.failed(`${what} must be an object`);
  return v as PropertyMap;
}

/** Encodes a result's property map; what is not a property value is the provider's failure. */
function encodeMap(v: unknown, what: string): wit.Value {
  try {
    return encode(map(v, what));
  } catch (e) {
    if (e instanceof ProviderError) throw e;
    throw ProviderError.failed(`${what}: ${message(e)}`);
  }
}

/** Dependencies from the host: property → URNs (a property listed twice gets both lists). */
export function dependenciesFromWit(list: wit.PropertyDependencies[]): Dependencies {
  const deps: Dependencies = Object.create(null) as Dependencies;
  for (const d of list) (deps[d.property] ??= []).push(...d.urns);
  return deps;
}

/** Dependencies for the host, checked: an object whose values are arrays of URNs. */
export function dependenciesToWit(deps: unknown, what: string): wit.PropertyDependencies[] {
  if (deps === undefined || deps === null) return [];
  if (typeof deps !== "object" || Array.isArray(deps)) throw ProviderError.failed(`${what} must be an object`);
  return Object.keys(deps).map((property) => ({
    property,
    urns: strings((deps as Record<string, unknown>)[property], `${what}.${property}`),
  }));
}

const DIFF_KINDS = new Set(["add", "add-replace", "delete", "delete-replace", "update", "update-replace"]);
const CHANGES = new Set(["unknown", "none", "some"]);

function diffResult(d: DiffResult, ignore: string[]): wit.DiffResult {
  if (d === null || typeof d !== "object") throw ProviderError.failed("diff must return a DiffResult");
  const changes = String(d.changes ?? "unknown");
  if (!CHANGES.has(changes)) throw ProviderError.failed(`diff returned changes ${JSON.stringify(changes)}`);
  const ignored = (k: string) => ignore.includes(k);
  let detailed: wit.PropertyDiff[] | null = null;
  if (d.detailedDiff !== undefined && d.detailedDiff !== null) {
    if (!Array.isArray(d.detailedDiff)) throw ProviderError.failed("detailedDiff must be an array");
    detailed = d.detailedDiff.map((p) => {
      const kind = String(p.kind);
      if (!DIFF_KINDS.has(kind)) throw ProviderError.failed(`a detailed diff entry has kind ${JSON.stringify(kind)}`);
      return { path: String(p.path), kind: kind as DiffKind, inputDiff: !!p.inputDiff };
    });
  }
  return {
    changes: changes as DiffChanges,
    replaceKeys: strings(d.replaceKeys, "replaceKeys").filter((k) => !ignored(k)),
    stableKeys: strings(d.stableKeys, "stableKeys"),
    changedKeys: strings(d.changedKeys, "changedKeys").filter((k) => !ignored(k)),
    detailedDiff: detailed,
    deleteBeforeReplace: !!d.deleteBeforeReplace,
  };
}

function checkRequest(r: wit.CheckRequest): CheckRequest {
  return {
    urn: r.urn,
    resourceType: resourceTypeOf(r.urn),
    name: nameOf(r.urn),
    oldInputs: decodeMap(r.olds),
    inputs: decodeMap(r.news),
    randomSeed: r.randomSeed,
  };
}

function diffRequest(r: wit.DiffRequest): DiffRequest {
  return {
    urn: r.urn,
    resourceType: resourceTypeOf(r.urn),
    name: nameOf(r.urn),
    id: r.id,
    oldInputs: decodeMap(r.oldInputs),
    oldOutputs: decodeMap(r.oldOutputs),
    inputs: decodeMap(r.news),
    ignoreChanges: [...r.ignoreChanges],
  };
}

function checkResult(result: CheckResult): wit.CheckResult {
  if (result === null || typeof result !== "object") throw ProviderError.failed("check must return a CheckResult");
  return { inputs: encodeMap(result.inputs, "the checked inputs"), failures: failures(result.failures) };
}

function constructRequest(r: wit.ConstructRequest): ConstructRequest {
  const providers = Object.create(null) as Record<string, string>;
  for (const [pkg, reference] of r.providers) providers[pkg] = reference;
  return {
    project: r.project,
    stack: r.stack,
    resourceType: r.resourceType,
    name: r.name,
    parent: r.parent ?? undefined,
    inputs: decodeMap(r.inputs),
    inputDependencies: dependenciesFromWit(r.inputDependencies),
    dependencies: [...r.dependencies],
    protect: r.protect,
    providers,
    dryRun: r.dryRun,
  };
}

/** Whether `provider` overrides `method` of the base class (a default can then skip decoding
 * and send the host's table back as it came). */
function overrides(provider: Provider, method: keyof Provider): boolean {
  return (provider as unknown as Record<string, unknown>)[method] !== (Provider.prototype as unknown as Record<string, unknown>)[method];
}

/** The WIT `provider` interface for `provider`: what the component exports. */
export function exportProvider(provider: Provider): Record<string, (...args: never[]) => unknown> {
  if (!(provider instanceof Provider)) {
    throw new TypeError("the provider module's default export must be an instance of a Provider subclass");
  }
  // A rejection nobody handled does not fail the call (the method's own result decides), but
  // it is almost always a bug: the deployment's log shows it, with the method it came from.
  setReporter((kind, reason) => {
    const during = running === "" ? "" : ` (during ${running})`;
    const what = kind === "rejection" ? "a promise was rejected and nothing handled it" : "a queued microtask threw";
    log.error(`${what}${during}: ${message(reason, true)}`);
  });
  const own = {
    check: overrides(provider, "check"),
    checkConfig: overrides(provider, "checkConfig"),
    read: overrides(provider, "read"),
  };
  const passThrough = (r: wit.CheckRequest): wit.CheckResult => ({ inputs: r.news, failures: [] });
  return {
    getSchema(): string {
      return run("getSchema", () => provider.getSchema(), (schema) => {
        const text = schema ?? manifestSchema();
        if (text === undefined) throw ProviderError.unimplemented("get-schema");
        return String(text);
      });
    },
    checkConfig(r: wit.CheckRequest): wit.CheckResult {
      if (!own.checkConfig) return passThrough(r);
      return run("checkConfig", () => provider.checkConfig(checkRequest(r)), checkResult);
    },
    diffConfig(r: wit.DiffRequest): wit.DiffResult {
      return run("diffConfig", () => provider.diffConfig(diffRequest(r)), (d) => diffResult(d, r.ignoreChanges));
    },
    configure(inputs: wit.Value, preview: boolean): void {
      run("configure", () => provider.configure(decodeMap(inputs), preview), () => undefined);
    },
    check(r: wit.CheckRequest): wit.CheckResult {
      if (!own.check) return passThrough(r);
      return run("check", () => provider.check(checkRequest(r)), checkResult);
    },
    diff(r: wit.DiffRequest): wit.DiffResult {
      return run("diff", () => provider.diff(diffRequest(r)), (d) => diffResult(d, r.ignoreChanges));
    },
    create(r: wit.CreateRequest): wit.CreateResult {
      const method = r.preview ? "previewCreate" : "create";
      return run(
        method,
        () => {
          const request: CreateRequest = {
            urn: r.urn,
            resourceType: resourceTypeOf(r.urn),
            name: nameOf(r.urn),
            inputs: decodeMap(r.properties),
            timeout: r.timeout,
          };
          return r.preview ? provider.previewCreate(request) : provider.create(request);
        },
        (result) => {
          if (result === null || typeof result !== "object") throw ProviderError.failed(`${method} must return a CreateResult`);
          return { id: r.preview ? "" : String(result.id ?? ""), outputs: encodeMap(result.outputs, "the outputs") };
        },
      );
    },
    read(r: wit.ReadRequest): wit.ReadResult {
      if (!own.read) return { id: r.id, inputs: r.inputs, outputs: r.state };
      return run(
        "read",
        () =>
          provider.read({
            urn: r.urn,
            resourceType: resourceTypeOf(r.urn),
            name: nameOf(r.urn),
            id: r.id,
            oldInputs: decodeMap(r.inputs),
            oldOutputs: decodeMap(r.state),
          }),
        (result) => {
          if (result === null || typeof result !== "object") throw ProviderError.failed("read must return a ReadResult");
          return {
            id: String(result.id ?? ""),
            inputs: encodeMap(result.inputs, "the inputs read"),
            outputs: encodeMap(result.outputs, "the outputs read"),
          };
        },
      );
    },
    update(r: wit.UpdateRequest): wit.UpdateResult {
      const method = r.preview ? "previewUpdate" : "update";
      return run(
        method,
        () => {
          const request: UpdateRequest = {
            urn: r.urn,
            resourceType: resourceTypeOf(r.urn),
            name: nameOf(r.urn),
            id: r.id,
            oldInputs: decodeMap(r.oldInputs),
            oldOutputs: decodeMap(r.oldOutputs),
            inputs: decodeMap(r.news),
            timeout: r.timeout,
            ignoreChanges: [...r.ignoreChanges],
          };
          return r.preview ? provider.previewUpdate(request) : provider.update(request);
        },
        (result) => {
          if (result === null || typeof result !== "object") throw ProviderError.failed(`${method} must return an UpdateResult`);
          return { outputs: encodeMap(result.outputs, "the outputs") };
        },
      );
    },
    delete(r: wit.DeleteRequest): void {
      run(
        "delete",
        () =>
          provider.delete({
            urn: r.urn,
            resourceType: resourceTypeOf(r.urn),
            name: nameOf(r.urn),
            id: r.id,
            oldInputs: decodeMap(r.inputs),
            oldOutputs: decodeMap(r.outputs),
            timeout: r.timeout,
          }),
        () => undefined,
      );
    },
    construct(r: wit.ConstructRequest): wit.ConstructResult {
      return run("construct", () => provider.construct(constructRequest(r)), (result) => {
        if (result === null || typeof result !== "object") throw ProviderError.failed("construct must return a ConstructResult");
        const urn = result.urn;
        if (urn !== undefined && urn !== null && typeof urn !== "string") throw ProviderError.failed("construct returned a urn that is not a string");
        return {
          urn: urn ?? null,
          state: encodeMap(result.state, "the component's state"),
          stateDependencies: dependenciesToWit(result.stateDependencies, "stateDependencies"),
        };
      });
    },
    invoke(r: wit.InvokeRequest): wit.InvokeResult {
      return run("invoke", () => provider.invoke({ token: r.token, args: decodeMap(r.args) }), (result) => {
        if (result === null || typeof result !== "object") throw ProviderError.failed("invoke must return an InvokeResult");
        return { outputs: encodeMap(result.outputs, "the function's outputs"), failures: failures(result.failures) };
      });
    },
    call(r: wit.CallRequest): wit.CallResult {
      return run(
        "call",
        () =>
          provider.call({
            token: r.token,
            args: decodeMap(r.args),
            argDependencies: dependenciesFromWit(r.argDependencies),
            project: r.project,
            stack: r.stack,
            dryRun: r.dryRun,
          }),
        (result) => {
          if (result === null || typeof result !== "object") throw ProviderError.failed("call must return a CallResult");
          return {
            outputs: encodeMap(result.outputs, "the method's outputs"),
            outputDependencies: dependenciesToWit(result.outputDependencies, "outputDependencies"),
            failures: failures(result.failures),
          };
        },
      );
    },
    cancel(): void {
      try {
        settleNow(provider.cancel(), "cancel");
      } catch (e) {
        log.warn(`cancel failed: ${message(e, true)}`);
      }
    },
  };
}
