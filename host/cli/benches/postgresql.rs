//! PostgreSQL provider benchmark: the sandboxed wasm `postgresql` provider against the native
//! pulumi-postgresql plugin (the oracle), both driven by the same `cairn` and the same program
//! (examples/programs/postgresql with `extraRoles: N`: N login roles, each with CONNECT on the
//! database, on top of the example's 11 resources) against a private server.
//!
//! `cargo bench -p cairn-cli --bench postgresql [-- [--roles N] [--runs K]]` (default 200 roles,
//! 3 counted runs after a warm-up). The oracle is `$CAIRN_PG_ORACLE` or
//! `/opt/oracle/bin/pulumi-resource-postgresql`; without one only the wasm rows are measured.
//! It is never part of the repository: build it from pulumi/pulumi-postgresql yourself.
//!
//! Configurations, taking turns within each run:
//! * `wasm`: the component in the `cairn` process, as users run it;
//! * `wasm-grpc`: the same component served out of process by `cairn provider serve` (through
//!   `cairn plugin export-grpc`), so its memory is a process of its own, comparable with the
//!   plugin's;
//! * `native`: `pulumi-resource-postgresql`, a gRPC plugin process.
//!
//! Phases: `up` creating everything, a no-change `preview`, `destroy`. Reported per phase, as
//! medians: wall time, the peak RSS of `cairn`, and the peak RSS of the provider process (its
//! `VmHWM`, sampled every 10 ms while it runs; for `wasm` the provider lives inside `cairn`).
//! Also the peak RSS of an idle `cairn provider serve` holding the component: the host runtime
//! a served provider pays for before its guest does anything. And, for `wasm-grpc`, the `guest`
//! column: the peak resident memory of the provider itself in the serving process — its
//! compiled code's pages and its instances' linear memories, read from `/proc/PID/smaps` —
//! the counterpart of the native plugin's process, which is all its own code and data. (The
//! host runtime beside it is the engine's, shared by every provider a deployment loads.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../../../tests/e2e/pgserver.rs"]
mod pgserver;

use pgserver::{PgServer, SUPERUSER, SUPERUSER_PASSWORD};

const ORACLE: &str = "/opt/oracle/bin/pulumi-resource-postgresql";
const PHASES: [&str; 3] = ["up", "preview", "destroy"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cairn() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cairn"))
}

/// Builds the provider and the program for wasm32-wasip2 (release), returning their files.
fn build_guests() -> (PathBuf, PathBuf) {
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
        .args(["-p", "postgresql", "-p", "postgresql-app"])
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .expect("running cargo");
    assert!(status.success(), "building the guests failed");
    let dir = target.join("wasm32-wasip2/release");
    (dir.join("postgresql.wasm"), dir.join("postgresql_app.wasm"))
}

#[derive(Clone)]
struct Config {
    name: &'static str,
    /// The file Pulumi.yaml's `plugins.providers` names.
    plugin: PathBuf,
    /// The provider process's command name (`None`: in the `cairn` process).
    process: Option<&'static str>,
}

/// One measured phase.
#[derive(Clone, Copy, Default)]
struct Sample {
    wall: Duration,
    cairn_kib: u64,
    provider_kib: u64,
    /// For `wasm-grpc`: the peak resident memory of the provider itself in the serving
    /// process (see [`guest_resident_kib`]).
    guest_kib: u64,
}

/// What of `pid`'s resident memory is the wasm provider's own: the pages of its compiled code
/// (the mapped `.cwasm` artifact) and of its instances' linear memories. Read from
/// `/proc/PID/smaps`: wasmtime reserves each linear memory as one region ending in a large
/// inaccessible guard (at least 1 GiB, `---p`), with the accessible part before it (anonymous
/// pages, and the module's data as a `memfd:wasm-memory-image` mapping) contiguous with it.
fn guest_resident_kib(pid: u32) -> u64 {
    let Ok(smaps) = std::fs::read_to_string(format!("/proc/{pid}/smaps")) else {
        return 0;
    };
    // (start, end, perms, name, rss KiB) per mapping.
    let mut maps: Vec<(u64, u64, String, String, u64)> = Vec::new();
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if let Some((start, end)) = first.split_once('-')
            && let (Ok(start), Ok(end)) =
                (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16))
        {
            let perms = fields.next().unwrap_or_default().to_owned();
            let name = fields.nth(3).unwrap_or_default().to_owned();
            maps.push((start, end, perms, name, 0));
        } else if let Some(rss) = line.strip_prefix("Rss:")
            && let Some(last) = maps.last_mut()
        {
            last.4 = rss
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .unwrap_or(0);
        }
    }
    let code: u64 = maps
        .iter()
        .filter(|m| m.3.ends_with(".cwasm"))
        .map(|m| m.4)
        .sum();
    let mut memory = 0;
    for (i, guard) in maps.iter().enumerate() {
        if guard.2 != "---p" || guard.1 - guard.0 < 1 << 30 {
            continue;
        }
        let mut next_start = guard.0;
        for m in maps[..i].iter().rev() {
            let linear =
                m.2 == "rw-p" && (m.3.is_empty() || m.3.starts_with("/memfd:wasm-memory-image"));
            if m.1 != next_start || !linear {
                break;
            }
            memory += m.4;
            next_start = m.0;
        }
    }
    code + memory
}

/// A project directory with its own backend and home, configured for `server`.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(config: &Config, program: &Path, server: &PgServer, roles: usize) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Pulumi.yaml"),
            format!(
                "name: pgbench\nruntime: wasm\nmain: {}\nplugins:\n  providers:\n    - name: postgresql\n      path: {}\n",
                program.display(),
                config.plugin.display()
            ),
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        let project = Project { dir };
        let port = server.port().to_string();
        let grant = format!("127.0.0.1:{port}");
        let roles = roles.to_string();
        let steps: Vec<Vec<&str>> = vec![
            vec!["stack", "init", "bench"],
            vec!["config", "set", "postgresql:host", "127.0.0.1"],
            vec!["config", "set", "postgresql:port", &port],
            vec!["config", "set", "postgresql:username", SUPERUSER],
            vec![
                "config",
                "set",
                "--secret",
                "postgresql:password",
                SUPERUSER_PASSWORD,
            ],
            vec!["config", "set", "postgresql:sslmode", "disable"],
            vec![
                "config",
                "set",
                "--path",
                "[\"cairn:grants\"].postgresql.tcp[0]",
                &grant,
            ],
            vec![
                "config",
                "set",
                "--secret",
                "ownerPassword",
                "bench-owner-password",
            ],
            vec!["config", "set", "app", "bench"],
            vec!["config", "set", "extraRoles", &roles],
        ];
        for args in steps {
            let out = project.command(&args).output().unwrap();
            assert!(
                out.status.success(),
                "cairn {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        project
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(cairn());
        command
            .args(args)
            .current_dir(self.dir.path())
            .env("CAIRN_HOME", self.dir.path().join("home"))
            .env(
                "PULUMI_BACKEND_URL",
                format!("file://{}", self.dir.path().join("state").display()),
            )
            .env("PULUMI_CONFIG_PASSPHRASE", "bench")
            .stdin(Stdio::null());
        command
    }

    /// Runs one phase, sampling the peak RSS of `cairn` and of the provider process.
    fn run(&self, phase: &str, config: &Config) -> Sample {
        let args: &[&str] = match phase {
            "up" => &["up", "--yes", "--skip-preview"],
            "preview" => &["preview", "--expect-no-changes"],
            _ => &["destroy", "--yes", "--skip-preview"],
        };
        let started = Instant::now();
        let child = self
            .command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let done = Arc::new(AtomicBool::new(false));
        let peaks = Arc::new(Mutex::new(HashMap::<String, u64>::new()));
        let sampler = {
            let (done, peaks) = (done.clone(), peaks.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    sample_tree(pid, &peaks);
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
        let out = child.wait_with_output().unwrap();
        let wall = started.elapsed();
        done.store(true, Ordering::Relaxed);
        sampler.join().unwrap();
        assert!(
            out.status.success(),
            "{} {phase} failed: {}",
            config.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let peaks = peaks.lock().unwrap();
        Sample {
            wall,
            cairn_kib: peaks.get("cairn").copied().unwrap_or(0),
            provider_kib: config
                .process
                .and_then(|name| peaks.get(name).copied())
                .unwrap_or(0),
            guest_kib: peaks.get(GUEST).copied().unwrap_or(0),
        }
    }
}

/// Records the largest `VmHWM` seen for each command name in `pid`'s process tree. A serving
/// `cairn provider serve` is told apart from the deploying `cairn` by its arguments.
fn sample_tree(root: u32, peaks: &Mutex<HashMap<String, u64>>) {
    let mut tree = vec![root];
    let mut i = 0;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    let parents: Vec<(u32, u32)> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let after = stat.rsplit_once(')')?.1;
            let ppid = after.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    for pid in tree {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_owned())
        };
        let (Some(name), Some(hwm)) = (field("Name:"), field("VmHWM:")) else {
            continue;
        };
        let kib: u64 = hwm.trim_end_matches("kB").trim().parse().unwrap_or(0);
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let name = if name == "cairn" && cmdline.contains("provider\0serve") {
            "cairn-provider-serve".to_owned()
        } else if name.starts_with("pulumi-resource") {
            "pulumi-resource-postgresql".to_owned()
        } else {
            name
        };
        let guest = (name == "cairn-provider-serve").then(|| guest_resident_kib(pid));
        let mut peaks = peaks.lock().unwrap();
        let peak = peaks.entry(name).or_default();
        *peak = (*peak).max(kib);
        if let Some(guest) = guest {
            let peak = peaks.entry(GUEST.to_owned()).or_default();
            *peak = (*peak).max(guest);
        }
    }
}

/// The key under which [`sample_tree`] records the served provider's own peak.
const GUEST: &str = "guest";

/// A line to standard output (the crate's printing macros are refused; the figures are ours).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// The peak RSS (KiB) of `cairn provider serve` holding the component ready but serving nothing:
/// the host runtime every served provider pays for, before the guest does any work.
fn idle_serve_kib(provider: &Path, home: &Path, grants: &str) -> u64 {
    let mut serve = Command::new(cairn())
        .args(["provider", "serve"])
        .arg(provider)
        .env("CAIRN_HOME", home)
        .env("CAIRN_GRANTS", grants)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Ready once it prints its port.
    let mut line = String::new();
    let stdout = serve.stdout.take().unwrap();
    let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
    std::thread::sleep(Duration::from_millis(500));
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", serve.id())).unwrap_or_default();
    let _ = serve.kill();
    let _ = serve.wait();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let mut roles = 200;
    let mut runs = 3;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--roles" => roles = args.next().and_then(|v| v.parse().ok()).expect("--roles N"),
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs K"),
            "--bench" => {}
            other => panic!("unknown argument {other:?} (expected --roles N, --runs K)"),
        }
    }
    let (provider, program) = build_guests();
    let server = PgServer::start();
    let export = tempfile::tempdir().unwrap();
    let out = Command::new(cairn())
        .args(["plugin", "export-grpc"])
        .arg(&provider)
        .arg("-o")
        .arg(export.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "export-grpc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut configs = vec![
        Config {
            name: "wasm",
            plugin: provider.clone(),
            process: None,
        },
        Config {
            name: "wasm-grpc",
            plugin: export.path().join("pulumi-resource-postgresql"),
            process: Some("cairn-provider-serve"),
        },
    ];
    let oracle = std::env::var_os("CAIRN_PG_ORACLE")
        .map(PathBuf::from)
        .or_else(|| Path::new(ORACLE).is_file().then(|| PathBuf::from(ORACLE)));
    match oracle {
        Some(path) => configs.push(Config {
            name: "native",
            plugin: path,
            process: Some("pulumi-resource-postgresql"),
        }),
        None => {
            say!("no oracle ({ORACLE} or CAIRN_PG_ORACLE): measuring the wasm provider alone")
        }
    }
    let projects: Vec<Project> = configs
        .iter()
        .map(|c| Project::new(c, &program, &server, roles))
        .collect();
    // The `wasm-grpc` launcher's `provider serve` reads its grant from CAIRN_GRANTS.
    let grants = serde_json::json!({"tcp": [format!("127.0.0.1:{}", server.port())]});
    // SAFETY: single-threaded here; set before any child is spawned.
    unsafe { std::env::set_var("CAIRN_GRANTS", grants.to_string()) };

    say!(
        "postgresql provider: {} resources ({roles} roles with a grant each, plus 11), {runs} runs after a warm-up",
        roles * 2 + 11
    );
    let mut samples: HashMap<(&str, &str), Vec<Sample>> = HashMap::new();
    for run in 0..=runs {
        for (config, project) in configs.iter().zip(&projects) {
            for phase in PHASES {
                let sample = project.run(phase, config);
                if run > 0 {
                    samples
                        .entry((config.name, phase))
                        .or_default()
                        .push(sample);
                }
            }
            let left = server.sql(
                "postgres",
                "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'bench%'",
            );
            assert_eq!(left.trim(), "0", "{} left roles behind", config.name);
        }
    }
    // Measured after the runs, with the compile cache the served provider used warm.
    let idle = idle_serve_kib(
        &provider,
        &projects[1].dir.path().join("home"),
        &grants.to_string(),
    );
    say!(
        "(an idle `cairn provider serve` of the component: {:.1} MiB; what the served guest adds \
         is its peak minus that)",
        idle as f64 / 1024.0
    );
    say!(
        "{:<10} {:<8} {:>9} {:>12} {:>15} {:>13}",
        "provider",
        "phase",
        "wall (s)",
        "cairn (MiB)",
        "provider (MiB)",
        "guest (MiB)"
    );
    for config in &configs {
        for phase in PHASES {
            let s = &samples[&(config.name, phase)];
            let wall = median(s.iter().map(|s| s.wall.as_secs_f64()).collect());
            let cairn = median(s.iter().map(|s| s.cairn_kib as f64 / 1024.0).collect());
            let provider = median(s.iter().map(|s| s.provider_kib as f64 / 1024.0).collect());
            let provider = if config.process.is_some() {
                format!("{provider:.1}")
            } else {
                "in cairn".to_owned()
            };
            let guest = median(s.iter().map(|s| s.guest_kib as f64 / 1024.0).collect());
            let guest = if config.name == "wasm-grpc" {
                format!("{guest:.1}")
            } else {
                "-".to_owned()
            };
            say!(
                "{:<10} {:<8} {:>9.2} {:>12.1} {:>15} {:>13}",
                config.name,
                phase,
                wall,
                cairn,
                provider,
                guest
            );
        }
    }
}
