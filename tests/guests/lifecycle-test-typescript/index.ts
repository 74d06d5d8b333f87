// The lifecycle scenarios' test provider (package `test`) in TypeScript: the behaviour of
// host/lifecycle/test-provider (the logic) and tests/guests/lifecycle-test (its component side)
// written again on Cairn's TypeScript SDK, so the same scenarios hold for a TypeScript guest.
//
// Its "cloud" is the granted directory `/cloud`, which the harness fills before and reads back
// after each deployment:
// * `resources/<id>.json` — `{name, type, inputs, outputs}`, plain JSON values (secrets
//   `{"$secret": v}`, unknowns `"$unknown"`);
// * `creates/<name>`, `generated/<name>` — counters behind IDs `<name>-<n>` and names
//   `<name>-gen<n>` (one file per name, so concurrent instances never share a counter);
// * `behaviour.json` — the deployment's behaviour (the harness's `ProviderSpec`).

import {
  type CheckRequest,
  type CheckResult,
  type CreateRequest,
  type CreateResult,
  type DeleteRequest,
  type DiffKind,
  type DiffRequest,
  type DiffResult,
  type PropertyDiff,
  type PropertyMap,
  type ReadRequest,
  type ReadResult,
  type UpdateRequest,
  type UpdateResult,
  type Value,
  CheckFailure,
  OutputValue,
  Provider,
  ProviderError,
  Secret,
  UNKNOWN,
  containsUnknowns,
  emptyMap,
  fs,
  isMap,
  unsecret,
} from "cairn-sdk";

const CLOUD = "/cloud";

/** How the provider behaves towards a resource (the harness's `Behaviour`; null is unset). */
interface Behaviour {
  replaceOn?: string[] | null;
  deleteBeforeReplace?: boolean | null;
  diff?: string | null;
  autoName?: boolean | null;
  failCreate?: string | null;
  failUpdate?: string | null;
  failDelete?: string | null;
  failRead?: string | null;
  partial?: boolean | null;
  badOutput?: string | null;
  checkFailures?: Array<{ property?: string; reason: string }> | null;
  [other: string]: unknown;
}

interface Spec {
  all?: Behaviour | null;
  resources?: Record<string, Behaviour> | null;
  configReplaceKeys?: string[] | null;
}

/** A failure after acting: the resource it left behind. */
function partial(message: string, id: string, inputs: PropertyMap, outputs: PropertyMap): ProviderError {
  return ProviderError.partial(message, { id, inputs, outputs });
}

/** `base` overridden by the fields `over` sets. */
function merged(base: Behaviour, over: Behaviour): Behaviour {
  const out: Behaviour = { ...base };
  for (const [k, v] of Object.entries(over)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

function spec(): Spec {
  const text = readCloud("behaviour.json", "behaviour.json");
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as Spec;
  } catch (e) {
    throw ProviderError.failed(`behaviour.json is malformed: ${(e as Error).message}`);
  }
}

function behaviour(name: string): Behaviour {
  const s = spec();
  const all = s.all ?? {};
  const own = s.resources?.[name];
  return own ? merged(all, own) : all;
}

/** A file of the cloud; undefined when there is none. */
function readCloud(path: string, what: string): string | undefined {
  try {
    return fs.readTextFileIfExists(`${CLOUD}/${path}`);
  } catch (e) {
    throw ProviderError.failed(`reading ${what}: ${(e as Error).message}`);
  }
}

/** Writes a file of the cloud, making its directory first. */
function writeCloud(dir: string, file: string, text: string): void {
  try {
    fs.mkdir(`${CLOUD}/${dir}`);
    fs.writeFile(`${CLOUD}/${dir}/${file}`, text);
  } catch (e) {
    throw ProviderError.failed(`writing ${file}: ${(e as Error).message}`);
  }
}

/** Increments counter `kind` (`creates`, `generated`) of resource `name`; the first is 1. */
function next(kind: string, name: string): number {
  const text = readCloud(`${kind}/${name}`, "a counter");
  let current = 0;
  if (text !== undefined) {
    current = Number(text.trim());
    if (!Number.isSafeInteger(current) || current < 0) {
      throw ProviderError.failed(`counter ${kind}/${name}: ${JSON.stringify(text)} is not a number`);
    }
  }
  writeCloud(kind, name, String(current + 1));
  return current + 1;
}

interface Entry {
  name: string;
  type: string;
  inputs: PropertyMap;
  outputs: PropertyMap;
}

function getEntry(id: string): Entry | undefined {
  const text = readCloud(`resources/${id}.json`, `resource ${id}`);
  if (text === undefined) return undefined;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw ProviderError.failed(`resource ${id} is malformed: ${(e as Error).message}`);
  }
  const map = (v: unknown): PropertyMap => {
    const value = fromJson(v);
    return isMap(value) ? value : emptyMap();
  };
  return {
    name: typeof json.name === "string" ? json.name : "",
    type: typeof json.type === "string" ? json.type : "",
    inputs: map(json.inputs),
    outputs: map(json.outputs),
  };
}

function putEntry(id: string, entry: Entry): void {
  const json = { name: entry.name, type: entry.type, inputs: toJson(entry.inputs), outputs: toJson(entry.outputs) };
  writeCloud("resources", `${id}.json`, JSON.stringify(json));
}

function removeEntry(id: string): void {
  try {
    fs.removeFile(`${CLOUD}/resources/${id}.json`);
  } catch (e) {
    throw ProviderError.failed(`deleting resource ${id}: ${(e as Error).message}`);
  }
}

function fromJson(v: unknown): Value {
  if (v === "$unknown") return UNKNOWN;
  if (Array.isArray(v)) return v.map(fromJson);
  if (v !== null && typeof v === "object") {
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === "$secret") return new Secret(fromJson((v as Record<string, unknown>).$secret));
    const out = emptyMap();
    for (const k of keys) out[k] = fromJson((v as Record<string, unknown>)[k]);
    return out;
  }
  return v as Value;
}

function toJson(v: Value): unknown {
  if (v instanceof Secret) return { $secret: toJson(v.value) };
  if (v instanceof OutputValue) return v.value === UNKNOWN ? "$unknown" : toJson(v.value);
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map(toJson);
  if (isMap(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) out[k] = toJson(v[k]);
    return out;
  }
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  // Unknowns, and what the scenarios never store (assets, archives, references).
  return "$unknown";
}

/** Exact equality of plain values (object key order aside; NaN differs from itself). */
function equal(a: Value, b: Value): boolean {
  if (a === b) return typeof a !== "number" || !Number.isNaN(a);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  }
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]));
  }
  if (a instanceof Secret && b instanceof Secret) return equal(a.value, b.value);
  if (a instanceof OutputValue && b instanceof OutputValue) {
    return a.secret === b.secret && equal(a.value, b.value) && a.dependencies.join("\n") === b.dependencies.join("\n");
  }
  return false;
}

/** Whether a value changed: an unknown new value always has; secrecy alone does not count. */
function differs(old: Value, now: Value): boolean {
  return containsUnknowns(now) || !equal(unsecret(old), unsecret(now));
}

function stripSecrets(map: PropertyMap): PropertyMap {
  const out = emptyMap();
  for (const k of Object.keys(map)) out[k] = unsecret(map[k]);
  return out;
}

const has = (m: PropertyMap, k: string) => Object.prototype.hasOwnProperty.call(m, k);

/** Top-level keys whose values differ: the news' in order, then those only the olds have. */
function changedKeys(olds: PropertyMap, news: PropertyMap): string[] {
  const keys = Object.keys(news).filter((k) => !has(olds, k) || differs(olds[k], news[k]));
  for (const k of Object.keys(olds)) if (!has(news, k)) keys.push(k);
  return keys;
}

/** The changed paths between two values: objects and arrays element by element. */
function changedPaths(prefix: string, old: Value | undefined, now: Value | undefined, out: PropertyDiff[]): void {
  let kind: DiffKind;
  if (old === undefined && now === undefined) return;
  if (old === undefined) kind = "add";
  else if (now === undefined) kind = "delete";
  else {
    if (isMap(old) && isMap(now)) {
      for (const key of [...Object.keys(old), ...Object.keys(now).filter((k) => !has(old, k))]) {
        changedPaths(prefix === "" ? key : `${prefix}.${key}`, has(old, key) ? old[key] : undefined, has(now, key) ? now[key] : undefined, out);
      }
      return;
    }
    if (Array.isArray(old) && Array.isArray(now)) {
      for (let i = 0; i < Math.max(old.length, now.length); i++) {
        changedPaths(`${prefix}[${i}]`, old[i], now[i], out);
      }
      return;
    }
    if (!differs(old, now)) return;
    kind = "update";
  }
  out.push({ path: prefix, kind, inputDiff: true });
}

function withBadOutput(b: Behaviour, outputs: PropertyMap): void {
  if (b.badOutput === "nan") outputs.bad = NaN;
  else if (b.badOutput === "inf") outputs.bad = Infinity;
}

function replacing(kind: DiffKind): DiffKind {
  return kind.endsWith("-replace") ? kind : (`${kind}-replace` as DiffKind);
}

class TestProvider extends Provider {
  override diffConfig(r: DiffRequest): DiffResult {
    const replaceOn = spec().configReplaceKeys ?? ["region"];
    const changed = changedKeys(r.oldInputs, r.inputs);
    return {
      changes: changed.length > 0 ? "some" : "none",
      replaceKeys: changed.filter((k) => replaceOn.includes(k)),
      changedKeys: changed,
    };
  }

  override check(r: CheckRequest): CheckResult {
    const b = behaviour(r.name);
    if (b.checkFailures !== null && b.checkFailures !== undefined) {
      return { inputs: r.inputs, failures: b.checkFailures.map((f) => new CheckFailure(f.property ?? "", f.reason)) };
    }
    const news = r.inputs;
    if (b.autoName === true && !has(news, "name")) {
      news.name = has(r.oldInputs, "name") ? r.oldInputs.name : `${r.name}-gen${next("generated", r.name)}`;
    }
    return { inputs: news };
  }

  override diff(r: DiffRequest): DiffResult {
    const b = behaviour(r.name);
    const changed = changedKeys(r.oldInputs, r.inputs);
    const replace = changed.filter((k) => (b.replaceOn ?? []).includes(k));
    const deleteBeforeReplace = b.deleteBeforeReplace === true && replace.length > 0;
    if (b.diff === "unknown") {
      return { changes: "unknown", replaceKeys: replace, changedKeys: [], deleteBeforeReplace };
    }
    const paths: PropertyDiff[] = [];
    for (const key of [...Object.keys(r.oldInputs), ...Object.keys(r.inputs).filter((k) => !has(r.oldInputs, k))]) {
      changedPaths(key, has(r.oldInputs, key) ? r.oldInputs[key] : undefined, has(r.inputs, key) ? r.inputs[key] : undefined, paths);
    }
    for (const p of paths) {
      const top = p.path.split(/[.[]/)[0];
      if (replace.includes(top)) p.kind = replacing(p.kind);
    }
    return {
      changes: changed.length > 0 ? "some" : "none",
      replaceKeys: replace,
      changedKeys: changed,
      detailedDiff: paths,
      deleteBeforeReplace,
    };
  }

  private created(r: CreateRequest, preview: boolean): CreateResult {
    const b = behaviour(r.name);
    const outputs = stripSecrets(r.inputs);
    if (preview) {
      outputs.out = UNKNOWN;
      return { id: "", outputs };
    }
    if (b.failCreate && b.partial !== true) throw ProviderError.failed(b.failCreate);
    const n = next("creates", r.name);
    const id = `${r.name}-${n}`;
    outputs.out = `${r.name}-out-${n}`;
    putEntry(id, { name: r.name, type: r.resourceType, inputs: stripSecrets(r.inputs), outputs });
    if (b.failCreate) throw partial(b.failCreate, id, r.inputs, outputs);
    withBadOutput(b, outputs);
    return { id, outputs };
  }

  create(r: CreateRequest): CreateResult {
    return this.created(r, false);
  }

  override previewCreate(r: CreateRequest): CreateResult {
    return this.created(r, true);
  }

  override read(r: ReadRequest): ReadResult {
    const b = behaviour(r.name);
    if (b.failRead) throw ProviderError.failed(b.failRead);
    const entry = getEntry(r.id);
    if (entry === undefined) return { id: "", inputs: {}, outputs: {} };
    return { id: r.id, inputs: entry.inputs, outputs: entry.outputs };
  }

  private updated(r: UpdateRequest, preview: boolean): UpdateResult {
    const b = behaviour(r.name);
    if (b.failUpdate && b.partial !== true) throw ProviderError.failed(b.failUpdate);
    const outputs = stripSecrets(r.inputs);
    outputs.out = has(r.oldOutputs, "out") ? unsecret(r.oldOutputs.out) : UNKNOWN;
    if (preview) return { outputs };
    const entry = getEntry(r.id);
    if (entry === undefined) throw ProviderError.failed(`cannot update ${r.urn}: no resource with ID ${r.id} exists`);
    entry.inputs = stripSecrets(r.inputs);
    entry.outputs = { ...outputs };
    putEntry(r.id, entry);
    if (b.failUpdate) throw partial(b.failUpdate, r.id, r.inputs, outputs);
    withBadOutput(b, outputs);
    return { outputs };
  }

  update(r: UpdateRequest): UpdateResult {
    return this.updated(r, false);
  }

  /** As in process: a failing update fails its preview too. */
  override previewUpdate(r: UpdateRequest): UpdateResult {
    return this.updated(r, true);
  }

  delete(r: DeleteRequest): void {
    const b = behaviour(r.name);
    if (b.failDelete) throw ProviderError.failed(b.failDelete);
    removeEntry(r.id);
  }
}

export default new TestProvider();
