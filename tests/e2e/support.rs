//! A sandbox per test: a project directory, a Cairn home (holding the default backend), and a
//! passphrase, with helpers to run `cairn` in it.
//!
//! # The secret scan
//!
//! Every sandbox checks that no secret leaks. It knows the plaintext of every secret set with
//! `config set --secret` through it (as an argument or on standard input) and of every one a
//! test names with [`Sandbox::secret`]. After each `cairn` run through [`Sandbox::run`] (and so
//! `ok`, `fails`, `run_with_stdin`), it fails the test if one of them appears
//! * in the command's stdout or stderr, unless the command asked for it (`--show-secrets`,
//!   `config get`);
//! * in any file of the home (checkpoints, journals, history, locks, workspace settings; not
//!   the plugin store or the compile cache) or of a `--backend file://…` directory the command
//!   named.
//!
//! The files are also scanned for the passphrase. The home is scanned once more when the
//! sandbox is dropped, which covers commands a test ran itself through [`Sandbox::command`].
//! Plaintexts shorter than [`MIN_SECRET_CHARS`] characters are not scanned for: short values
//! occur by chance in IDs, hashes and timestamps.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use tempfile::TempDir;

pub const PASSPHRASE: &str = "correct horse battery staple";

/// Secret plaintexts shorter than this are not scanned for.
pub const MIN_SECRET_CHARS: usize = 5;

pub struct Sandbox {
    _dir: TempDir,
    pub project: PathBuf,
    pub home: PathBuf,
    pub passphrase: Option<String>,
    /// The plaintexts the secret scan looks for.
    secrets: Mutex<BTreeSet<String>>,
    /// `file://` backends commands were pointed at (scanned like the home).
    backends: Mutex<BTreeSet<PathBuf>>,
    /// The backend every command uses (`CAIRN_BACKEND_URL`), when not the home's directory.
    backend_url: Mutex<Option<String>>,
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
            secrets: Mutex::new(BTreeSet::new()),
            backends: Mutex::new(BTreeSet::new()),
            backend_url: Mutex::new(None),
        }
    }

    /// Makes every later command use the backend at `url` (through `CAIRN_BACKEND_URL`).
    pub fn use_backend(&self, url: &str) {
        if let Some(dir) = url.strip_prefix("file://") {
            lock(&self.backends).insert(self.project.join(dir));
        }
        *lock(&self.backend_url) = Some(url.to_owned());
    }

    /// Names a secret plaintext the scan must never find where it does not belong (a value a
    /// program or provider makes secret, say). Short ones are ignored.
    pub fn secret(&self, plaintext: &str) {
        if plaintext.chars().count() >= MIN_SECRET_CHARS {
            lock(&self.secrets).insert(plaintext.to_owned());
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
        self.learn(args, Some(stdin));
        let mut child = self
            .command(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run cairn");
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let output = child.wait_with_output().expect("run cairn");
        self.scan(args, &output);
        output
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cairn"));
        command
            .args(["--cwd", self.project.to_str().unwrap(), "--non-interactive"])
            .args(args)
            .env("CAIRN_HOME", &self.home)
            // Guest toolchains (componentize-py, jco, …) are installed once per checkout, not
            // once per test home.
            .env("CAIRN_TOOLCHAINS", repo().join("target/toolchains"))
            .env_remove("CAIRN_BACKEND_URL")
            .env_remove("PULUMI_BACKEND_URL")
            .env_remove("CAIRN_STACK")
            .env_remove("PULUMI_STACK")
            .env_remove("PULUMI_HOME")
            .env_remove("CAIRN_CONFIG_PASSPHRASE_FILE")
            .env_remove("PULUMI_CONFIG_PASSPHRASE")
            .env_remove("PULUMI_CONFIG_PASSPHRASE_FILE");
        // The libpq variables would change which server a postgres:// backend reaches.
        for (key, _) in std::env::vars_os() {
            if key.to_str().is_some_and(|k| k.starts_with("PG")) {
                command.env_remove(key);
            }
        }
        if let Some(url) = lock(&self.backend_url).as_ref() {
            command.env("CAIRN_BACKEND_URL", url);
        }
        match &self.passphrase {
            Some(p) => command.env("CAIRN_CONFIG_PASSPHRASE", p),
            None => command.env_remove("CAIRN_CONFIG_PASSPHRASE"),
        };
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.learn(args, None);
        let output = self.command(args).output().expect("run cairn");
        self.scan(args, &output);
        output
    }

    /// Like [`Sandbox::run`], but a command still running after `limit` is killed; `None`
    /// then (the secret scan still runs on the files).
    pub fn run_within(&self, args: &[&str], limit: std::time::Duration) -> Option<Output> {
        self.learn(args, None);
        let mut child = self
            .command(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run cairn");
        // Read both pipes while waiting: a full pipe would stall the command.
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let deadline = std::time::Instant::now() + limit;
        let status = loop {
            match child.try_wait().expect("waiting for cairn") {
                Some(status) => break Some(status),
                None if std::time::Instant::now() >= deadline => {
                    // Cairn's plugins and programs die with it.
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                None => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        };
        let output = Output {
            status: status.unwrap_or_else(|| {
                std::os::unix::process::ExitStatusExt::from_raw(9 /* killed */)
            }),
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        };
        self.scan(args, &output);
        status.map(|_| output)
    }

    /// Notes what a command is about to reveal to the scan: the value of a
    /// `config set --secret` (its argument, else `stdin` without its final line break) and a
    /// `--backend file://…` directory.
    fn learn(&self, args: &[&str], stdin: Option<&[u8]>) {
        let (positionals, flags) = split_args(args);
        for (flag, value) in &flags {
            if *flag == "--backend"
                && let Some(dir) = value.and_then(|url| url.strip_prefix("file://"))
            {
                lock(&self.backends).insert(self.project.join(dir));
            }
        }
        let secret = flags.iter().any(|(flag, _)| *flag == "--secret");
        if secret && positionals.starts_with(&["config", "set"]) {
            match (positionals.get(3), stdin) {
                (Some(value), _) => self.secret(value),
                (None, Some(bytes)) => {
                    let text = String::from_utf8_lossy(bytes);
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    self.secret(text.strip_suffix('\r').unwrap_or(text));
                }
                (None, None) => {}
            }
        }
    }

    /// The secret scan after a command: its output (unless it asked for secrets) and the home.
    fn scan(&self, args: &[&str], output: &Output) {
        let (positionals, flags) = split_args(args);
        let reveals = flags.iter().any(|(flag, _)| *flag == "--show-secrets")
            || positionals.starts_with(&["config", "get"]);
        let secrets = lock(&self.secrets).clone();
        let mut leaks = Vec::new();
        if !reveals {
            for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
                leaks.extend(find_secrets(
                    &secrets,
                    &format!("the {stream} of cairn {args:?}"),
                    &String::from_utf8_lossy(bytes),
                ));
            }
        }
        leaks.extend(self.scan_files(&secrets));
        if !leaks.is_empty() {
            panic!(
                "secret scan after cairn {args:?}: {} leak(s):\n{}",
                leaks.len(),
                leaks.join("\n")
            );
        }
    }

    /// Leaks in the home (but its plugin store and compile cache) and the `file://` backends
    /// commands named.
    fn scan_files(&self, secrets: &BTreeSet<String>) -> Vec<String> {
        let mut secrets = secrets.clone();
        if let Some(passphrase) = &self.passphrase {
            secrets.insert(passphrase.clone());
        }
        let mut roots = vec![self.home.clone()];
        roots.extend(lock(&self.backends).iter().cloned());
        let mut leaks = Vec::new();
        for root in roots {
            let mut stack = vec![root.clone()];
            while let Some(dir) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let path = entry.path();
                    let Ok(meta) = std::fs::symlink_metadata(&path) else {
                        continue;
                    };
                    if meta.is_dir() {
                        let skipped = dir == self.home
                            && matches!(
                                path.file_name().and_then(|n| n.to_str()),
                                Some("plugins" | "cache")
                            );
                        if !skipped {
                            stack.push(path);
                        }
                    } else if meta.is_file()
                        // The login file holds the backend URL as given, password included,
                        // as ~/.pgpass does: it is the one place a credential belongs.
                        && !(dir == self.home
                            && path.file_name().is_some_and(|n| n == "credentials.json"))
                        && let Ok(bytes) = std::fs::read(&path)
                    {
                        leaks.extend(find_secrets(
                            &secrets,
                            &path.display().to_string(),
                            &String::from_utf8_lossy(&bytes),
                        ));
                    }
                }
            }
        }
        leaks
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

impl Drop for Sandbox {
    /// The home once more, after everything the test ran (including through `command`).
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let secrets = lock(&self.secrets).clone();
        let leaks = self.scan_files(&secrets);
        if !leaks.is_empty() {
            panic!(
                "secret scan at the end of the test: {} leak(s):\n{}",
                leaks.len(),
                leaks.join("\n")
            );
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A command line's positional arguments and its flags with their values (the global
/// `--cwd`, `--stack`/`-s` and `--backend` take one; `--flag=value` is split).
fn split_args<'a>(args: &[&'a str]) -> (Vec<&'a str>, Vec<(&'a str, Option<&'a str>)>) {
    let mut positionals = Vec::new();
    let mut flags = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        if let Some((flag, value)) = arg.split_once('=').filter(|_| arg.starts_with("--")) {
            flags.push((flag, Some(value)));
        } else if matches!(arg, "--cwd" | "--stack" | "-s" | "--backend") {
            flags.push((arg, args.get(i + 1).copied()));
            i += 1;
        } else if arg.starts_with('-') && arg.len() > 1 {
            flags.push((arg, None));
        } else {
            positionals.push(arg);
        }
        i += 1;
    }
    (positionals, flags)
}

/// One line per secret whose plaintext is in `text` (`place` names it), quoting where. A
/// plaintext is looked for as it is and JSON-escaped (as state files hold it).
pub fn find_secrets(secrets: &BTreeSet<String>, place: &str, text: &str) -> Vec<String> {
    let mut leaks = Vec::new();
    for secret in secrets {
        let json = serde_json::to_string(secret).unwrap_or_default();
        let escaped = json
            .get(1..json.len().saturating_sub(1))
            .unwrap_or_default();
        let found = [secret.as_str(), escaped]
            .into_iter()
            .filter(|s| !s.is_empty())
            .find_map(|s| text.find(s).map(|at| (at, s.len())));
        if let Some((at, len)) = found {
            let start = text.floor_char_boundary(at.saturating_sub(100));
            let end = text.ceil_char_boundary((at + len + 100).min(text.len()));
            leaks.push(format!(
                "  {secret:?} in {place} (at byte {at}): …{:?}…",
                &text[start..end]
            ));
        }
    }
    leaks
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
            let wanted = PULUMI_PYTHON.join(" ");
            // A venv made for other pins (an older checkout) gets what is missing.
            if std::fs::read_to_string(&ready).ok().as_deref() != Some(wanted.as_str()) {
                if !python.exists() {
                    let status = Command::new("python3")
                        .args(["-m", "venv"])
                        .arg(&venv)
                        .status()
                        .expect("running python3 -m venv");
                    assert!(status.success(), "creating {}", venv.display());
                }
                let out = Command::new(&python)
                    .args(["-m", "pip", "install", "--quiet"])
                    .args(PULUMI_PYTHON)
                    .output()
                    .expect("running pip");
                assert!(
                    out.status.success(),
                    "pip install {wanted} failed:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                std::fs::write(&ready, &wanted).unwrap();
            }
            python
        })
        .clone()
}

/// The Pulumi Python SDK the bridge is tested against, the policy SDK the policy-pack tests run
/// (`pulumi-policy` pins protobuf 5.29, which pulumi 3.272 accepts; it adds ~4 s to a fresh
/// venv), and the published `random` and `postgresql` packages' SDKs, whose programs run on the
/// wasm `random` and `postgresql` providers (and the `postgresql` ones on the real plugin, see
/// postgresql_provider.rs).
pub const PULUMI_PYTHON: [&str; 5] = [
    "pulumi==3.272.0",
    "pulumi-policy==1.21.0",
    "pulumi-random==4.21.4",
    "pulumi-postgresql==3.18.2",
    // Builds Python providers into components (guest-sdk/python).
    "componentize-py==0.25.1",
];

/// The Node.js policy SDK the policy-pack tests run and the published `postgresql` package's
/// SDK (postgresql_provider.rs), installed beside `@pulumi/pulumi` in `target/nodeenv` (one
/// `npm install`, ~3 s).
pub const PULUMI_EXTRA_NODE: [&str; 2] = ["@pulumi/policy@1.21.0", "@pulumi/postgresql@3.18.1"];

/// `node_modules` with the Pulumi Node.js SDK (and `@pulumi/random`) from npm
/// (`target/nodeenv`), installed on first use from `examples/programs/nodejs/package.json`,
/// with [`PULUMI_EXTRA_NODE`].
pub fn node_modules() -> PathBuf {
    static READY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    READY
        .get_or_init(|| {
            let dir = repo().join("target/nodeenv");
            let modules = dir.join("node_modules");
            let ready = dir.join(".pulumi-installed");
            let package =
                std::fs::read_to_string(repo().join("examples/programs/nodejs/package.json"))
                    .unwrap();
            // A node_modules made for other pins (an older checkout) is brought up to date.
            let wanted = format!("{package}{}", PULUMI_EXTRA_NODE.join(" "));
            if std::fs::read_to_string(&ready).ok().as_deref() != Some(wanted.as_str()) {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join("package.json"), &package).unwrap();
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
                let out = Command::new("npm")
                    .args([
                        "install",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                        "--no-save",
                    ])
                    .args(PULUMI_EXTRA_NODE)
                    .current_dir(&dir)
                    .output()
                    .expect("running npm install");
                assert!(
                    out.status.success(),
                    "npm install {} failed:\n{}",
                    PULUMI_EXTRA_NODE.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                );
                std::fs::write(&ready, &wanted).unwrap();
            }
            modules
        })
        .clone()
}

/// Whether `version` is one exact release (`3.276.0`, `3.277.0-alpha.1`), not a range or a tag.
pub fn exact_version(version: &str) -> bool {
    let (core, rest) = version
        .split_once(['-', '+'])
        .map_or((version, ""), |(c, r)| (c, r));
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

/// `node_modules` with `@pulumi/pulumi` at exactly `version` (`target/nodeenv-<version>`), for
/// a case of the Pulumi suite that needs a newer SDK than the shared [`node_modules`]: installed
/// once per version (per test binary, and kept across runs), like the shared one. Releases after
/// 3.248 declare `engines: node >= 22`; npm only warns about that (EBADENGINE), and the
/// install goes ahead even where npm's `engine-strict` is configured.
pub fn node_sdk_modules(version: &str) -> PathBuf {
    type Ready = std::sync::Arc<std::sync::OnceLock<PathBuf>>;
    static READY: std::sync::Mutex<Vec<(String, Ready)>> = std::sync::Mutex::new(Vec::new());
    assert!(
        exact_version(version),
        "a Node.js SDK version is exact (`3.276.0`), not {version:?}"
    );
    // One lock per version, taken outside the list's: versions install side by side.
    let once = {
        let mut ready = READY.lock().unwrap_or_else(|e| e.into_inner());
        match ready.iter().find(|(v, _)| v == version) {
            Some((_, once)) => once.clone(),
            None => {
                let once = Ready::default();
                ready.push((version.to_owned(), once.clone()));
                once
            }
        }
    };
    once.get_or_init(|| {
        let dir = repo().join(format!("target/nodeenv-{version}"));
        let modules = dir.join("node_modules");
        let ready = dir.join(".pulumi-installed");
        // Pinned exactly, as the shared package.json pins its SDK.
        let package = serde_json::to_string_pretty(&serde_json::json!({
            "name": "cairn-nodeenv",
            "version": "1.0.0",
            "private": true,
            "dependencies": {"@pulumi/pulumi": version},
        }))
        .unwrap();
        if std::fs::read_to_string(&ready).ok().as_deref() != Some(package.as_str()) {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("package.json"), &package).unwrap();
            let out = Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--engine-strict=false",
                ])
                .current_dir(&dir)
                .output()
                .expect("running npm install");
            assert!(
                out.status.success(),
                "npm install @pulumi/pulumi@{version} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::write(&ready, &package).unwrap();
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

/// The engine events of a command's `--json` output, one JSON object per line; a preview's
/// digest printed before them (`up --yes --json` previews first, as Pulumi's does) is parsed
/// and left out. Panics on anything that is not JSON.
pub fn json_events(text: &str) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<serde_json::Value>()
        .map(|v| v.unwrap_or_else(|e| panic!("{e}: {text}")))
        .filter(|v| v.get("sequence").is_some())
        .collect()
}

/// `(op, resource name)` of every step that did not fail, in Pulumi's `--json` output: the
/// steps of a preview's digest (one document), or, for a deployment's engine events (one per
/// line), every step's `resourcePreEvent` but those a `resOpFailedEvent` ended.
pub fn finished_steps(json: &str) -> Vec<(String, String)> {
    let name = |urn: &serde_json::Value| {
        let urn = urn.as_str().unwrap_or_default();
        urn.rsplit("::").next().unwrap_or_default().to_owned()
    };
    let op = |step: &serde_json::Value| step["op"].as_str().unwrap_or_default().to_owned();
    // `up --yes --json` prints the preview's digest, then the update's events (as Pulumi's
    // does): the events, when there are any, tell what was done.
    let values: Vec<serde_json::Value> = serde_json::Deserializer::from_str(json)
        .into_iter::<serde_json::Value>()
        .filter_map(Result::ok)
        .collect();
    let events: Vec<&serde_json::Value> = values
        .iter()
        .filter(|v| v.get("sequence").is_some())
        .collect();
    if events.is_empty() {
        return values
            .iter()
            .filter_map(|v| v["steps"].as_array())
            .flatten()
            .map(|s| (op(s), name(&s["urn"])))
            .collect();
    }
    let failed: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| e.get("resOpFailedEvent"))
        .map(|e| (op(&e["metadata"]), name(&e["metadata"]["urn"])))
        .collect();
    events
        .iter()
        .filter_map(|e| e.get("resourcePreEvent"))
        .map(|e| (op(&e["metadata"]), name(&e["metadata"]["urn"])))
        .filter(|step| !failed.contains(step))
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

/// The secret scan itself: it learns secrets from `config set --secret`, spares commands that
/// ask for them, and fails on a plaintext it finds.
mod secret_scan {
    use super::*;

    #[test]
    fn command_lines_split_into_positionals_and_flags() {
        let (positionals, flags) = split_args(&[
            "--stack", "dev", "config", "set", "--secret", "--path=x", "key", "-s", "prod", "value",
        ]);
        assert_eq!(positionals, ["config", "set", "key", "value"]);
        assert_eq!(
            flags,
            [
                ("--stack", Some("dev")),
                ("--secret", None),
                ("--path", Some("x")),
                ("-s", Some("prod")),
            ]
        );
    }

    #[test]
    fn secrets_are_learned_and_commands_that_ask_for_them_are_spared() {
        let sandbox = Sandbox::new("scan");
        sandbox.ok(&["stack", "init", "dev"]);
        sandbox.ok(&["config", "set", "--secret", "token", "learned-secret"]);
        sandbox.run_with_stdin(&["config", "set", "--secret", "cert"], b"from-stdin\n");
        sandbox.ok(&["config", "set", "--secret", "pin", "1234"]);
        assert_eq!(
            lock(&sandbox.secrets).iter().collect::<Vec<_>>(),
            ["from-stdin", "learned-secret"],
            "short values are not scanned for"
        );
        // Asked for, so not a leak.
        assert_eq!(sandbox.ok(&["config", "get", "token"]), "learned-secret\n");
        assert_contains(
            &sandbox.ok(&["config", "--show-secrets"]),
            &["learned-secret"],
        );
    }

    #[test]
    #[should_panic(expected = "\"learned-secret\" in the stdout of cairn")]
    fn a_secret_in_output_fails_the_test() {
        let sandbox = Sandbox::new("scan");
        sandbox.ok(&["stack", "init", "dev"]);
        sandbox.ok(&["config", "set", "name", "learned-secret"]);
        sandbox.secret("learned-secret");
        // A plain value that happens to be a secret's plaintext: found in the listing.
        sandbox.ok(&["config"]);
    }

    #[test]
    #[should_panic(expected = "secret scan at the end of the test")]
    fn a_secret_in_the_home_fails_the_test() {
        let sandbox = Sandbox::new("scan");
        sandbox.secret("stored-in-plain-text");
        let dir = sandbox.home.join("stacks/scan");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("dev.json"), r#"{"value": "stored-in-plain-text"}"#).unwrap();
    }
}

/// A stack `dev` of project `name` running the wasm program `main` (a component or a cargo
/// package), with `providers` installed.
pub fn program_stack(name: &str, main: &Path, providers: &[&Path]) -> Sandbox {
    let sandbox = Sandbox::new(name);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: {name}\nruntime: wasm\nmain: {}\n",
            main.to_str().unwrap()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    for provider in providers {
        sandbox.ok(&["plugin", "install", provider.to_str().unwrap()]);
    }
    sandbox
}

/// A stack `dev` of project `prog` running `program-probe` in `mode` against the `probe`
/// provider (tests/guests).
pub fn probe_stack(mode: &str) -> Sandbox {
    let sandbox = program_stack("prog", &test_wasm("program-probe"), &[&test_wasm("probe")]);
    sandbox.ok(&["config", "set", "mode", mode]);
    sandbox
}

/// Grants the `file` provider the project's `out` directory as `/work`.
pub fn grant_out_dir(sandbox: &Sandbox) {
    std::fs::create_dir_all(sandbox.project.join("out")).unwrap();
    for (path, value) in [
        ("[\"cairn:grants\"].file.directories[0].host", "./out"),
        ("[\"cairn:grants\"].file.directories[0].guest", "/work"),
        ("[\"cairn:grants\"].file.directories[0].write", "true"),
    ] {
        sandbox.ok(&["config", "set", "--path", path, value]);
    }
}

/// The quick start as built (a `site` component with children, random resources, files
/// written into the granted `out` directory), in a stack `dev`.
pub fn quickstart_stack() -> Sandbox {
    let sandbox = program_stack(
        "quickstart",
        &example_wasm("quickstart"),
        &[&example_wasm("random"), &example_wasm("file")],
    );
    grant_out_dir(&sandbox);
    sandbox
}
