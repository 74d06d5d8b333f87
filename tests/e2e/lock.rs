//! The stack lock under races, with real processes: many writers at once, a process stopped
//! (by the test hook `CAIRN_TEST_LOCK_PAUSE`) between opening the lock file and locking it while
//! the holder releases and another process takes the lock, and a holder killed with SIGKILL.
//! Two writers never both hold the lock, and no process removes a lock it does not hold.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::background::{Background, touch};
use crate::support::{Sandbox, assert_contains};

const LIMIT: Duration = Duration::from_secs(60);

/// A stack `dev` of project `web`.
fn locked_stack() -> Sandbox {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox
}

/// The import file `<name>.json`: a stack whose output `writer` is the name (to tell which
/// import wrote the stack).
fn import_file(sandbox: &Sandbox, name: &str) -> PathBuf {
    let state = serde_json::json!({"version": 3, "deployment": {
    "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": ""},
    "resources": [
        {"urn": "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev", "custom": false,
         "type": "pulumi:pulumi:Stack", "outputs": {"writer": name}}
    ]}});
    sandbox.write(&format!("{name}.json"), &state.to_string())
}

/// `cairn stack import` of `<name>.json`, paused at `point` of taking the lock until
/// `<root>/<name>` exists (`point` empty: no pause).
fn import(sandbox: &Sandbox, name: &str, point: &str) -> Background {
    let file = import_file(sandbox, name);
    let mut command = sandbox.command(&["stack", "import", "--file", file.to_str().unwrap()]);
    if !point.is_empty() {
        command.env(
            "CAIRN_TEST_LOCK_PAUSE",
            format!("{point}:{}", release(sandbox, name).display()),
        );
    }
    Background::spawn(command, sandbox.root(), name)
}

fn release(sandbox: &Sandbox, name: &str) -> PathBuf {
    sandbox.root().join(name)
}

fn reached(sandbox: &Sandbox, name: &str) -> PathBuf {
    sandbox.root().join(format!("{name}.reached"))
}

/// Starts an import paused at `point` and waits until it is there.
fn paused(sandbox: &Sandbox, name: &str, point: &str) -> Background {
    let mut process = import(sandbox, name, point);
    let at = reached(sandbox, name);
    process.wait_for(&format!("{name} at `{point}`"), LIMIT, || at.exists());
    process
}

fn lock_file(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.join("locks/web/dev.lock")
}

/// The pid the lock file names.
fn holder(lock: &Path) -> u64 {
    let text = std::fs::read_to_string(lock).unwrap();
    let holder: Value = serde_json::from_str(&text).unwrap();
    holder["pid"].as_u64().unwrap()
}

/// Which import wrote the stack last.
fn writer(sandbox: &Sandbox) -> String {
    sandbox.ok(&["stack", "output", "writer"]).trim().to_owned()
}

fn succeeds(mut process: Background) {
    let status = process.wait(LIMIT);
    assert!(status.success(), "{}", process.stderr());
}

/// Waits for `process` to fail and returns its stderr.
fn fails(mut process: Background) -> String {
    let status = process.wait(LIMIT);
    assert!(!status.success(), "unexpectedly succeeded");
    process.stderr()
}

#[test]
fn of_many_writers_racing_for_the_lock_exactly_one_holds_it() {
    let sandbox = locked_stack();
    let names: Vec<String> = (0..8).map(|i| format!("w{i}")).collect();
    let mut racers: Vec<Background> = names.iter().map(|n| import(&sandbox, n, "held")).collect();
    // The holder waits at `held` until released, so every other writer is refused meanwhile.
    let deadline = Instant::now() + LIMIT;
    loop {
        let mut settled = 0;
        for (racer, name) in racers.iter_mut().zip(&names) {
            if reached(&sandbox, name).exists() || racer.exited() {
                settled += 1;
            }
        }
        if settled == racers.len() {
            break;
        }
        assert!(Instant::now() < deadline, "the racers did not settle");
        std::thread::sleep(Duration::from_millis(10));
    }
    let holders: Vec<usize> = (0..names.len())
        .filter(|&i| reached(&sandbox, &names[i]).exists())
        .collect();
    assert_eq!(holders.len(), 1, "writers holding the lock: {holders:?}");
    let winner = holders[0];
    for (i, racer) in racers.iter_mut().enumerate() {
        if i != winner {
            assert!(!racer.wait(LIMIT).success());
            assert_contains(
                &racer.stderr(),
                &[&format!(
                    "stack \"dev\" is locked by `cairn stack import` (pid {} on ",
                    // The winner's pid, as its lock file says.
                    holder(&lock_file(&sandbox))
                )],
            );
        }
    }
    assert_eq!(
        holder(&lock_file(&sandbox)),
        u64::from(racers[winner].pid())
    );
    touch(&release(&sandbox, &names[winner]));
    succeeds(racers.swap_remove(winner));
    assert!(!lock_file(&sandbox).exists(), "the holder removes its lock");
    assert_eq!(writer(&sandbox), names[winner]);
}

/// The race of a released lock file: `late` opened it while `first` held it, and is stopped
/// there while `first` finishes (removing the file) and `next` takes a new lock file. When
/// `late` locks the file it opened, that file is no longer the lock: it must start again and
/// be refused, not write the stack while `next` holds it.
#[test]
fn a_process_that_locks_a_removed_lock_file_starts_again_and_is_refused() {
    let sandbox = locked_stack();
    let first = paused(&sandbox, "first", "held");
    let late = paused(&sandbox, "late", "opened");
    touch(&release(&sandbox, "first"));
    succeeds(first);
    assert!(!lock_file(&sandbox).exists());
    let next = paused(&sandbox, "next", "held");
    let next_pid = next.pid();
    touch(&release(&sandbox, "late"));
    let err = fails(late);
    assert_contains(
        &err,
        &[&format!(
            "error: stack \"dev\" is locked by `cairn stack import` (pid {next_pid} on "
        )],
    );
    // `next` still holds its lock, untouched.
    assert_eq!(holder(&lock_file(&sandbox)), u64::from(next_pid));
    touch(&release(&sandbox, "next"));
    succeeds(next);
    assert!(!lock_file(&sandbox).exists());
    assert_eq!(writer(&sandbox), "next");
}

/// A holder killed with SIGKILL leaves its lock file, which the next writer simply takes (the
/// kernel released the lock); a process delayed on that old file removes nothing and is refused
/// while the new holder holds it.
#[test]
fn a_killed_holders_lock_file_is_taken_and_a_delayed_process_removes_nothing() {
    let sandbox = locked_stack();
    let mut killed = paused(&sandbox, "killed", "held");
    let killed_pid = killed.pid();
    killed.child.kill().unwrap();
    killed.wait(LIMIT);
    assert_eq!(
        holder(&lock_file(&sandbox)),
        u64::from(killed_pid),
        "the file stays"
    );

    let late = paused(&sandbox, "late", "opened");
    let taker = paused(&sandbox, "taker", "held");
    let taker_pid = taker.pid();
    assert_eq!(holder(&lock_file(&sandbox)), u64::from(taker_pid));
    touch(&release(&sandbox, "late"));
    assert_contains(
        &fails(late),
        &[&format!(
            "is locked by `cairn stack import` (pid {taker_pid} on "
        )],
    );
    // Another writer meanwhile is refused too: the lock was neither removed nor shared.
    assert_contains(
        &fails(import(&sandbox, "other", "")),
        &[&format!("(pid {taker_pid} on ")],
    );
    assert_eq!(holder(&lock_file(&sandbox)), u64::from(taker_pid));
    touch(&release(&sandbox, "taker"));
    succeeds(taker);
    assert!(!lock_file(&sandbox).exists());
    assert_eq!(writer(&sandbox), "taker");
}
