// The provider side: the exported WIT interface calls the provider's methods, sends previews
// to previewCreate / previewUpdate, turns every ordinary failure into the WIT's error (never a
// trap), serves the manifest's schema; async methods (settled on the SDK's queue, a promise
// that cannot settle a failure naming the method); construct through the engine and call; the
// default diff, Checker and property paths.

import assert from "node:assert/strict";
import { test } from "node:test";
import type * as wit from "cairn:deploy/types@0.3.0";
import {
  type CallRequest,
  type CallResult,
  CheckFailure,
  type CheckRequest,
  type CheckResult,
  Checker,
  type ConstructRequest,
  type ConstructResult,
  type CreateRequest,
  type CreateResult,
  type DeleteRequest,
  type DiffRequest,
  type DiffResult,
  type InvokeRequest,
  type InvokeResult,
  Provider,
  ProviderError,
  type PropertyMap,
  type ReadRequest,
  type ReadResult,
  ResourceReference,
  Secret,
  UNKNOWN,
  type UpdateRequest,
  type UpdateResult,
  type Value,
  autoName,
  decodeMap,
  getString,
  diffInputs,
  encode,
  engine,
  exportProvider,
  get,
  isUnknown,
  parsePath,
  requireInteger,
  requireString,
} from "../src/index";
import { reset } from "./fake/state.mjs";
import { withSdkPromises } from "./sdk-promises";

const URN = "urn:pulumi:dev::proj::parent:index:C$test:index:Thing::my::name";

class Recorder extends Provider {
  calls: string[] = [];
  create(r: CreateRequest): CreateResult {
    this.calls.push(`create ${r.resourceType} ${r.name}`);
    if (r.inputs.fail === "failed") throw ProviderError.failed("it broke");
    if (r.inputs.fail === "partial") {
      throw ProviderError.partial("half done", { id: "id-1", inputs: r.inputs, outputs: { out: 1 } });
    }
    if (r.inputs.fail === "type") (undefined as unknown as { x: number }).x = 1;
    if (r.inputs.fail === "check") requireInteger(r.inputs, "size");
    if (r.inputs.fail === "bad output") return { id: "x", outputs: { f: (() => 1) as unknown as Value } };
    return { id: "id-1", outputs: { ...r.inputs, made: true } };
  }
  override previewCreate(r: CreateRequest): CreateResult {
    this.calls.push("previewCreate");
    return { id: "ignored", outputs: { ...r.inputs, made: UNKNOWN } };
  }
  update(r: UpdateRequest): UpdateResult {
    this.calls.push("update");
    return { outputs: r.inputs };
  }
  delete(r: DeleteRequest): void {
    this.calls.push(`delete ${r.id}`);
  }
  override replaceOnChange(resourceType: string): string[] {
    return resourceType === "test:index:Thing" ? ["size"] : [];
  }
}

/** Calls an export as the host does: with the SDK's promises as the globals. */
function call<T>(f: () => T): { ok: T } | { err: wit.ProviderError } {
  return withSdkPromises(() => {
    try {
      return { ok: f() };
    } catch (e) {
      return { err: e as wit.ProviderError };
    }
  });
}

function create(p: Provider, inputs: PropertyMap, preview = false) {
  const exported = exportProvider(p) as unknown as { create(r: wit.CreateRequest): wit.CreateResult };
  return call(() => exported.create({ urn: URN, properties: encode(inputs), timeout: 0, preview }));
}

test("create and its preview go to their own methods; the URN is read", () => {
  const p = new Recorder();
  const made = create(p, { size: 1 });
  assert.ok("ok" in made);
  assert.equal(made.ok.id, "id-1");
  assert.deepEqual({ ...decodeMap(made.ok.outputs) }, { size: 1, made: true });
  const previewed = create(p, { size: UNKNOWN }, true);
  assert.ok("ok" in previewed);
  assert.equal(previewed.ok.id, "", "a preview's ID is dropped");
  assert.equal(decodeMap(previewed.ok.outputs).made, UNKNOWN);
  assert.deepEqual(p.calls, ["create test:index:Thing my::name", "previewCreate"]);
});

test("ordinary failures are the WIT's errors", () => {
  const cases: Array<[string, (e: wit.ProviderError) => void]> = [
    ["failed", (e) => assert.deepEqual(e, { tag: "failed", val: { message: "it broke", partial: null } })],
    [
      "partial",
      (e) => {
        assert.equal(e.tag, "failed");
        const f = (e as { val: wit.Failure }).val;
        assert.equal(f.message, "half done");
        assert.equal(f.partial?.id, "id-1");
        assert.deepEqual({ ...decodeMap(f.partial!.outputs) }, { out: 1 });
      },
    ],
    ["type", (e) => assert.match((e as { val: wit.Failure }).val.message, /^TypeError: /)],
    ["check", (e) => assert.equal((e as { val: wit.Failure }).val.message, "size: missing required property")],
    ["bad output", (e) => assert.match((e as { val: wit.Failure }).val.message, /^the outputs: f: a function is not a property value/)],
  ];
  for (const [fail, check] of cases) {
    const r = create(new Recorder(), { fail });
    assert.ok("err" in r, fail);
    check(r.err);
  }
});

test("unimplemented methods and malformed tables", () => {
  const exported = exportProvider(new Recorder()) as unknown as Record<string, (r: unknown) => unknown>;
  const construct: wit.ConstructRequest = {
    project: "proj",
    stack: "dev",
    resourceType: "test:index:C",
    name: "c",
    parent: null,
    inputs: encode({}),
    inputDependencies: [],
    dependencies: [],
    protect: false,
    providers: [],
    dryRun: false,
  };
  assert.deepEqual(call(() => exported.construct(construct)), { err: { tag: "unimplemented", val: "construct" } });
  const method = { token: "test:index:C/m", args: encode({}), argDependencies: [], project: "proj", stack: "dev", dryRun: false };
  assert.deepEqual(call(() => exported.call(method)), { err: { tag: "unimplemented", val: "call" } });
  assert.deepEqual(call(() => exported.invoke({ token: "t", args: encode({}) })), {
    err: { tag: "unimplemented", val: "invoke" },
  });
  const broken = { nodes: [3, 0, 9, 0, 0], strings: new Uint8Array(), extras: [] };
  const r = call(() => exported.create({ urn: URN, properties: broken, timeout: 0, preview: false }));
  assert.ok("err" in r);
  assert.match((r.err as { val: wit.Failure }).val.message, /^the host sent a malformed property table: /);
});

test("the default check returns the host's table untouched; diff uses replaceOnChange", () => {
  const exported = exportProvider(new Recorder()) as unknown as {
    check(r: wit.CheckRequest): wit.CheckResult;
    diff(r: wit.DiffRequest): wit.DiffResult;
  };
  const news = encode({ a: 1 });
  assert.equal(exported.check({ urn: URN, olds: encode({}), news, randomSeed: new Uint8Array() }).inputs, news);
  const d = exported.diff({
    urn: URN,
    id: "id-1",
    oldInputs: encode({ size: 1, name: "a", keep: 1 }),
    oldOutputs: encode({}),
    news: encode({ size: 2, name: "b", keep: 1 }),
    ignoreChanges: ["name"],
  });
  assert.equal(d.changes, "some");
  assert.deepEqual(d.changedKeys, ["size"]);
  assert.deepEqual(d.replaceKeys, ["size"]);
  assert.deepEqual(d.detailedDiff, [{ path: "size", kind: "update-replace", inputDiff: true }]);
});

test("the schema is the manifest's, name and version first", () => {
  (globalThis as Record<string, unknown>).__CAIRN_MANIFEST__ = JSON.stringify({
    name: "pkg",
    version: "1.2.3",
    schema: { resources: {}, name: "pkg" },
  });
  const exported = exportProvider(new Recorder()) as unknown as { getSchema(): string };
  assert.equal(exported.getSchema(), '{"name":"pkg","version":"1.2.3","resources":{}}');
});

test("diffInputs: changes, replacements, null as absent, unknowns differ", () => {
  const cases: Array<[PropertyMap, PropertyMap, string[], string[], string[], string[]]> = [
    // olds, news, replace, ignore → changed keys, replace keys
    [{ a: 1, b: "x", n: null }, { b: new Secret("x"), a: 1.0 }, ["*"], [], [], []],
    [{ keep: 1, update: 1, gone: true, forced: "a" }, { keep: 1, update: 2, forced: "b", fresh: UNKNOWN }, ["forced", "fresh"], [], ["update", "gone", "forced", "fresh"], ["forced", "fresh"]],
    [{ a: "x", b: "y" }, { a: UNKNOWN, b: "z" }, [], ["b"], ["a"], []],
    [{ a: { x: 1, y: 2 } }, { a: { y: 2, x: 1 } }, [], [], [], []],
    [{ a: 1 }, { a: null }, [], [], ["a"], []],
    [{}, { a: null }, [], [], [], []],
  ];
  for (const [olds, news, replace, ignore, changed, replaced] of cases) {
    const d = diffInputs(olds, news, replace, ignore);
    assert.deepEqual(d.changedKeys, changed, JSON.stringify(olds));
    assert.deepEqual(d.replaceKeys, replaced, JSON.stringify(olds));
    assert.equal(d.changes, changed.length > 0 ? "some" : "none");
  }
});

test("Checker: failures name the property, unknowns pass, defaults fill in", () => {
  const c = new Checker({ length: 1.5, name: UNKNOWN, tags: { env: 3 } });
  c.default("special", true);
  assert.equal(c.requiredInteger("length"), undefined);
  assert.equal(c.requiredString("name"), undefined);
  assert.equal(c.string("tags.env"), undefined);
  assert.equal(c.requiredString("missing"), undefined);
  const r = c.finish();
  assert.deepEqual(
    r.failures.map((f) => f.message),
    ["length: expected an integer, found the number 1.5", "tags.env: expected a string, found the number 3", "missing: missing required property"],
  );
  assert.equal(r.inputs.special, true);
});

test("autoName is the Rust SDK's", () => {
  assert.equal(autoName("db", new Uint8Array([1, 2, 3])), "db-d0aa621");
  assert.equal(autoName("x", new Uint8Array()), "x-cbf29ce");
  const c = new Checker({});
  c.autoName("name", "site", { name: "site-old" }, new Uint8Array([1]));
  assert.equal(c.inputs.name, "site-old", "an update keeps the old name");
});

test("property paths", () => {
  const map: PropertyMap = { a: { "b.c": [10, new Secret({ d: "deep" })] }, u: UNKNOWN };
  assert.deepEqual(parsePath('a["b.c"][1].d'), ["a", "b.c", 1, "d"]);
  assert.equal(parsePath("a..b"), undefined);
  assert.equal(get(map, 'a["b.c"][1].d'), "deep");
  assert.equal(get(map, 'a["b.c"][0]'), 10);
  assert.equal(get(map, "a.missing"), undefined);
  assert.ok(isUnknown(map, "u.x"));
  assert.throws(() => requireString(map, "u"), (e: CheckFailure) => e.message === "u: is not known yet");
  assert.throws(() => requireString(map, 'a["b.c"]'), /expected a string, found an array/);
});

/** Waits a turn of the queue, as awaiting real work would. */
function later<T>(value: T): Promise<T> {
  return new Promise((resolve) => queueMicrotask(() => resolve(value)));
}

class AsyncProvider extends Provider {
  override async check(r: CheckRequest): Promise<CheckResult> {
    const [size] = await Promise.all([later(r.inputs.size), later(null)]);
    return { inputs: { ...r.inputs, size: size ?? 1 } };
  }
  override async diff(r: DiffRequest): Promise<DiffResult> {
    await null;
    return { changes: r.inputs.size === r.oldInputs.size ? "none" : "some", replaceKeys: ["size"] };
  }
  async create(r: CreateRequest): Promise<CreateResult> {
    const steps: string[] = [];
    for await (const step of this.steps()) steps.push(step);
    if (r.inputs.fail === "partial") throw ProviderError.partial("half made", { id: "half", inputs: r.inputs, outputs: {} });
    if (r.inputs.fail === "never") await new Promise(() => {});
    if (r.inputs.fail === "lost") void Promise.reject(new Error("nobody waits for this"));
    return { id: "made", outputs: { ...r.inputs, steps } };
  }
  override previewCreate(): Promise<CreateResult> {
    return new Promise(() => {});
  }
  private async *steps(): AsyncGenerator<string> {
    yield "plan";
    await later(null);
    yield "apply";
  }
  override async read(r: ReadRequest): Promise<ReadResult> {
    return { id: r.id, inputs: r.oldInputs, outputs: { ...r.oldOutputs, read: await later(true) } };
  }
  async update(r: UpdateRequest): Promise<UpdateResult> {
    return { outputs: await later(r.inputs) };
  }
  async delete(r: DeleteRequest): Promise<void> {
    if (r.id === "stuck") await new Promise(() => {});
  }
  override async invoke(r: InvokeRequest): Promise<InvokeResult> {
    return { outputs: { echoed: await later(r.args.x ?? null) } };
  }
}

test("async methods: a promise is settled on the SDK's queue before the result goes back", () => {
  const exported = exportProvider(new AsyncProvider()) as unknown as Record<string, (r: unknown) => Record<string, wit.Value | string>>;
  const checked = call(() => exported.check({ urn: URN, olds: encode({}), news: encode({ a: 1 }), randomSeed: new Uint8Array() }));
  assert.ok("ok" in checked);
  assert.deepEqual({ ...decodeMap(checked.ok.inputs as wit.Value) }, { a: 1, size: 1 });
  const made = create(new AsyncProvider(), { size: 2 });
  assert.ok("ok" in made);
  assert.deepEqual({ ...decodeMap(made.ok.outputs) }, { size: 2, steps: ["plan", "apply"] });
  const diffed = call(() =>
    exported.diff({ urn: URN, id: "x", oldInputs: encode({ size: 1 }), oldOutputs: encode({}), news: encode({ size: 2 }), ignoreChanges: [] }),
  );
  assert.ok("ok" in diffed);
  assert.equal(diffed.ok.changes, "some");
  const read = call(() => exported.read({ urn: URN, id: "x", inputs: encode({}), state: encode({ a: 1 }) }));
  assert.ok("ok" in read);
  assert.deepEqual({ ...decodeMap(read.ok.outputs as wit.Value) }, { a: 1, read: true });
  const updated = call(() =>
    exported.update({ urn: URN, id: "x", oldInputs: encode({}), oldOutputs: encode({}), news: encode({ b: 2 }), timeout: 0, ignoreChanges: [], preview: false }),
  );
  assert.ok("ok" in updated);
  assert.deepEqual({ ...decodeMap(updated.ok.outputs as wit.Value) }, { b: 2 });
  const invoked = call(() => exported.invoke({ token: "t", args: encode({ x: "y" }) }));
  assert.ok("ok" in invoked);
  assert.deepEqual({ ...decodeMap(invoked.ok.outputs as wit.Value) }, { echoed: "y" });
  assert.deepEqual(call(() => exported.delete({ urn: URN, id: "x", inputs: encode({}), outputs: encode({}), timeout: 0 })), { ok: undefined });
});

test("a rejection is the WIT's error; a promise that cannot settle fails naming the method, never a hang", () => {
  const partial = create(new AsyncProvider(), { fail: "partial" });
  assert.ok("err" in partial);
  assert.equal((partial.err as { val: wit.Failure }).val.message, "half made");
  assert.equal((partial.err as { val: wit.Failure }).val.partial?.id, "half");
  for (const [r, method] of [
    [create(new AsyncProvider(), { fail: "never" }), "create"],
    [create(new AsyncProvider(), {}, true), "previewCreate"],
  ] as const) {
    assert.ok("err" in r, method);
    assert.equal(r.err.tag, "failed");
    assert.match(
      (r.err as { val: wit.Failure }).val.message,
      new RegExp(`^the promise that ${method} returned never settled: it waits for something that nothing in the component will ever settle`),
    );
  }
  const exported = exportProvider(new AsyncProvider()) as unknown as Record<string, (r: unknown) => unknown>;
  const stuck = call(() => exported.delete({ urn: URN, id: "stuck", inputs: encode({}), outputs: encode({}), timeout: 0 }));
  assert.ok("err" in stuck);
  assert.match((stuck.err as { val: wit.Failure }).val.message, /^the promise that delete returned never settled/);
  // The next call starts clean: nothing of the stuck one runs or is reported again.
  assert.ok("ok" in create(new AsyncProvider(), { size: 3 }));
});

test("a rejection nobody handled is logged with the method it came from, and the call's result stands", () => {
  const fake = reset() as unknown as { logs: Array<{ severity: string; message: string }> };
  const r = create(new AsyncProvider(), { fail: "lost" });
  assert.ok("ok" in r);
  assert.deepEqual(
    fake.logs.map((l) => [l.severity, l.message]),
    [["error", "a promise was rejected and nothing handled it (during create): nobody waits for this"]],
  );
});

const PAIR = "test:index:Pair";

/** A component provider as the Rust SDK's test provider is: `construct` registers the
 * component, two children under it (with the package's provider), then its outputs; `call`
 * serves a method on it. */
class Components extends Provider {
  create(r: CreateRequest): CreateResult {
    return { id: r.name, outputs: { ...r.inputs, label: `${getString(r.inputs, "prefix")}-${r.name}` } };
  }
  update(r: UpdateRequest): UpdateResult {
    return { outputs: r.inputs };
  }
  delete(): void {}
  override async construct(r: ConstructRequest): Promise<ConstructResult> {
    if (r.resourceType !== PAIR) throw ProviderError.failed(`unknown component type ${r.resourceType}`);
    const pair = engine.registerResource({ resourceType: r.resourceType, name: r.name, parent: r.parent, dependencies: r.dependencies, protect: r.protect });
    const labels: PropertyMap = {};
    for (const side of ["left", "right"]) {
      await null;
      const thing = engine.registerResource({
        resourceType: "test:index:Thing",
        name: `${r.name}-${side}`,
        custom: true,
        parent: pair.urn,
        inputs: { prefix: r.inputs.prefix ?? null },
        provider: r.providers.test,
      });
      labels[side] = thing.outputs.prefix ?? UNKNOWN;
    }
    engine.registerResourceOutputs(pair.urn, labels);
    return { urn: pair.urn, state: labels, stateDependencies: { left: [`${pair.urn}-left`] } };
  }
  override call(r: CallRequest): CallResult {
    const self = r.args.__self__;
    if (!(self instanceof ResourceReference)) throw ProviderError.failed("call without __self__");
    return { outputs: { greeting: `hello from ${self.urn}`, shout: String(r.args.text ?? "").toUpperCase() }, outputDependencies: { greeting: [self.urn] } };
  }
}

function constructRequest(inputs: PropertyMap, type = PAIR): wit.ConstructRequest {
  return {
    project: "proj",
    stack: "dev",
    resourceType: type,
    name: "pair",
    parent: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev",
    inputs: encode(inputs),
    inputDependencies: [{ property: "prefix", urns: ["urn:a"] }],
    dependencies: ["urn:b"],
    protect: false,
    providers: [["test", "urn:pulumi:dev::proj::pulumi:providers:test::default::id"]],
    dryRun: false,
  };
}

test("construct registers the component and its children through the engine; call runs a method", () => {
  const fake = reset() as unknown as {
    engine: Array<{ kind: string; request?: Record<string, unknown> & { inputs: wit.Value }; urn?: string; outputs?: wit.Value }>;
    failures: Record<string, string>;
  };
  const exported = exportProvider(new Components()) as unknown as {
    construct(r: wit.ConstructRequest): wit.ConstructResult;
    call(r: wit.CallRequest): wit.CallResult;
  };
  const built = call(() => exported.construct(constructRequest({ prefix: "p" })));
  assert.ok("ok" in built, JSON.stringify(built));
  const pairUrn = "urn:pulumi:dev::proj::test:index:Pair::pair";
  assert.equal(built.ok.urn, pairUrn);
  assert.deepEqual({ ...decodeMap(built.ok.state) }, { left: "p", right: "p" });
  assert.deepEqual(built.ok.stateDependencies, [{ property: "left", urns: [`${pairUrn}-left`] }]);
  const [component, left, right, outputs] = fake.engine;
  assert.deepEqual(
    [component.request!.resourceType, component.request!.custom, component.request!.parent, component.request!.dependencies],
    [PAIR, false, "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev", ["urn:b"]],
  );
  for (const [child, name] of [[left, "pair-left"], [right, "pair-right"]] as const) {
    assert.equal(child.request!.name, name);
    assert.equal(child.request!.custom, true);
    assert.equal(child.request!.parent, pairUrn, "a child's parent is the component");
    assert.equal(child.request!.provider, "urn:pulumi:dev::proj::pulumi:providers:test::default::id");
    assert.deepEqual({ ...decodeMap(child.request!.inputs) }, { prefix: "p" });
  }
  assert.equal(outputs.kind, "outputs");
  assert.equal(outputs.urn, pairUrn);
  assert.deepEqual({ ...decodeMap(outputs.outputs!) }, { left: "p", right: "p" });

  const answered = call(() =>
    exported.call({
      token: `${PAIR}/greet`,
      args: encode({ __self__: new ResourceReference(pairUrn), text: "hi" }),
      argDependencies: [{ property: "text", urns: ["urn:c"] }],
      project: "proj",
      stack: "dev",
      dryRun: false,
    }),
  );
  assert.ok("ok" in answered, JSON.stringify(answered));
  assert.deepEqual({ ...decodeMap(answered.ok.outputs) }, { greeting: `hello from ${pairUrn}`, shout: "HI" });
  assert.deepEqual(answered.ok.outputDependencies, [{ property: "greeting", urns: [pairUrn] }]);

  // The engine's refusal, a failure in construct and a bad result are the WIT's errors.
  fake.failures["pair-right"] = "the engine refused pair-right";
  const refused = call(() => exported.construct(constructRequest({ prefix: "p" })));
  assert.deepEqual(refused, { err: { tag: "failed", val: { message: "the engine refused pair-right", partial: null } } });
  const unknown = call(() => exported.construct(constructRequest({}, "test:index:Other")));
  assert.deepEqual(unknown, { err: { tag: "failed", val: { message: "unknown component type test:index:Other", partial: null } } });
  class Bad extends Components {
    override construct(): ConstructResult {
      return { urn: "u", state: {}, stateDependencies: { x: 5 as unknown as string[] } };
    }
  }
  const bad = call(() => (exportProvider(new Bad()) as unknown as typeof exported).construct(constructRequest({})));
  assert.deepEqual(bad, { err: { tag: "failed", val: { message: "stateDependencies.x must be an array of strings", partial: null } } });
  assert.throws(
    () => engine.registerResource({ resourceType: "t:i:T", name: "n", inputs: { f: (() => 1) as unknown as Value } }),
    (e: ProviderError) => e.message === "registering t:i:T n: the inputs: f: a function is not a property value",
  );
});
