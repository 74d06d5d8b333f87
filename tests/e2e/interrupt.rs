//! Ctrl-C and SIGTERM during a deployment, with a real wasm program and provider: the `gate`
//! test provider holds a create in flight (until the test opens its gate file), so the signal
//! arrives mid-operation without sleeps.
//!
//! A first signal lets the create finish and records it, saves, prints the summary and exits
//! 130 (143 for SIGTERM); the next `up` does not create it again. A second signal exits at
//! once, and the next command reports the create as pending. A signal during a preview stops it
//! at once. The stack lock is released in every case. With a Python SDK program (a child
//! process), the program is told (its next request is refused) and no process outlives cairn.
//!
//! The other commands that write (state edits, stack rename and removal, configuration) stop at
//! the first signal too, but never in the middle of a write: one in progress completes (a test
//! hook holds it open), and the lock is released; a signal before the write stops without it.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::background::{Background, touch};
use crate::support::{Sandbox, assert_contains, finished_steps, ops_of, python, test_wasm};

/// Long enough for a debug build to compile the components on first use.
const START: Duration = Duration::from_secs(180);
const EXIT: Duration = Duration::from_secs(60);

const FIRST: &str = "urn:pulumi:dev::prog::gate:index:Gate::first";

/// A stack `dev` running `program-probe` in mode `gates` against the `gate` provider, granted
/// the project's `gates` directory.
fn gate_stack() -> (Sandbox, PathBuf) {
    let program = test_wasm("program-probe");
    let (sandbox, gates) = gate_stack_of(&format!(
        "name: prog\nruntime: wasm\nmain: {}\n",
        program.to_str().unwrap()
    ));
    sandbox.ok(&["config", "set", "mode", "gates"]);
    (sandbox, gates)
}

/// The same stack with a Python SDK program declaring gates `first` and `second` (which
/// depends on `first`).
fn python_gate_stack() -> (Sandbox, PathBuf) {
    let venv = python().parent().unwrap().parent().unwrap().to_owned();
    let (sandbox, gates) = gate_stack_of(&format!(
        "name: prog\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
        venv.display()
    ));
    sandbox.write(
        "__main__.py",
        "import pulumi\n\
         first = pulumi.CustomResource(\"gate:index:Gate\", \"first\", {})\n\
         pulumi.CustomResource(\"gate:index:Gate\", \"second\", {},\n\
         \x20   pulumi.ResourceOptions(depends_on=[first]))\n",
    );
    (sandbox, gates)
}

/// A stack `dev` of project `prog` described by `project` (its Pulumi.yaml), with the `gate`
/// provider installed and granted the project's `gates` directory.
pub(crate) fn gate_stack_of(project: &str) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new("prog");
    sandbox.write("Pulumi.yaml", project);
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["plugin", "install", test_wasm("gate").to_str().unwrap()]);
    let gates = sandbox.project.join("gates");
    std::fs::create_dir_all(&gates).unwrap();
    for (path, value) in [
        ("[\"cairn:grants\"].gate.directories[0].host", "./gates"),
        ("[\"cairn:grants\"].gate.directories[0].guest", "/gates"),
        ("[\"cairn:grants\"].gate.directories[0].write", "true"),
    ] {
        sandbox.ok(&["config", "set", "--path", path, value]);
    }
    (sandbox, gates)
}

/// Starts `cairn args` in the background and waits until gate `first`'s create is in flight.
fn start_at_first_gate(sandbox: &Sandbox, gates: &std::path::Path, args: &[&str]) -> Background {
    let mut up = Background::spawn(sandbox.command(args), sandbox.root(), "up");
    let entered = gates.join("first.entered");
    up.wait_for("the create of `first` in flight", START, || {
        entered.exists()
    });
    up
}

fn lock_file(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.join("locks/prog/dev.lock")
}

fn export(sandbox: &Sandbox) -> Value {
    serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap()
}

fn urns(state: &Value) -> Vec<String> {
    state["deployment"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["urn"].as_str().unwrap().to_owned())
        .collect()
}

fn lines(path: PathBuf) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[test]
fn a_first_signal_lets_the_create_in_flight_finish_and_records_it() {
    // (signal, exit status, how it is named, how to repeat it)
    let cases = [
        ("INT", 130, "^C", "press ^C again"),
        ("TERM", 143, "SIGTERM", "send SIGTERM again"),
    ];
    for (signal, status, name, again) in cases {
        let (sandbox, gates) = gate_stack();
        let mut up = start_at_first_gate(&sandbox, &gates, &["up", "--yes"]);
        up.signal(signal);
        up.wait_for_stderr("interrupting", EXIT);
        // The create is still in flight: the engine waits for it.
        assert!(
            up.child.try_wait().unwrap().is_none(),
            "{signal}: cairn did not wait"
        );
        touch(&gates.join("first.open"));
        let exit = up.wait(EXIT);
        let stderr = up.stderr();
        assert_eq!(exit.code(), Some(status), "{signal}: {stderr}");
        assert_contains(
            &stderr,
            &[
                &format!(
                    "{name} received; interrupting: waiting for 1 operation in flight to finish \
                     (nothing new starts). To stop at once, {again}; operations still in flight \
                     are then left pending.\n"
                ),
                "error: the deployment was interrupted: operations already running finished and \
                 were recorded; run the command again to continue\n",
            ],
        );
        // The summary is printed as usual, with the finished create.
        assert_contains(
            &up.stdout(),
            &[
                "gate:index:Gate first created",
                "Duration:",
                "The update was interrupted.",
            ],
        );
        assert!(!up.stdout().contains("failed"), "{signal}: {}", up.stdout());

        // Recorded, not pending; `second` (which waited for `first`) never started.
        let state = export(&sandbox);
        assert!(urns(&state).iter().any(|u| u == FIRST), "{signal}: {state}");
        assert!(
            !urns(&state).iter().any(|u| u.ends_with("::second")),
            "{signal}: {state}"
        );
        let pending = &state["deployment"]["pending_operations"];
        assert!(
            pending.as_array().is_none_or(Vec::is_empty),
            "{signal}: {pending}"
        );
        assert!(!gates.join("second.entered").exists(), "{signal}");
        assert!(!lock_file(&sandbox).exists(), "{signal}: the lock is left");

        // The next `up` continues: `first` is the same, `second` is created; nothing twice.
        touch(&gates.join("second.open"));
        let json = sandbox.ok(&["up", "--yes", "--json"]);
        let steps = finished_steps(&json);
        assert_eq!(ops_of(&steps, "first"), ["same"], "{signal}: {steps:?}");
        assert_eq!(ops_of(&steps, "second"), ["create"], "{signal}: {steps:?}");
        assert_eq!(lines(gates.join("first.creates")), 1, "{signal}");
        assert_eq!(lines(gates.join("second.creates")), 1, "{signal}");
    }
}

#[test]
fn a_second_signal_stops_at_once_and_the_create_is_reported_pending() {
    let (sandbox, gates) = gate_stack();
    let mut up = start_at_first_gate(&sandbox, &gates, &["up", "--yes"]);
    up.signal("INT");
    up.wait_for_stderr("interrupting", EXIT);
    up.signal("INT");
    // The gate stays shut: cairn must not wait for the create.
    let exit = up.wait(EXIT);
    let stderr = up.stderr();
    assert_eq!(exit.code(), Some(130), "{stderr}");
    assert_contains(
        &stderr,
        &[
            "^C received; stopping at once; operations still in flight are left pending, and the \
           next command reports them\n",
        ],
    );
    assert!(!lock_file(&sandbox).exists(), "the lock is left");

    // The next command reports the create as pending; nothing was created twice.
    let output = sandbox.run(&["stack", "export"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_contains(&stderr, &["pending", &format!("creating {FIRST}")]);
    assert_eq!(lines(gates.join("first.creates")), 1);
}

#[test]
fn a_signal_during_a_preview_stops_it_at_once() {
    let (sandbox, gates) = gate_stack();
    sandbox.ok(&["config", "set", "checkGate", "true"]);
    let before = std::fs::read(sandbox.state_file("prog", "dev")).unwrap();
    let mut preview = Background::spawn(sandbox.command(&["preview"]), sandbox.root(), "preview");
    let checking = gates.join("first.checking");
    preview.wait_for("the check of `first` in flight", START, || {
        checking.exists()
    });
    preview.signal("INT");
    let exit = preview.wait(EXIT);
    assert_eq!(exit.code(), Some(130), "{}", preview.stderr());
    assert_contains(
        &preview.stderr(),
        &["^C received; stopping the preview (no write was in progress)\n"],
    );
    assert_eq!(
        std::fs::read(sandbox.state_file("prog", "dev")).unwrap(),
        before,
        "a preview changed the state"
    );
    assert!(!lock_file(&sandbox).exists(), "the lock is left");
    assert!(!gates.join("first.creates").exists());
}

/// Processes (other than this test's) whose working directory is inside `dir`.
fn processes_in(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(dir)) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

/// Waits (at most `limit`) until no process works inside `dir`.
fn no_process_in(dir: &std::path::Path, limit: Duration) {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = processes_in(dir);
        if left.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "processes outlived cairn: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A first signal: the create finishes and is recorded, the program's next request is refused,
/// and cairn waits for the program's process.
#[test]
fn a_python_program_is_told_and_ends_with_cairn() {
    let (sandbox, gates) = python_gate_stack();
    let mut up = start_at_first_gate(&sandbox, &gates, &["up", "--yes"]);
    assert!(
        !processes_in(&sandbox.project).is_empty(),
        "the program runs"
    );
    up.signal("INT");
    up.wait_for_stderr("interrupting", EXIT);
    touch(&gates.join("first.open"));
    let exit = up.wait(EXIT);
    assert_eq!(exit.code(), Some(130), "{}", up.stderr());
    assert!(urns(&export(&sandbox)).iter().any(|u| u == FIRST));
    assert!(!gates.join("second.entered").exists());
    assert_eq!(processes_in(&sandbox.project), Vec::<String>::new());
}

/// A second signal: cairn stops at once, and the program (a child process) does not outlive it.
#[test]
fn a_second_signal_leaves_no_python_program_running() {
    let (sandbox, gates) = python_gate_stack();
    let mut up = start_at_first_gate(&sandbox, &gates, &["up", "--yes"]);
    up.signal("INT");
    up.wait_for_stderr("interrupting", EXIT);
    up.signal("INT");
    assert_eq!(up.wait(EXIT).code(), Some(130), "{}", up.stderr());
    no_process_in(&sandbox.project, Duration::from_secs(30));
    assert!(!lock_file(&sandbox).exists());
}

const PW: &str = "urn:pulumi:dev::web::random:index/randomPassword:RandomPassword::pw";

/// Stack `dev` of project `web` recording tests/data/import/valid (a password, protectable).
fn web_stack() -> Sandbox {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    let state = std::fs::read_to_string(
        crate::support::repo().join("tests/data/import/valid/deployment.json"),
    )
    .unwrap();
    let file = sandbox.write("state.json", &state);
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    sandbox
}

/// The temporary files an unfinished write leaves (`.<name>.<pid>.tmp`) under `dir`.
fn temp_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(temp_files(&path));
        } else if path.to_string_lossy().ends_with(".tmp") {
            found.push(path);
        }
    }
    found
}

/// A command held in its first write (`CAIRN_TEST_WRITE_PAUSE`) gets Ctrl-C: it says it waits
/// for the write, the write completes once released, nothing more is done, the lock is
/// released, no temporary file is left, and cairn exits 130.
#[test]
fn a_signal_mid_write_lets_the_write_complete_then_stops() {
    type Done = fn(&Sandbox) -> bool;
    let recorded = |sandbox: &Sandbox| urns(&export(sandbox));
    let cases: [(&[&str], Done); 5] = [
        (&["state", "delete", "--yes", PW], |s| {
            !urns(&export(s)).iter().any(|u| u == PW)
        }),
        (&["state", "protect", PW], |s| {
            export(s)["deployment"]["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["urn"] == PW && r["protect"] == true)
        }),
        (&["stack", "rename", "prod"], |s| {
            s.state_file("web", "prod").exists() && !s.state_file("web", "dev").exists()
        }),
        (&["config", "set", "name", "bob"], |s| {
            s.read("Pulumi.dev.yaml").contains("name: bob")
        }),
        (&["stack", "rm", "--yes", "--force"], |s| {
            !s.state_file("web", "dev").exists()
        }),
    ];
    for (args, done) in cases {
        let sandbox = web_stack();
        assert!(recorded(&sandbox).iter().any(|u| u == PW));
        let release = sandbox.root().join("release");
        let reached = sandbox.root().join("release.reached");
        let mut command = sandbox.command(args);
        command.env("CAIRN_TEST_WRITE_PAUSE", &release);
        let mut run = Background::spawn(command, sandbox.root(), "write");
        run.wait_for("the write in progress", START, || reached.exists());
        run.signal("INT");
        run.wait_for_stderr("once the write in progress completes", EXIT);
        assert!(
            run.child.try_wait().unwrap().is_none(),
            "{args:?}: cairn did not wait for the write"
        );
        touch(&release);
        let exit = run.wait(EXIT);
        let stderr = run.stderr();
        assert_eq!(exit.code(), Some(130), "{args:?}: {stderr}");
        assert_contains(
            &stderr,
            &[
                "^C received; stopping once the write in progress completes (files are written \
                 whole, never in part). To stop at once, press ^C again.\n",
                "The write completed; stopped before anything more was written.\n",
            ],
        );
        assert!(
            done(&sandbox),
            "{args:?}: the write did not complete: {stderr}"
        );
        assert!(
            !sandbox.home.join("locks/web/dev.lock").exists(),
            "{args:?}: the lock is left"
        );
        assert_eq!(
            temp_files(sandbox.root()),
            Vec::<PathBuf>::new(),
            "{args:?}"
        );
    }
}

/// Ctrl-C while a command holds the stack's lock but has not started writing: it stops at
/// once, writes nothing and releases the lock.
#[test]
fn a_signal_before_the_write_stops_without_writing() {
    let sandbox = web_stack();
    let state = sandbox.state_file("web", "dev");
    let before = std::fs::read(&state).unwrap();
    let release = sandbox.root().join("release");
    let reached = sandbox.root().join("release.reached");
    let mut command = sandbox.command(&["state", "delete", "--yes", PW]);
    command.env(
        "CAIRN_TEST_LOCK_PAUSE",
        format!("held:{}", release.display()),
    );
    let mut run = Background::spawn(command, sandbox.root(), "delete");
    run.wait_for("the lock held", START, || reached.exists());
    run.signal("INT");
    let exit = run.wait(EXIT);
    let stderr = run.stderr();
    assert_eq!(exit.code(), Some(130), "{stderr}");
    assert_contains(
        &stderr,
        &["^C received; stopping (no write was in progress)\n"],
    );
    assert_eq!(std::fs::read(&state).unwrap(), before, "the state changed");
    assert!(
        !sandbox.home.join("locks/web/dev.lock").exists(),
        "the lock is left"
    );
    assert!(urns(&export(&sandbox)).iter().any(|u| u == PW));
}

/// `destroy` killed with kill -9 while a delete is in flight leaves that delete pending; the
/// `destroy` that completes it settles it, leaving neither the resources nor the interrupted
/// delete's record in the state. (The delete's gate holds it in flight, so the kill lands
/// mid-delete every time rather than in 7 runs of 21.)
#[test]
fn a_destroy_that_completes_one_killed_mid_delete_leaves_nothing_pending() {
    let venv = python().parent().unwrap().parent().unwrap().to_owned();
    let (sandbox, gates) = gate_stack_of(&format!(
        "name: prog\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
        venv.display()
    ));
    sandbox.write(
        "__main__.py",
        "import pulumi\n\
         pulumi.CustomResource(\"gate:index:Gate\", \"first\", {\"deleteGate\": True})\n",
    );
    touch(&gates.join("first.open"));
    sandbox.ok(&["up", "--yes"]);

    let mut destroy = Background::spawn(
        sandbox.command(&["destroy", "--yes"]),
        sandbox.root(),
        "destroy",
    );
    let deleting = gates.join("first.deleting");
    destroy.wait_for("the delete of `first` in flight", START, || {
        deleting.exists()
    });
    destroy.signal("KILL");
    destroy.wait(EXIT);
    let output = sandbox.run(&["stack", "export"]);
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        &["pending", &format!("deleting {FIRST}")],
    );

    touch(&gates.join("first.delete-open"));
    sandbox.ok(&["destroy", "--yes"]);
    let output = sandbox.run(&["stack", "export"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("pending"), "{stderr}");
    let state: Value = serde_json::from_slice(&output.stdout).unwrap();
    let pending = &state["deployment"]["pending_operations"];
    assert!(pending.as_array().is_none_or(Vec::is_empty), "{pending}");
    assert_eq!(urns(&state), Vec::<String>::new());
    assert_eq!(lines(gates.join("first.deletes")), 2);
}
