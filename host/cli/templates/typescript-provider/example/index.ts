// A program that uses the ${PACKAGE} provider: one `Greeting`, its message exported.
// `cairn up` builds it, and the provider first, with Cairn's TypeScript SDK.

import { type Context, CustomResource } from "cairn-sdk";

export default function main(ctx: Context) {
  const config = ctx.config();
  const greeting = new CustomResource("${PACKAGE}:index:Greeting", "greeting", {
    name: config.get("name") ?? "world",
    salutation: config.get("salutation"),
  });
  return { message: greeting.output<string>("message") };
}
