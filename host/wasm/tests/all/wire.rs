//! cairn-wire's suite in wasm: the node-table code is the same for the host and for guests, so
//! its tests (`wit/wire/src` unit tests and `wit/wire/tests/all`) also run as guests do — built
//! for wasm32-wasip2 (`cargo test --no-run`, into `target/guests` like every guest) and run as
//! command components in wasmtime with WASI. Each test binary must exit 0 having passed every
//! test it lists, and together they must run every `#[test]` the crate's sources hold.

use std::path::{Path, PathBuf};
use std::process::Command;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::bindings::sync::Command as WasiCommand;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{I32Exit, WasiCtx, WasiCtxView, WasiView};

use crate::support::{guest_target, repo};

/// Builds cairn-wire's test binaries for wasm32-wasip2; returns their paths.
fn build() -> Vec<PathBuf> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "test",
        "--no-run",
        "--locked",
        "--message-format=json",
        "--target",
        "wasm32-wasip2",
        "-p",
        "cairn-wire",
        "--manifest-path",
    ])
    .arg(repo().join("Cargo.toml"));
    // As in `support::guests`: nothing of the outer `cargo test` leaks into this build.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if (key.starts_with("CARGO_") && key != "CARGO_HOME") || key == "RUSTFLAGS" {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.env("CARGO_TARGET_DIR", guest_target());
    let out = cmd
        .output()
        .expect("running cargo to build cairn-wire's tests");
    assert!(
        out.status.success(),
        "building cairn-wire's tests for wasm32-wasip2 failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let binaries: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["profile"]["test"] == true)
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .collect();
    assert!(!binaries.is_empty(), "cargo built no test binary");
    binaries
}

struct Host {
    ctx: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Host {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}

/// Runs a test binary with `args`: its exit code and what it printed.
fn run(engine: &Engine, component: &Component, args: &[&str]) -> (i32, String) {
    let mut linker = Linker::<Host>::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("linking WASI");
    let stdout = MemoryOutputPipe::new(16 << 20);
    let stderr = MemoryOutputPipe::new(16 << 20);
    let mut builder = WasiCtx::builder();
    builder
        .arg("cairn-wire-tests")
        .args(args)
        .stdout(stdout.clone())
        .stderr(stderr.clone());
    let host = Host {
        ctx: builder.build(),
        table: ResourceTable::new(),
    };
    let mut store = Store::new(engine, host);
    let command = WasiCommand::instantiate(&mut store, component, &linker).expect("instantiating");
    let code = match command.wasi_cli_run().call_run(&mut store) {
        Ok(Ok(())) => 0,
        Ok(Err(())) => 1,
        Err(e) => match e.downcast_ref::<I32Exit>() {
            Some(exit) => exit.0,
            None => panic!(
                "the tests trapped: {e:?}\n{}",
                String::from_utf8_lossy(&stderr.contents())
            ),
        },
    };
    let mut printed = String::from_utf8_lossy(&stdout.contents()).into_owned();
    printed.push_str(&String::from_utf8_lossy(&stderr.contents()));
    (code, printed)
}

/// The number before `label` in libtest's output (`23 tests, 0 benchmarks`, `ok. 23 passed`).
fn count(output: &str, label: &str) -> usize {
    output
        .lines()
        .find_map(|line| {
            let at = line.find(label)?;
            line[..at].split_whitespace().last()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no {label:?} in:\n{output}"))
}

/// The `#[test]` functions in the crate's sources.
fn written(dir: &Path) -> usize {
    let mut tests = 0;
    for entry in std::fs::read_dir(dir).expect("reading cairn-wire's sources") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            tests += written(&path);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("reading a source file");
            tests += text.lines().filter(|l| l.trim() == "#[test]").count();
        }
    }
    tests
}

#[test]
fn the_wire_suite_passes_in_wasm() {
    let engine = Engine::default();
    let mut ran = 0;
    for binary in build() {
        let component = Component::from_file(&engine, &binary)
            .unwrap_or_else(|e| panic!("compiling {}: {e:?}", binary.display()));
        let (code, listing) = run(&engine, &component, &["--list"]);
        assert_eq!(code, 0, "{}: --list failed:\n{listing}", binary.display());
        let listed = count(&listing, " tests,");
        // Threads are not available to a wasip2 component: the tests run one after another.
        let (code, output) = run(&engine, &component, &["--test-threads=1"]);
        assert_eq!(code, 0, "{} failed in wasm:\n{output}", binary.display());
        assert_eq!(
            count(&output, " passed;"),
            listed,
            "{}: not every listed test passed:\n{output}",
            binary.display()
        );
        ran += listed;
    }
    let wire = repo().join("wit/wire");
    let expected = written(&wire.join("src")) + written(&wire.join("tests"));
    assert_eq!(ran, expected, "tests ran in wasm vs #[test]s in wit/wire");
}
