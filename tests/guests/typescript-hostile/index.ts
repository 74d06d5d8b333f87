// A hostile provider in TypeScript: each `mode` of its one resource attacks the host with what
// the JavaScript runtime (QuickJS) and the SDK offer — files, directory listings, environment
// variables, processes, the network, the clock, CPU, memory, huge and malformed values. The
// sandbox must contain every one as it contains the Rust and Python hostile guests: an error
// for the deployment or nothing found, nothing leaked, the host unharmed.
//
// Modes that reach for an API JavaScript has elsewhere (`require`, `process`, `fetch`,
// `XMLHttpRequest`) evaluate the attack as text, so the build's type check lets it through and
// what stops it is the runtime, at run time.
//
// Promise modes: a promise that never settles (the SDK's, and QuickJS's own, made by code the
// build did not compile) must be a failure naming the method, not a hang; jobs that queue
// themselves forever, or an async loop that never ends, spin like any loop until the deadline.

import {
  type Awaitable,
  type CreateRequest,
  type CreateResult,
  type UpdateResult,
  Provider,
  ProviderError,
  UNKNOWN,
  env,
  fs,
  getString,
} from "cairn-sdk";

/** Runs JavaScript source as the runtime would run any attacker's code. */
function evaluate(source: string): unknown {
  return (0, eval)(source);
}

class Attack extends Provider {
  override replaceOnChange(): string[] {
    return ["*"];
  }

  override previewCreate(r: CreateRequest): CreateResult {
    return { id: "", outputs: { mode: r.inputs.mode ?? null, found: UNKNOWN } };
  }

  create(r: CreateRequest): Awaitable<CreateResult> {
    const mode = getString(r.inputs, "mode") ?? "";
    const port = Number(r.inputs.port ?? 0);
    let found: string;
    switch (mode) {
      case "file":
        found = fs.readTextFile("/etc/passwd");
        break;
      case "escape":
        // `..` out of a granted directory, were there one.
        found = fs.readTextFile("/cloud/../../etc/passwd");
        break;
      case "listdir":
        found = [...fs.grantedDirectories(), ...(fs.exists("/") ? fs.readDir("/") : [])].join(",");
        break;
      case "env":
        found = Object.keys(env.all()).sort().join(",");
        break;
      case "process":
        found = String(evaluate("require('child_process').execSync('id').toString()"));
        break;
      case "process-global":
        found = String(evaluate("process.env.HOME"));
        break;
      case "network":
        found = String(evaluate(`fetch('http://127.0.0.1:${port}/')`));
        break;
      case "xhr":
        found = String(evaluate(`new XMLHttpRequest().open('GET', 'http://127.0.0.1:${port}/')`));
        break;
      case "clock": {
        // The host's clock is a grant every guest has: it reads, and it moves forward.
        const first = Date.now();
        let spin = 0;
        while (Date.now() === first && spin < 1e7) spin++;
        found = Date.now() > first && first > Date.UTC(2024, 0, 1) ? "moves" : `stuck at ${first}`;
        break;
      }
      case "loop":
        for (;;) {
          // Spins until the host's deadline interrupts the call.
        }
      case "memory": {
        const hoard: ArrayBuffer[] = [];
        for (;;) hoard.push(new ArrayBuffer(16 * 1024 * 1024));
      }
      case "huge":
        // A 20 MiB output: more than the host takes in one value.
        found = "x".repeat(20 * 1024 * 1024);
        break;
      case "recursion": {
        const deep = (n: number): number => deep(n + 1) + 1;
        found = String(deep(0));
        break;
      }
      case "never":
        return new Promise<CreateResult>(() => {});
      case "native-promise":
        // eval'd code is not lowered: its async function returns QuickJS's own promise.
        return evaluate("(async () => ({ id: 'x', outputs: {} }))()") as Promise<CreateResult>;
      case "microtasks": {
        const spin = (): void => queueMicrotask(spin);
        spin();
        return new Promise<CreateResult>(() => {});
      }
      case "await-loop":
        return (async (): Promise<CreateResult> => {
          for (;;) await null;
        })();
      case "malformed":
        // Not a property value: the SDK refuses it as the provider's failure, never a trap.
        return { id: "x", outputs: { mode, found: Symbol("not a value") as unknown as string } };
      default:
        throw ProviderError.failed(`unknown mode ${JSON.stringify(mode)}`);
    }
    return { id: mode, outputs: { mode, found } };
  }

  update(): UpdateResult {
    throw ProviderError.failed("attacks are replaced, never updated");
  }

  delete(): void {}
}

export default new Attack();
