//! No process outlives a cairn killed with kill -9: not the programs and plugins it started
//! (the kernel's parent-death signal), and not what those started in turn, such as a Python
//! program's subprocess or a dynamic provider's helper (cairn's watchdog kills their process
//! groups once cairn has gone), whether cairn alone is killed or its whole process group.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Sandbox, python};

/// How long the program and its provider may take to start their helpers (Python and the
/// Pulumi SDK start slowly on a loaded machine).
const START_DEADLINE: Duration = Duration::from_secs(120);

/// How long the helpers may outlive a killed cairn.
const STOP_DEADLINE: Duration = Duration::from_secs(10);

/// A Python program that starts `sleep 1000` itself and, through a dynamic resource, in its
/// provider's process, recording each helper's PID in the directory `dir` (config); the
/// resource's create never returns, so the update is under way when cairn is killed.
const PROGRAM: &str = r#"
import os
import subprocess
import time

import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


def record(path, pid):
    with open(path + ".tmp", "w") as f:
        f.write(str(pid))
    os.rename(path + ".tmp", path)


class Spawner(ResourceProvider):
    def create(self, props):
        helper = subprocess.Popen(["sleep", "1000"])
        record(os.path.join(props["dir"], "provider.pid"), helper.pid)
        time.sleep(1000)
        return CreateResult("never", props)


class Spawned(Resource):
    def __init__(self, name, dir):
        super().__init__(Spawner(), name, {"dir": dir})


dir = pulumi.Config().require("dir")
helper = subprocess.Popen(["sleep", "1000"])
record(os.path.join(dir, "program.pid"), helper.pid)
Spawned("spawner", dir)
"#;

/// `(state, parent PID)` of process `pid` from `/proc/<pid>/stat`; `None` once it is gone.
fn stat(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    Some((state, parent))
}

/// Whether `pid` runs (a zombie has ended: only its exit status waits to be collected).
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z')
}

/// Polls `done` until it holds or `deadline` passes; whether it held.
fn within(deadline: Duration, mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + deadline;
    while Instant::now() < end {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// The PID recorded in `path`, once there.
fn recorded(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Kills what a failed test leaves running (cairn, the helpers it should have taken along).
struct Cleanup {
    cairn: Child,
    helpers: Vec<u32>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = self.cairn.kill();
        let _ = self.cairn.wait();
        for pid in &self.helpers {
            if alive(*pid) {
                // SAFETY: kill(2) on a PID this test recorded; no memory is involved.
                unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
            }
        }
    }
}

#[test]
fn kill_9_of_cairn_takes_the_grandchildren_along() {
    grandchildren_die_with_cairn("kill -9 of cairn", |cairn| cairn);
}

/// A whole job killed at once (a CI runner stopping a job's process group): the watchdog, in a
/// group of its own, outlives cairn and stops the grandchildren.
#[test]
fn kill_9_of_cairns_process_group_takes_the_grandchildren_along() {
    grandchildren_die_with_cairn("kill -9 of cairn's process group", |cairn| -cairn);
}

/// Runs the program under `cairn up`, waits for both helpers, sends SIGKILL to `target(cairn's
/// PID)` (a PID, or a negated group ID), and checks that the helpers are gone soon after.
fn grandchildren_die_with_cairn(what: &str, target: impl Fn(libc::pid_t) -> libc::pid_t) {
    let venv = python();
    let venv = venv.parent().unwrap().parent().unwrap();
    let sandbox = Sandbox::new("grandchildren");
    sandbox.write("__main__.py", PROGRAM);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: grandchildren\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
            venv.display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    let pids = sandbox.root().join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    sandbox.ok(&["config", "set", "dir", pids.to_str().unwrap()]);

    let log = sandbox.root().join("up.log");
    let out = std::fs::File::create(&log).unwrap();
    let cairn = {
        use std::os::unix::process::CommandExt;
        sandbox
            .command(&["up", "--yes"])
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            // As a shell starts a job: a kill of this group reaches cairn, not this test.
            .process_group(0)
            .spawn()
            .expect("run cairn")
    };
    let cairn_pid = cairn.id();
    let mut cleanup = Cleanup {
        cairn,
        helpers: Vec::new(),
    };
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();

    let started = within(START_DEADLINE, || {
        ["program.pid", "provider.pid"]
            .iter()
            .all(|name| recorded(&pids.join(name)).is_some())
    });
    assert!(started, "the helpers did not start:\n{}", log_text());
    let helpers: Vec<u32> = ["program.pid", "provider.pid"]
        .iter()
        .map(|name| recorded(&pids.join(name)).unwrap())
        .collect();
    cleanup.helpers = helpers.clone();
    for &helper in &helpers {
        assert!(alive(helper), "helper {helper} is not running");
        // A grandchild of cairn: its parent (the program or the provider) is cairn's child.
        let (_, parent) = stat(helper).unwrap();
        assert_ne!(parent, cairn_pid, "helper {helper} is cairn's own child");
        assert_eq!(
            stat(parent).map(|(_, grandparent)| grandparent),
            Some(cairn_pid),
            "helper {helper}'s parent {parent} is not cairn's child"
        );
    }

    let killed = Instant::now();
    // SAFETY: kill(2) on the cairn this test started (or its process group, which is its own).
    unsafe { libc::kill(target(cairn_pid as libc::pid_t), libc::SIGKILL) };
    let _ = cleanup.cairn.wait();
    let gone = within(STOP_DEADLINE, || !helpers.iter().any(|&pid| alive(pid)));
    let left: Vec<u32> = helpers.iter().copied().filter(|&pid| alive(pid)).collect();
    assert!(
        gone,
        "still running {STOP_DEADLINE:?} after {what}: {left:?}\n{}",
        log_text()
    );
    // How long the helpers outlived cairn (shown with --nocapture).
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("helpers gone {:?} after {what}\n", killed.elapsed()).as_bytes(),
    );
}
