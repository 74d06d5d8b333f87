//! Guest languages benchmark: the same provider — the random package's RandomInteger — written
//! with each guest SDK (examples/providers/random in Rust, python-random, typescript-random,
//! go-random), side by side.
//!
//! `cargo bench -p cairn-wasm --bench languages [-- --calls N] [--only LANG,…]` (default
//! 100,000 calls, every language). Per language: component size, compile (no cache), cold load
//! from the cache, instantiating one instance, a Check and a Diff call (medians over batches of
//! 2,000), and the instance's linear memory and the process's RSS before and after N Check
//! calls (flat is the target). Builds the components first: cargo for Rust, cairn-guest-build
//! (as `cairn up` does) for the others; a language whose toolchain is missing is reported and
//! skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_engine::PropertyValue;
use cairn_engine::deploy::provider::{CheckRequest, DiffRequest, Provider};
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyMap;
use cairn_guest_build::{Builder, Language, World};
use cairn_wasm::{PackageGrant, RuntimeOptions, WasmPlugin, WasmRuntime};

/// The allocator `cairn` ships with, so figures measure what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Rust `random` provider, built for wasm32-wasip2 (release).
fn rust_random() -> PathBuf {
    let target = repo().join("target/guests");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "build",
        "--release",
        "--target",
        "wasm32-wasip2",
        "-p",
        "random",
        "--manifest-path",
    ])
    .arg(repo().join("examples/Cargo.toml"));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if (key.starts_with("CARGO_") && key != "CARGO_HOME") || key == "RUSTFLAGS" {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.env("CARGO_TARGET_DIR", &target);
    run(&mut cmd, "building the Rust random provider");
    target.join("wasm32-wasip2/release/random.wasm")
}

/// The `random` provider of `examples/providers/DIR`, built the way `cairn up` builds a
/// provider source (cairn-guest-build; toolchains shared in `target/toolchains`).
fn guest_random(dir: &str, language: Language) -> Result<PathBuf, String> {
    let builder = Builder {
        home: repo().join("target/guests/home"),
        toolchains: repo().join("target/toolchains"),
        progress: Box::new(|line| eprintln!("{line}")),
    };
    builder
        .build(
            &repo().join("examples/providers").join(dir),
            language,
            World::Provider,
        )
        .map_err(|e| e.to_string())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

fn measure(language: &str, file: &Path, calls: usize) {
    let plugin = WasmPlugin::from_file(file).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let options = || RuntimeOptions {
        cache_dir: Some(cache.path().to_owned()),
        pool_size: Some(4),
    };
    let runtime = WasmRuntime::new(options()).unwrap();
    let started = Instant::now();
    runtime.prepare(&plugin).unwrap();
    let compile = started.elapsed();
    let cold = median(
        (0..11)
            .map(|_| {
                let fresh = WasmRuntime::new(options()).unwrap();
                let started = Instant::now();
                fresh.prepare(&plugin).unwrap();
                started.elapsed()
            })
            .collect(),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let log = cairn_wasm::tracing_log_sink();
        let mut samples = Vec::new();
        for _ in 0..11 {
            let p = runtime
                .instantiate(&plugin, &PackageGrant::default(), log.clone())
                .unwrap();
            let started = Instant::now();
            p.prewarm(1).await.unwrap();
            samples.push(started.elapsed());
        }
        let instantiate = median(samples);
        let p = runtime
            .instantiate(&plugin, &PackageGrant::default(), log.clone())
            .unwrap();
        p.configure(PropertyMap::new(), false).await.unwrap();
        let urn = Urn::parse("urn:pulumi:bench::proj::random:index/randomInteger:RandomInteger::n")
            .unwrap();
        let mut inputs = PropertyMap::new();
        inputs.insert("min".into(), PropertyValue::Number(1.0));
        inputs.insert("max".into(), PropertyValue::Number(6.0));
        let check = || CheckRequest {
            urn: &urn,
            olds: &inputs,
            news: &inputs,
            random_seed: &[],
        };
        let mut outputs = inputs.clone();
        outputs.insert("result".into(), PropertyValue::Number(3.0));
        let (mut check_times, mut diff_times) = (Vec::new(), Vec::new());
        for _ in 0..5 {
            let requests: Vec<_> = (0..2_000).map(|_| check()).collect();
            let started = Instant::now();
            for r in requests {
                p.check(r).await.unwrap();
            }
            check_times.push(started.elapsed() / 2_000);
            let started = Instant::now();
            for _ in 0..2_000 {
                p.diff(DiffRequest {
                    urn: &urn,
                    id: "3",
                    old_inputs: &inputs,
                    old_outputs: &outputs,
                    news: &inputs,
                    ignore_changes: &[],
                })
                .await
                .unwrap();
            }
            diff_times.push(started.elapsed() / 2_000);
        }
        let (memory_before, rss_before) = (p.stats().idle_memory_bytes, rss_mib());
        for _ in 0..calls {
            p.check(check()).await.unwrap();
        }
        let (memory_after, rss_after) = (p.stats().idle_memory_bytes, rss_mib());
        say!(
            "{language:<8} {:>8.1} MB {:>9.0?} {:>9.2?} {:>9.2?} {:>9.2?} {:>9.2?}   {:>6.1} -> {:>6.1} MiB   {:>6.1} -> {:>6.1} MiB",
            plugin.bytes().len() as f64 / 1e6,
            compile,
            cold,
            instantiate,
            median(check_times),
            median(diff_times),
            memory_before as f64 / 1048576.0,
            memory_after as f64 / 1048576.0,
            rss_before,
            rss_after
        );
    });
}

fn main() {
    let mut calls = 100_000;
    let mut only: Option<Vec<String>> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--calls" => calls = args.next().and_then(|v| v.parse().ok()).expect("--calls N"),
            "--only" => {
                only = Some(
                    args.next()
                        .expect("--only LANG,…")
                        .split(',')
                        .map(str::to_owned)
                        .collect::<Vec<_>>(),
                )
            }
            "--bench" => {}
            other => panic!("unknown argument {other:?} (expected --calls N or --only LANG,…)"),
        }
    }
    let wanted = |language: &str| {
        only.as_ref()
            .is_none_or(|o| o.iter().any(|l| l == language))
    };
    let mut built = Vec::new();
    if wanted("rust") {
        built.push(("rust", Ok(rust_random())));
    }
    for (name, dir, language) in [
        ("python", "python-random", Language::Python),
        ("ts", "typescript-random", Language::TypeScript),
        ("go", "go-random", Language::Go),
    ] {
        if wanted(name) {
            built.push((name, guest_random(dir, language)));
        }
    }
    say!("RandomInteger on each SDK; {calls} Check calls for the memory columns");
    say!(
        "{:<8} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9}   {:>17}   {:>17}",
        "language",
        "size",
        "compile",
        "cold load",
        "instance",
        "check",
        "diff",
        "linear memory",
        "process RSS"
    );
    for (language, file) in built {
        match file {
            Ok(file) => measure(language, &file, calls),
            Err(e) => say!("{language:<8} skipped: {e}"),
        }
    }
}
