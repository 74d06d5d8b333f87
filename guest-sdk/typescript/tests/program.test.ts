// The program side against a fake engine (tests/fake/monitor.mjs): requests wait for what they
// refer to, carry their dependencies and secrets, previews give unknowns and skip callbacks,
// failures fail the run after everything finished, configuration reads as Pulumi's does;
// async programs (an async main, promises as inputs, async callbacks, awaited invokes) keep the
// same rules, and a promise that can never settle fails the run saying what waited for it;
// component methods (`call`).

import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import type * as wit from "cairn:deploy/types@0.3.0";
import {
  ComponentResource,
  Config,
  type Context,
  CustomResource,
  Output,
  type PropertyMap,
  ProviderResource,
  ResourceReference,
  Secret,
  UNKNOWN,
  all,
  call,
  decode,
  decodeMap,
  encode,
  exportProgram,
  interpolate,
  invoke,
  invokeAsync,
  log,
  output,
  secret,
} from "../src/index";
import { reset } from "./fake/state.mjs";
import { withSdkPromises } from "./sdk-promises";

interface Fake {
  logs: Array<{ severity: string; message: string }>;
  requests: Array<{ kind: string; handle: number; request: Record<string, unknown> & { inputs?: wit.Value; name?: string; options?: Record<string, unknown>; args?: wit.Value } }>;
  outputs: Array<{ urn: string; outputs: wit.Value }>;
  failures: Record<string, string>;
  callDependencies: Array<{ property: string; urns: string[] }>;
  deployment: { dryRun: boolean };
  config: Array<[string, wit.Value]>;
}

let fake: Fake;
beforeEach(() => {
  fake = reset() as Fake;
});

/** Runs a program as the component's `run` does: with the SDK's promises as the globals. */
function run(main: (ctx: Context) => unknown): string | undefined {
  return withSdkPromises(() => {
    try {
      exportProgram(main)();
      return undefined;
    } catch (e) {
      return String(e);
    }
  });
}

/** A value a turn of the queue later, as awaiting real work gives it. */
function later<T>(value: T): Promise<T> {
  return new Promise((resolve) => queueMicrotask(() => resolve(value)));
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

test("an async main: awaited invokes, promises as inputs and outputs, async callbacks", () => {
  let size: Output<number> | undefined;
  const error = run(async (ctx) => {
    const found = await invokeAsync("test:index:lookup", { key: later("k") });
    await null;
    const thing = new CustomResource("test:index:Thing", "thing", { size: found.key === "k" ? 1 : 0, note: later("from a promise") });
    size = thing.output<number>("size");
    ctx.export("fromPromise", output(later({ deep: [later(1)] })));
    return {
      derived: size.apply(async (s) => {
        await later(null);
        return s + 1;
      }),
      flattened: size.apply(async (s) => Output.secret(s * 10)),
      secretDerived: secret(2).apply(async (v) => v * 2),
      id: thing.id,
    };
  });
  assert.equal(error, undefined);
  assert.deepEqual(fake.requests.map((r) => r.kind), ["invoke", "register"], "the invoke is awaited before the resource is declared");
  assert.deepEqual({ ...decodeMap(fake.requests[1].request.inputs!) }, { size: 1, note: "from a promise" });
  const outputs = stackOutputs();
  assert.equal(outputs.derived, 2);
  assert.deepEqual(outputs.flattened, new Secret(10));
  assert.deepEqual(outputs.secretDerived, new Secret(4), "what derives from a secret stays secret");
  assert.deepEqual(JSON.parse(JSON.stringify(outputs.fromPromise)), { deep: [1] });
  assert.equal(outputs.id, "thing-id");
  assert.deepEqual(size!.dependencies(), ["urn:pulumi:dev::proj::test:index:Thing::thing"]);
});

test("async callbacks keep the rules: an unknown skips them, dependencies carry, secret arguments make secret results", () => {
  fake.deployment.dryRun = true;
  let ran = 0;
  let derived: Output<string> | undefined;
  let found: unknown;
  const error = run(async (ctx) => {
    const thing = new CustomResource("test:index:Thing", "thing", { size: 1 });
    derived = thing.id.apply(async (id) => {
      ran++;
      return `${id}!`;
    });
    ctx.export("derived", derived);
    found = await invokeAsync("test:index:echo", { password: secret("hunter2"), plain: 1 });
  });
  assert.equal(error, undefined);
  assert.equal(ran, 0, "no callback runs on an unknown value");
  assert.equal(stackOutputs().derived, UNKNOWN);
  assert.deepEqual(derived!.dependencies(), ["urn:pulumi:dev::proj::test:index:Thing::thing"]);
  assert.deepEqual({ ...(found as object) }, { password: new Secret("hunter2"), plain: new Secret(1) });
});

test("a promise that can never settle fails the run, saying what waited for it", () => {
  const never = () => new Promise<never>(() => {});
  assert.match(
    run(() => never())!,
    /^the promise that the program's main function returned never settled: it waits for something that nothing in the component will ever settle/,
  );
  assert.equal(
    run(() => {
      new CustomResource("test:index:Thing", "waiting", { x: never() });
      new CustomResource("test:index:Thing", "independent", {});
    }),
    "test:index:Thing waiting was never registered: an input or option waits for a promise that never settled",
  );
  assert.deepEqual(fake.requests.map((r) => r.request.name), ["independent"]);
  assert.match(run((ctx) => ctx.export("x", never()))!, /^a promise given to outputs never settled/);
  assert.match(run(() => ({ x: Output.create(1).apply(() => never()) }))!, /^a promise given to outputs never settled/);
});

test("rejections fail the run: main's, an input's, a callback's, and one nobody handled", () => {
  assert.equal(
    run(async () => {
      await null;
      throw new RangeError("async main broke");
    }),
    "RangeError: async main broke",
  );
  assert.equal(
    run(() => {
      new CustomResource("test:index:Thing", "rejected", { x: Promise.reject(new Error("no input")) });
    }),
    "a promise given as an input was rejected: no input",
  );
  assert.ok(!fake.requests.some((r) => r.request.name === "rejected"), "a resource whose input failed is not sent");
  assert.equal(
    run((ctx) =>
      ctx.export(
        "x",
        Output.create(1).apply(async () => {
          throw new Error("async callback broke");
        }),
      ),
    ),
    "apply failed: async callback broke",
  );
  assert.equal(
    run(() => {
      void Promise.reject(new Error("dropped"));
    }),
    "a promise was rejected and nothing handled it: dropped",
  );
  // A failed invoke rejects; a program that catches it goes on.
  fake.failures["test:index:broken"] = "the function failed";
  let caught: string | undefined;
  assert.equal(
    run(async () => {
      try {
        await invokeAsync("test:index:broken", {});
      } catch (e) {
        caught = (e as Error).message;
      }
    }),
    undefined,
  );
  assert.equal(caught, "invoking test:index:broken: the function failed");
});

test("call: a remote component's method gets __self__ and its arguments' dependencies", () => {
  fake.callDependencies = [{ property: "text", urns: ["urn:pulumi:dev::proj::test:index:Other::other"] }];
  let result: Output<PropertyMap> | undefined;
  const error = run((ctx) => {
    const pair = new ComponentResource("test:index:Pair", "pair", { prefix: "p" }, {}, true);
    const thing = new CustomResource("test:index:Thing", "thing", { text: "hi" });
    result = call("test:index:Pair/greet", { text: thing.output("text") }, pair);
    ctx.export("greeted", result.apply((r) => r.text));
  });
  assert.equal(error, undefined);
  const pairRequest = fake.requests.find((r) => r.request.name === "pair")!.request;
  assert.equal(pairRequest.remote, true);
  assert.equal(pairRequest.custom, false);
  const sent = fake.requests.find((r) => r.kind === "call")!.request;
  assert.equal(sent.token, "test:index:Pair/greet");
  const args = decodeMap(sent.args!);
  assert.ok(args.__self__ instanceof ResourceReference);
  assert.equal((args.__self__ as ResourceReference).urn, "urn:pulumi:dev::proj::test:index:Pair::pair");
  assert.equal(args.text, "hi");
  assert.deepEqual(sent.argDependencies, [
    { property: "text", urns: ["urn:pulumi:dev::proj::test:index:Thing::thing"] },
    { property: "__self__", urns: ["urn:pulumi:dev::proj::test:index:Pair::pair"] },
  ]);
  assert.equal(stackOutputs().greeted, "hi");
  assert.ok(result!.dependencies().includes("urn:pulumi:dev::proj::test:index:Other::other"), "the method's own dependencies");
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
