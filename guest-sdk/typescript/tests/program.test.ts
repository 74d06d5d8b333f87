// The program side against a fake engine (tests/fake/monitor.mjs): requests wait for what they
// refer to, carry their dependencies and secrets, previews give unknowns and skip callbacks,
// failures fail the run after everything finished, configuration reads as Pulumi's does.

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import type * as wit from "cairn:deploy/types@0.3.0";
import {
  ComponentResource,
  Config,
  type Context,
  CustomResource,
  Output,
  ProviderResource,
  Secret,
  UNKNOWN,
  all,
  decode,
  decodeMap,
  encode,
  exportProgram,
  interpolate,
  invoke,
  log,
  secret,
} from "../src/index";
import { reset } from "./fake/state.mjs";

interface Fake {
  logs: Array<{ severity: string; message: string }>;
  requests: Array<{ kind: string; handle: number; request: Record<string, unknown> & { inputs?: wit.Value; name?: string; options?: Record<string, unknown>; args?: wit.Value } }>;
  outputs: Array<{ urn: string; outputs: wit.Value }>;
  failures: Record<string, string>;
  deployment: { dryRun: boolean };
  config: Array<[string, wit.Value]>;
}

let fake: Fake;
beforeEach(() => {
  fake = reset() as Fake;
});

function run(main: (ctx: Context) => unknown): string | undefined {
  try {
    exportProgram(main)();
    return undefined;
  } catch (e) {
    return String(e);
  }
}

function stackOutputs(): Record<string, unknown> {
  const last = fake.outputs.find((o) => o.urn.endsWith("pulumi:pulumi:Stack::proj-dev"));
  return last ? { ...decodeMap(last.outputs) } : {};
}

test("a child waits for its parent; dependencies and secrets travel with the inputs", () => {
  const error = run((ctx) => {
    const group = new ComponentResource("app:index:Group", "group");
    const first = new CustomResource("test:index:Thing", "first", { size: 1, password: secret("hunter2") }, { parent: group });
    const second = new CustomResource("test:index:Thing", "second", { from: first.output("size") }, { dependsOn: first });
    group.registerOutputs({ size: second.output("from") });
    ctx.export("password", first.output("password"));
    ctx.export("id", second.id);
  });
  assert.equal(error, undefined);
  const names = fake.requests.map((r) => r.request.name);
  assert.deepEqual(names, ["group", "first", "second"]);
  const first = fake.requests[1].request;
  assert.equal((first.options as { parent: string }).parent, "urn:pulumi:dev::proj::app:index:Group::group");
  assert.ok(decodeMap(first.inputs!).password instanceof Secret, "a secret input is a secret node");
  const second = fake.requests[2].request;
  assert.deepEqual(second.propertyDependencies, [{ property: "from", urns: ["urn:pulumi:dev::proj::app:index:Group$test:index:Thing::first"] }]);
  assert.deepEqual((second.options as { dependsOn: string[] }).dependsOn, ["urn:pulumi:dev::proj::app:index:Group$test:index:Thing::first"]);
  const outputs = stackOutputs();
  assert.ok(outputs.password instanceof Secret, "a secret stack output stays secret");
  assert.equal(outputs.id, "second-id");
  const component = fake.outputs.find((o) => o.urn.endsWith("::group"));
  assert.equal(decodeMap(component!.outputs).size, 1);
});

test("a preview: unknown IDs, callbacks skipped, unknown stack outputs, invokes not sent", () => {
  fake.deployment.dryRun = true;
  let ran = 0;
  const error = run((ctx) => {
    const thing = new CustomResource("test:index:Thing", "thing", { size: 1 });
    ctx.export("id", thing.id);
    ctx.export("derived", thing.id.apply((id) => {
      ran++;
      return `${id}!`;
    }));
    const found = invoke("test:index:lookup", { key: thing.id });
    ctx.export("found", found);
    ctx.export("known", thing.output("size").apply((s) => (s as number) + 1));
  });
  assert.equal(error, undefined);
  assert.equal(ran, 0, "no callback runs on an unknown value");
  assert.ok(!fake.requests.some((r) => r.kind === "invoke"), "an invoke with unknown arguments is not sent");
  const outputs = stackOutputs();
  assert.equal(outputs.id, UNKNOWN);
  assert.equal(outputs.derived, UNKNOWN);
  assert.equal(outputs.found, UNKNOWN);
  assert.equal(outputs.known, 2);
});

test("a failed registration fails the run once everything else finished", () => {
  fake.failures.broken = "the provider said no";
  const error = run(() => {
    const broken = new CustomResource("test:index:Thing", "broken", {});
    new CustomResource("test:index:Thing", "dependent", { x: broken.id });
    new CustomResource("test:index:Thing", "independent", {});
  });
  assert.equal(error, "test:index:Thing broken: the provider said no");
  const names = fake.requests.map((r) => r.request.name);
  assert.deepEqual(names, ["broken", "independent"], "what depends on a failure is never sent");
});

test("async code is refused with a reason, not silently dropped", () => {
  const error = run(async () => {
    await Promise.resolve();
  });
  assert.match(error!, /main function returned a Promise/);
  const applied = run((ctx) => {
    ctx.export("x", Output.create(1).apply(async (v) => v));
  });
  assert.match(applied!, /apply callback returned a Promise/);
});

test("a thrown error and a throwing callback fail the run", () => {
  assert.equal(run(() => {
    throw new RangeError("bad range");
  }), "RangeError: bad range");
  const error = run((ctx) => {
    ctx.export("x", Output.create(1).apply(() => {
      throw new Error("callback broke");
    }));
  });
  assert.equal(error, "apply failed: callback broke");
});

test("all, interpolate, secrets and returned stack outputs", () => {
  const error = run(() => {
    const a = Output.create("a");
    const b = secret(2);
    return {
      joined: all([a, b, 3]).apply(([x, y, z]) => `${x}${y}${z}`),
      named: all({ a, c: "c" }).apply((o) => o.a + o.c),
      text: interpolate`${a}-${Output.create(1)}`,
      plain: "value",
    };
  });
  assert.equal(error, undefined);
  const outputs = stackOutputs();
  assert.deepEqual(outputs.joined, new Secret("a23"));
  assert.equal(outputs.named, "ac");
  assert.equal(outputs.text, "a-1");
  assert.equal(outputs.plain, "value");
});

test("configuration", () => {
  fake.config = [
    ["proj:name", encode("Ada")],
    ["proj:count", encode("3")],
    ["proj:flag", encode("true")],
    ["proj:password", encode(new Secret("hunter2"))],
    ["proj:tags", encode({ env: "dev" })],
    ["other:key", encode("x")],
  ];
  const seen: Record<string, unknown> = {};
  const error = run((ctx) => {
    const config = ctx.config();
    seen.name = config.require("name");
    seen.count = config.requireNumber("count");
    seen.flag = config.getBoolean("flag");
    seen.tags = { ...config.getObject<object>("tags") };
    seen.other = new Config("other").get("key");
    seen.secret = config.requireSecret("password").isSecret();
    seen.missing = config.get("missing");
    try {
      config.require("absent");
    } catch (e) {
      seen.error = (e as Error).message;
    }
    try {
      config.getNumber("name");
    } catch (e) {
      seen.notNumber = (e as Error).message;
    }
  });
  assert.equal(error, undefined);
  assert.deepEqual(seen, {
    name: "Ada",
    count: 3,
    flag: true,
    tags: { env: "dev" },
    other: "x",
    secret: true,
    missing: undefined,
    error: "missing required configuration variable 'proj:absent'\n    please set a value using the command `cairn config set proj:absent <value>`",
    notNumber: "configuration value 'proj:name' is not a number: \"Ada\"",
  });
});

test("providers: explicit, inherited by children, and references in a preview", () => {
  fake.deployment.dryRun = true;
  const error = run(() => {
    const provider = new ProviderResource("test", "custom", { region: "x" });
    const parent = new ComponentResource("app:index:Group", "group", {}, { providers: [provider] });
    new CustomResource("test:index:Thing", "child", {}, { parent });
    new CustomResource("test:index:Thing", "explicit", {}, { provider });
  });
  assert.equal(error, undefined);
  const byName = Object.fromEntries(fake.requests.map((r) => [r.request.name, r.request.options as Record<string, unknown>]));
  const reference = "urn:pulumi:dev::proj::pulumi:providers:test::custom::04da6b54-80e4-46f7-96ec-b56ff0331ba9";
  assert.equal(byName.child.provider, reference);
  assert.equal(byName.explicit.provider, reference);
  assert.deepEqual(byName.group.providers, [["test", reference]]);
});

test("invoke: outputs, secrets from arguments", () => {
  const error = run((ctx) => {
    const result = invoke("test:index:echo", { a: 1, s: secret("x") });
    ctx.export("echo", result);
  });
  assert.equal(error, undefined);
  const echoed = stackOutputs().echo as Secret;
  assert.ok(echoed instanceof Secret);
  assert.equal(decode(encode(echoed))!.constructor, Secret);
});

test("log records go to the host's log", () => {
  run(() => {
    log.info("hello");
    log.warn("careful", "urn:pulumi:dev::proj::t::n");
  });
  assert.deepEqual(
    fake.logs.map((l) => [l.severity, l.message]),
    [["info", "hello"], ["warning", "careful"]],
  );
});
