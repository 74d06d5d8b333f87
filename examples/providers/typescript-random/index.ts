// The random package's RandomInteger, RandomString, RandomPassword (without `bcryptHash`) and
// RandomUuid, as a sandboxed provider written in TypeScript (Cairn's TypeScript SDK), with
// pulumi-random's tokens and property names, so the published random SDKs run on it. Every
// input forces a replacement, as in the random provider: a value is generated once, when its
// resource is created. `create` is async, as a provider that calls out to a service would be:
// the SDK settles its promise before the result goes back.

import {
  type CheckRequest,
  type CheckResult,
  type CreateRequest,
  type CreateResult,
  type PropertyMap,
  type UpdateResult,
  CheckFailure,
  Provider,
  ProviderError,
  Secret,
  UNKNOWN,
  isUnknown,
  random,
  unsecret,
} from "cairn-sdk";

const INTEGER = "random:index/randomInteger:RandomInteger";
const STRING = "random:index/randomString:RandomString";
const PASSWORD = "random:index/randomPassword:RandomPassword";
const UUID = "random:index/randomUuid:RandomUuid";

const SPECIAL = "!@#$%&*()-_=+[]{}<>:?";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";

/** RandomString's defaults, applied by `check` so they are recorded with the inputs. */
const STRING_DEFAULTS: PropertyMap = {
  upper: true,
  lower: true,
  numeric: true,
  special: true,
  minUpper: 0,
  minLower: 0,
  minNumeric: 0,
  minSpecial: 0,
};

/** A seeded generator (mulberry32 over the seed's FNV-1a hash): the same seed always gives
 * the same integer, as pulumi-random's `seed` promises. */
function seeded(seed: string): () => number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193) >>> 0;
  return () => {
    h = (h + 0x6d2b79f5) >>> 0;
    let t = h;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class RandomProvider extends Provider {
  /** Every input forces a replacement. */
  override replaceOnChange(): string[] {
    return ["*"];
  }

  override check(r: CheckRequest): CheckResult {
    const news = unsecret(r.inputs);
    if (r.resourceType === INTEGER) {
      const failures: CheckFailure[] = [];
      for (const key of ["min", "max"]) {
        if (typeof news[key] !== "number" && !isUnknown(news, key)) {
          failures.push(new CheckFailure(key, `${key} is required and must be a number`));
        }
      }
      const { min, max } = news;
      if (failures.length === 0 && typeof min === "number" && typeof max === "number" && max < min) {
        failures.push(new CheckFailure("max", "max must be at least min"));
      }
      return { inputs: r.inputs, failures };
    }
    if (r.resourceType === STRING || r.resourceType === PASSWORD) {
      const length = news.length;
      if (isUnknown(news, "length")) return { inputs: r.inputs };
      if (typeof length !== "number" || length < 1) {
        return { inputs: r.inputs, failures: [new CheckFailure("length", "length is required and must be at least 1")] };
      }
      const filled: PropertyMap = { ...r.inputs };
      for (const [key, value] of Object.entries(STRING_DEFAULTS)) if (filled[key] === undefined) filled[key] = value;
      delete filled.number;
      const plain = unsecret(filled);
      const minimum = ["minUpper", "minLower", "minNumeric", "minSpecial"].reduce((sum, k) => sum + Number(plain[k] ?? 0), 0);
      if (minimum > length) {
        return {
          inputs: filled,
          failures: [new CheckFailure("length", `length (${length}) is less than the sum of the minimums (${minimum})`)],
        };
      }
      return { inputs: filled };
    }
    return { inputs: r.inputs };
  }

  override previewCreate(r: CreateRequest): CreateResult {
    return { id: "", outputs: { ...r.inputs, result: UNKNOWN } };
  }

  async create(r: CreateRequest): Promise<CreateResult> {
    const o = unsecret(r.inputs);
    switch (r.resourceType) {
      case INTEGER: {
        const min = Math.trunc(Number(o.min));
        const max = Math.trunc(Number(o.max));
        const result =
          typeof o.seed === "string" ? min + Math.floor(seeded(o.seed)() * (max - min + 1)) : random.integer(min, max);
        return { id: String(result), outputs: { ...r.inputs, result } };
      }
      case UUID: {
        const result = random.uuid();
        return { id: result, outputs: { ...r.inputs, result } };
      }
      case STRING:
      case PASSWORD: {
        const sets: Array<[string, string, string]> = [
          ["upper", "minUpper", UPPER],
          ["lower", "minLower", LOWER],
          ["numeric", "minNumeric", DIGITS],
          ["special", "minSpecial", typeof o.overrideSpecial === "string" && o.overrideSpecial ? o.overrideSpecial : SPECIAL],
        ];
        const chars: string[] = [];
        let pool = "";
        for (const [enabled, minimum, alphabet] of sets) {
          if (o[enabled] === false) continue;
          pool += alphabet;
          for (let i = 0; i < Number(o[minimum] ?? 0); i++) chars.push(random.choice(alphabet));
        }
        if (pool === "") {
          throw ProviderError.failed("the character set is empty: enable upper, lower, numeric or special");
        }
        while (chars.length < Number(o.length)) chars.push(random.choice(pool));
        for (let i = chars.length - 1; i > 0; i--) {
          const j = random.integer(0, i);
          [chars[i], chars[j]] = [chars[j], chars[i]];
        }
        const result = chars.join("");
        // A password is a secret, and so never its own ID (a RandomString's ID is its value).
        if (r.resourceType === PASSWORD) return { id: "none", outputs: { ...r.inputs, result: new Secret(result) } };
        return { id: result, outputs: { ...r.inputs, result } };
      }
      default:
        throw ProviderError.failed(`resource type ${r.resourceType} is not implemented by this provider`);
    }
  }

  /** Never called: every change replaces. */
  update(): UpdateResult {
    throw ProviderError.failed("random resources are replaced, never updated");
  }

  /** Nothing to delete: the values live only in the stack's state. */
  delete(): void {}
}

export default new RandomProvider();
