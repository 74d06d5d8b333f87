//! Plugin processes run in a process group of their own (a terminal's Ctrl-C does not reach
//! them) and are stopped as a whole group: dropping the handle kills the group, including what
//! the plugin started itself; shutting down asks first (SIGTERM) and kills what is left; what
//! a child started dies with the process that started the child, even by kill -9.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_grpc::plugin::{PluginCommand, launch};

/// A plugin that is a shell script printing a port nobody listens on (launch does not connect).
fn script(dir: &tempfile::TempDir, name: &str, body: &str) -> PluginCommand {
    let path = dir.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\necho 1\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    PluginCommand::new(name, path)
}

/// The process group of `pid`, from `/proc/<pid>/stat` (`None` once it is gone or a zombie).
fn group_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // state ppid pgrp ...
    (fields.first() != Some(&"Z"))
        .then(|| fields.get(2)?.parse().ok())
        .flatten()
}

/// The live processes of process group `group`.
fn members(group: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| group_of(*pid) == Some(group))
        .collect()
}

/// Polls `condition` until it holds or `seconds` pass.
async fn within(seconds: u64, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    condition()
}

#[tokio::test]
async fn a_plugin_runs_in_its_own_process_group_which_dies_with_its_handle() {
    let dir = tempfile::tempdir().unwrap();
    // The plugin starts a process of its own, then waits.
    let plugin = script(&dir, "pulumi-resource-family", "sleep 300 &\nsleep 300");
    let process = launch(
        &plugin,
        "127.0.0.1:1",
        Duration::from_secs(10),
        Arc::new(|_, _| {}),
    )
    .await
    .unwrap();
    let pid = process.pid();
    assert_eq!(group_of(pid), Some(pid), "the plugin leads its own group");
    assert_ne!(
        group_of(std::process::id()),
        Some(pid),
        "the test runs in another group"
    );
    // The plugin and its own child: `sh` and the background `sleep` (and the foreground one).
    assert!(
        within(10, || members(pid).len() >= 3).await,
        "{:?}",
        members(pid)
    );
    drop(process);
    assert!(
        within(5, || members(pid).is_empty()).await,
        "left running: {:?}",
        members(pid)
    );
}

#[tokio::test]
async fn shutting_a_plugin_down_asks_it_to_stop_then_kills_its_group() {
    let dir = tempfile::tempdir().unwrap();
    // It says goodbye on SIGTERM (and exits); its background child ignores SIGTERM.
    let plugin = script(
        &dir,
        "pulumi-resource-polite",
        "trap 'echo goodbye >&2; exit 0' TERM\n(trap '' TERM; sleep 300) &\nsleep 300 &\nwait",
    );
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = lines.clone();
    let process = launch(
        &plugin,
        "127.0.0.1:1",
        Duration::from_secs(10),
        Arc::new(move |_, line| seen.lock().unwrap().push(line.to_owned())),
    )
    .await
    .unwrap();
    let pid = process.pid();
    assert!(
        within(10, || members(pid).len() >= 3).await,
        "{:?}",
        members(pid)
    );
    let started = Instant::now();
    process.shutdown(Duration::from_secs(20)).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the plugin exited on SIGTERM; shutdown did not wait out the grace period"
    );
    assert!(
        within(5, || lines.lock().unwrap().iter().any(|l| l == "goodbye")).await,
        "the plugin was asked to stop first: {:?}",
        lines.lock().unwrap()
    );
    assert!(
        within(5, || members(pid).is_empty()).await,
        "left running: {:?}",
        members(pid)
    );
}

/// The parent-death signal follows the *thread* that forked a child; children are forked by a
/// thread that lives as long as the process, so one started from a thread that then ends (a
/// tokio blocking thread expiring, say) lives on.
#[test]
fn a_child_started_from_a_thread_that_ends_outlives_that_thread() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let handle = runtime.handle().clone();
    let (mut child, group) = std::thread::spawn(move || {
        let _entered = handle.enter();
        let mut command = tokio::process::Command::new("sleep");
        command.arg("300");
        cairn_grpc::child::spawn(command).unwrap()
    })
    .join()
    .unwrap();
    let pid = group.id();
    assert_eq!(group_of(pid), Some(pid), "the child leads its own group");
    // Had the ended thread forked it, the kernel would kill it at once.
    let died = runtime.block_on(within(1, || group_of(pid).is_none()));
    assert!(!died, "the child died with the thread that started it");
    drop(group);
    runtime.block_on(async {
        let status = child.wait().await.unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "dropping the group killed it");
    });
}

/// Where [`a_grandchild_dies_with_the_process_that_started_its_parent`] asks this test binary,
/// run again, to record a grandchild's PID (see [`grandchild_starter`]).
const GRANDCHILD_FILE: &str = "CAIRN_TEST_GRANDCHILD_FILE";

/// Not a test of its own: run again by
/// [`a_grandchild_dies_with_the_process_that_started_its_parent`] with [`GRANDCHILD_FILE`] set,
/// it starts a child that starts a grandchild (`sleep`), records the grandchild's PID, and
/// waits to be killed. Without the variable it does nothing.
#[test]
fn grandchild_starter() {
    let Some(file) = std::env::var_os(GRANDCHILD_FILE) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let mut command = tokio::process::Command::new("sh");
    command
        .args([
            "-c",
            "sleep 1000 & echo $! > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"; wait",
            "sh",
        ])
        .arg(&file);
    let _started = cairn_grpc::child::spawn(command).unwrap();
    std::thread::sleep(Duration::from_secs(1000));
}

/// The parent-death signal reaches only a child; its own children die with cairn through the
/// watchdog, which kills the child's group once the process that started it has gone, even by
/// kill -9 (here a copy of this test binary stands in for cairn).
#[test]
fn a_grandchild_dies_with_the_process_that_started_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("grandchild.pid");
    let mut starter = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "processes::grandchild_starter", "--nocapture"])
        .env(GRANDCHILD_FILE, &file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let recorded = || {
        std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
    };
    let started = within_blocking(60, || recorded().is_some());
    let grandchild = recorded();
    if !started {
        let _ = starter.kill();
        let _ = starter.wait();
    }
    let grandchild = grandchild.expect("the starter recorded no grandchild within 60 s");
    assert!(group_of(grandchild).is_some(), "the grandchild runs");
    starter.kill().unwrap();
    starter.wait().unwrap();
    let gone = within_blocking(10, || group_of(grandchild).is_none());
    if !gone {
        // SAFETY: kill(2) on the PID the starter recorded, so the test leaves nothing behind.
        unsafe { libc::kill(grandchild as libc::pid_t, libc::SIGKILL) };
    }
    assert!(
        gone,
        "the grandchild outlived its killed grandparent by 10 s"
    );
}

/// Polls `condition` until it holds or `seconds` pass, outside any runtime.
fn within_blocking(seconds: u64, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}
