// The ${PROJECT} program: Cairn runs it (`cairn up`, `cairn preview`, `cairn destroy`) to learn
// which resources the stack should have. `cairn up` compiles it, with Cairn's TypeScript SDK
// (`cairn-sdk`, embedded in cairn), into a sandboxed WebAssembly component.
//
// It declares one component, `app`, and exports a greeting built from the stack's
// configuration (`cairn config set name Ada`). Add resources of installed providers
// (`cairn plugin ls`) as `new CustomResource("<package>:index:<Type>", "name", { ...inputs },
// { parent: app })`; their outputs are `Output`s (`resource.output("key")`, `.apply(...)`).

import { ComponentResource, type Context } from "cairn-sdk";

export default function main(ctx: Context) {
  const name = ctx.config().get("name") ?? "world";
  const greeting = `Hello, ${name}!`;

  // A component groups resources; its outputs are recorded with it.
  const app = new ComponentResource("${PACKAGE}:index:App", "app");
  app.registerOutputs({ greeting });

  // The returned object's properties are the stack's outputs.
  return { greeting, appUrn: app.urn };
}
