//! Providers and programs written in Go with Cairn's Go SDK (guest-sdk/go), built by
//! cairn-guest-build with the machine's Go (a wasip1 reactor) into components: the example
//! provider `go-random` and program `examples/programs/go` deploy with `cairn up` alone; a
//! provider instance survives 100,000 calls with Go's collector running, its memory flat; the
//! templates `go-provider` and `go-wasm` deploy as generated; and the sandbox contains a
//! hostile Go provider as it contains the Rust and Python ones.

/// A line on stderr (std's printing macros are refused in this crate): build progress and the
/// figures a test measured, for CI logs.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

use std::path::{Path, PathBuf};

use cairn_guest_build::{Builder, Language, World};

use crate::support::*;

/// The Go guest in `dir` (relative to the repository) built as `cairn up` builds it, with the
/// toolchains and build cache the other tests share.
fn build_go(dir: &str, world: World) -> PathBuf {
    let builder = Builder {
        home: repo().join("target/guests/home"),
        toolchains: repo().join("target/toolchains"),
        progress: Box::new(|line| note!("{line}")),
    };
    builder
        .build(&repo().join(dir), Language::Go, world)
        .unwrap_or_else(|e| panic!("building {dir}: {e}"))
}

/// A provider instance of the component at `file`, compiled into a fresh cache, on a
/// single-threaded runtime: `f` gets the provider.
fn with_provider<F, Fut>(file: &Path, f: F)
where
    F: FnOnce(cairn_wasm::WasmProvider) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    use cairn_wasm::{PackageGrant, RuntimeOptions, WasmPlugin, WasmRuntime};
    let plugin = WasmPlugin::from_file(file).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let runtime = WasmRuntime::new(RuntimeOptions {
        cache_dir: Some(cache.path().to_owned()),
        pool_size: Some(1),
    })
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let p = runtime
            .instantiate(
                &plugin,
                &PackageGrant::default(),
                cairn_wasm::tracing_log_sink(),
            )
            .unwrap();
        f(p).await;
    });
}

/// One Go provider instance takes 100,000 Check calls while Go's collector runs (each call
/// allocates 16 KiB of garbage, reads the clock and re-arms a timer: what made Go components
/// trap with "cannot leave component instance" when a collection started while the host
/// allocated in the guest, wasmtime issue 14318); every other call has its inputs decoded,
/// checked and encoded again (the rest send the host's table back as it came); and every
/// 1,000th call carries a 1.5 MiB value (more than the SDK's arena keeps, so the host's
/// allocation takes memory from Go's heap). Every call succeeds on the one instance with the
/// right result, the collector ran, and memory is flat: the
/// instance's linear memory and the Go heap live after a collection are the same after 20,000
/// calls (the heap settled at its working size) and after 100,000.
#[test]
fn a_go_provider_survives_100k_calls_with_the_collector_running() {
    use cairn_engine::PropertyValue;
    use cairn_engine::deploy::provider::{CheckRequest, InvokeRequest, Provider};
    use cairn_engine::urn::Urn;
    use cairn_engine::value::PropertyMap;

    let file = build_go("tests/guests/go-gc", World::Provider);
    with_provider(&file, |p| async move {
        p.configure(PropertyMap::new(), false).await.unwrap();
        let urn = Urn::parse("urn:pulumi:test::proj::gogc:index:Churn::c").unwrap();
        let inputs = |payload: String, decode: bool| -> PropertyMap {
            [
                ("payload".to_owned(), PropertyValue::from(payload)),
                ("garbageKiB".to_owned(), PropertyValue::Number(16.0)),
                ("decode".to_owned(), PropertyValue::Bool(decode)),
            ]
            .into()
        };
        let echoed = inputs("x".into(), false);
        let decoded = inputs("x".into(), true);
        let mut checked = decoded.clone();
        checked.insert("checked".into(), PropertyValue::Bool(true));
        let large = inputs("y".repeat(3 << 19), false);
        let no_olds = PropertyMap::new();
        let check = |inputs| CheckRequest {
            urn: &urn,
            olds: &no_olds,
            news: inputs,
            random_seed: &[],
        };
        // (checks so far, collections so far, Go heap live after a collection, linear memory)
        let stats = || async {
            let r = p
                .invoke(InvokeRequest {
                    token: "gogc:index:stats".into(),
                    args: PropertyMap::new(),
                })
                .await
                .unwrap();
            let n = |key: &str| match r.outputs.get(key) {
                Some(PropertyValue::Number(n)) => *n as u64,
                other => panic!("{key}: {other:?} in {:?}", r.outputs),
            };
            (
                n("checks"),
                n("numGC"),
                n("liveHeap"),
                p.stats().idle_memory_bytes,
            )
        };

        let started = std::time::Instant::now();
        let mut samples = Vec::new();
        for i in 1..=100_000u32 {
            let (inputs, expected) = match i {
                _ if i % 1_000 == 0 => (&large, &large),
                _ if i % 2 == 0 => (&decoded, &checked),
                _ => (&echoed, &echoed),
            };
            let r = p.check(check(inputs)).await.unwrap();
            assert_eq!(r.inputs, *expected, "call {i}");
            if i == 20_000 || i == 100_000 {
                samples.push(stats().await);
            }
        }
        let elapsed = started.elapsed();
        note!(
            "100,000 Checks in {elapsed:?} ({:?} a call); (checks, collections, live Go heap, linear memory) after 20,000 and 100,000: {samples:?}",
            elapsed / 100_000
        );
        let pool = p.stats();
        assert_eq!(
            (pool.created, pool.discarded, pool.recycled),
            (1, 0, 0),
            "one instance served every call: {pool:?}"
        );
        let [
            (at_20k, gc_20k, live_20k, memory_20k),
            (at_100k, gc_100k, live_100k, memory_100k),
        ] = samples[..]
        else {
            unreachable!("two samples")
        };
        assert_eq!((at_20k, at_100k), (20_000, 100_000));
        // 16 KiB of garbage a call: the collector runs every few hundred calls.
        assert!(
            gc_100k - gc_20k > 100,
            "only {} collections in 80,000 calls",
            gc_100k - gc_20k
        );
        assert_eq!(live_100k, live_20k, "the live Go heap grew");
        assert_eq!(memory_100k, memory_20k, "the linear memory grew");
    });
}

/// The Go examples deploy with `cairn up` alone: `examples/programs/go` (a component, three
/// random resources, an apply over two outputs, a secret derived from secret configuration)
/// on `examples/providers/go-random`, both named by their source directories and built by
/// `cairn up`. Nothing changes on a second run, and nothing is built again; a changed input
/// replaces only its resource; a check failure names the property; destroy removes
/// everything.
#[test]
fn the_go_examples_deploy_with_up_alone() {
    let sandbox = Sandbox::new("go-demo");
    let (program, provider) = (
        repo().join("examples/programs/go"),
        repo().join("examples/providers/go-random"),
    );
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: go-demo\nruntime: wasm\nmain: {}\nplugins:\n  providers:\n    - name: random\n      path: {}\n",
            program.display(),
            provider.display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["config", "set", "--secret", "password", "hunter2-go-demo"]);
    let up = sandbox.run(&["up", "--yes"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&up.stdout),
        String::from_utf8_lossy(&up.stderr)
    );
    assert!(up.status.success(), "{text}");
    assert_contains(
        &text,
        &[
            "Building the provider",
            "Building the program",
            "random:index/randomString:RandomString",
            "5 created",
            // Output keys are padded to the longest (`groupUrn`), as Pulumi aligns them.
            "dsn     : [secret]",
        ],
    );
    let first = outputs(&sandbox, true);
    let port = first["port"].as_f64().unwrap();
    assert!(
        (8000.0..=8999.0).contains(&port) && port.fract() == 0.0,
        "{first}"
    );
    let token = first["token"].as_str().unwrap().to_owned();
    assert_eq!(token.len(), 16);
    assert!(token.chars().all(|c| c.is_ascii_alphanumeric()), "{token}");
    let id = first["id"].as_str().unwrap();
    assert_eq!((id.len(), id.matches('-').count()), (36, 4), "{id}");
    assert_eq!(first["address"], format!("{}.local:{port}", &id[..8]));
    assert_eq!(
        first["groupUrn"],
        "urn:pulumi:dev::go-demo::go-demo:index:Group::group"
    );
    assert_eq!(
        first["dsn"],
        format!("app:hunter2-go-demo@{}", first["address"].as_str().unwrap())
    );
    assert_eq!(outputs(&sandbox, false)["dsn"], "[secret]");

    // Nothing changes on a second run, and nothing is built again.
    let again = sandbox.run(&["preview", "--expect-no-changes"]);
    let text = String::from_utf8_lossy(&again.stderr).into_owned();
    assert!(again.status.success(), "{text}");
    assert!(!text.contains("Building the"), "built again: {text}");

    // A changed input replaces only its resource.
    sandbox.ok(&["config", "set", "length", "20"]);
    assert_contains(
        &sandbox.ok(&["up", "--yes"]),
        &["1 replaced", "4 unchanged"],
    );
    let after = outputs(&sandbox, true);
    assert_eq!(after["token"].as_str().unwrap().len(), 20);
    assert_eq!(
        (&after["id"], &after["port"]),
        (&first["id"], &first["port"])
    );

    // A check failure names the property; it is an error, not a trap.
    sandbox.ok(&["config", "set", "length", "0"]);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(&err, &["length", "length must be at least 1"]);
    assert!(!err.contains("trap"), "{err}");
    sandbox.ok(&["config", "rm", "length"]);

    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["5 deleted"]);
}

/// A Go provider that does not compile fails the deployment before anything runs, naming the
/// build and showing Go's message; a manifest without a name is refused the same way.
#[test]
fn a_broken_go_provider_names_the_build_that_failed() {
    let sandbox = go_project(
        "go-broken",
        &[
            ("go.mod", "module broken-program\n\ngo 1.24\n"),
            ("main.go", HOSTILE_PROGRAM),
            ("provider/go.mod", "module broken\n\ngo 1.24\n"),
            (
                "provider/cairn.json",
                r#"{"name": "gohostile", "version": "0.1.0"}"#,
            ),
            (
                "provider/main.go",
                "package main\n\nfunc main() { this is not Go }\n",
            ),
        ],
        "plugins:\n  providers:\n    - name: gohostile\n      path: ./provider\n",
    );
    sandbox.ok(&["config", "set", "mode", "env"]);
    let err = sandbox.fails(&["preview"]);
    assert_contains(
        &err,
        &[
            "syntax error",
            "building the Go provider in",
            "provider failed: go build exited",
        ],
    );
    sandbox.write("provider/main.go", "package main\n\nfunc main() {}\n");
    sandbox.write("provider/cairn.json", r#"{"version": "0.1.0"}"#);
    let err = sandbox.fails(&["preview"]);
    assert_contains(&err, &["cairn.json: the manifest has no \"name\""]);
}

/// A Go program declaring a component its Go provider builds (`construct`: the provider
/// registers the component and two children through the engine, then the component's
/// outputs), calling a method on it (`call`, the component as `__self__`), calling a provider
/// function and reading an existing resource; `bad` declares a component whose construct
/// fails by itself (`type`) or through a child the engine refuses (`child`).
const COMPONENT_PROGRAM: &str = r#"package main

import (
	cairn "cairn.invalid/sdk"
	"cairn.invalid/sdk/program"
)

func init() { program.Export(run) }

func main() {}

func run(ctx *program.Context) error {
	prefix, err := ctx.Config().Require("prefix")
	if err != nil {
		return err
	}
	pair := ctx.RemoteComponent("gocomp:index:Pair", "pair", program.Args{"prefix": prefix})
	ctx.Export("left", pair.Output("left"))
	ctx.Export("right", pair.Output("right"))
	ctx.Export("pairUrn", pair.URN)
	self := program.Apply(pair.URN, func(urn string) cairn.Value {
		return cairn.Reference(cairn.ResourceReference{URN: urn})
	})
	described := ctx.Call("gocomp:index:Pair/describe", program.Args{"__self__": self, "greeting": "hello"}, nil)
	ctx.Export("description", program.Apply(described, func(m *cairn.PropertyMap) string {
		d, _ := m.GetString("description")
		return d
	}))
	echo := ctx.Invoke("gocomp:index:echo", program.Args{"x": 1}, nil)
	ctx.Export("echoed", program.Apply(echo, func(m *cairn.PropertyMap) bool {
		b, _ := m.GetBool("echoed")
		return b
	}))
	adopted := ctx.Read("gocomp:index:Thing", "adopted", "external-id", nil)
	ctx.Export("readId", adopted.ID)
	switch bad, _ := ctx.Config().Get("bad"); bad {
	case "type":
		ctx.RemoteComponent("gocomp:index:Pair", "typed", program.Args{"prefix": 1})
	case "child":
		ctx.RemoteComponent("gocomp:index:Pair", "boom", program.Args{"prefix": "boom"})
	}
	return nil
}
"#;

/// Components built by a Go provider (`construct` through the SDK's engine calls), their
/// methods (`call`), provider functions and reads, from a Go program: the component's children
/// are in the state under it, its outputs reach the program, its method answers, a change
/// updates the children; a construct that fails is an error naming the component, a child
/// the engine refuses one naming the child under it, never a trap; destroy removes them.
#[test]
fn a_go_provider_builds_components_for_a_go_program() {
    let provider = build_go("tests/guests/go-component", World::Provider);
    let sandbox = go_project(
        "go-components",
        &[
            ("go.mod", "module components-program\n\ngo 1.24\n"),
            ("main.go", COMPONENT_PROGRAM),
        ],
        "",
    );
    sandbox.ok(&["plugin", "install", provider.to_str().unwrap()]);
    sandbox.ok(&["config", "set", "prefix", "p"]);
    let up = sandbox.ok(&["up", "--yes"]);
    assert_contains(&up, &["gocomp:index:Pair", "gocomp:index:Thing"]);
    let outs = outputs(&sandbox, false);
    assert_eq!(
        (
            &outs["left"],
            &outs["right"],
            &outs["echoed"],
            &outs["readId"]
        ),
        (
            &serde_json::json!("p-pair-left"),
            &serde_json::json!("p-pair-right"),
            &serde_json::json!(true),
            &serde_json::json!("external-id")
        ),
        "{outs}"
    );
    let pair_urn = outs["pairUrn"].as_str().unwrap().to_owned();
    assert_eq!(
        pair_urn,
        "urn:pulumi:dev::go-components::gocomp:index:Pair::pair"
    );
    let state: serde_json::Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let children: Vec<&serde_json::Value> = state["deployment"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["type"] == "gocomp:index:Thing" && r["parent"] == pair_urn.as_str())
        .collect();
    assert_eq!(children.len(), 2, "{state}");

    assert_eq!(
        outs["description"], "hello from pair in go-components/dev",
        "{outs}"
    );

    sandbox.ok(&["config", "set", "prefix", "q"]);
    assert_contains(&sandbox.ok(&["up", "--yes"]), &["2 updated"]);
    assert_eq!(outputs(&sandbox, false)["left"], "q-pair-left");

    // Failures: the construct's own, and a child the engine refused (its check failed).
    sandbox.ok(&["config", "set", "bad", "type"]);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &err,
        &[
            "constructing urn:pulumi:dev::go-components::gocomp:index:Pair::typed failed",
            "prefix: expected a string, found the number 1",
        ],
    );
    assert!(!err.contains("trap"), "{err}");
    sandbox.ok(&["config", "set", "bad", "child"]);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(
        &err,
        &[
            "urn:pulumi:dev::go-components::gocomp:index:Pair$gocomp:index:Thing::boom-left",
            "boom is not a prefix",
        ],
    );
    assert!(!err.contains("trap"), "{err}");
    sandbox.ok(&["config", "rm", "bad"]);
    let destroy = sandbox.ok(&["destroy", "--yes"]);
    assert_contains(&destroy, &["deleted"]);
    let state = sandbox.ok(&["stack", "export"]);
    assert!(!state.contains("gocomp:index:Thing"), "{state}");
}

/// A sandbox whose project directory is `root/<dir>`, empty (not yet a project).
fn empty_project(dir: &str) -> Sandbox {
    let mut sandbox = Sandbox::new("unused");
    sandbox.project = sandbox.root().join(dir);
    std::fs::create_dir_all(&sandbox.project).unwrap();
    sandbox
}

/// `cairn new go-wasm`: the generated program builds and deploys with `cairn up` alone.
#[test]
fn new_go_program_deploys_as_generated() {
    let sandbox = empty_project("new-go-app");
    let out = sandbox.ok(&["new", "go-wasm", "--yes"]);
    assert_contains(&out, &["Created project \"new-go-app\"", "run `cairn up`"]);
    assert_contains(&sandbox.read("go.mod"), &["module new-go-app"]);
    assert_contains(
        &sandbox.read("Pulumi.dev.yaml"),
        &["new-go-app:name: world"],
    );

    let up = sandbox.ok(&["up", "--yes"]);
    assert_contains(&up, &["new-go-app:index:App", "2 created"]);
    let outs = outputs(&sandbox, false);
    assert_eq!(outs["greeting"], "Hello, world!");
    assert_eq!(
        outs["appUrn"],
        "urn:pulumi:dev::new-go-app::new-go-app:index:App::app"
    );
    sandbox.ok(&["config", "set", "name", "Ada"]);
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(outputs(&sandbox, false)["greeting"], "Hello, Ada!");
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["2 deleted"]);
}

/// `cairn new go-provider`: `cairn up` alone builds the provider (named in Pulumi.yaml's
/// plugins) and its example program, and deploys; nothing is installed.
#[test]
fn new_go_provider_builds_and_deploys_its_example_with_up_alone() {
    let sandbox = empty_project("go-provider-dir");
    let out = sandbox.ok(&[
        "new",
        "go-provider",
        "--yes",
        "--name",
        "gogreeter",
        "--description",
        "Greetings, \"quoted\"",
    ]);
    assert_contains(&out, &["run `cairn up`"]);
    assert_contains(
        &sandbox.read("cairn.json"),
        &[
            "\"name\": \"gogreeter\"",
            "gogreeter:index:Greeting",
            "Greetings, \\\"quoted\\\"",
        ],
    );
    let up = sandbox.run(&["up", "--yes"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&up.stdout),
        String::from_utf8_lossy(&up.stderr)
    );
    assert!(up.status.success(), "{text}");
    assert_contains(
        &text,
        &[
            "Building the provider",
            "Building the program",
            "gogreeter:index:Greeting",
            "2 created",
        ],
    );
    assert_eq!(outputs(&sandbox, false)["message"], "Hello, world!");
    sandbox.ok(&["config", "set", "name", "Grace"]);
    assert_contains(&sandbox.ok(&["up", "--yes"]), &["1 updated"]);
    assert_eq!(outputs(&sandbox, false)["message"], "Hello, Grace!");
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["2 deleted"]);
    assert!(!sandbox.home.join("plugins/gogreeter").exists());
}

/// A Go program declaring `gohostile:index:Attack` with the configured `mode`, `port` and
/// `path`.
const HOSTILE_PROGRAM: &str = r#"package main

import "cairn.invalid/sdk/program"

func init() { program.Export(run) }

func main() {}

func run(ctx *program.Context) error {
	c := ctx.Config()
	mode, err := c.Require("mode")
	if err != nil {
		return err
	}
	port, err := c.GetInt("port", 0)
	if err != nil {
		return err
	}
	path, _ := c.Get("path")
	attack := ctx.Custom("gohostile:index:Attack", "attack", program.Args{"mode": mode, "port": port, "path": path})
	ctx.Export("found", attack.Output("found"))
	return nil
}
"#;

/// A project whose program is the Go module `files` (name, text), with stack `dev`.
fn go_project(name: &str, files: &[(&str, &str)], extra: &str) -> Sandbox {
    let sandbox = Sandbox::new(name);
    sandbox.write(
        "Pulumi.yaml",
        &format!("name: {name}\nruntime: wasm\nmain: .\n{extra}"),
    );
    for (file, text) in files {
        if let Some(dir) = Path::new(file).parent() {
            std::fs::create_dir_all(sandbox.project.join(dir)).unwrap();
        }
        sandbox.write(file, text);
    }
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox
}

/// The sandbox contains a Go provider as it does a Rust or Python one: the host's files,
/// processes, network and environment are out of reach through Go's standard library, a guest
/// that spins, sleeps past its deadline, hoards memory or overflows its stack is stopped by its
/// grant's limits, and results the host cannot take (huge, unstorable, malformed) are refused —
/// each an error naming the resource, the host unharmed. A panic is the provider's ordinary
/// failure, not a trap.
#[test]
fn a_hostile_go_provider_is_contained() {
    let provider = build_go("tests/guests/go-hostile", World::Provider);
    let sandbox = go_project(
        "go-hostile",
        &[
            ("go.mod", "module hostile-program\n\ngo 1.24\n"),
            ("main.go", HOSTILE_PROGRAM),
        ],
        "",
    );
    sandbox.ok(&["plugin", "install", provider.to_str().unwrap()]);
    // A directory granted as /work, and a secret file beside it.
    std::fs::create_dir_all(sandbox.project.join("granted")).unwrap();
    std::fs::write(sandbox.project.join("granted/inside.txt"), "inside").unwrap();
    std::fs::write(sandbox.project.join("outside.txt"), "SECRET-OUTSIDE").unwrap();
    for (path, value) in [
        ("[\"cairn:grants\"].gohostile.timeoutSeconds", "3"),
        ("[\"cairn:grants\"].gohostile.memoryMiB", "160"),
        (
            "[\"cairn:grants\"].gohostile.directories[0].host",
            "./granted",
        ),
        ("[\"cairn:grants\"].gohostile.directories[0].guest", "/work"),
    ] {
        sandbox.ok(&["config", "set", "--path", path, value]);
    }
    // A server that counts the connections it is offered.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    sandbox.ok(&["config", "set", "port", &port.to_string()]);

    for (mode, path, expected) in [
        ("file", "", "/etc/passwd"),
        ("path", "/work/../outside.txt", "outside.txt"),
        (
            "process",
            "",
            "fork/exec /bin/sh: Not implemented on wasip1",
        ),
        ("network", "", "connect: Connection refused"),
        ("loop", "", "deadline of 3 s exceeded"),
        (
            "clock",
            "",
            "deadline of 3 s exceeded while waiting in a host call",
        ),
        ("memory", "", "exceeded its 160 MiB memory limit"),
        ("recursion", "", "wasm trap: call stack exhausted"),
        ("panic", "", "panic: the hostile provider panicked"),
        ("huge", "", "more than the 16 MiB limit on one value"),
        ("nan", "", "NaN is not a number JSON can store"),
        ("malformed", "", "unknown kind 99"),
    ] {
        sandbox.ok(&["config", "set", "mode", mode]);
        sandbox.ok(&["config", "set", "path", path]);
        let started = std::time::Instant::now();
        let err = sandbox.fails(&["up", "--yes"]);
        assert_contains(&err, &[expected, "gohostile:index:Attack"]);
        assert!(
            !err.contains("root:x:0:0") && !err.contains("SECRET-OUTSIDE"),
            "{mode}: {err}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
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

    // Inside the grant, a file is read.
    sandbox.ok(&["config", "set", "mode", "path"]);
    sandbox.ok(&["config", "set", "path", "/work/inside.txt"]);
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(outputs(&sandbox, true)["found"], "inside");
    // The environment: none granted, so none seen.
    sandbox.ok(&["config", "set", "mode", "env"]);
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(
        outputs(&sandbox, true)["found"],
        "",
        "the guest saw environment variables"
    );
    // The root directory: nothing is preopened there, so listing it fails (or would show only
    // the granted mount point).
    sandbox.ok(&["config", "set", "mode", "listdir"]);
    let out = sandbox.run(&["up", "--yes"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        let found = outputs(&sandbox, true)["found"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(found.is_empty() || found == "work,", "{found}");
    } else {
        assert_contains(
            &text,
            &["gohostile:index:Attack", "open /: Bad file number"],
        );
    }
    for leaked in ["usr", "proc", "bin", "etc"] {
        assert!(
            !text.contains(&format!("{leaked},")),
            "listdir saw {leaked}: {text}"
        );
    }
}
