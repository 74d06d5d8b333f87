//! Side by side with the reference engine: the same Pulumi Python and Node.js programs deployed
//! by `cairn` and by Pulumi's CLI (`pulumi`), phase by phase.
//!
//! `cargo bench -p cairn-cli --bench versus [-- [--components N]... [--rounds K]
//! [--lang python,nodejs] [--engines cairn,pulumi,pulumi-nockpt]]` (default N = 2000, K = 3,
//! both languages, every engine). Pulumi's default mode rewrites the whole state after every
//! step, so its time grows with N²: at N = 2000 one of its rounds takes ~25 minutes per
//! language on 2 cores (`--engines cairn,pulumi-nockpt` leaves it out). The reference is
//! `$CAIRN_REFERENCE_PULUMI` (the `pulumi` binary; its directory also holds
//! `pulumi-language-python`, `pulumi-language-python-exec` and `pulumi-language-nodejs`), else
//! `pulumi` on `PATH`, else `/opt/reference/bin/pulumi`; without one the bench says so and
//! exits successfully. It is never part of the repository: build it from pulumi/pulumi
//! yourself (`go build` of `pkg/cmd/pulumi` and of the two language hosts under `sdk/`).
//!
//! The program (generated into a temporary directory, the same text for every engine) declares
//! N `ComponentResource`s, each with an input from the configuration that flows into an output
//! it registers: no provider is involved, so the figures are the engine and the SDK alone. The
//! programs run on the Pulumi SDKs the end-to-end tests use (`target/pyenv`, `target/nodeenv`;
//! created as the tests create them if missing).
//!
//! Engines: `cairn` (the release binary, a `file://` backend); `pulumi` (its `file://` backend,
//! defaults); `pulumi, no checkpoints` (`PULUMI_SKIP_CHECKPOINTS=true`: Pulumi saves the state
//! once at the end instead of after every step; it has no flag for it). Each has its own
//! project directory, backend and home. Phases of a round: `create` (`up --skip-preview`), a
//! no-change `preview` (`--expect-no-changes`), `update` (`up --skip-preview` after changing the
//! configuration value every component's input derives from) and `destroy`; within each phase
//! the engines take turns, the first one rotating from round to round. Each engine first
//! deploys and destroys a 10-component program, untimed (caches warm). Every phase's resource
//! summary is checked.
//!
//! Reported per language and phase: the median wall time of each engine; the median of the
//! round-by-round ratios pulumi / cairn (above 1: cairn is faster); the CPU time of the engine
//! process itself (user + system of `cairn` or `pulumi`, read from `/proc/PID/stat` when it
//! has exited, before it is reaped; 10 ms ticks) per resource, in ms; and the CPU time of the
//! whole tree (engine, language host, program: the reaped process's `wait4` rusage). The
//! table is markdown, with the machine (cores, CPU model) above it.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const DEFAULT_REFERENCE: &str = "/opt/reference/bin/pulumi";
const PHASES: [&str; 4] = ["create", "preview", "update", "destroy"];
/// The Pulumi Python SDK the end-to-end tests pin (tests/e2e/support.rs).
const PULUMI_PYTHON: &str = "pulumi==3.272.0";

const PYTHON_PROGRAM: &str = r#"import pulumi

config = pulumi.Config()
count = config.require_int("components")
value = config.require("value")


class Unit(pulumi.ComponentResource):
    def __init__(self, name, value, opts=None):
        super().__init__("bench:index:Unit", name, {"value": value}, opts)
        self.value = pulumi.Output.from_input(value).apply(lambda v: v.upper())
        self.register_outputs({"value": self.value})


for i in range(count):
    Unit(f"unit-{i}", f"{value}-{i}")
"#;

const NODE_PROGRAM: &str = r#""use strict";
const pulumi = require("@pulumi/pulumi");

const config = new pulumi.Config();
const count = config.requireNumber("components");
const value = config.require("value");

class Unit extends pulumi.ComponentResource {
    constructor(name, value, opts) {
        super("bench:index:Unit", name, { value }, opts);
        this.value = pulumi.output(value).apply((v) => v.toUpperCase());
        this.registerOutputs({ value: this.value });
    }
}

for (let i = 0; i < count; i++) {
    new Unit(`unit-${i}`, `${value}-${i}`);
}
"#;

/// A line to standard output (the crate's printing macros are refused; the figures are ours).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Lang {
    Python,
    Nodejs,
}

impl Lang {
    fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Nodejs => "nodejs",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Engine {
    Cairn,
    Pulumi,
    PulumiNoCheckpoints,
}

const ENGINES: [Engine; 3] = [Engine::Cairn, Engine::Pulumi, Engine::PulumiNoCheckpoints];

impl Engine {
    /// Its name in `--engines`.
    fn key(self) -> &'static str {
        match self {
            Engine::Cairn => "cairn",
            Engine::Pulumi => "pulumi",
            Engine::PulumiNoCheckpoints => "pulumi-nockpt",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Engine::Cairn => "cairn",
            Engine::Pulumi => "pulumi",
            Engine::PulumiNoCheckpoints => "pulumi, no checkpoints",
        }
    }
}

/// The reference `pulumi`, if one is installed.
fn reference() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CAIRN_REFERENCE_PULUMI") {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("pulumi"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        Path::new(DEFAULT_REFERENCE)
            .is_file()
            .then(|| PathBuf::from(DEFAULT_REFERENCE))
    })
}

/// The virtualenv with the Pulumi Python SDK the end-to-end tests use (`target/pyenv`), made
/// as they make it when it is missing.
fn python_venv() -> PathBuf {
    let venv = repo().join("target/pyenv");
    let python = venv.join("bin/python");
    let has_sdk = |python: &Path| {
        Command::new(python)
            .args(["-c", "import pulumi"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has_sdk(&python) {
        if !python.exists() {
            let status = Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .expect("running python3 -m venv");
            assert!(status.success(), "creating {}", venv.display());
        }
        let status = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", PULUMI_PYTHON])
            .status()
            .expect("running pip");
        assert!(status.success(), "pip install {PULUMI_PYTHON} failed");
    }
    venv
}

/// The `node_modules` with the Pulumi Node.js SDK the end-to-end tests use
/// (`target/nodeenv`), installed as they install it when it is missing.
fn node_modules() -> PathBuf {
    let dir = repo().join("target/nodeenv");
    let modules = dir.join("node_modules");
    if !modules.join("@pulumi/pulumi/package.json").is_file() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            repo().join("examples/programs/nodejs/package.json"),
            dir.join("package.json"),
        )
        .unwrap();
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status()
            .expect("running npm install");
        assert!(status.success(), "npm install failed");
    }
    modules
}

/// One engine's project: the program, its backend directory and its home.
struct Project {
    engine: Engine,
    dir: PathBuf,
    binary: PathBuf,
    log: PathBuf,
}

/// One measured phase.
#[derive(Clone, Copy, Default)]
struct Sample {
    wall: f64,
    /// User + system CPU seconds of the engine process itself.
    engine_cpu: f64,
    /// User + system CPU seconds of the process and its reaped descendants.
    tree_cpu: f64,
}

impl Project {
    fn new(root: &Path, engine: Engine, lang: Lang, binary: &Path) -> Project {
        let dir = root.join(engine.key());
        let program = dir.join("program");
        std::fs::create_dir_all(&program).unwrap();
        std::fs::create_dir_all(dir.join("state")).unwrap();
        match lang {
            Lang::Python => {
                std::fs::write(program.join("__main__.py"), PYTHON_PROGRAM).unwrap();
                std::fs::write(
                    program.join("Pulumi.yaml"),
                    format!(
                        "name: versus\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
                        python_venv().display()
                    ),
                )
                .unwrap();
            }
            Lang::Nodejs => {
                std::fs::write(program.join("index.js"), NODE_PROGRAM).unwrap();
                std::fs::write(
                    program.join("package.json"),
                    "{\"name\": \"versus\", \"main\": \"index.js\"}\n",
                )
                .unwrap();
                std::fs::write(
                    program.join("Pulumi.yaml"),
                    "name: versus\nruntime: nodejs\n",
                )
                .unwrap();
                std::os::unix::fs::symlink(node_modules(), program.join("node_modules")).unwrap();
            }
        }
        let project = Project {
            engine,
            log: dir.join("output.log"),
            dir,
            binary: binary.to_owned(),
        };
        project.ok(&["stack", "init", "bench"]);
        project
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("PULUMI_") || key.starts_with("CAIRN_") {
                command.env_remove(key.as_ref());
            }
        }
        let state = format!("file://{}", self.dir.join("state").display());
        command
            .args(args)
            .current_dir(self.dir.join("program"))
            .env("PULUMI_BACKEND_URL", state)
            .env("PULUMI_CONFIG_PASSPHRASE", "bench")
            .stdin(Stdio::null());
        match self.engine {
            Engine::Cairn => {
                command.env("CAIRN_HOME", self.dir.join("home"));
            }
            Engine::Pulumi | Engine::PulumiNoCheckpoints => {
                // The language hosts live beside `pulumi`.
                let bin = self.binary.parent().unwrap();
                let path = std::env::var_os("PATH").unwrap_or_default();
                let path = std::env::join_paths(
                    std::iter::once(bin.to_owned()).chain(std::env::split_paths(&path)),
                )
                .unwrap();
                command
                    .env("PATH", path)
                    .env("PULUMI_HOME", self.dir.join("home"))
                    .env("PULUMI_SKIP_UPDATE_CHECK", "true")
                    .env("PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION", "true");
                if self.engine == Engine::PulumiNoCheckpoints {
                    command.env("PULUMI_SKIP_CHECKPOINTS", "true");
                }
            }
        }
        command
    }

    /// Runs an untimed command, which must succeed.
    fn ok(&self, args: &[&str]) {
        let out = self.command(args).output().unwrap();
        assert!(
            out.status.success(),
            "{} {args:?}: {}{}",
            self.engine.name(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs `phase` with `n` components in the program, checks its resource summary and
    /// returns its times.
    fn run(&self, phase: &str, n: usize) -> Sample {
        let args: &[&str] = match phase {
            "create" | "update" => &["up", "--yes", "--skip-preview"],
            "preview" => &["preview", "--expect-no-changes"],
            _ => &["destroy", "--yes", "--skip-preview"],
        };
        let log = File::create(&self.log).unwrap();
        let started = Instant::now();
        let child = self
            .command(args)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let (status, engine_cpu, tree_cpu) = reap(child);
        let wall = started.elapsed().as_secs_f64();
        let output = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: String = {
            let lines: Vec<&str> = output.lines().collect();
            lines[lines.len().saturating_sub(30)..].join("\n")
        };
        assert!(
            status == 0,
            "{} {phase} exited with {status}:\n{tail}",
            self.engine.name()
        );
        // Every component and the stack.
        let expected = match phase {
            "create" => Some(format!("{} created", n + 1)),
            "update" => Some(format!("{n} updated")),
            "destroy" => Some(format!("{} deleted", n + 1)),
            _ => None,
        };
        if let Some(expected) = expected {
            assert!(
                output.contains(&expected),
                "{} {phase}: expected `{expected}` in the summary:\n{tail}",
                self.engine.name()
            );
        }
        Sample {
            wall,
            engine_cpu,
            tree_cpu,
        }
    }

    /// Sets the configuration for the next deployment.
    fn configure(&self, n: usize, value: &str) {
        self.ok(&["config", "set", "components", &n.to_string()]);
        self.ok(&["config", "set", "value", value]);
    }
}

/// Waits for `child` to exit and reaps it; returns its exit status (or 128 + the signal), the CPU seconds of
/// the process itself (read from its `/proc/PID/stat` while it is a zombie) and those of the
/// process with its reaped descendants (`wait4`'s rusage).
fn reap(child: std::process::Child) -> (i32, f64, f64) {
    let pid = child.id() as libc::pid_t;
    // SAFETY: plain system calls on our own child, with zeroed out-parameters.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let done = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        );
        assert_eq!(done, 0, "waitid: {}", std::io::Error::last_os_error());
        let engine_cpu = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                // Fields after the command name: state is field 3; utime, stime are 14, 15.
                let after = stat
                    .rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .collect::<Vec<_>>();
                let utime: f64 = after.get(11)?.parse().ok()?;
                let stime: f64 = after.get(12)?.parse().ok()?;
                Some((utime + stime) / libc::sysconf(libc::_SC_CLK_TCK) as f64)
            })
            .unwrap_or(0.0);
        let mut status = 0;
        let mut usage: libc::rusage = std::mem::zeroed();
        let reaped = libc::wait4(pid, &mut status, 0, &mut usage);
        assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let tree_cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
        let status = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        };
        (status, engine_cpu, tree_cpu)
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// `2 cores, Intel(R) Xeon(R) …`: the machine the figures were measured on.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{cores} cores, {model}")
}

fn version(binary: &Path, args: &[&str]) -> String {
    Command::new(binary)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn main() {
    let mut counts = Vec::new();
    let mut rounds = 3;
    let mut langs = vec![Lang::Python, Lang::Nodejs];
    let mut engines = ENGINES.to_vec();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--components" => counts.push(
                args.next()
                    .and_then(|v| v.parse().ok())
                    .expect("--components N"),
            ),
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--rounds K")
            }
            "--lang" => {
                let list = args.next().expect("--lang python,nodejs");
                langs = list
                    .split(',')
                    .map(|l| match l.trim() {
                        "python" => Lang::Python,
                        "nodejs" | "node" => Lang::Nodejs,
                        other => panic!("unknown language {other:?} (python, nodejs)"),
                    })
                    .collect();
            }
            "--engines" => {
                let list = args.next().expect("--engines cairn,pulumi,pulumi-nockpt");
                engines = list
                    .split(',')
                    .map(|e| {
                        let e = e.trim();
                        *ENGINES.iter().find(|x| x.key() == e).unwrap_or_else(|| {
                            panic!("unknown engine {e:?} (cairn, pulumi, pulumi-nockpt)")
                        })
                    })
                    .collect();
            }
            "--bench" => {}
            other => panic!(
                "unknown argument {other:?} (expected --components N, --rounds K, --lang L,…, --engines E,…)"
            ),
        }
    }
    if counts.is_empty() {
        counts.push(2000);
    }
    assert!(rounds > 0, "--rounds must be at least 1");
    let Some(pulumi) = reference() else {
        say!(
            "reference engine not installed (set CAIRN_REFERENCE_PULUMI=/path/to/pulumi): skipping"
        );
        return;
    };
    // A copy, so that a rebuild of the tree while the bench runs does not change the binary.
    let bin = tempfile::tempdir().unwrap();
    let cairn = bin.path().join("cairn");
    std::fs::copy(env!("CARGO_BIN_EXE_cairn"), &cairn).expect("copying the release cairn");

    say!(
        "{} against {} ({}); {rounds} rounds",
        version(&cairn, &["--version"]),
        pulumi.display(),
        version(&pulumi, &["version"]),
    );
    let mut tables = Vec::new();
    for &n in &counts {
        for &lang in &langs {
            let root = tempfile::tempdir().unwrap();
            let projects: Vec<Project> = engines
                .iter()
                .map(|&engine| {
                    let binary = if engine == Engine::Cairn {
                        &cairn
                    } else {
                        &pulumi
                    };
                    Project::new(root.path(), engine, lang, binary)
                })
                .collect();
            // Warm-up: a small program deployed and destroyed by each engine, untimed.
            for project in &projects {
                project.configure(10, "warm");
                project.run("create", 10);
                project.run("destroy", 10);
            }
            let mut samples: HashMap<(Engine, &str), Vec<Sample>> = HashMap::new();
            for round in 0..rounds {
                for project in &projects {
                    project.configure(n, "a");
                }
                for phase in PHASES {
                    if phase == "update" {
                        for project in &projects {
                            project.ok(&["config", "set", "value", "b"]);
                        }
                    }
                    for i in 0..projects.len() {
                        let project = &projects[(round + i) % projects.len()];
                        let sample = project.run(phase, n);
                        say!(
                            "  {} N={n} round {}: {:<22} {:<8} {:>7.2} s",
                            lang.name(),
                            round + 1,
                            project.engine.name(),
                            phase,
                            sample.wall
                        );
                        samples
                            .entry((project.engine, phase))
                            .or_default()
                            .push(sample);
                    }
                }
            }
            let table = table(lang, n, rounds, &samples);
            say!("\n{table}");
            tables.push(table);
        }
    }
    say!("");
    say!("Measured on {}; medians of {rounds} rounds.", machine());
    say!("");
    for table in tables {
        say!("{table}");
    }
}

/// The markdown table of one language and size (`–` for an engine not measured).
fn table(
    lang: Lang,
    n: usize,
    rounds: usize,
    samples: &HashMap<(Engine, &str), Vec<Sample>>,
) -> String {
    let mut out = format!(
        "{} program, {n} components ({} resources), {rounds} rounds:\n\n",
        lang.name(),
        n + 1
    );
    out.push_str(
        "| phase | cairn (s) | pulumi (s) | pulumi, no ckpt (s) | pulumi / cairn | no ckpt / cairn \
         | engine CPU ms/res: cairn / pulumi / no ckpt | tree CPU (s): cairn / pulumi / no ckpt |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    let resources = (n + 1) as f64;
    for phase in PHASES {
        let get = |engine: Engine| samples.get(&(engine, phase)).filter(|s| !s.is_empty());
        let show = |engine: Engine, f: &dyn Fn(&[Sample]) -> String| {
            get(engine).map_or_else(|| "–".to_owned(), |s| f(s))
        };
        let wall = |engine: Engine| {
            show(engine, &|s| {
                format!("{:.2}", median(s.iter().map(|s| s.wall).collect()))
            })
        };
        let ratio = |engine: Engine| match (get(engine), get(Engine::Cairn)) {
            (Some(other), Some(cairn)) => format!(
                "{:.2}×",
                median(
                    other
                        .iter()
                        .zip(cairn)
                        .map(|(p, c)| p.wall / c.wall)
                        .collect()
                )
            ),
            _ => "–".to_owned(),
        };
        let cpu = |engine: Engine| {
            show(engine, &|s| {
                let seconds = median(s.iter().map(|s| s.engine_cpu).collect());
                format!("{:.2}", seconds * 1000.0 / resources)
            })
        };
        let tree = |engine: Engine| {
            show(engine, &|s| {
                format!("{:.1}", median(s.iter().map(|s| s.tree_cpu).collect()))
            })
        };
        out.push_str(&format!(
            "| {phase} | {} | {} | {} | {} | {} | {} / {} / {} | {} / {} / {} |\n",
            wall(Engine::Cairn),
            wall(Engine::Pulumi),
            wall(Engine::PulumiNoCheckpoints),
            ratio(Engine::Pulumi),
            ratio(Engine::PulumiNoCheckpoints),
            cpu(Engine::Cairn),
            cpu(Engine::Pulumi),
            cpu(Engine::PulumiNoCheckpoints),
            tree(Engine::Cairn),
            tree(Engine::Pulumi),
            tree(Engine::PulumiNoCheckpoints),
        ));
    }
    out
}
