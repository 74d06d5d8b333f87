//! The crash harness: deployments of a few hundred resources whose provider has real side
//! effects (one file per resource; a create refuses to overwrite a file, so a duplicate create
//! fails loudly), stopped at many points of create, update and destroy — kill -9 of cairn, of
//! the program, of the provider; SIGINT to the process group once (Ctrl-C) and twice; SIGTERM
//! to cairn alone. After every stop it asserts that the state passes the integrity check
//! (Cairn's, and an independent one here), that nothing completed is missing from it (every
//! file is recorded or is the subject of a pending create; every recorded file exists with the
//! recorded content unless an operation on it is pending), that pending operations are
//! reported and `up` refuses to run over interrupted creates, and that resolving them
//! (`cairn refresh` importing the interrupted creates whose file exists and clearing the rest)
//! leaves the state and the files equal; at the end of each phase the next command converges
//! with no duplicate and no leak. A graceful stop (SIGINT or SIGTERM once, or the program
//! dying) leaves nothing pending, and no process of a stopped run outlives its cairn.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::pgserver::{PgDatabase, PgServer};
use crate::support::{Sandbox, assert_contains, example_wasm, python, repo, test_wasm};

/// How long a run may take to reach its kill point, or to finish after its program or
/// provider was killed.
const RUN_DEADLINE: Duration = Duration::from_secs(120);

/// How long the processes of a run may outlive its cairn.
const SURVIVAL_DEADLINE: Duration = Duration::from_secs(5);

/// How a run is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// SIGKILL to `cairn`.
    KillCairn,
    /// SIGKILL to the Python program cairn runs.
    KillProgram,
    /// SIGKILL to the `python -m pulumi.dynamic` provider process cairn started.
    KillProvider,
    /// Ctrl-C at a terminal: SIGINT to cairn's process group. Cairn starts nothing new, lets
    /// what is under way finish, records it and exits non-zero.
    Interrupt,
    /// SIGINT twice to cairn's process group: the second aborts at once.
    InterruptTwice,
    /// SIGTERM to cairn alone (a supervisor stopping it): as graceful as SIGINT.
    Terminate,
}

impl Stop {
    /// Whether cairn is expected to finish what is under way and leave nothing pending.
    fn graceful(self) -> bool {
        matches!(self, Stop::KillProgram | Stop::Interrupt | Stop::Terminate)
    }
}

/// The files in `dir`: name → content (a file being written may be short).
fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            // A file deleted between the listing and the read is simply gone.
            let content = std::fs::read(entry.path()).ok()?;
            Some((name, String::from_utf8_lossy(&content).into_owned()))
        })
        .collect()
}

/// How many files `dir` holds (cheaper than [`files`], for polling).
fn file_count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(Iterator::count).unwrap_or(0)
}

/// The content both programs give file `name` in generation `generation`.
fn content(generation: u32, name: &str) -> String {
    format!("generation {generation} of {name}\n")
}

/// The file names of `count` resources: `f000.txt`, ….
fn names(count: usize) -> BTreeSet<String> {
    (0..count).map(|i| format!("f{i:03}.txt")).collect()
}

/// Processes of the sandbox below `root` (their working directory or command line is in it),
/// as `(pid, command line)`; the test process and zombies are left out.
fn sandbox_processes(root: &Path) -> Vec<(u32, String)> {
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let roots = [&canonical, root].map(|r| r.to_string_lossy().into_owned());
    let root = canonical;
    let me = std::process::id();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd")).ok();
        let inside = cwd.is_some_and(|cwd| cwd.starts_with(&root))
            || roots.iter().any(|r| cmdline.contains(r.as_str()));
        if inside && !cmdline.is_empty() {
            found.push((pid, cmdline.trim().to_owned()));
        }
    }
    found
}

/// Whether process `pid` runs the Python program (its environment names `CAIRN_MAIN`).
fn is_program(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
        env.split(|b| *b == 0)
            .any(|v| v.starts_with(b"CAIRN_MAIN="))
    })
}

/// Polls `done` every millisecond until it holds or `deadline` passes; returns whether it held.
fn poll(deadline: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The stack's state as `cairn stack export` shows it (the journal of an interrupted
/// deployment replayed).
struct State {
    resources: Vec<Value>,
    /// `(kind, resource)` of each pending operation.
    pending: Vec<(String, Value)>,
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or_default()
}

impl State {
    fn of(export: &Value) -> State {
        let list = |key: &str| {
            export["deployment"][key]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        State {
            resources: list("resources"),
            pending: list("pending_operations")
                .into_iter()
                .map(|op| (str_of(&op, "type").to_owned(), op["resource"].clone()))
                .collect(),
        }
    }

    /// The live resources of type `file_type`.
    fn files<'a>(&'a self, file_type: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.resources
            .iter()
            .filter(move |r| str_of(r, "type") == file_type && r["delete"] != true)
    }

    /// The pending operations of kind `kind` (`creating`, `updating`, `deleting`, …).
    fn pending_of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.pending
            .iter()
            .filter(move |(k, _)| k == kind)
            .map(|(_, r)| r)
    }

    /// An integrity check independent of Cairn's: live URNs are unique, and every parent,
    /// provider and dependency names a resource listed before it.
    fn check_integrity(&self, context: &str) {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut providers: BTreeSet<String> = BTreeSet::new();
        let mut problems = Vec::new();
        for r in &self.resources {
            let urn = str_of(r, "urn");
            if let Some(parent) = r["parent"].as_str()
                && !seen.contains(parent)
            {
                problems.push(format!("{urn}: parent {parent} is not listed before it"));
            }
            if let Some(provider) = r["provider"].as_str()
                && !providers.contains(provider)
            {
                problems.push(format!(
                    "{urn}: provider {provider} is not listed before it"
                ));
            }
            for dependency in r["dependencies"].as_array().into_iter().flatten() {
                let dependency = dependency.as_str().unwrap_or_default();
                if !seen.contains(dependency) {
                    problems.push(format!(
                        "{urn}: dependency {dependency} is not listed before it"
                    ));
                }
            }
            if r["delete"] != true && !seen.insert(urn) {
                problems.push(format!("{urn} is listed twice"));
            }
            if str_of(r, "type").starts_with("pulumi:providers:") {
                providers.insert(format!("{urn}::{}", str_of(r, "id")));
            }
        }
        assert!(
            problems.is_empty(),
            "{context}: the state is inconsistent:\n{}",
            problems.join("\n")
        );
    }
}

/// One deployment under test: a stack whose program declares `count` files in `dir`.
struct Harness {
    sandbox: Sandbox,
    dir: PathBuf,
    count: usize,
    /// The type of the resources that are files.
    file_type: &'static str,
    /// `--parallel` of `up` and `destroy`.
    parallel: &'static str,
    runs: usize,
    /// Expectations of graceful stops and of processes dying with cairn that failed; asserted
    /// at the end, so the invariants are checked at every stop whatever they find.
    findings: Vec<String>,
    /// Pending operations resolved so far, by kind.
    resolved: BTreeMap<String, usize>,
}

impl Harness {
    /// The wasm program `crash-files` declaring `count` files of the example `file` provider,
    /// which the stack grants the project's `out` directory.
    fn wasm(count: usize) -> Harness {
        Harness::wasm_on(count, None)
    }

    /// [`Harness::wasm`] with the state in the backend at `backend` (its password, if any,
    /// is a secret the scan looks for).
    fn wasm_on(count: usize, backend: Option<&PgDatabase>) -> Harness {
        let sandbox = Sandbox::new("crash");
        if let Some(db) = backend {
            sandbox.use_backend(&db.url);
            sandbox.secret(&db.password);
        }
        sandbox.write(
            "Pulumi.yaml",
            &format!(
                "name: crash\nruntime: wasm\nmain: {}\n",
                test_wasm("crash-files").display()
            ),
        );
        sandbox.ok(&["stack", "init", "dev"]);
        sandbox.ok(&["plugin", "install", example_wasm("file").to_str().unwrap()]);
        let dir = sandbox.project.join("out");
        std::fs::create_dir_all(&dir).unwrap();
        for (path, value) in [
            ("[\"cairn:grants\"].file.directories[0].host", "./out"),
            ("[\"cairn:grants\"].file.directories[0].guest", "/work"),
            ("[\"cairn:grants\"].file.directories[0].write", "true"),
        ] {
            sandbox.ok(&["config", "set", "--path", path, value]);
        }
        sandbox.ok(&["config", "set", "count", &count.to_string()]);
        Harness::new(sandbox, dir, count, "file:index:File", "32")
    }

    /// The Python program of `tests/data/crash/python` declaring `count` files made by its
    /// dynamic provider, each create, update and delete taking `delay_ms` before and after
    /// it acts.
    fn python(count: usize, delay_ms: u32) -> Harness {
        let python = python();
        let venv = python.parent().unwrap().parent().unwrap();
        let sandbox = Sandbox::new("crashpy");
        std::fs::copy(
            repo().join("tests/data/crash/python/__main__.py"),
            sandbox.project.join("__main__.py"),
        )
        .unwrap();
        sandbox.write(
            "Pulumi.yaml",
            &format!(
                "name: crashpy\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
                venv.display()
            ),
        );
        sandbox.ok(&["stack", "init", "dev"]);
        let dir = sandbox.project.join("out");
        std::fs::create_dir_all(&dir).unwrap();
        sandbox.ok(&["config", "set", "dir", dir.to_str().unwrap()]);
        sandbox.ok(&["config", "set", "count", &count.to_string()]);
        sandbox.ok(&["config", "set", "delayMs", &delay_ms.to_string()]);
        Harness::new(sandbox, dir, count, "pulumi-python:dynamic:Resource", "8")
    }

    fn new(
        sandbox: Sandbox,
        dir: PathBuf,
        count: usize,
        file_type: &'static str,
        parallel: &'static str,
    ) -> Harness {
        Harness {
            sandbox,
            dir,
            count,
            file_type,
            parallel,
            runs: 0,
            findings: Vec::new(),
            resolved: BTreeMap::new(),
        }
    }

    /// `cairn <command> --yes --parallel P`.
    fn deploy(&self, command: &'static str) -> [&'static str; 4] {
        [command, "--yes", "--parallel", self.parallel]
    }

    /// Starts `cairn args` in a process group of its own (as a shell runs a foreground job),
    /// printing into a log file of the sandbox (a pipe nobody reads could block it).
    fn spawn(&mut self, args: &[&str]) -> (Child, PathBuf) {
        use std::os::unix::process::CommandExt;
        self.runs += 1;
        let log = self
            .sandbox
            .root()
            .join(format!("run-{}-{}.log", self.runs, args[0]));
        let out = std::fs::File::create(&log).unwrap();
        let child = self
            .sandbox
            .command(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .process_group(0)
            .spawn()
            .expect("run cairn");
        (child, log)
    }

    /// Runs `cairn args` and stops it as `stop` says once `reached` holds for the directory;
    /// returns when cairn is gone. Processes of the run still alive after cairn are recorded
    /// as findings (and killed, so the harness goes on).
    fn stop_during(
        &mut self,
        args: &[&str],
        stop: Stop,
        what: &str,
        reached: impl Fn(&Path) -> bool,
    ) {
        let command = args[0];
        assert!(
            !reached(&self.dir),
            "{what}: the stop point is reached before cairn {command} starts"
        );
        let (mut child, log) = self.spawn(args);
        let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
        let mut finished = None;
        let hit = poll(RUN_DEADLINE, || {
            if let Ok(Some(status)) = child.try_wait() {
                finished = Some(status);
                return true;
            }
            reached(&self.dir)
        });
        if let Some(status) = finished {
            panic!(
                "{what}: cairn {command} finished ({status}) before the stop point:\n{}",
                read_log()
            );
        }
        if !hit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what}: the stop point was not reached within {RUN_DEADLINE:?}:\n{}",
                read_log()
            );
        }
        let cairn = child.id();
        let group = format!("-{cairn}");
        match stop {
            Stop::KillCairn => {
                child.kill().unwrap();
                child.wait().unwrap();
            }
            Stop::KillProgram | Stop::KillProvider => {
                let processes = sandbox_processes(self.sandbox.root());
                let target = processes.iter().find(|(pid, cmdline)| {
                    *pid != cairn
                        && if stop == Stop::KillProvider {
                            cmdline.contains("pulumi.dynamic")
                        } else {
                            !cmdline.contains("pulumi.dynamic") && is_program(*pid)
                        }
                });
                let Some((pid, _)) = target else {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("{what}: no process to kill among {processes:#?}");
                };
                signal("KILL", &pid.to_string());
            }
            Stop::Interrupt => signal("INT", &group),
            Stop::InterruptTwice => {
                signal("INT", &group);
                signal("INT", &group);
            }
            Stop::Terminate => signal("TERM", &cairn.to_string()),
        }
        if stop != Stop::KillCairn {
            let status = self.wait_exit(&mut child, what, &read_log);
            if status.success() {
                self.findings.push(format!(
                    "{what}: cairn {command} exited successfully though it was stopped:\n{}",
                    tail(&read_log())
                ));
            }
        }
        self.reap_survivors(what);
    }

    /// Waits for cairn to exit on its own; kills it (and fails) after [`RUN_DEADLINE`].
    fn wait_exit(&self, child: &mut Child, what: &str, log: &dyn Fn() -> String) -> ExitStatus {
        let mut status = None;
        if poll(RUN_DEADLINE, || {
            status = child.try_wait().ok().flatten();
            status.is_some()
        }) && let Some(status) = status
        {
            return status;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "{what}: cairn did not exit within {RUN_DEADLINE:?}:\n{}",
            log()
        );
    }

    /// Records the sandbox's processes still running [`SURVIVAL_DEADLINE`] after cairn is
    /// gone, then kills them and waits until they are gone.
    fn reap_survivors(&mut self, what: &str) {
        let root = self.sandbox.root().to_path_buf();
        if poll(SURVIVAL_DEADLINE, || sandbox_processes(&root).is_empty()) {
            return;
        }
        for (pid, cmdline) in sandbox_processes(&root) {
            self.findings.push(format!(
                "{what}: pid {pid} was still running {SURVIVAL_DEADLINE:?} after cairn was gone: {}",
                cmdline.chars().take(160).collect::<String>()
            ));
            signal("KILL", &pid.to_string());
        }
        assert!(
            poll(RUN_DEADLINE, || sandbox_processes(&root).is_empty()),
            "{what}: processes would not die: {:#?}",
            sandbox_processes(&root)
        );
    }

    /// The state after a stop, checked: Cairn accepts it (and reports exactly its pending
    /// operations), it passes the independent integrity check, and it agrees with the files.
    fn check(&self, what: &str) -> State {
        let shown = self.sandbox.run(&["stack"]);
        let stderr = String::from_utf8_lossy(&shown.stderr).into_owned();
        assert!(
            shown.status.success() && !stderr.contains("is refused"),
            "{what}: `cairn stack` refuses the state:\n{stderr}"
        );
        let export: Value = serde_json::from_str(&self.sandbox.ok(&["stack", "export"]))
            .unwrap_or_else(|e| panic!("{what}: `cairn stack export` is not JSON: {e}"));
        let state = State::of(&export);
        state.check_integrity(what);

        if state.pending.is_empty() {
            assert!(
                !stderr.contains("was interrupted"),
                "{what}: nothing is pending, yet:\n{stderr}"
            );
        } else {
            let n = state.pending.len();
            assert_contains(
                &stderr,
                &[&format!(
                    "{n} operation{} pending",
                    if n == 1 { " was" } else { "s were" }
                )],
            );
            for (kind, resource) in &state.pending {
                assert_contains(&stderr, &[&format!("{kind} {}", str_of(resource, "urn"))]);
            }
        }
        self.check_files(what, &state, false);
        state
    }

    /// The files agree with the state: each recorded file exists with the recorded content
    /// (unless an operation on it is pending), none is recorded twice, and each file on disk
    /// is recorded or is the subject of a pending create. `settled`: nothing may be pending
    /// (so the two must be equal).
    fn check_files(&self, what: &str, state: &State, settled: bool) {
        let on_disk = files(&self.dir);
        if settled {
            assert!(
                state.pending.is_empty(),
                "{what}: operations are still pending: {:#?}",
                state.pending
            );
        }
        let pending_urns: BTreeSet<&str> = state
            .pending
            .iter()
            .map(|(_, r)| str_of(r, "urn"))
            .collect();
        let created: BTreeSet<&str> = state
            .pending_of("creating")
            .map(|r| str_of(&r["inputs"], "path"))
            .collect();
        let mut recorded = BTreeSet::new();
        for r in state.files(self.file_type) {
            let urn = str_of(r, "urn");
            let id = str_of(r, "id");
            assert!(
                recorded.insert(id),
                "{what}: {id} is recorded twice (the second time as {urn})"
            );
            let deleting = state
                .pending_of("deleting")
                .any(|p| str_of(p, "urn") == urn);
            match on_disk.get(id) {
                None if deleting => {}
                None => panic!("{what}: {urn} is recorded, but its file {id} does not exist"),
                Some(_) if pending_urns.contains(urn) => {}
                Some(text) => assert_eq!(
                    text,
                    str_of(&r["outputs"], "content"),
                    "{what}: the content of {id} differs from what the state records for {urn}"
                ),
            }
        }
        for name in on_disk.keys() {
            assert!(
                recorded.contains(name.as_str()) || created.contains(name.as_str()),
                "{what}: file {name} is neither recorded nor the subject of a pending create \
                 (a completed create was lost); pending: {:#?}",
                state.pending
            );
        }
    }

    /// The `cairn refresh` that resolves what a stop left pending, as a user would resolve
    /// it: an interrupted create whose file exists is imported by its ID (the path), the
    /// others are cleared; interrupted updates and deletes are settled by reading. Checks
    /// first that `up` refuses to run while creates are pending.
    fn resolution(&self, state: &State) -> Vec<String> {
        let creates: Vec<&Value> = state.pending_of("creating").collect();
        let mut args: Vec<String> = vec!["refresh".into(), "--yes".into()];
        if !creates.is_empty() {
            let refusal = self.sandbox.fails(&["up", "--yes"]);
            assert_contains(&refusal, &["interrupted create", "cairn refresh"]);
            for create in &creates {
                assert_contains(&refusal, &[str_of(create, "urn")]);
            }
            let mut clear = false;
            for create in &creates {
                let path = str_of(&create["inputs"], "path");
                if self.dir.join(path).exists() {
                    args.extend([
                        "--import-pending-creates".into(),
                        str_of(create, "urn").into(),
                        path.into(),
                    ]);
                } else {
                    clear = true;
                }
            }
            if clear {
                args.push("--clear-pending-creates".into());
            }
        }
        args
    }

    /// Resolves what a stop left pending (see [`Harness::resolution`]): afterwards nothing is
    /// pending and the state and the files agree.
    fn resolve(&mut self, what: &str, state: &State) {
        let args = self.resolution(state);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.sandbox.run(&args);
        assert!(
            out.status.success(),
            "{what}: cairn {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (kind, _) in &state.pending {
            *self.resolved.entry(kind.clone()).or_default() += 1;
        }
        let export: Value = serde_json::from_str(&self.sandbox.ok(&["stack", "export"])).unwrap();
        let settled = State::of(&export);
        let what = format!("{what}, resolved");
        settled.check_integrity(&what);
        self.check_files(&what, &settled, true);
    }

    /// Stops `cairn <command>` as `stop` says once `reached` holds, checks the state (a
    /// graceful stop must leave nothing pending) and resolves what is pending.
    fn stop_and_resolve(
        &mut self,
        command: &'static str,
        stop: Stop,
        what: &str,
        reached: impl Fn(&Path) -> bool,
    ) {
        self.stop_during(&self.deploy(command), stop, what, reached);
        let state = self.check(what);
        if stop.graceful() && !state.pending.is_empty() {
            let shown: Vec<String> = state
                .pending
                .iter()
                .take(3)
                .map(|(kind, r)| format!("{kind} {}", str_of(r, "urn")))
                .collect();
            self.findings.push(format!(
                "{what}: {} operations were left pending, though what was under way could \
                 finish ({}, …)",
                state.pending.len(),
                shown.join(", ")
            ));
        }
        self.resolve(what, &state);
    }

    /// Runs `cairn <command>` to the end, which must succeed.
    fn finish(&mut self, command: &'static str) {
        let (mut child, log) = self.spawn(&self.deploy(command));
        let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
        let status = self.wait_exit(&mut child, command, &read_log);
        assert!(status.success(), "cairn {command} failed:\n{}", read_log());
        self.reap_survivors(command);
    }

    /// `up` finishes, and the state and the directory hold exactly the declared files, each
    /// once, with generation `generation`'s content.
    fn converge(&mut self, generation: u32) {
        self.finish("up");
        let what = format!("after the converging up (generation {generation})");
        let state = self.check(&what);
        self.check_files(&what, &state, true);
        let expected: BTreeMap<String, String> = names(self.count)
            .into_iter()
            .map(|name| {
                let text = content(generation, name.trim_end_matches(".txt"));
                (name, text)
            })
            .collect();
        assert_eq!(files(&self.dir), expected, "{what}: the files");
        assert_eq!(
            state.files(self.file_type).count(),
            self.count,
            "{what}: the recorded files"
        );
    }

    /// `destroy` finishes: no file, no resource and nothing pending is left.
    fn destroyed(&mut self) {
        self.finish("destroy");
        let state = self.check("after the final destroy");
        assert_eq!(
            files(&self.dir),
            BTreeMap::new(),
            "files left after destroy"
        );
        assert!(
            state.resources.is_empty() && state.pending.is_empty(),
            "left in the state after destroy: {:#?} {:#?}",
            state.resources,
            state.pending
        );
    }

    /// Fails on every finding (graceful stops that were not, processes that outlived cairn).
    fn assert_no_findings(&self) {
        assert!(
            self.findings.is_empty(),
            "{} finding(s):\n{}",
            self.findings.len(),
            self.findings.join("\n")
        );
    }
}

/// Sends `SIG<name>` to `target` (a pid, or `-<pgid>` for a process group) of the run under
/// test.
fn signal(name: &str, target: &str) {
    // The process may have exited meanwhile; whoever looks next sees that.
    let _ = std::process::Command::new("kill")
        .args([&format!("-{name}"), "--", target])
        .stderr(Stdio::null())
        .status();
}

/// The last lines of a log, for messages.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// How many files in `dir` have generation `generation`'s content.
fn at_generation(dir: &Path, generation: u32) -> usize {
    files(dir)
        .iter()
        .filter(|(name, text)| **text == content(generation, name.trim_end_matches(".txt")))
        .count()
}

/// A wasm program with 240 files of the example `file` provider (up to 32 operations in
/// flight), cairn killed at several points of its create, update and destroy.
#[test]
fn crash_wasm_kill_cairn_during_create_update_and_destroy() {
    let mut h = Harness::wasm(240);
    let n = h.count;
    for k in [1, n / 4, n / 2, 3 * n / 4] {
        h.stop_and_resolve(
            "up",
            Stop::KillCairn,
            &format!("kill -9 of cairn during create, at {k} files"),
            |dir| file_count(dir) >= k,
        );
    }
    h.converge(1);

    h.sandbox.ok(&["config", "set", "generation", "2"]);
    for k in [1, n / 3, 2 * n / 3] {
        h.stop_and_resolve(
            "up",
            Stop::KillCairn,
            &format!("kill -9 of cairn during update, at {k} files updated"),
            |dir| at_generation(dir, 2) >= k,
        );
    }
    h.converge(2);

    for k in [1, n / 3, 2 * n / 3] {
        h.stop_and_resolve(
            "destroy",
            Stop::KillCairn,
            &format!("kill -9 of cairn during destroy, at {k} files deleted"),
            |dir| file_count(dir) <= n - k,
        );
    }
    h.destroyed();
    h.assert_no_findings();
    // Each phase's kills left operations to resolve, or the harness tested nothing there.
    for kind in ["creating", "updating", "deleting"] {
        assert!(
            h.resolved.get(kind).is_some_and(|n| *n > 0),
            "no kill left a {kind} operation pending: {:?}",
            h.resolved
        );
    }
}

/// The same wasm deployment interrupted (SIGINT, SIGTERM; once: graceful, twice: at once)
/// during create, update and destroy.
#[test]
fn crash_wasm_interrupt_during_create_update_and_destroy() {
    let mut h = Harness::wasm(240);
    let n = h.count;
    for (k, stop) in [(n / 4, Stop::Interrupt), (n / 2, Stop::InterruptTwice)] {
        h.stop_and_resolve(
            "up",
            stop,
            &format!("{stop:?} during create, at {k} files"),
            |dir| file_count(dir) >= k,
        );
    }
    h.converge(1);
    h.sandbox.ok(&["config", "set", "generation", "2"]);
    h.stop_and_resolve(
        "up",
        Stop::Terminate,
        &format!("Terminate during update, at {} files updated", n / 3),
        |dir| at_generation(dir, 2) >= n / 3,
    );
    h.converge(2);
    h.stop_and_resolve(
        "destroy",
        Stop::Interrupt,
        &format!("Interrupt during destroy, at {} files deleted", n / 3),
        |dir| file_count(dir) <= n - n / 3,
    );
    h.destroyed();
    h.assert_no_findings();
}

/// A Python program with 100 files made by its dynamic provider (8 operations in flight),
/// stopped during create five ways (kill -9 of cairn, of the program, of the provider process;
/// Ctrl-C, i.e. SIGINT to the process group; SIGTERM to cairn alone), and killed during update
/// and destroy (cairn, the program, the provider).
#[test]
fn crash_python_kill_cairn_program_and_provider_during_create_update_and_destroy() {
    let mut h = Harness::python(100, 40);
    let n = h.count;
    let stops = [
        (Stop::KillCairn, "kill -9 of cairn", n / 10),
        (Stop::KillProgram, "kill -9 of the program", 3 * n / 10),
        (Stop::KillProvider, "kill -9 of the dynamic provider", n / 2),
        (Stop::Interrupt, "Ctrl-C", 13 * n / 20),
        (Stop::Terminate, "SIGTERM to cairn", 4 * n / 5),
    ];
    for (stop, how, k) in stops {
        h.stop_and_resolve(
            "up",
            stop,
            &format!("{how} during create, at {k} files"),
            |dir| file_count(dir) >= k,
        );
    }
    h.converge(1);

    h.sandbox.ok(&["config", "set", "generation", "2"]);
    let stops = [
        (Stop::KillProvider, "kill -9 of the dynamic provider", n / 5),
        (Stop::KillCairn, "kill -9 of cairn", n / 2),
        (Stop::KillProgram, "kill -9 of the program", 3 * n / 4),
    ];
    for (stop, how, k) in stops {
        h.stop_and_resolve(
            "up",
            stop,
            &format!("{how} during update, at {k} files updated"),
            |dir| at_generation(dir, 2) >= k,
        );
    }
    h.converge(2);

    let stops = [
        (Stop::KillProvider, "kill -9 of the dynamic provider", n / 4),
        (Stop::KillCairn, "kill -9 of cairn", n / 2),
    ];
    for (stop, how, k) in stops {
        h.stop_and_resolve(
            "destroy",
            stop,
            &format!("{how} during destroy, at {k} files deleted"),
            |dir| file_count(dir) <= n - k,
        );
    }
    h.destroyed();
    h.assert_no_findings();
    for kind in ["creating", "updating", "deleting"] {
        assert!(
            h.resolved.get(kind).is_some_and(|n| *n > 0),
            "no stop left a {kind} operation pending: {:?}",
            h.resolved
        );
    }
}

/// The kill -9 harness with the state in PostgreSQL: killed during create, update and destroy,
/// the journal rows of every completed operation are there for the next command to recover.
#[test]
fn crash_wasm_kill_cairn_on_postgres() {
    let db = crate::pgserver::shared().fresh_database();
    let mut h = Harness::wasm_on(120, Some(&db));
    let n = h.count;
    // The journal an interrupted update leaves holds a record per step record (the records of
    // steps that finished together share a row: one commit), each the size of its step,
    // whatever the size of the state.
    h.finish("up");
    h.sandbox.ok(&["config", "set", "generation", "3"]);
    let args = h.deploy("up");
    h.stop_during(
        &args,
        Stop::KillCairn,
        "kill -9 during an update, for the journal",
        |dir| at_generation(dir, 3) >= n / 4,
    );
    let rows = crate::pgserver::shared()
        .psql(
            &db.url,
            "SELECT count(*), max(octet_length(line)), \
             (SELECT max(length(checkpoint)) FROM cairn_stacks) \
             FROM cairn_journal, \
             regexp_split_to_table(convert_from(data, 'UTF8'), E'\\n') AS line \
             WHERE line <> ''",
        )
        .unwrap();
    let numbers: Vec<usize> = rows.trim().split('|').map(|v| v.parse().unwrap()).collect();
    let [count, largest, checkpoint] = numbers[..] else {
        panic!("{rows}");
    };
    assert!(
        count >= n / 4,
        "{count} journal records for {} updated files",
        n / 4
    );
    assert!(
        largest * 20 < checkpoint,
        "a journal record of {largest} bytes, for a checkpoint of {checkpoint}"
    );
    let state = h.check("after the kill during the update");
    h.resolve("after the kill during the update", &state);
    h.finish("destroy");
    h.sandbox.ok(&["config", "set", "generation", "1"]);
    for k in [n / 4, 3 * n / 4] {
        h.stop_and_resolve(
            "up",
            Stop::KillCairn,
            &format!("kill -9 of cairn during create, at {k} files (PostgreSQL)"),
            |dir| file_count(dir) >= k,
        );
    }
    h.converge(1);
    h.sandbox.ok(&["config", "set", "generation", "2"]);
    h.stop_and_resolve(
        "up",
        Stop::KillCairn,
        &format!(
            "kill -9 of cairn during update, at {} files updated (PostgreSQL)",
            n / 2
        ),
        |dir| at_generation(dir, 2) >= n / 2,
    );
    h.converge(2);
    h.stop_and_resolve(
        "destroy",
        Stop::KillCairn,
        &format!(
            "kill -9 of cairn during destroy, at {} files deleted (PostgreSQL)",
            n / 2
        ),
        |dir| file_count(dir) <= n / 2,
    );
    h.destroyed();
    h.assert_no_findings();
    assert!(
        h.resolved.values().sum::<usize>() > 0,
        "no kill left an operation pending: the test tested nothing"
    );
}

/// The PostgreSQL server stops in the middle of an update: cairn fails with a clear error
/// naming the backend, commands say the server is unreachable while it is down, and once it is
/// back the next command recovers every operation that completed before the stop.
#[test]
fn postgres_stopped_mid_deployment_loses_nothing() {
    let server = PgServer::start();
    let db = server.fresh_database();
    let mut h = Harness::wasm_on(120, Some(&db));
    let n = h.count;
    let args = h.deploy("up");
    let (mut child, log) = h.spawn(&args);
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        poll(RUN_DEADLINE, || file_count(&h.dir) >= n / 3),
        "the update did not reach a third of the files:\n{}",
        read_log()
    );
    server.stop();
    let status = h.wait_exit(&mut child, "up with the server stopped", &read_log);
    let output = read_log();
    assert!(
        !status.success(),
        "up succeeded without its server:\n{output}"
    );
    assert_contains(
        &output,
        &["lost the connection to the PostgreSQL backend", "127.0.0.1"],
    );
    assert!(
        !output.contains(&db.password),
        "the password is printed:\n{output}"
    );
    h.reap_survivors("up with the server stopped");

    let down = h.sandbox.fails(&["stack"]);
    assert_contains(
        &down,
        &["cannot connect to the PostgreSQL backend", &db.user],
    );
    assert!(!down.contains(&db.password), "{down}");

    server.start_again();
    let state = h.check("after the server came back");
    h.resolve("after the server came back", &state);
    h.converge(1);
    h.destroyed();
    h.assert_no_findings();
}
