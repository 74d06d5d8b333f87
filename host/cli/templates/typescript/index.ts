// The ${PROJECT} program, written with the Pulumi Node.js SDK in TypeScript and deployed by
// Cairn.
//
// It declares one component, `app`, and exports a greeting built from the stack's
// configuration (`cairn config set name Ada`). Resources of a provider come from its SDK
// package: for `@pulumi/random`, install Cairn's `random` provider
// (`cairn plugin install random.wasm`) and `npm install @pulumi/random`.
import * as pulumi from "@pulumi/pulumi";

/** A component grouping the program's resources (pass `{ parent: app }` to them). */
class App extends pulumi.ComponentResource {
    public readonly greeting: pulumi.Output<string>;

    constructor(name: string, greeting: string, opts?: pulumi.ComponentResourceOptions) {
        super("${PACKAGE}:index:App", name, {}, opts);
        this.greeting = pulumi.output(greeting);
        this.registerOutputs({ greeting: this.greeting });
    }
}

const config = new pulumi.Config();
const name = config.get("name") || "world";

const app = new App("app", `Hello, ${name}!`);

export const greeting = app.greeting;
export const appUrn = app.urn;
