// The provider side: the exported WIT interface calls the provider's methods, sends previews
// to previewCreate / previewUpdate, turns every ordinary failure into the WIT's error (never a
// trap), serves the manifest's schema; the default diff, Checker and property paths.

import assert from "node:assert/strict";
import { test } from "node:test";
import type * as wit from "cairn:deploy/types@0.3.0";
import {
  CheckFailure,
  Checker,
  type CreateRequest,
  type CreateResult,
  type DeleteRequest,
  Provider,
  ProviderError,
  type PropertyMap,
  Secret,
  UNKNOWN,
  type UpdateRequest,
  type UpdateResult,
  type Value,
  autoName,
  decodeMap,
  diffInputs,
  encode,
  exportProvider,
  get,
  isUnknown,
  parsePath,
  requireInteger,
  requireString,
} from "../src/index";

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

function call<T>(f: () => T): { ok: T } | { err: wit.ProviderError } {
  try {
    return { ok: f() };
  } catch (e) {
    return { err: e as wit.ProviderError };
  }
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
  assert.deepEqual(call(() => exported.construct({})), { err: { tag: "unimplemented", val: "construct" } });
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
