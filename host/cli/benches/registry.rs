//! Registry benchmark: installing a provider from a local OCI registry (Debian's
//! `docker-registry` on 127.0.0.1), and what a `cairn.lock` pinning already-stored providers
//! adds to a deployment.
//!
//! `cargo bench -p cairn-cli --bench registry [-- --runs K]` (default 10). Measures, as medians
//! of K runs of the release `cairn`:
//! * `install`: `cairn plugin install oci://…` of the PostgreSQL provider (~2.3 MB) into a
//!   fresh home (the compile cache shared, as after a first install);
//! * `preview, installed`: `cairn preview` of the quickstart program with its two providers
//!   installed, no lock, no registries;
//! * `preview, locked`: the same with the providers pinned in `cairn.lock` and a registry
//!   listed (stored bytes checked against the lock; nothing fetched). The difference is the
//!   lock's cost (target: at most 5 ms).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../../tests/e2e/ociregistry.rs"]
mod ociregistry;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cairn(home: &Path, cwd: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .current_dir(cwd)
        .env("CAIRN_HOME", home)
        .env("CAIRN_CONFIG_PASSPHRASE", "bench")
        .env_remove("CAIRN_BACKEND_URL")
        .env_remove("PULUMI_BACKEND_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(
        out.status.success(),
        "cairn {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

/// Builds the guests the bench uses (release, wasm32-wasip2) and returns their directory.
fn build_guests() -> PathBuf {
    let target = repo().join("target/guests");
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--manifest-path",
        ])
        .arg(repo().join("examples/Cargo.toml"))
        .args([
            "-p",
            "postgresql",
            "-p",
            "random",
            "-p",
            "file",
            "-p",
            "quickstart",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap();
    assert!(status.success());
    target.join("wasm32-wasip2/release")
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

fn main() {
    let mut runs = 10;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs K"),
            "--bench" => {}
            other => panic!("unknown argument {other:?} (expected --runs K)"),
        }
    }
    let guests = build_guests();
    let registry = ociregistry::OciRegistry::start();
    let work = tempfile::tempdir().unwrap();
    let publisher = work.path().join("publisher");
    for name in ["postgresql", "random", "file"] {
        let file = guests.join(format!("{name}.wasm"));
        cairn(
            &publisher,
            work.path(),
            &[
                "plugin",
                "publish",
                file.to_str().unwrap(),
                &registry.url(&format!("bench/{name}")),
            ],
        );
    }
    let size = std::fs::metadata(guests.join("postgresql.wasm"))
        .unwrap()
        .len();

    // Installs into fresh homes sharing one compile cache (the first compiles it).
    let cache = work.path().join("cache");
    let reference = format!("{}:3.18.2", registry.url("bench/postgresql"));
    let mut installs = Vec::new();
    for run in 0..=runs {
        let home = work.path().join(format!("home-{run}"));
        std::fs::create_dir_all(&home).unwrap();
        std::os::unix::fs::symlink(&cache, home.join("cache")).ok();
        std::fs::create_dir_all(&cache).unwrap();
        let took = cairn(&home, work.path(), &["plugin", "install", &reference]);
        if run > 0 {
            installs.push(took);
        }
    }

    // The quickstart program: installed providers, then the same pinned by a lock.
    let project = work.path().join("project");
    std::fs::create_dir_all(project.join("out")).unwrap();
    let home = work.path().join("home-deploy");
    let quickstart = guests.join("quickstart.wasm");
    std::fs::write(
        project.join("Pulumi.yaml"),
        format!(
            "name: bench\nruntime: wasm\nmain: {}\n",
            quickstart.display()
        ),
    )
    .unwrap();
    cairn(&home, &project, &["stack", "init", "dev"]);
    for (path, value) in [
        ("[\"cairn:grants\"].file.directories[0].host", "./out"),
        ("[\"cairn:grants\"].file.directories[0].guest", "/work"),
        ("[\"cairn:grants\"].file.directories[0].write", "true"),
    ] {
        cairn(&home, &project, &["config", "set", "--path", path, value]);
    }
    for name in ["random", "file"] {
        cairn(
            &home,
            &project,
            &[
                "plugin",
                "install",
                guests.join(format!("{name}.wasm")).to_str().unwrap(),
            ],
        );
    }
    cairn(&home, &project, &["up", "--yes"]);
    let preview = |label: &str| {
        let mut times = Vec::new();
        for run in 0..=runs {
            let took = cairn(&home, &project, &["preview", "--expect-no-changes"]);
            if run > 0 {
                times.push(took);
            }
        }
        let m = median(times);
        say!("{label:<22} {:>9.1} ms", m.as_secs_f64() * 1000.0);
        m
    };
    say!("registry: {runs} runs after a warm-up, medians");
    say!(
        "{:<22} {:>9.1} ms  ({:.1} MB, fresh home, warm compile cache)",
        "install from registry",
        median(installs).as_secs_f64() * 1000.0,
        size as f64 / 1e6
    );
    let installed = preview("preview, installed");
    cairn(
        &home,
        &project,
        &["plugin", "registry", "add", &registry.url("bench")],
    );
    cairn(&home, &project, &["plugin", "lock", "random", "file"]);
    let locked = preview("preview, locked");
    say!(
        "{:<22} {:>9.1} ms",
        "the lock adds",
        (locked.as_secs_f64() - installed.as_secs_f64()) * 1000.0
    );
}
