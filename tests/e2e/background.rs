//! `cairn` running in the background: started with its output going to files, watched by
//! polling for conditions with a deadline (never by sleeping a fixed time), signalled, and
//! waited for.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A `cairn` process started by [`Background::spawn`]; killed if still running when dropped.
pub struct Background {
    pub child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Background {
    /// Starts `command` with stdout and stderr written to `<dir>/<name>.stdout` / `.stderr`.
    pub fn spawn(mut command: Command, dir: &Path, name: &str) -> Background {
        let stdout = dir.join(format!("{name}.stdout"));
        let stderr = dir.join(format!("{name}.stderr"));
        let child = command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("start cairn");
        Background {
            child,
            stdout,
            stderr,
        }
    }

    /// Whether the process has exited.
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Sends `signal` (`INT`, `TERM`, ...) to the process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args(["-s", signal, &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -s {signal} {} failed", self.pid());
    }

    /// Waits (at most `limit`) for the process to exit.
    pub fn wait(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "cairn (pid {}) still runs after {limit:?}; stderr:\n{}",
                self.pid(),
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until `condition` holds, failing with this process's stderr after `limit` or if the
    /// process exits first.
    pub fn wait_for(&mut self, what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !condition() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "cairn exited ({status}) before {what}; stdout:\n{}\nstderr:\n{}",
                    self.stdout(),
                    self.stderr()
                );
            }
            assert!(
                Instant::now() < deadline,
                "no {what} after {limit:?}; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Background {
    /// Waits (at most `limit`) until the process has written `text` to stderr.
    pub fn wait_for_stderr(&mut self, text: &str, limit: Duration) {
        let path = self.stderr.clone();
        self.wait_for(&format!("{text:?} on stderr"), limit, || {
            std::fs::read_to_string(&path).is_ok_and(|s| s.contains(text))
        });
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates `path` (empty): opens a gate, releases a paused process.
pub fn touch(path: &Path) {
    std::fs::write(path, b"").unwrap();
}
