// Lets Node run the SDK outside a component: `node --import ./tests/register.mjs --test ...`
// resolves the WIT imports (`cairn:deploy/...`, `wasi:...`) to the fakes in tests/fake.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
