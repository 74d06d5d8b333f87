//! The same provider two ways, side by side: in process as a wasm component, and as a gRPC
//! plugin process (`ResourceProvider` over loopback, the process serving the same component).
//! Reports per-call latency of Check and Diff on a ~1 KB object, cold start (from nothing to
//! the first answered Check), and the ratios.
//!
//! `cargo bench -p cairn-grpc --bench bridge`. The plugin process is this benchmark binary
//! re-run with `CAIRN_BENCH_SERVE=<wasm>`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_engine::deploy::provider::{CheckRequest, DiffRequest, Provider};
use cairn_engine::urn::Urn;
use cairn_engine::value::{PropertyMap, PropertyValue};
use cairn_grpc::GrpcProvider;
use cairn_wasm::{PackageGrant, RuntimeOptions, WasmPlugin, WasmRuntime};

/// The allocator `cairn` ships with, so figures measure what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cache_dir() -> PathBuf {
    repo().join("target/guests/cwasm-bench-cache")
}

/// Builds the wasm host's probe provider (once; cargo is a no-op afterwards).
fn probe() -> PathBuf {
    let target = repo().join("target/guests");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "build",
        "--release",
        "--target",
        "wasm32-wasip2",
        "--manifest-path",
    ])
    .arg(repo().join("host/wasm/tests/guest/Cargo.toml"));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if (key.starts_with("CARGO_") && key != "CARGO_HOME") || key == "RUSTFLAGS" {
            cmd.env_remove(key.as_ref());
        }
    }
    // Set after the clean-up, or an exported CARGO_TARGET_DIR (a shared release build) would
    // remove it and the probe would be built elsewhere.
    cmd.env("CARGO_TARGET_DIR", &target);
    let out = cmd.output().expect("running cargo");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("wasm32-wasip2/release/probe.wasm")
}

fn runtime() -> WasmRuntime {
    WasmRuntime::new(RuntimeOptions {
        cache_dir: Some(cache_dir()),
        pool_size: None,
    })
    .unwrap()
}

/// Plugin mode: serve the component and print the port, until killed.
fn serve(wasm: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let plugin = WasmPlugin::from_file(wasm).unwrap();
        let provider = runtime()
            .instantiate(
                &plugin,
                &PackageGrant::default(),
                cairn_wasm::tracing_log_sink(),
            )
            .unwrap();
        let served = cairn_grpc::serve_provider(Arc::new(provider))
            .await
            .unwrap();
        println!("{}", served.address.port());
        std::future::pending::<()>().await;
    });
}

fn one_kb_object() -> PropertyMap {
    let mut map = PropertyMap::new();
    for i in 0..16 {
        map.insert(
            format!("property{i:02}"),
            PropertyValue::from(format!("value-{i:02}-{}", "x".repeat(40))),
        );
    }
    let mut nested = PropertyMap::new();
    nested.insert("enabled".into(), PropertyValue::Bool(true));
    nested.insert("count".into(), PropertyValue::Number(3.0));
    map.insert("nested".into(), PropertyValue::Object(Box::new(nested)));
    map
}

fn urn() -> Urn {
    Urn::parse("urn:pulumi:bench::proj::probe:index:Thing::t").unwrap()
}

/// Mean latency of `n` sequential Checks (of `check`) and Diffs.
async fn per_call(p: &dyn Provider, check: CheckRequest<'_>, n: u32) -> (Duration, Duration) {
    for _ in 0..100 {
        p.check(check).await.unwrap();
    }
    let started = Instant::now();
    for _ in 0..n {
        p.check(check).await.unwrap();
    }
    let per_check = started.elapsed() / n;
    // The engine lends a diff its recorded state and the checked news.
    let (old_inputs, old_outputs, news) = (one_kb_object(), one_kb_object(), one_kb_object());
    let diff = DiffRequest {
        urn: check.urn,
        id: "t",
        old_inputs: &old_inputs,
        old_outputs: &old_outputs,
        news: &news,
        ignore_changes: &[],
    };
    let started = Instant::now();
    for _ in 0..n {
        p.diff(diff).await.unwrap();
    }
    (per_check, started.elapsed() / n)
}

/// A plugin process serving `wasm`, its provider connected and configured.
async fn start_plugin(wasm: &Path) -> (GrpcProvider, std::process::Child) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env("CAIRN_BENCH_SERVE", wasm)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().unwrap();
    let channel = cairn_grpc::plugin::connect("probe", port, Duration::from_secs(10))
        .await
        .unwrap();
    let mut provider = GrpcProvider::over("probe", channel, None);
    provider.introduce("127.0.0.1:1").await.unwrap();
    provider.configure(PropertyMap::new(), false).await.unwrap();
    (provider, child)
}

fn main() {
    if let Ok(wasm) = std::env::var("CAIRN_BENCH_SERVE") {
        serve(&wasm);
        return;
    }
    let wasm = probe();
    // Warm the compile cache so both cold starts load from it.
    runtime()
        .prepare(&WasmPlugin::from_file(&wasm).unwrap())
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // Cold starts: from nothing to the first answered Check.
        let mut wasm_cold = Vec::new();
        let mut grpc_cold = Vec::new();
        let (urn, olds, news) = (urn(), one_kb_object(), one_kb_object());
        let check = CheckRequest {
            urn: &urn,
            olds: &olds,
            news: &news,
            random_seed: &[],
        };
        for _ in 0..9 {
            let started = Instant::now();
            let runtime = runtime();
            let plugin = WasmPlugin::from_file(&wasm).unwrap();
            let p = runtime
                .instantiate(&plugin, &PackageGrant::default(), cairn_wasm::tracing_log_sink())
                .unwrap();
            p.configure(PropertyMap::new(), false).await.unwrap();
            p.check(check).await.unwrap();
            wasm_cold.push(started.elapsed());

            let started = Instant::now();
            let (p, mut child) = start_plugin(&wasm).await;
            p.check(check).await.unwrap();
            grpc_cold.push(started.elapsed());
            drop(p);
            let _ = child.kill();
            let _ = child.wait();
        }
        wasm_cold.sort();
        grpc_cold.sort();
        let (wasm_cold, grpc_cold) = (wasm_cold[4], grpc_cold[4]);

        let runtime = runtime();
        let plugin = WasmPlugin::from_file(&wasm).unwrap();
        let in_process = runtime
            .instantiate(&plugin, &PackageGrant::default(), cairn_wasm::tracing_log_sink())
            .unwrap();
        in_process.configure(PropertyMap::new(), false).await.unwrap();
        let (wasm_check, wasm_diff) = per_call(&in_process, check, 5_000).await;

        let (plugin, mut child) = start_plugin(&wasm).await;
        let (grpc_check, grpc_diff) = per_call(&plugin, check, 2_000).await;
        let _ = child.kill();
        let _ = child.wait();

        let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64();
        println!("same provider (probe.wasm), 1 KB object        wasm in-process   gRPC plugin   ratio");
        println!(
            "check, per call                              {wasm_check:>14.2?} {grpc_check:>13.2?}   {:>5.1}x",
            ratio(wasm_check, grpc_check)
        );
        println!(
            "diff, per call                               {wasm_diff:>14.2?} {grpc_diff:>13.2?}   {:>5.1}x",
            ratio(wasm_diff, grpc_diff)
        );
        println!(
            "cold start to first check (median of 9)      {wasm_cold:>14.2?} {grpc_cold:>13.2?}   {:>5.1}x",
            ratio(wasm_cold, grpc_cold)
        );
        println!("(goal: wasm ≥ 50× cheaper per call; wasm cold start ≤ 2 ms)");
    });
}
