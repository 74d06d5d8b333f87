//! Providers and programs written in TypeScript with Cairn's TypeScript SDK
//! (guest-sdk/typescript), built by `cairn up` itself (componentize-qjs, installed into the
//! shared toolchains on first use): the examples deploy (the `typescript-random` provider with
//! the random package's tokens, the `typescript-wasm` program over it) — create, no-change
//! preview from the build cache, a replacement, destroy; check failures and ordinary failures
//! are errors, not traps; a hostile TypeScript provider is contained as the Rust and Python
//! ones are (promises that never settle are errors, endless job loops meet the deadline);
//! memory stays flat over 100,000 calls (and async ones); a TypeScript provider builds a
//! component (construct through the engine) and serves its method (call) for a TypeScript
//! program; the SDK's own unit tests pass under Node.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::*;

/// Says something on stderr (std's printing macros are refused in this crate).
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// The repository's copy of a TypeScript guest, as a path Pulumi.yaml can name.
fn guest(path: &str) -> String {
    repo()
        .join(path)
        .canonicalize()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// A project whose program is the TypeScript source `program` (index.ts), with `extra` at the
/// end of its Pulumi.yaml, and stack `dev`.
fn ts_project(name: &str, program: &str, extra: &str) -> Sandbox {
    let sandbox = Sandbox::new(name);
    sandbox.write(
        "package.json",
        &format!("{{\"name\": \"{name}\", \"version\": \"0.1.0\", \"private\": true}}\n"),
    );
    sandbox.write("index.ts", program);
    sandbox.write(
        "Pulumi.yaml",
        &format!("name: {name}\nruntime: wasm\nmain: .\n{extra}"),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox
}

/// `plugins.providers` naming a provider's source directory.
fn provider_plugin(package: &str, dir: &str) -> String {
    format!(
        "plugins:\n  providers:\n    - name: {package}\n      path: {}\n",
        guest(dir)
    )
}

/// Everything a command printed.
fn text_of(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_typescript_examples_deploy_built_by_up() {
    let sandbox = Sandbox::new("typescript-wasm");
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: typescript-wasm\nruntime: wasm\nmain: {}\n{}",
            guest("examples/programs/typescript-wasm"),
            provider_plugin("random", "examples/providers/typescript-random")
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);

    let first = sandbox.run(&["up", "--yes"]);
    let text = text_of(&first);
    assert!(first.status.success(), "{text}");
    assert_contains(
        &text,
        &[
            "Building the provider",
            "Building the program",
            "examples:index:Site",
            "random:index/randomString:RandomString",
            "random:index/randomPassword:RandomPassword",
            "6 created",
        ],
    );
    let outs = outputs(&sandbox, true);
    let port = outs["port"].as_f64().unwrap();
    assert!(
        (8000.0..=8999.0).contains(&port) && port.fract() == 0.0,
        "{outs}"
    );
    let name = outs["name"].as_str().unwrap();
    assert!(
        name.len() == 10
            && name.starts_with("app-")
            && name[4..]
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
        "{name}"
    );
    let password = outs["password"].as_str().unwrap().to_owned();
    sandbox.secret(&password);
    assert_eq!(password.chars().count(), 16);
    assert!(
        password.chars().filter(char::is_ascii_digit).count() >= 2,
        "{password}"
    );
    assert_eq!(outs["passwordLength"], 16.0);
    let uuid = outs["deploymentId"].as_str().unwrap();
    assert_eq!(uuid.len(), 36);
    assert_eq!(&uuid[14..15], "4", "a version 4 UUID: {uuid}");
    // The password is a secret output: hidden unless asked for.
    assert_eq!(outputs(&sandbox, false)["password"], "[secret]");

    // Nothing changes on a second run, and nothing is built again.
    let second = sandbox.run(&["preview", "--expect-no-changes"]);
    let text = text_of(&second);
    assert!(second.status.success(), "{text}");
    assert!(!text.contains("Building the"), "built again: {text}");

    // A changed input replaces only the resource it is an input of.
    sandbox.ok(&["config", "set", "length", "24"]);
    let up = sandbox.ok(&["up", "--yes"]);
    assert_contains(&up, &["1 replaced"]);
    let after = outputs(&sandbox, true);
    sandbox.secret(after["password"].as_str().unwrap());
    assert_eq!(after["password"].as_str().unwrap().chars().count(), 24);
    assert_eq!(after["port"], outs["port"]);
    assert_eq!(after["deploymentId"], outs["deploymentId"]);

    let inspected = sandbox.ok(&["plugin", "ls"]);
    assert!(!inspected.contains("error"), "{inspected}");
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["6 deleted"]);
    let state = sandbox.ok(&["stack", "export"]);
    assert!(!state.contains("RandomPassword"), "{state}");
}

/// A program that declares what its `bad` configuration asks for on the random provider.
const FAILING_PROGRAM: &str = r#"
import { type Context, CustomResource } from "cairn-sdk";

export default function main(ctx: Context) {
  const bad = ctx.config().get("bad");
  const n = new CustomResource("random:index/randomInteger:RandomInteger", "n", { min: 1, max: 6 });
  if (bad === "check") {
    new CustomResource("random:index/randomString:RandomString", "bad", { length: 2, minUpper: 3 });
  }
  if (bad === "empty") {
    new CustomResource("random:index/randomString:RandomString", "empty", {
      length: 4, upper: false, lower: false, numeric: false, special: false,
    });
  }
  if (bad === "throw") {
    throw new RangeError("the program gave up");
  }
  return { n: n.output("result") };
}
"#;

#[test]
fn typescript_failures_are_errors_not_traps() {
    let sandbox = ts_project(
        "typescript-failures",
        FAILING_PROGRAM,
        &provider_plugin("random", "examples/providers/typescript-random"),
    );
    sandbox.ok(&["up", "--yes"]);
    let n = outputs(&sandbox, false)["n"].as_f64().unwrap();
    assert!((1.0..=6.0).contains(&n), "{n}");

    for (bad, expected) in [
        (
            "check",
            &[
                "random:index/randomString:RandomString",
                "length",
                "less than the sum of the minimums (3)",
            ][..],
        ),
        ("empty", &["the character set is empty"][..]),
        ("throw", &["RangeError: the program gave up"][..]),
    ] {
        sandbox.ok(&["config", "set", "bad", bad]);
        let err = sandbox.fails(&["up", "--yes"]);
        assert_contains(&err, expected);
        assert!(!err.contains("trap"), "{bad}: {err}");
    }
    sandbox.ok(&["config", "rm", "bad"]);
    sandbox.ok(&["up", "--yes"]);

    // A program that does not type-check names the build and the error; nothing deploys.
    sandbox.write(
        "index.ts",
        "export default function main(): number { return \"not a number\"; }\n",
    );
    let err = sandbox.fails(&["preview"]);
    assert_contains(
        &err,
        &[
            "building the TypeScript program in",
            "the type check found errors",
            "index.ts(1,",
            "is not assignable to type 'number'",
        ],
    );
    // Top-level `await` cannot be lowered: the build says so, naming the file and the line.
    sandbox.write(
        "index.ts",
        "const n = await Promise.resolve(1);\nexport default function main() { return { n }; }\n",
    );
    let err = sandbox.fails(&["preview"]);
    assert_contains(
        &err,
        &[
            "top-level `await` cannot run in a component",
            "index.ts:1:",
            "Top-level await is not available",
        ],
    );
    // A provider without an entry module says what to write.
    let empty = sandbox.root().join("empty-provider");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("package.json"), "{\"name\": \"e\"}").unwrap();
    std::fs::write(
        empty.join("cairn.json"),
        "{\"name\": \"empty\", \"version\": \"1.0.0\"}",
    )
    .unwrap();
    sandbox.write("index.ts", FAILING_PROGRAM);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: typescript-failures\nruntime: wasm\nmain: .\nplugins:\n  providers:\n    - name: empty\n      path: {}\n",
            empty.display()
        ),
    );
    let err = sandbox.fails(&["preview"]);
    assert_contains(&err, &["has no entry module", "index.ts"]);
}

/// A TypeScript program registering `tshostile:index:Attack` with the configured `mode`.
const HOSTILE_PROGRAM: &str = r#"
import { type Context, CustomResource } from "cairn-sdk";

export default function main(ctx: Context) {
  const config = ctx.config();
  const attack = new CustomResource("tshostile:index:Attack", "attack", {
    mode: config.require("mode"),
    port: config.getNumber("port") ?? 0,
  });
  return { found: attack.output("found") };
}
"#;

/// The sandbox contains a TypeScript provider as it does a Rust or Python one: the host's
/// files, processes, network and environment are out of reach of what JavaScript offers, and
/// a guest that spins, recurses or hoards memory is stopped by its grant's limits — each an
/// error naming the resource, the host unharmed and its server never reached.
#[test]
fn a_hostile_typescript_provider_is_contained() {
    let sandbox = ts_project(
        "typescript-hostile",
        HOSTILE_PROGRAM,
        &provider_plugin("tshostile", "tests/guests/typescript-hostile"),
    );
    for (path, value) in [
        ("[\"cairn:grants\"].tshostile.timeoutSeconds", "3"),
        ("[\"cairn:grants\"].tshostile.memoryMiB", "160"),
    ] {
        sandbox.ok(&["config", "set", "--path", path, value]);
    }
    // A server that counts the connections it is offered.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    sandbox.ok(&["config", "set", "port", &port.to_string()]);

    let cases: &[(&str, &[&str])] = &[
        ("file", &["reading /etc/passwd: not-granted"]),
        ("escape", &["reading /cloud/../../etc/passwd: not-granted"]),
        ("process", &["ReferenceError", "require is not defined"]),
        (
            "process-global",
            &["ReferenceError", "process is not defined"],
        ),
        ("network", &["ReferenceError", "fetch is not defined"]),
        ("xhr", &["ReferenceError", "XMLHttpRequest is not defined"]),
        ("loop", &["deadline of 3 s exceeded"]),
        ("memory", &["exceeded its 160 MiB memory limit"]),
        ("recursion", &["call stack exhausted (too deep recursion)"]),
        ("malformed", &["found: a symbol is not a property value"]),
        (
            "never",
            &[
                "the promise that create returned never settled: it waits for something that nothing in the component will ever settle",
            ],
        ),
        (
            "native-promise",
            &[
                "the promise that create returned never settled: it is the JavaScript engine's own Promise",
            ],
        ),
        ("microtasks", &["deadline of 3 s exceeded"]),
        ("await-loop", &["deadline of 3 s exceeded"]),
    ];
    for (mode, expected) in cases {
        sandbox.ok(&["config", "set", "mode", mode]);
        let started = Instant::now();
        let err = sandbox.fails(&["up", "--yes"]);
        let mut wanted = expected.to_vec();
        wanted.push("tshostile:index:Attack");
        assert_contains(&err, &wanted);
        assert!(!err.contains("root:x:0:0"), "{mode}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{mode} took {:?}",
            started.elapsed()
        );
        // An interrupted create is left pending (the engine cannot know it did nothing).
        sandbox.ok(&["refresh", "--yes", "--clear-pending-creates"]);
    }
    assert!(
        listener.accept().is_err(),
        "the provider reached the host's server"
    );

    // A huge output is refused by the host's limit on one value (given the time to encode it:
    // QuickJS writes UTF-8 a character at a time, so 20 MiB takes seconds).
    sandbox.ok(&[
        "config",
        "set",
        "--path",
        "[\"cairn:grants\"].tshostile.timeoutSeconds",
        "120",
    ]);
    sandbox.ok(&["config", "set", "mode", "huge"]);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &err,
        &[
            "tshostile:index:Attack",
            "outputs: the value is 20.0 MiB, more than the 16 MiB limit on one value",
        ],
    );
    sandbox.ok(&["refresh", "--yes", "--clear-pending-creates"]);

    // What it sees of the host: no environment variables, no directories; the clock, which
    // every guest is given, reads and moves.
    for (mode, found) in [("env", ""), ("listdir", ""), ("clock", "moves")] {
        sandbox.ok(&["config", "set", "mode", mode]);
        let out = sandbox.run(&["up", "--yes"]);
        assert!(out.status.success(), "{mode}: {}", text_of(&out));
        assert_eq!(outputs(&sandbox, true)["found"], found, "{mode}");
    }
}

/// A TypeScript program declaring a component its TypeScript provider builds (remote: the
/// provider's async `construct` registers it and two children through the engine, then its
/// outputs), calling a method on it and awaiting a provider function.
const COMPONENT_PROGRAM: &str = r#"
import { ComponentResource, type Context, call, invokeAsync } from "cairn-sdk";

export default async function main(ctx: Context) {
  const prefix = ctx.config().require("prefix");
  const echo = await invokeAsync("tscomp:index:echo", { x: 1 });
  const pair = new ComponentResource("tscomp:index:Pair", "pair", { prefix }, {}, true);
  const greeting = call("tscomp:index:Pair/greet", { greeting: "hello" }, pair);
  return {
    left: pair.output("left"),
    right: pair.output("right"),
    pairUrn: pair.urn,
    echoed: echo.echoed,
    greeting: greeting.apply((r) => r.message),
  };
}
"#;

/// Components built by a TypeScript provider (`construct` through the SDK's engine calls) and
/// their methods (`call`), from a TypeScript program: the component's children are in the state
/// under it, its outputs and the method's reach the program, a change updates the children,
/// destroy removes them.
#[test]
fn a_typescript_provider_builds_components_for_a_typescript_program() {
    let sandbox = ts_project(
        "typescript-components",
        COMPONENT_PROGRAM,
        &provider_plugin("tscomp", "tests/guests/typescript-component"),
    );
    sandbox.ok(&["config", "set", "prefix", "p"]);
    let up = sandbox.ok(&["up", "--yes"]);
    assert_contains(&up, &["tscomp:index:Pair", "tscomp:index:Thing"]);
    let outs = outputs(&sandbox, false);
    let pair_urn = "urn:pulumi:dev::typescript-components::tscomp:index:Pair::pair";
    assert_eq!(
        outs,
        serde_json::json!({
            "left": "p-pair-left",
            "right": "p-pair-right",
            "pairUrn": pair_urn,
            "echoed": true,
            "greeting": format!("hello from {pair_urn}"),
        })
    );
    let state: serde_json::Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let resources = state["deployment"]["resources"].as_array().unwrap();
    let children: Vec<&serde_json::Value> = resources
        .iter()
        .filter(|r| r["type"] == "tscomp:index:Thing" && r["parent"] == pair_urn)
        .collect();
    assert_eq!(children.len(), 2, "{state}");
    let component = resources.iter().find(|r| r["urn"] == pair_urn).unwrap();
    assert_eq!(component["outputs"]["left"], "p-pair-left", "{component}");

    // Nothing changes on a preview (construct and call run in it too); a new prefix updates
    // both children.
    sandbox.ok(&["preview", "--expect-no-changes"]);
    sandbox.ok(&["config", "set", "prefix", "q"]);
    assert_contains(&sandbox.ok(&["up", "--yes"]), &["2 updated"]);
    assert_eq!(outputs(&sandbox, false)["right"], "q-pair-right");

    // A failure in construct is the provider's error, named, not a trap.
    sandbox.write(
        "index.ts",
        "import { ComponentResource } from \"cairn-sdk\";\n\
         export default function main() { new ComponentResource(\"tscomp:index:Other\", \"o\", {}, {}, true); }\n",
    );
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(&err, &["unknown component type tscomp:index:Other"]);
    assert!(!err.contains("trap"), "{err}");
    sandbox.write("index.ts", COMPONENT_PROGRAM);

    let destroy = sandbox.ok(&["destroy", "--yes"]);
    assert_contains(&destroy, &["deleted"]);
    let state = sandbox.ok(&["stack", "export"]);
    assert!(!state.contains("tscomp:index:Thing"), "{state}");
}

/// The `typescript-random` component, built as `cairn up` builds it (once per test binary).
fn typescript_random() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let builder = cairn_guest_build::Builder {
                home: repo().join("target/guests/typescript-home"),
                toolchains: repo().join("target/toolchains"),
                progress: Box::new(|line| note!("{line}")),
            };
            builder
                .build(
                    &repo().join("examples/providers/typescript-random"),
                    cairn_guest_build::Language::TypeScript,
                    cairn_guest_build::World::Provider,
                )
                .expect("building examples/providers/typescript-random")
        })
        .clone()
}

/// 100,000 Check calls on one instance of the TypeScript provider leave its linear memory
/// where it was after warming up (QuickJS frees what a call allocated; the SDK keeps nothing
/// per call), and so do 5,000 async Create calls (their promises and jobs). The reason the
/// SDK runs on QuickJS: StarlingMonkey's heap grows.
#[test]
fn a_typescript_provider_keeps_its_memory_flat() {
    use cairn_engine::PropertyValue;
    use cairn_engine::deploy::provider::{CheckRequest, CreateRequest, Provider};
    use cairn_engine::urn::Urn;
    use cairn_engine::value::PropertyMap;
    use cairn_wasm::{PackageGrant, RuntimeOptions, WasmPlugin, WasmRuntime};

    const CALLS: usize = 100_000;
    const ASYNC_CALLS: usize = 5_000;
    let plugin = WasmPlugin::from_file(typescript_random()).unwrap();
    let runtime = WasmRuntime::new(RuntimeOptions {
        cache_dir: Some(repo().join("target/guests/cwasm-cache")),
        pool_size: Some(1),
    })
    .unwrap();
    runtime.prepare(&plugin).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let p = runtime
            .instantiate(
                &plugin,
                &PackageGrant::default(),
                std::sync::Arc::new(|_: cairn_wasm::LogRecord| {}),
            )
            .unwrap();
        p.configure(PropertyMap::new(), false).await.unwrap();
        let urn =
            Urn::parse("urn:pulumi:test::proj::random:index/randomInteger:RandomInteger::n")
                .unwrap();
        let mut inputs = PropertyMap::new();
        inputs.insert("min".into(), PropertyValue::Number(1.0));
        inputs.insert("max".into(), PropertyValue::Number(6.0));
        inputs.insert(
            "keepers".into(),
            PropertyValue::Object(
                [("tag".to_owned(), PropertyValue::String("é🌍".repeat(50)))]
                    .into_iter()
                    .collect::<cairn_engine::value::PropertyMap>().into(),
            ),
        );
        let no_olds = PropertyMap::new();
        let check = || CheckRequest {
            urn: &urn,
            olds: &no_olds,
            news: &inputs,
            random_seed: &[1, 2, 3],
        };
        // Warm up: the heap settles at its working size.
        for _ in 0..5_000 {
            let r = p.check(check()).await.unwrap();
            assert!(r.failures.is_empty());
        }
        let before = p.stats().idle_memory_bytes;
        let started = Instant::now();
        for _ in 0..CALLS {
            let r = p.check(check()).await.unwrap();
            assert_eq!(r.inputs["max"], PropertyValue::Number(6.0));
        }
        let per_call = started.elapsed() / CALLS as u32;
        let after = p.stats().idle_memory_bytes;
        note!(
            "typescript-random: linear memory {:.1} MiB -> {:.1} MiB over {CALLS} Check calls ({per_call:?} a call)",
            before as f64 / 1048576.0,
            after as f64 / 1048576.0
        );
        assert!(before > 0, "the instance reports no memory");
        assert!(
            after <= before + (1 << 20),
            "linear memory grew from {before} to {after} bytes over {CALLS} calls"
        );

        // `create` is async: each call settles promises on the SDK's queue, which must leave
        // nothing behind either.
        let create = || CreateRequest {
            urn: urn.clone(),
            properties: inputs.clone(),
            timeout: 0.0,
            preview: false,
        };
        for _ in 0..1_000 {
            p.create(create()).await.unwrap();
        }
        let before = p.stats().idle_memory_bytes;
        let started = Instant::now();
        for _ in 0..ASYNC_CALLS {
            let r = p.create(create()).await.unwrap();
            assert!(r.outputs.contains_key("result"));
        }
        let per_call = started.elapsed() / ASYNC_CALLS as u32;
        let after = p.stats().idle_memory_bytes;
        note!(
            "typescript-random: linear memory {:.1} MiB -> {:.1} MiB over {ASYNC_CALLS} async Create calls ({per_call:?} a call)",
            before as f64 / 1048576.0,
            after as f64 / 1048576.0
        );
        assert!(
            after <= before + (1 << 20),
            "linear memory grew from {before} to {after} bytes over {ASYNC_CALLS} async calls"
        );
    });
}

/// The toolchain directory `cairn-guest-build` installed (by the build above).
fn toolchain() -> PathBuf {
    typescript_random();
    let dir = repo().join("target/toolchains");
    std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("node-componentize-qjs-"))
                && p.join("node_modules/.bin/esbuild").exists()
        })
        .expect("the TypeScript toolchain under target/toolchains")
}

/// The SDK's unit tests (guest-sdk/typescript/tests/*.test.ts: the value codec, the provider
/// export, the program runtime against a fake engine), bundled with the toolchain's esbuild and
/// run by Node's test runner; and the SDK, the examples and the test guests type-check.
#[test]
fn the_typescript_sdk_unit_tests_pass() {
    let tools = toolchain();
    let sdk = repo().join("guest-sdk/typescript");
    let out_dir = tempfile::tempdir().unwrap();
    let tests: Vec<PathBuf> = std::fs::read_dir(sdk.join("tests"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".test.ts"))
        .collect();
    assert!(tests.len() >= 3, "{tests:?}");
    let mut bundles = Vec::new();
    for test in &tests {
        let stem = test.file_stem().unwrap().to_string_lossy().into_owned();
        let bundle = out_dir.path().join(format!("{stem}.mjs"));
        let out = Command::new(tools.join("node_modules/.bin/esbuild"))
            .arg(test)
            .args([
                "--bundle",
                "--format=esm",
                "--platform=node",
                "--target=node20",
                // As the build lowers them: the tests' async code runs on the SDK's promises.
                "--supported:async-await=false",
                "--supported:async-generator=false",
                "--supported:for-await=false",
                "--external:cairn:*",
                "--external:wasi:*",
                "--log-level=warning",
            ])
            .arg(format!("--outfile={}", bundle.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "bundling {stem}: {out:?}");
        bundles.push(bundle);
    }
    // The fakes are imported relative to the bundles.
    copy_dir(&sdk.join("tests/fake"), &out_dir.path().join("fake"));
    for file in ["register.mjs", "hooks.mjs"] {
        std::fs::copy(sdk.join("tests").join(file), out_dir.path().join(file)).unwrap();
    }
    let out = Command::new("node")
        .arg("--import")
        .arg(out_dir.path().join("register.mjs"))
        .arg("--test")
        .args(&bundles)
        .output()
        .unwrap();
    let text = text_of(&out);
    assert!(out.status.success(), "{text}");
    let passed = text
        .lines()
        .find_map(|l| l.strip_prefix("# pass "))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(0);
    assert!(passed >= 60, "only {passed} tests ran:\n{text}");

    // Everything written on the SDK type-checks with the build's settings.
    let files = [
        "guest-sdk/typescript/src/index.ts",
        "guest-sdk/typescript/src/install.ts",
        "examples/providers/typescript-random/index.ts",
        "examples/programs/typescript-wasm/index.ts",
        "tests/guests/lifecycle-test-typescript/index.ts",
        "tests/guests/typescript-hostile/index.ts",
        "tests/guests/typescript-component/index.ts",
        "host/cli/templates/typescript-provider/index.ts",
        "host/cli/templates/typescript-provider/example/index.ts",
        "host/cli/templates/typescript-wasm/index.ts",
    ];
    let mut all: Vec<String> = vec![sdk.join("src/wit.d.ts").to_string_lossy().into_owned()];
    all.extend(
        files
            .iter()
            .map(|f| repo().join(f).to_string_lossy().into_owned()),
    );
    // And the README's TypeScript blocks, each a module of its own.
    let readme = std::fs::read_to_string(sdk.join("README.md")).unwrap();
    let blocks: Vec<&str> = readme
        .split("```ts\n")
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .collect();
    assert!(blocks.len() >= 2, "the README has no TypeScript examples");
    for (i, block) in blocks.iter().enumerate() {
        let file = out_dir.path().join(format!("readme{i}.ts"));
        std::fs::write(&file, block).unwrap();
        all.push(file.to_string_lossy().into_owned());
    }
    let tsconfig = serde_json::json!({
        "compilerOptions": {
            "strict": true, "noEmit": true, "target": "es2023", "module": "es2022",
            "moduleResolution": "bundler", "lib": ["es2023", "esnext.disposable"], "types": [],
            "skipLibCheck": true,
            "paths": { "cairn-sdk": [sdk.join("src/index.ts")] },
        },
        "files": all,
    });
    let config = out_dir.path().join("tsconfig.json");
    std::fs::write(&config, tsconfig.to_string()).unwrap();
    let out = Command::new(tools.join("node_modules/.bin/tsc"))
        .arg("-p")
        .arg(&config)
        .output()
        .unwrap();
    assert!(out.status.success(), "type errors:\n{}", text_of(&out));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// `cairn new typescript-provider` then `cairn up` alone: the provider and its example program
/// are built from source and deploy; an update changes the greeting; destroy. The same for
/// `typescript-wasm`, a program alone.
#[test]
fn new_typescript_templates_deploy_with_up_alone() {
    let sandbox = Sandbox::new("unused");
    let mut provider = sandbox;
    provider.project = provider.root().join("ts-greeter");
    std::fs::create_dir_all(&provider.project).unwrap();
    let out = provider.ok(&["new", "typescript-provider", "--yes", "--name", "tsgreeter"]);
    assert_contains(&out, &["run `cairn up`"]);
    let up = provider.ok(&["up", "--yes"]);
    assert_contains(&up, &["tsgreeter:index:Greeting", "2 created"]);
    assert_eq!(outputs(&provider, false)["message"], "Hello, world!");
    provider.ok(&["config", "set", "name", "Grace"]);
    assert_contains(&provider.ok(&["up", "--yes"]), &["1 updated"]);
    assert_eq!(outputs(&provider, false)["message"], "Hello, Grace!");
    // An empty salutation is refused by the provider's check, naming the property.
    provider.ok(&["config", "set", "salutation", " "]);
    let err = provider.fails(&["up", "--yes"]);
    assert_contains(&err, &["salutation", "must not be empty"]);
    provider.ok(&["config", "rm", "salutation"]);
    assert_contains(&provider.ok(&["destroy", "--yes"]), &["2 deleted"]);

    let mut program = Sandbox::new("unused");
    program.project = program.root().join("ts-app");
    std::fs::create_dir_all(&program.project).unwrap();
    program.ok(&["new", "typescript-wasm", "--yes"]);
    assert_contains(
        &program.ok(&["up", "--yes"]),
        &["ts-app:index:App", "2 created"],
    );
    let outs = outputs(&program, false);
    assert_eq!(outs["greeting"], "Hello, world!");
    assert_eq!(
        outs["appUrn"],
        "urn:pulumi:dev::ts-app::ts-app:index:App::app"
    );
    program.ok(&["config", "set", "name", "Ada"]);
    program.ok(&["up", "--yes"]);
    assert_eq!(outputs(&program, false)["greeting"], "Hello, Ada!");
    assert_contains(&program.ok(&["destroy", "--yes"]), &["2 deleted"]);
}

/// A TypeScript program creating one `tshttp:index:Fetch` (tests/guests/typescript-http) with
/// the request the configuration describes.
const HTTP_PROGRAM: &str = r#"
import { type Context, CustomResource } from "cairn-sdk";

export default function main(ctx: Context) {
  const config = ctx.config();
  const fetched = new CustomResource("tshttp:index:Fetch", "fetch", {
    url: config.require("url"),
    method: config.get("method") ?? "GET",
    body: config.get("body") ?? "",
    via: config.get("via") ?? "request",
    maxResponseBytes: config.getNumber("maxResponseBytes") ?? null,
    timeoutMs: config.getNumber("timeoutMs") ?? null,
  });
  return {
    status: fetched.output("status"),
    body: fetched.output("body"),
    servedBy: fetched.output("servedBy"),
  };
}
"#;

/// An HTTP/1.1 server on 127.0.0.1 for the HTTP tests, one thread per connection:
/// `/hello` answers, `/echo` answers with the method, the `x-cairn-test` header and the body
/// it was sent, `/huge` sends a body of 1 GiB (counting what it managed to write before the
/// client went away), `/slow` answers after 5 s. It records the request line of every request.
struct HttpServer {
    port: u16,
    requests: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    huge_written: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl HttpServer {
    fn start() -> HttpServer {
        use std::sync::{Arc, Mutex, atomic::AtomicU64};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let huge_written = Arc::new(AtomicU64::new(0));
        let (log, huge) = (requests.clone(), huge_written.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, huge) = (log.clone(), huge.clone());
                std::thread::spawn(move || {
                    let _ = HttpServer::serve(stream, &log, &huge);
                });
            }
        });
        HttpServer {
            port,
            requests,
            huge_written,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    fn serve(
        mut stream: std::net::TcpStream,
        log: &std::sync::Mutex<Vec<String>>,
        huge: &std::sync::atomic::AtomicU64,
    ) -> std::io::Result<()> {
        use std::io::{BufRead, BufReader, Read, Write};
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let request_line = line.trim_end().to_owned();
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            if header.trim_end().is_empty() {
                break;
            }
            if let Some((name, value)) = header.trim_end().split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        let mut body = vec![0; header("content-length").map_or(0, |n| n.parse().unwrap())];
        reader.read_exact(&mut body)?;
        log.lock().unwrap().push(request_line.clone());
        let mut parts = request_line.split(' ');
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let respond = |stream: &mut std::net::TcpStream, body: &[u8]| {
            write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\nx-served-by: cairn-test\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            )?;
            stream.write_all(body)
        };
        match path {
            "/hello" => respond(&mut stream, b"hello from 127.0.0.1"),
            "/echo" => {
                let mut echoed =
                    format!("{method} {} ", header("x-cairn-test").unwrap_or_default())
                        .into_bytes();
                echoed.extend_from_slice(&body);
                respond(&mut stream, &echoed)
            }
            "/huge" => {
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    1u64 << 30
                )?;
                let chunk = vec![b'x'; 64 * 1024];
                for _ in 0..(1 << 30) / chunk.len() {
                    stream.write_all(&chunk)?;
                    huge.fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(())
            }
            "/slow" => {
                std::thread::sleep(Duration::from_secs(5));
                respond(&mut stream, b"late")
            }
            _ => write!(
                stream,
                "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            ),
        }
    }
}

/// A TypeScript provider makes HTTP requests through the SDK (`http.request`, and `fetch`
/// awaited), wasi:http underneath and the host's grant checks in front: a host the user
/// granted answers (a GET; a POST with a UTF-8 body and a header); a host the provider asked
/// for but the user did not grant is refused before any connection, with an error naming the
/// URL and the host; a 1 GiB response stops at the SDK's 16 MiB limit and the server sees the
/// connection go; a server that does not answer in the request's time is a timeout.
#[test]
fn a_typescript_provider_reaches_granted_http_hosts_only() {
    let server = HttpServer::start();
    let port = server.port;
    let sandbox = ts_project(
        "typescript-http",
        HTTP_PROGRAM,
        &provider_plugin("tshttp", "tests/guests/typescript-http"),
    );
    // Loopback is reached only through an exact grant of the host (and here the port).
    sandbox.ok(&[
        "config",
        "set",
        "--path",
        "[\"cairn:grants\"].tshttp.http[0]",
        &format!("127.0.0.1:{port}"),
    ]);
    let set = |pairs: &[(&str, &str)]| {
        for key in ["method", "body", "via", "maxResponseBytes", "timeoutMs"] {
            sandbox.ok(&["config", "rm", key]);
        }
        for (key, value) in pairs {
            sandbox.ok(&["config", "set", key, value]);
        }
    };

    set(&[("url", &format!("http://127.0.0.1:{port}/hello"))]);
    sandbox.ok(&["up", "--yes"]);
    let outs = outputs(&sandbox, false);
    assert_eq!(outs["status"], 200);
    assert_eq!(outs["body"], "hello from 127.0.0.1");
    assert_eq!(outs["servedBy"], "cairn-test");

    set(&[
        ("url", &format!("http://127.0.0.1:{port}/echo")),
        ("method", "POST"),
        ("body", "données ✓"),
        ("via", "fetch"),
    ]);
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(
        outputs(&sandbox, false)["body"],
        "POST from TypeScript données ✓"
    );

    // localhost is the same server, but not granted: refused before anything is sent.
    let seen = server.requests().len();
    set(&[("url", &format!("http://localhost:{port}/hello"))]);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &err,
        &[
            "tshttp:index:Fetch",
            "HTTP request to localhost is not granted (grant it under cairn:grants.tshttp.http)",
            &format!(
                "GET http://localhost:{port}/hello: the host localhost is not granted (HTTP-request-denied)"
            ),
        ],
    );
    assert_eq!(server.requests().len(), seen, "{:?}", server.requests());
    sandbox.ok(&["refresh", "--yes", "--clear-pending-creates"]);

    // 1 GiB offered; the SDK reads 16 MiB and lets go.
    set(&[("url", &format!("http://127.0.0.1:{port}/huge"))]);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &err,
        &[&format!(
            "GET http://127.0.0.1:{port}/huge: the response body is larger than 16777216 bytes (maxResponseBytes)"
        )],
    );
    sandbox.ok(&["refresh", "--yes", "--clear-pending-creates"]);
    // What the server wrote before the connection closed: the limit and what the socket
    // buffers held, not the gigabyte.
    let deadline = Instant::now() + Duration::from_secs(10);
    let written = loop {
        let before = server
            .huge_written
            .load(std::sync::atomic::Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(500));
        let after = server
            .huge_written
            .load(std::sync::atomic::Ordering::Relaxed);
        if after == before || Instant::now() > deadline {
            break after;
        }
    };
    assert!(written < 96 << 20, "the server wrote {written} bytes");

    // A smaller limit of the request's own, and a request that takes longer than its time.
    set(&[
        ("url", &format!("http://127.0.0.1:{port}/huge")),
        ("maxResponseBytes", "1000"),
    ]);
    assert_contains(
        &sandbox.fails(&["up", "--yes"]),
        &["the response body is larger than 1000 bytes"],
    );
    sandbox.ok(&["refresh", "--yes", "--clear-pending-creates"]);
    set(&[
        ("url", &format!("http://127.0.0.1:{port}/slow")),
        ("timeoutMs", "1000"),
    ]);
    let started = Instant::now();
    assert_contains(
        &sandbox.fails(&["up", "--yes"]),
        &[&format!(
            // The SDK's deadline or the host's first-byte timeout, set to the same: whichever
            // notices first.
            "GET http://127.0.0.1:{port}/slow: timed out after 1000 ms"
        )],
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    sandbox.ok(&["refresh", "--yes", "--clear-pending-creates"]);
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["deleted"]);
}
