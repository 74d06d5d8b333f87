// Programs: declare a stack's resources in TypeScript, compiled to a wasm component that
// exports `run` (wit/program.wit's `program-world`).
//
// A declaration returns at once. Its request goes to the host when everything it refers to is
// known (its inputs, its parent's, `dependsOn`'s and `deletedWith`'s URNs, its provider's
// reference), so declarations that do not refer to each other deploy in parallel. The host
// answers through `monitor.wait` completions: since `run` cannot be re-entered, the SDK drives
// its own event loop — run the promise jobs that are ready (the SDK's own queue: promise.ts),
// wait, dispatch the completions (which resolves outputs and runs their callbacks, which may
// declare more or settle promises), until nothing is outstanding and no job is left — then
// sends the stack outputs and reports the first error. Waiting for everything before failing
// leaves the state consistent: every request the engine accepted has finished. `main` may be
// `async`; a promise it (or anything the program waits for) returned that is still pending
// once nothing is left to run can never settle, and the run fails saying so.

import * as context from "cairn:deploy/context@0.3.0";
import * as monitor from "cairn:deploy/monitor@0.3.0";
import type { PropertyDependencies, Value as WitValue } from "cairn:deploy/types@0.3.0";
import { installConsole } from "./log";
import {
  type Input,
  type Resolved,
  type Unwrap,
  Output,
  all,
  lifted,
  output,
  propertyValue,
  resetUnsettledPromises,
  setErrorRecorder,
  unsettledPromises,
  whenAll,
} from "./output";
import { NeverSettled, SdkPromise, isThenable, runMicrotasks, setReporter } from "./promise";
import { type Awaitable, message } from "./provider";
import {
  type PropertyMap,
  type Value,
  ResourceReference,
  Secret,
  decode,
  decodeMap,
  emptyMap,
  encode,
  isPlainObject,
} from "./values";

// ---------------------------------------------------------------------------------------------
// The runtime: handlers of outstanding requests, the first error, the stack outputs.

const handlers = new Map<number, (outcome: monitor.Outcome) => void>();
let firstError: string | undefined;
/** Declared resources whose request has not been sent yet (waiting for what they refer to). */
const unsent = new Set<string>();
const stackOutputs: Array<[string, Output<unknown>]> = [];
const stackTransformations: Transformation[] = [];

function recordError(text: string): void {
  if (firstError === undefined) firstError = text;
}
setErrorRecorder(recordError);

/** Runs the ready promise jobs, waits for completions and dispatches them, until nothing is
 * outstanding and no job is left. */
function drain(): void {
  for (;;) {
    runMicrotasks();
    const done = monitor.wait();
    if (done.length === 0) return;
    for (const completion of done) {
      const handler = handlers.get(completion.handle);
      if (handler === undefined) continue;
      handlers.delete(completion.handle);
      try {
        handler(completion.outcome);
      } catch (e) {
        recordError(message(e, true));
      }
    }
  }
}

/** What `main` may return: stack outputs by name (or nothing), or a promise of them. */
export type MainResult = Awaitable<Record<string, Input<unknown>> | void | undefined>;

/** The program's entry point, as a component exports it: `export const run =
 * exportProgram(main)` (the build writes this for a module whose default export is `main`).
 * `main` returns a `MainResult`; anything else it returns is ignored. */
export function exportProgram(main: (ctx: Context) => unknown): () => void {
  return function run(): void {
    // A component runs once per instance; starting clean also lets tests run several.
    handlers.clear();
    unsent.clear();
    firstError = undefined;
    stackOutputs.length = 0;
    stackTransformations.length = 0;
    deploymentInfo = undefined;
    configValues = undefined;
    resetUnsettledPromises();
    // As Node.js does by default, a rejection nobody handled fails the program: it is almost
    // always work that was lost (a resource never declared, a value never exported).
    setReporter((kind, reason) =>
      recordError(
        kind === "rejection"
          ? `a promise was rejected and nothing handled it: ${message(reason, true)}`
          : `a queued microtask threw: ${message(reason, true)}`,
      ),
    );
    installConsole();
    const ctx = new Context();
    // Like a Pulumi Node.js program's returned object: its properties are stack outputs.
    const exportAll = (returned: unknown) => {
      if (isPlainObject(returned)) {
        for (const key of Object.keys(returned)) ctx.export(key, returned[key] as Input<unknown>);
      }
    };
    let pendingMain: unknown;
    // Jobs left from module evaluation (at build time) run first, as right after evaluation.
    runMicrotasks();
    try {
      const returned = main(ctx);
      if (isThenable(returned)) {
        pendingMain = returned;
        SdkPromise.resolve(returned).then(
          (value) => {
            pendingMain = undefined;
            exportAll(value);
          },
          (e: unknown) => {
            pendingMain = undefined;
            recordError(message(e, true));
          },
        );
      } else {
        exportAll(returned);
      }
    } catch (e) {
      recordError(message(e, true));
    }
    drain();
    if (pendingMain !== undefined) recordError(new NeverSettled("the program's main function", pendingMain).message);
    if (stackOutputs.length > 0) {
      const names = stackOutputs.map(([name]) => name);
      whenAll(
        stackOutputs.map(([, o]) => o),
        (settled) => {
          const outputs = emptyMap();
          for (let i = 0; i < names.length; i++) {
            const r = settled[i];
            if ("failed" in r.known) {
              recordError(`stack output ${names[i]}: ${r.known.failed}`);
              return;
            }
            outputs[names[i]] = propertyValue(r) as Value;
          }
          try {
            monitor.registerResourceOutputs(deployment().rootUrn, encode(outputs));
          } catch (e) {
            recordError(`setting the stack outputs: ${message(e)}`);
          }
        },
      );
      drain();
    }
    // Nothing is left to run: what still waits, waits for a promise that can never settle.
    for (const what of unsent) {
      recordError(`${what} was never registered: an input or option waits for a promise that never settled`);
    }
    const waiting = unsettledPromises();
    if (waiting > 0) {
      recordError(
        `${waiting === 1 ? "a promise" : `${waiting} promises`} given to outputs never settled: what depends on ${waiting === 1 ? "it" : "them"} was left out (a component has no timers or I/O events: only code running in the program settles promises)`,
      );
    }
    if (firstError !== undefined) throw firstError;
  };
}

// ---------------------------------------------------------------------------------------------
// The deployment and its configuration.

let deploymentInfo: context.DeploymentInfo | undefined;

function deployment(): context.DeploymentInfo {
  if (deploymentInfo === undefined) deploymentInfo = context.deployment();
  return deploymentInfo;
}

let configValues: Map<string, Value> | undefined;

function configMap(): Map<string, Value> {
  if (configValues === undefined) {
    configValues = new Map();
    for (const [key, value] of context.config()) {
      try {
        const decoded = decode(value);
        if (decoded !== undefined) configValues.set(key, decoded);
      } catch (e) {
        recordError(`configuration ${key}: ${message(e)}`);
      }
    }
  }
  return configValues;
}

/** The project being deployed. */
export function getProject(): string {
  return deployment().project;
}

/** The stack being deployed. */
export function getStack(): string {
  return deployment().stack;
}

export function getOrganization(): string {
  return deployment().organization;
}

/** True in a preview: new resources' outputs are unknown. */
export function isDryRun(): boolean {
  return deployment().dryRun;
}

/** What `main` gets: the deployment, its configuration and the stack outputs. */
export class Context {
  get project(): string {
    return getProject();
  }
  get stack(): string {
    return getStack();
  }
  get organization(): string {
    return getOrganization();
  }
  /** True in a preview. */
  get isDryRun(): boolean {
    return isDryRun();
  }
  /** The URN of the stack's root resource. */
  get rootUrn(): string {
    return deployment().rootUrn;
  }
  /** The project's configuration (keys `<project>:<key>`), or another namespace's. */
  config(namespace?: string): Config {
    return new Config(namespace);
  }
  /** Exports a stack output (a secret one stays secret in the state and `cairn stack output`). */
  export(name: string, value: Input<unknown>): void {
    stackOutputs.push([name, output(value) as Output<unknown>]);
  }
  /** Applies `f` to every resource declared after this call. */
  registerStackTransformation(f: Transformation): void {
    stackTransformations.push(f);
  }
}

/** One namespace of the stack's configuration (`cairn config set <namespace>:<key> ...`). */
export class Config {
  readonly namespace: string;

  constructor(namespace?: string) {
    this.namespace = namespace ?? getProject();
  }

  private fullKey(key: string): string {
    return key.includes(":") ? key : `${this.namespace}:${key}`;
  }

  private missing(key: string, secret: boolean): Error {
    const full = this.fullKey(key);
    return new Error(
      `missing required configuration variable '${full}'\n    please set a value using the command \`cairn config set ${secret ? "--secret " : ""}${full} <value>\``,
    );
  }

  /** The value as set (secret wrapper removed) and whether it was secret. */
  private raw(key: string): [Value, boolean] | undefined {
    const v = configMap().get(this.fullKey(key));
    if (v === undefined) return undefined;
    return v instanceof Secret ? [v.value, true] : [v, false];
  }

  /** A value as text (structured values as JSON; a secret one as it is — prefer getSecret). */
  get(key: string): string | undefined {
    const r = this.raw(key);
    if (r === undefined || r[0] === null) return undefined;
    return typeof r[0] === "string" ? r[0] : JSON.stringify(r[0]);
  }

  require(key: string): string {
    const v = this.get(key);
    if (v === undefined) throw this.missing(key, false);
    return v;
  }

  private parsed<T>(key: string, what: string, parse: (text: string) => T | undefined): T | undefined {
    const text = this.get(key);
    if (text === undefined) return undefined;
    const v = parse(text.trim());
    if (v === undefined) {
      throw new Error(`configuration value '${this.fullKey(key)}' is not ${what}: ${JSON.stringify(text)}`);
    }
    return v;
  }

  getNumber(key: string): number | undefined {
    return this.parsed(key, "a number", (t) => (t !== "" && Number.isFinite(Number(t)) ? Number(t) : undefined));
  }

  requireNumber(key: string): number {
    const v = this.getNumber(key);
    if (v === undefined) throw this.missing(key, false);
    return v;
  }

  getBoolean(key: string): boolean | undefined {
    return this.parsed(key, "true or false", (t) => (t === "true" ? true : t === "false" ? false : undefined));
  }

  requireBoolean(key: string): boolean {
    const v = this.getBoolean(key);
    if (v === undefined) throw this.missing(key, false);
    return v;
  }

  /** A structured value (set as JSON, or with `cairn config set --path`). */
  getObject<T = unknown>(key: string): T | undefined {
    const r = this.raw(key);
    if (r === undefined || r[0] === null) return undefined;
    if (typeof r[0] !== "string") return r[0] as T;
    try {
      return JSON.parse(r[0]) as T;
    } catch (e) {
      throw new Error(`configuration value '${this.fullKey(key)}' is not JSON: ${message(e)}`);
    }
  }

  requireObject<T = unknown>(key: string): T {
    const v = this.getObject<T>(key);
    if (v === undefined) throw this.missing(key, false);
    return v;
  }

  /** A value as a secret output (secret whether or not it was set with `--secret`). */
  getSecret(key: string): Output<string> | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : Output.secret(v);
  }

  requireSecret(key: string): Output<string> {
    const v = this.getSecret(key);
    if (v === undefined) throw this.missing(key, true);
    return v;
  }
}

// ---------------------------------------------------------------------------------------------
// Resources.

/** The ID a provider reference uses for a provider not created yet (a preview). */
export const UNKNOWN_ID = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A previous identity of a resource: a full URN, or parts that default to the current ones. */
export interface Alias {
  urn?: string;
  name?: string;
  type?: string;
  /** The old parent (a resource or its URN); `noParent` says it had none. */
  parent?: Resource | string;
  noParent?: boolean;
  stack?: string;
  project?: string;
}

/** Seconds (or text such as `90s`, `5m`, `1h`); absent means the provider's default. */
export interface CustomTimeouts {
  create?: number | string;
  update?: number | string;
  delete?: number | string;
}

/** What a transformation sees and may change (return a changed copy, or undefined). */
export interface TransformArgs {
  type: string;
  name: string;
  props: Record<string, Input<unknown>>;
  opts: ResourceOptions;
}

export type Transformation = (args: TransformArgs) => TransformArgs | undefined | void;

/** The programming model's resource options. */
export interface ResourceOptions {
  /** The resource's parent (its URN includes the parent's type; children inherit the
   * parent's providers and transformations). */
  parent?: Resource;
  /** Depends on these resources beyond what the inputs say. */
  dependsOn?: Resource | Resource[];
  protect?: boolean;
  /** On delete, drop the resource from the stack but leave it in the cloud. */
  retainOnDelete?: boolean;
  /** Skip deleting this resource when that one is deleted too. */
  deletedWith?: Resource;
  /** Manage the resource with this provider instead of the default one. */
  provider?: ProviderResource;
  /** Providers for a component's children, by package. */
  providers?: ProviderResource[] | Record<string, ProviderResource>;
  aliases?: Array<Alias | string>;
  /** Ignore changes to these property paths. */
  ignoreChanges?: string[];
  /** Replace the resource when these property paths change. */
  replaceOnChanges?: string[];
  deleteBeforeReplace?: boolean;
  /** Mark these output properties secret. */
  additionalSecretOutputs?: string[];
  customTimeouts?: CustomTimeouts;
  /** Adopt the existing resource with this ID instead of creating one. */
  import?: string;
  /** Use this version of the resource's provider package. */
  version?: string;
  transformations?: Transformation[];
  /** Read the existing resource with this ID (a resource the stack does not manage). */
  id?: Input<string>;
}

type Kind = "custom" | "component" | "remote" | "read";

/** A declared resource: its URN and outputs, as outputs. */
export class Resource {
  readonly urn: Output<string>;
  /** The type token and logical name it was declared with (after transformations). Named so
   * that subclasses can have outputs called `type` or `name`. */
  readonly resourceType: string;
  readonly resourceName: string;
  /** @internal */
  readonly __outputs: Output<PropertyMap>;
  /** @internal Transformations children inherit. */
  readonly __transformations: Transformation[];
  /** @internal Provider references children inherit, by package. */
  readonly __providers: Map<string, Output<string>>;
  /** @internal */
  readonly __id: Output<string>;

  protected constructor(kind: Kind, type: string, name: string, props: Record<string, Input<unknown>>, opts: ResourceOptions) {
    const declared = declare(kind, type, name, props, opts);
    this.urn = declared.urn;
    this.__id = declared.id;
    this.__outputs = declared.outputs;
    this.resourceType = declared.type;
    this.resourceName = declared.name;
    this.__transformations = declared.transformations;
    this.__providers = declared.providers;
  }

  /** Output property `key` (lifted: a secret or unknown property makes the output so). */
  output<T = Value>(key: string): Output<T> {
    return this.__outputs.apply((outputs) => {
      const v = Object.prototype.hasOwnProperty.call(outputs, key) ? outputs[key] : null;
      return lifted<T>(v);
    });
  }

  /** Every output property. */
  outputs(): Output<PropertyMap> {
    return this.__outputs;
  }
}

/** A resource managed by its package's provider. */
export class CustomResource extends Resource {
  /** The provider-assigned ID; unknown in a preview of a create. */
  readonly id: Output<string>;

  /** Declares `type` `name` with these inputs (or reads it, given `opts.id`). */
  constructor(type: string, name: string, props: Record<string, Input<unknown>> = {}, opts: ResourceOptions = {}) {
    super(opts.id !== undefined ? "read" : "custom", type, name, props, opts);
    this.id = this.__id;
  }
}

/** A component: a resource grouping others (declare them with it as `parent`), built here,
 * or by its provider's `construct` when `remote`. */
export class ComponentResource extends Resource {
  constructor(
    type: string,
    name: string,
    props: Record<string, Input<unknown>> = {},
    opts: ResourceOptions = {},
    remote = false,
  ) {
    super(remote ? "remote" : "component", type, name, remote ? props : {}, opts);
  }

  /** Sets the component's outputs once they are known (secrets stay secret). */
  registerOutputs(outputs: Record<string, Input<unknown>> = {}): void {
    const keys = Object.keys(outputs);
    const items = keys.map((k) => output(outputs[k]) as Output<unknown>);
    items.push(this.urn as Output<unknown>);
    whenAll(items, (settled) => {
      const urn = settled.pop()!;
      if (!("value" in urn.known)) return; // the failure is already recorded
      const map = emptyMap();
      for (let i = 0; i < keys.length; i++) {
        const v = propertyValue(settled[i]);
        if (v === undefined) return;
        map[keys[i]] = v;
      }
      try {
        monitor.registerResourceOutputs(String(urn.known.value), encode(map));
      } catch (e) {
        recordError(`registering the outputs of ${String(urn.known.value)}: ${message(e)}`);
      }
    });
  }
}

/** An explicit provider of `pkg` (`pulumi:providers:<pkg>`), configured by `props`; use it
 * with the `provider` / `providers` options. */
export class ProviderResource extends CustomResource {
  readonly package: string;

  constructor(pkg: string, name: string, props: Record<string, Input<unknown>> = {}, opts: ResourceOptions = {}) {
    super(`pulumi:providers:${pkg}`, name, props, opts);
    this.package = pkg;
  }

  /** The reference the engine takes: `<urn>::<id>` (the unknown ID in a preview). */
  reference(): Output<string> {
    const [out, settle] = Output.pending<string>();
    whenAll([this.urn, this.id] as Array<Output<unknown>>, ([urn, id]) => {
      const deps = new Set([...urn.deps, ...id.deps]);
      if ("failed" in urn.known) return settle({ known: urn.known, secret: false, deps });
      if ("failed" in id.known) return settle({ known: id.known, secret: false, deps });
      if (!("value" in urn.known)) return settle({ known: { unknown: true }, secret: false, deps });
      // An unknown ID (a provider created by this update) still makes a usable reference.
      const idText = "value" in id.known && id.known.value !== "" ? String(id.known.value) : UNKNOWN_ID;
      settle({ known: { value: `${String(urn.known.value)}::${idText}` }, secret: false, deps });
    });
    return out;
  }
}

/** Reads an existing resource the stack does not manage (`get`). */
export function readResource(
  type: string,
  name: string,
  id: Input<string>,
  props: Record<string, Input<unknown>> = {},
  opts: ResourceOptions = {},
): CustomResource {
  return new CustomResource(type, name, props, { ...opts, id });
}

/** Another stack's outputs on the same backend (`<stack>` or `<project>/<stack>`). Secret
 * outputs stay secret. */
export class StackReference extends CustomResource {
  constructor(name: string, opts: ResourceOptions = {}) {
    super("pulumi:pulumi:StackReference", name, { name }, { ...opts, id: name });
  }

  /** Output `name` of the referenced stack (null when it has none). */
  getOutput(name: string): Output<Value> {
    return this.output<PropertyMap>("outputs").apply((outputs) =>
      lifted(outputs !== null && Object.prototype.hasOwnProperty.call(outputs, name) ? outputs[name] : null),
    );
  }

  /** Output `name`, failing with a message naming the stack when it does not exist. */
  requireOutput(name: string): Output<Value> {
    const stack = this.resourceName;
    return this.output<PropertyMap>("outputs").apply((outputs) => {
      if (outputs === null || !Object.prototype.hasOwnProperty.call(outputs, name)) {
        throw new Error(`stack ${stack} has no output ${JSON.stringify(name)}`);
      }
      return lifted(outputs[name]);
    });
  }
}

/** Options of `invoke` and `call`. */
export interface InvokeOptions {
  provider?: ProviderResource;
  version?: string;
}

/** Calls a provider function once `args` are known; unknown arguments (a preview) give an
 * unknown result without calling it. The result is secret when an argument was. */
export function invoke(token: string, args: Record<string, Input<unknown>> = {}, opts: InvokeOptions = {}): Output<PropertyMap> {
  return functionCall("invoke", token, args, opts);
}

/**
 * Calls a provider function and gives its outputs as a promise, for `await` (`invoke` gives
 * them as an output). The arguments may be outputs or promises; the call is made once they
 * are known. Unknown ones (in a preview) are sent as `UNKNOWN`, for the provider to decide.
 * Secret values stay `Secret`s, and every output is a `Secret` when an argument was one.
 * A failed call rejects with the engine's message.
 */
export function invokeAsync(token: string, args: Record<string, Input<unknown>> = {}, opts: InvokeOptions = {}): Promise<PropertyMap> {
  return new SdkPromise<PropertyMap>((resolve, reject) => {
    const keys = Object.keys(args);
    const items = keys.map((k) => output(args[k]) as Output<unknown>);
    if (opts.provider) items.push(opts.provider.reference() as Output<unknown>);
    whenAll(items, (settled) => {
      const provider = opts.provider ? settled.pop() : undefined;
      const failure = [...settled, ...(provider ? [provider] : [])].find((r) => "failed" in r.known);
      if (failure && "failed" in failure.known) return reject(new Error(`invoking ${token}: ${failure.known.failed}`));
      const secret = settled.some((r) => r.secret);
      const map = emptyMap();
      keys.forEach((k, i) => (map[k] = propertyValue(settled[i]) as Value));
      let request: WitValue;
      try {
        request = encode(map);
      } catch (e) {
        return reject(new Error(`invoking ${token}: ${message(e)}`));
      }
      const handle = monitor.invoke({
        token,
        args: request,
        provider: provider && "value" in provider.known ? String(provider.known.value) : null,
        version: opts.version ?? null,
      });
      handlers.set(handle, (outcome) => {
        if (outcome.tag === "failed") return reject(new Error(`invoking ${token}: ${outcome.val}`));
        if (outcome.tag !== "outputs") return reject(new Error(`invoking ${token}: the host answered with a resource's state`));
        let outputs: PropertyMap;
        try {
          outputs = decodeMap(outcome.val.outputs);
        } catch (e) {
          return reject(new Error(`invoking ${token}: the host sent bad outputs: ${message(e)}`));
        }
        if (secret) for (const k of Object.keys(outputs)) if (!(outputs[k] instanceof Secret)) outputs[k] = new Secret(outputs[k]);
        resolve(outputs);
      });
    });
  });
}

/**
 * Calls method `token` (`pkg:index:Component/method`) of component `self` — a remote component,
 * built by its provider's `construct` — through that provider's `call`. The method gets `args`
 * and `__self__`, a reference to the component; its outputs depend on what the provider says
 * they do. As `invoke`: unknown arguments (a preview) give an unknown result without calling.
 */
export function call(
  token: string,
  args: Record<string, Input<unknown>> = {},
  self?: Resource,
  opts: InvokeOptions = {},
): Output<PropertyMap> {
  return functionCall("call", token, self ? { ...args, __self__: self.urn.apply((urn) => new ResourceReference(urn)) } : args, opts);
}

function functionCall(
  kind: "invoke" | "call",
  token: string,
  args: Record<string, Input<unknown>>,
  opts: InvokeOptions,
): Output<PropertyMap> {
  const [out, settle] = Output.pending<PropertyMap>();
  const keys = Object.keys(args);
  const items = keys.map((k) => output(args[k]) as Output<unknown>);
  if (opts.provider) items.push(opts.provider.reference() as Output<unknown>);
  const doing = `${kind === "invoke" ? "invoking" : "calling"} ${token}`;
  whenAll(items, (settled) => {
    const provider = opts.provider ? settled.pop() : undefined;
    const deps = new Set<string>();
    for (const r of settled) for (const d of r.deps) deps.add(d);
    const failure = [...settled, ...(provider ? [provider] : [])].find((r) => "failed" in r.known);
    if (failure && "failed" in failure.known) {
      return settle({ known: { failed: failure.known.failed }, secret: false, deps });
    }
    if (settled.some((r) => "unknown" in r.known) || (provider && !("value" in provider.known))) {
      return settle({ known: { unknown: true }, secret: false, deps });
    }
    const secret = settled.some((r) => r.secret);
    const map = emptyMap();
    const argDependencies: PropertyDependencies[] = [];
    keys.forEach((k, i) => {
      map[k] = propertyValue(settled[i]) as Value;
      if (settled[i].deps.size > 0) argDependencies.push({ property: k, urns: [...settled[i].deps] });
    });
    let request;
    try {
      request = encode(map);
    } catch (e) {
      const text = `${doing}: ${message(e)}`;
      recordError(text);
      return settle({ known: { failed: text }, secret, deps });
    }
    const providerRef = provider && "value" in provider.known ? String(provider.known.value) : null;
    const version = opts.version ?? null;
    const handle =
      kind === "invoke"
        ? monitor.invoke({ token, args: request, provider: providerRef, version })
        : monitor.call({ token, args: request, argDependencies, provider: providerRef, version });
    handlers.set(handle, (outcome) => {
      if (outcome.tag === "failed") {
        const text = `${doing}: ${outcome.val}`;
        recordError(text);
        return settle({ known: { failed: text }, secret, deps });
      }
      const result = outcome.val;
      try {
        const decoded = decodeMap(result.outputs);
        const r = lifted<PropertyMap>(decoded).peek()!;
        const all = new Set([...deps, ...r.deps]);
        for (const d of result.propertyDependencies) for (const urn of d.urns) all.add(urn);
        settle({ known: r.known, secret: secret || r.secret, deps: all });
      } catch (e) {
        const text = `${doing}: the host sent bad outputs: ${message(e)}`;
        recordError(text);
        settle({ known: { failed: text }, secret, deps });
      }
    });
  });
  return out;
}

/** Seconds of a custom timeout: a number, or text with a unit (`s`, `m`, `h`). */
function seconds(v: number | string | undefined, what: string): number {
  if (v === undefined) return 0;
  if (typeof v === "number") {
    if (!Number.isFinite(v) || v < 0) throw new Error(`customTimeouts.${what} must be a non-negative number of seconds`);
    return v;
  }
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(s|m|h)?\s*$/.exec(v);
  if (!m) throw new Error(`customTimeouts.${what} is not a duration: ${JSON.stringify(v)}`);
  return Number(m[1]) * (m[2] === "h" ? 3600 : m[2] === "m" ? 60 : 1);
}

interface Declared {
  urn: Output<string>;
  id: Output<string>;
  outputs: Output<PropertyMap>;
  type: string;
  name: string;
  transformations: Transformation[];
  providers: Map<string, Output<string>>;
}

function declare(
  kind: Kind,
  type0: string,
  name0: string,
  props0: Record<string, Input<unknown>>,
  opts0: ResourceOptions,
): Declared {
  // Transformations: the resource's own, then its ancestors' (nearest first), then the
  // stack's. Children inherit the first two.
  const inherited = [...(opts0.transformations ?? []), ...(opts0.parent?.__transformations ?? [])];
  let t: TransformArgs = { type: type0, name: name0, props: props0, opts: opts0 };
  for (const f of [...inherited, ...stackTransformations]) t = f(t) ?? t;
  const { type, name, props, opts } = t;

  const [urn, settleUrn] = Output.pending<string>();
  const [id, settleId] = Output.pending<string>();
  const [outputs, settleOutputs] = Output.pending<PropertyMap>();
  const what = `${type} ${name}`;
  const fail = (text: string) => {
    const r = { known: { failed: text }, secret: false, deps: new Set<string>() };
    settleUrn(r);
    settleId(r);
    settleOutputs(r);
  };

  // Providers children inherit: the parent's, overridden by this resource's own.
  const providers = new Map(opts.parent?.__providers ?? []);
  const own = opts.providers === undefined ? [] : Array.isArray(opts.providers) ? opts.providers : Object.values(opts.providers);
  for (const p of own) providers.set(p.package, p.reference());
  const pkg = type.startsWith("pulumi:providers:") ? "" : type.split(":")[0];
  const provider = opts.provider ? opts.provider.reference() : providers.get(pkg);

  const declared: Declared = { urn, id, outputs, type, name, transformations: inherited, providers };

  let timeouts: monitor.CustomTimeouts | null = null;
  try {
    if (opts.customTimeouts) {
      timeouts = {
        create: seconds(opts.customTimeouts.create, "create"),
        update: seconds(opts.customTimeouts.update, "update"),
        delete: seconds(opts.customTimeouts.delete, "delete"),
      };
    }
  } catch (e) {
    const text = `${what}: ${message(e)}`;
    recordError(text);
    fail(text);
    return declared;
  }

  // Everything the request needs, in a fixed order after the inputs.
  const keys = Object.keys(props).filter((k) => props[k] !== undefined);
  const items: Array<Output<unknown>> = keys.map((k) => output(props[k]) as Output<unknown>);
  const slot = (o: Output<unknown> | undefined) => {
    if (o === undefined) return -1;
    items.push(o);
    return items.length - 1;
  };
  const parentAt = slot(opts.parent?.urn as Output<unknown> | undefined);
  const deletedWithAt = slot(opts.deletedWith?.urn as Output<unknown> | undefined);
  const providerAt = slot(provider as Output<unknown> | undefined);
  const dependsOn = opts.dependsOn === undefined ? [] : Array.isArray(opts.dependsOn) ? opts.dependsOn : [opts.dependsOn];
  const dependsFrom = items.length;
  for (const r of dependsOn) items.push(r.urn as Output<unknown>);
  const providersFrom = items.length;
  const providerList = [...providers.entries()];
  for (const [, ref] of providerList) items.push(ref as Output<unknown>);
  const aliasFrom = items.length;
  const aliases = opts.aliases ?? [];
  for (const a of aliases) {
    items.push(typeof a !== "string" && a.parent instanceof Resource ? (a.parent.urn as Output<unknown>) : Output.create(null));
  }
  const readIdAt = kind === "read" ? slot(output(opts.id as Input<string>) as Output<unknown>) : -1;
  const dryRun = isDryRun();

  const text = (r: Resolved<unknown> | undefined) =>
    r !== undefined && "value" in r.known && typeof r.known.value === "string" ? r.known.value : null;

  unsent.add(what);
  whenAll(items, (settled) => {
    unsent.delete(what);
    const failure = settled.find((r) => "failed" in r.known);
    if (failure && "failed" in failure.known) return fail(failure.known.failed);
    const inputs = emptyMap();
    const propertyDependencies: PropertyDependencies[] = [];
    keys.forEach((key, i) => {
      const r = settled[i];
      if (r.deps.size > 0) propertyDependencies.push({ property: key, urns: [...r.deps] });
      inputs[key] = propertyValue(r) as Value;
    });
    let encoded: WitValue;
    try {
      encoded = encode(inputs);
    } catch (e) {
      const failureText = `${what}: ${message(e)}`;
      recordError(failureText);
      return fail(failureText);
    }
    const finish = (outcome: monitor.Outcome) => {
      if (outcome.tag === "failed") {
        const failureText = outcome.val.includes(what) ? outcome.val : `${what}: ${outcome.val}`;
        recordError(failureText);
        return fail(failureText);
      }
      if (outcome.tag !== "state") return fail(`${what}: the host answered with function outputs`);
      const s = outcome.val;
      let decoded: PropertyMap;
      try {
        decoded = decodeMap(s.outputs);
      } catch (e) {
        const failureText = `${what}: the host sent bad outputs: ${message(e)}`;
        recordError(failureText);
        return fail(failureText);
      }
      const deps = new Set([s.urn]);
      const knownId =
        s.id != null && s.id !== ""
          ? { value: s.id }
          : dryRun && kind !== "component"
            ? { unknown: true as const }
            : { value: "" };
      settleId({ known: knownId, secret: false, deps });
      settleOutputs({ known: { value: decoded }, secret: false, deps });
      settleUrn({ known: { value: s.urn }, secret: false, deps });
    };
    const parent = text(settled[parentAt]);
    const providerRef = text(settled[providerAt]);
    const dependsUrns = [...new Set(settled.slice(dependsFrom, providersFrom).map(text).filter((u): u is string => u !== null))];
    let handle: number;
    if (kind === "read") {
      const readId = text(settled[readIdAt]);
      if (readId === null) return finish({ tag: "failed", val: "the ID to read is not known" });
      handle = monitor.readResource({
        resourceType: type,
        name,
        id: readId,
        parent,
        properties: encoded,
        dependencies: dependsUrns,
        provider: providerRef,
        version: opts.version ?? null,
        additionalSecretOutputs: [...(opts.additionalSecretOutputs ?? [])],
      });
    } else {
      handle = monitor.registerResource({
        resourceType: type,
        name,
        custom: kind === "custom",
        remote: kind === "remote",
        inputs: encoded,
        propertyDependencies,
        options: {
          parent,
          dependsOn: dependsUrns,
          protect: !!opts.protect,
          retainOnDelete: !!opts.retainOnDelete,
          deletedWith: text(settled[deletedWithAt]),
          provider: providerRef,
          providers: providerList
            .map(([p], i) => [p, text(settled[providersFrom + i])] as [string, string | null])
            .filter((e): e is [string, string] => e[1] !== null),
          aliases: aliases.map((a, i) =>
            typeof a === "string"
              ? { urn: a, name: null, resourceType: null, parentUrn: null, noParent: false, stack: null, project: null }
              : {
                  urn: a.urn ?? null,
                  name: a.name ?? null,
                  resourceType: a.type ?? null,
                  parentUrn: typeof a.parent === "string" ? a.parent : text(settled[aliasFrom + i]),
                  noParent: !!a.noParent,
                  stack: a.stack ?? null,
                  project: a.project ?? null,
                },
          ),
          ignoreChanges: [...(opts.ignoreChanges ?? [])],
          replaceOnChanges: [...(opts.replaceOnChanges ?? [])],
          deleteBeforeReplace: opts.deleteBeforeReplace ?? null,
          additionalSecretOutputs: [...(opts.additionalSecretOutputs ?? [])],
          customTimeouts: timeouts,
          importId: opts.import ?? null,
          version: opts.version ?? null,
        },
      });
    }
    handlers.set(handle, finish);
  });
  return declared;
}

export type { Input, Unwrap };
export { Output, all, output };
