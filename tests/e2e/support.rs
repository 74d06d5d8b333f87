//! A sandbox per test: a project directory, a Cairn home (holding the default backend), and a
//! passphrase, with helpers to run `cairn` in it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

pub const PASSPHRASE: &str = "correct horse battery staple";

pub struct Sandbox {
    _dir: TempDir,
    pub project: PathBuf,
    pub home: PathBuf,
    pub passphrase: Option<String>,
}

impl Sandbox {
    /// A sandbox with a `Pulumi.yaml` for project `name`.
    pub fn new(name: &str) -> Sandbox {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("project");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("Pulumi.yaml"),
            format!("name: {name}\nruntime: wasm\ndescription: an e2e test project\n"),
        )
        .unwrap();
        Sandbox {
            _dir: dir,
            project,
            home,
            passphrase: Some(PASSPHRASE.to_owned()),
        }
    }

    /// The temporary directory holding the project and the home (and nothing else unless a
    /// test puts it there).
    pub fn root(&self) -> &Path {
        self._dir.path()
    }

    /// Runs `cairn args` with `stdin` as its standard input.
    pub fn run_with_stdin(&self, args: &[&str], stdin: &[u8]) -> Output {
        use std::io::Write;
        let mut child = self
            .command(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run cairn");
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().expect("run cairn")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
        command
            .args(["--cwd", self.project.to_str().unwrap(), "--non-interactive"])
            .args(args)
            .env("CAIRN_HOME", &self.home)
            .env_remove("CAIRN_BACKEND_URL")
            .env_remove("CAIRN_CONFIG_PASSPHRASE_FILE")
            .env_remove("PULUMI_CONFIG_PASSPHRASE")
            .env_remove("PULUMI_CONFIG_PASSPHRASE_FILE");
        match &self.passphrase {
            Some(p) => command.env("CAIRN_CONFIG_PASSPHRASE", p),
            None => command.env_remove("CAIRN_CONFIG_PASSPHRASE"),
        };
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run cairn")
    }

    /// Runs `cairn` and returns its stdout, failing the test (with stderr) if it fails.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "cairn {args:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Runs `cairn`, expecting failure; returns its stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            !output.status.success(),
            "cairn {args:?} unexpectedly succeeded:\n{}",
            String::from_utf8_lossy(&output.stdout)
        );
        String::from_utf8(output.stderr).unwrap()
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.project.join(relative))
            .unwrap_or_else(|e| panic!("reading {relative}: {e}"))
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.project.join(relative);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The stored checkpoint of a stack in the default backend.
    pub fn state_file(&self, project: &str, stack: &str) -> PathBuf {
        self.home
            .join("stacks")
            .join(project)
            .join(format!("{stack}.json"))
    }
}

/// Asserts `haystack` contains every fragment.
pub fn assert_contains(haystack: &str, fragments: &[&str]) {
    for fragment in fragments {
        assert!(
            haystack.contains(fragment),
            "expected {fragment:?} in:\n{haystack}"
        );
    }
}

pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// The example components (providers `random`, `file`; programs `quickstart`, `lifecycle`),
/// built once per test binary from the examples guest workspace.
pub fn example_wasm(name: &str) -> PathBuf {
    guest_wasm("examples/Cargo.toml", name)
}

/// The test guests: `program-probe` (tests/guests) and the `probe` provider
/// (host/wasm/tests/guest).
pub fn test_wasm(name: &str) -> PathBuf {
    let manifest = if name == "probe" {
        "host/wasm/tests/guest/Cargo.toml"
    } else {
        "tests/guests/Cargo.toml"
    };
    guest_wasm(manifest, name)
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where guests are built (shared with the other crates' tests).
pub fn guest_target() -> PathBuf {
    repo().join("target/guests")
}

/// Builds the guest workspace `manifest` (once per test binary) and returns component `name`.
fn guest_wasm(manifest: &str, name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !built.iter().any(|m| m == manifest) {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--manifest-path",
        ])
        .arg(repo().join(manifest));
        // Cleaned first: an exported CARGO_TARGET_DIR must not win over the guests' own.
        clean_cargo_env(&mut cmd);
        cmd.env("CARGO_TARGET_DIR", guest_target());
        let out = cmd.output().expect("running cargo to build the guests");
        assert!(
            out.status.success(),
            "building {manifest} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        built.push(manifest.to_owned());
    }
    guest_target()
        .join("wasm32-wasip2/release")
        .join(format!("{}.wasm", name.replace('-', "_")))
}

/// The outer `cargo test`'s per-crate variables must not leak into a nested cargo build.
pub fn clean_cargo_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if (key.starts_with("CARGO_") && key != "CARGO_HOME") || key == "RUSTFLAGS" {
            cmd.env_remove(key.as_ref());
        }
    }
}

/// A Python with the Pulumi SDK from PyPI (`target/pyenv`), created on first use.
pub fn python() -> PathBuf {
    static READY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    READY
        .get_or_init(|| {
            let venv = repo().join("target/pyenv");
            let python = venv.join("bin/python");
            let ready = venv.join(".pulumi-installed");
            if !ready.exists() {
                let status = Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(&venv)
                    .status()
                    .expect("running python3 -m venv");
                assert!(status.success(), "creating {}", venv.display());
                let out = Command::new(&python)
                    .args(["-m", "pip", "install", "--quiet", PULUMI_PYTHON])
                    .output()
                    .expect("running pip");
                assert!(
                    out.status.success(),
                    "pip install {PULUMI_PYTHON} failed:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                std::fs::write(&ready, PULUMI_PYTHON).unwrap();
            }
            python
        })
        .clone()
}

/// The Pulumi Python SDK the bridge is tested against.
pub const PULUMI_PYTHON: &str = "pulumi==3.272.0";

/// `node_modules` with the Pulumi Node.js SDK from npm (`target/nodeenv`), installed on first
/// use from `examples/programs/nodejs/package.json`.
pub fn node_modules() -> PathBuf {
    static READY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    READY
        .get_or_init(|| {
            let dir = repo().join("target/nodeenv");
            let modules = dir.join("node_modules");
            let ready = dir.join(".pulumi-installed");
            if !ready.exists() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::copy(
                    repo().join("examples/programs/nodejs/package.json"),
                    dir.join("package.json"),
                )
                .unwrap();
                let out = Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir)
                    .output()
                    .expect("running npm install");
                assert!(
                    out.status.success(),
                    "npm install failed:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                std::fs::write(&ready, "ok").unwrap();
            }
            modules
        })
        .clone()
}

/// The stack's outputs, as `cairn stack output --json [--show-secrets]` prints them.
pub fn outputs(sandbox: &Sandbox, show_secrets: bool) -> serde_json::Value {
    let mut args = vec!["stack", "output", "--json"];
    if show_secrets {
        args.push("--show-secrets");
    }
    serde_json::from_str(&sandbox.ok(&args)).unwrap()
}

/// `(op, resource name)` of every finished step in a `--json` event stream.
pub fn finished_steps(json: &str) -> Vec<(String, String)> {
    json.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "stepFinished")
        .map(|e| {
            let urn = e["urn"].as_str().unwrap_or_default();
            (
                e["op"].as_str().unwrap_or_default().to_owned(),
                urn.rsplit("::").next().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The ops of the finished steps of resource `name`.
pub fn ops_of(steps: &[(String, String)], name: &str) -> Vec<String> {
    steps
        .iter()
        .filter(|(_, n)| n == name)
        .map(|(op, _)| op.clone())
        .collect()
}

/// Fails (naming `what` and quoting the context) if `bytes`, a command's stdout or stderr,
/// hold a character a terminal would act on: C0 controls but newline and tab, DEL, C1
/// controls, or a bidi formatting character. Defined here independently of Cairn's own list.
pub fn assert_no_raw_controls(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let bad = |c: char| {
        (c < ' ' && c != '\n' && c != '\t')
            || ('\u{7f}'..='\u{9f}').contains(&c)
            || matches!(
                c,
                '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            )
    };
    if let Some((at, c)) = text.char_indices().find(|(_, c)| bad(*c)) {
        let start = text.floor_char_boundary(at.saturating_sub(80));
        let end = text.ceil_char_boundary((at + 80).min(text.len()));
        panic!(
            "{what}: raw control character {c:?} at byte {at}, in:\n{:?}",
            &text[start..end]
        );
    }
}

/// Runs `cairn args` and checks its stdout and stderr with [`assert_no_raw_controls`].
pub fn run_clean(sandbox: &Sandbox, args: &[&str]) -> Output {
    let output = sandbox.run(args);
    assert_no_raw_controls(&format!("stdout of cairn {args:?}"), &output.stdout);
    assert_no_raw_controls(&format!("stderr of cairn {args:?}"), &output.stderr);
    output
}

/// Every file under `dir` (recursively, symbolic links not followed) with its contents, and
/// every directory (with no contents): compared before and after a command, it shows that the
/// command touched nothing.
pub fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut all = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                all.insert(path.clone(), None);
                stack.push(path);
            } else {
                all.insert(path.clone(), Some(std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    all
}
