// A provider in TypeScript that builds a component resource: `construct` registers
// tscomp:index:Pair, then two tscomp:index:Thing children under it through the engine, then
// the component's outputs (the children's labels); `call` serves the Pair's `greet` method and
// `invoke` the `echo` function. Every method is async, as a provider that calls out would be:
// the SDK settles their promises. What the TypeScript SDK's construct, call and engine calls
// go through, end to end (tests/e2e/typescript_sdk.rs).

import {
  type CallRequest,
  type CallResult,
  type ConstructRequest,
  type ConstructResult,
  type CreateRequest,
  type CreateResult,
  type InvokeRequest,
  type InvokeResult,
  type PropertyMap,
  type UpdateRequest,
  type UpdateResult,
  Provider,
  ProviderError,
  ResourceReference,
  UNKNOWN,
  engine,
  getString,
} from "cairn-sdk";

function label(inputs: PropertyMap, name: string): string {
  return `${getString(inputs, "prefix") ?? ""}-${name}`;
}

class Components extends Provider {
  async create(r: CreateRequest): Promise<CreateResult> {
    if (r.resourceType !== "tscomp:index:Thing") throw ProviderError.failed(`unknown resource type ${r.resourceType}`);
    return { id: r.name, outputs: { ...r.inputs, label: label(r.inputs, r.name) } };
  }

  async update(r: UpdateRequest): Promise<UpdateResult> {
    return { outputs: { ...r.inputs, label: label(r.inputs, r.name) } };
  }

  async delete(): Promise<void> {}

  /** tscomp:index:Pair: the component, its two Things (their parent the component, their
   * provider the one the program gave for the package), then its outputs. */
  override async construct(r: ConstructRequest): Promise<ConstructResult> {
    if (r.resourceType !== "tscomp:index:Pair") throw ProviderError.failed(`unknown component type ${r.resourceType}`);
    const pair = engine.registerResource({
      resourceType: r.resourceType,
      name: r.name,
      parent: r.parent,
      dependencies: r.dependencies,
      protect: r.protect,
    });
    const things = await Promise.all(
      ["left", "right"].map(async (side) => {
        const thing = engine.registerResource({
          resourceType: "tscomp:index:Thing",
          name: `${r.name}-${side}`,
          custom: true,
          parent: pair.urn,
          inputs: { prefix: r.inputs.prefix ?? null },
          provider: r.providers.tscomp,
        });
        // In a preview the Thing is not created: its label is not known yet.
        return [side, thing.outputs.label ?? UNKNOWN] as const;
      }),
    );
    const outputs: PropertyMap = Object.fromEntries(things);
    engine.registerResourceOutputs(pair.urn, outputs);
    return { urn: pair.urn, state: outputs };
  }

  /** tscomp:index:Pair/greet: a greeting from the component the method was called on. */
  override async call(r: CallRequest): Promise<CallResult> {
    if (r.token !== "tscomp:index:Pair/greet") throw ProviderError.unimplemented(`method ${r.token}`);
    const self = r.args.__self__;
    if (!(self instanceof ResourceReference)) throw ProviderError.failed("greet is a method: __self__ must be a Pair");
    const greeting = getString(r.args, "greeting") ?? "hello";
    return { outputs: { message: `${greeting} from ${self.urn}` }, outputDependencies: { message: [self.urn] } };
  }

  override async invoke(r: InvokeRequest): Promise<InvokeResult> {
    if (r.token !== "tscomp:index:echo") throw ProviderError.unimplemented(`function ${r.token}`);
    return { outputs: { ...r.args, echoed: true } };
  }
}

export default new Components();
