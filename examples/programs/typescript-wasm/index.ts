// A Cairn program in TypeScript: a `site` component whose children are random values from the
// `random` package, a password kept secret, and stack outputs. `cairn up` builds it into a
// WebAssembly component with Cairn's TypeScript SDK (nothing to install first). `main` is
// async, and so is a callback: the SDK runs the promises between the engine's answers.
//
// Configuration: `length` (default 16) sets the password's length; `prefix` (default `app`)
// starts the generated name.

import {
  ComponentResource,
  type Context,
  CustomResource,
  type Input,
  type Output,
  type ResourceOptions,
  interpolate,
} from "cairn-sdk";

/** A site: a port, a name and an admin password, grouped under one component. */
class Site extends ComponentResource {
  readonly port: Output<number>;
  readonly name: Output<string>;
  readonly password: Output<string>;

  constructor(name: string, args: { length: Input<number>; prefix: string }, opts: ResourceOptions = {}) {
    super("examples:index:Site", name, {}, opts);
    const port = new CustomResource(
      "random:index/randomInteger:RandomInteger",
      `${name}-port`,
      { min: 8000, max: 8999 },
      { parent: this },
    );
    const suffix = new CustomResource(
      "random:index/randomString:RandomString",
      `${name}-suffix`,
      { length: 6, special: false, upper: false },
      { parent: this },
    );
    // A password's value is a secret output: the state holds it encrypted.
    const password = new CustomResource(
      "random:index/randomPassword:RandomPassword",
      `${name}-password`,
      { length: args.length, minNumeric: 2 },
      { parent: this },
    );
    this.port = port.output<number>("result");
    this.name = interpolate`${args.prefix}-${suffix.output<string>("result")}`;
    this.password = password.output<string>("result");
    this.registerOutputs({ port: this.port, name: this.name });
  }
}

/** The site's settings: async, as reading them from elsewhere would be (`main` awaits them). */
async function settings(ctx: Context): Promise<{ length: number; prefix: string }> {
  const config = ctx.config();
  return { length: config.getNumber("length") ?? 16, prefix: config.get("prefix") ?? "app" };
}

export default async function main(ctx: Context) {
  const { length, prefix } = await settings(ctx);
  const site = new Site("site", { length, prefix });
  const id = new CustomResource("random:index/randomUuid:RandomUuid", "deployment-id");
  return {
    port: site.port,
    name: site.name,
    password: site.password,
    // An async callback's output keeps its source's secrecy and dependencies.
    passwordLength: site.password.apply(async (p) => p.length),
    deploymentId: id.output<string>("result"),
  };
}
