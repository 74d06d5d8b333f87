//! Child processes the bridge starts (provider plugins, dynamic providers, SDK programs): each
//! in a process group of its own, killed by the kernel when cairn dies, and stopped as a whole
//! group when cairn is done with it.
//!
//! * **Own process group** (`setpgid(0, 0)`, as Pulumi's `cmdutil.RegisterProcessGroup`): a
//!   terminal sends Ctrl-C to its foreground process group, which is cairn's alone, so cairn
//!   decides how its children stop.
//! * **Parent-death signal** (Linux `PR_SET_PDEATHSIG` = SIGKILL, set between fork and exec):
//!   when cairn dies, even by kill -9, the kernel kills the child. The signal fires when the
//!   *thread* that forked the child exits, and tokio's threads come and go (blocking-pool
//!   threads expire when idle, `block_in_place` retires workers), so every child is forked by
//!   one thread that lives as long as the process ([`spawn`]). After setting the signal the
//!   child checks that its parent is still cairn: if cairn died in between, it does not start.
//! * **Stopped as a group** ([`ProcessGroup`]): dropping the handle kills the whole group, the
//!   child's own children included; [`ProcessGroup::stop`] asks first (SIGTERM) and kills after
//!   a grace period.
//!
//! * **Grandchildren too** ([`watchdog`]): the parent-death signal reaches only the direct
//!   child (the kernel clears it across fork). Every child registers its group, between fork
//!   and exec, with a watchdog process that kills each registered group once cairn has gone,
//!   so what a child started itself dies with cairn as well, even when cairn is killed with
//!   kill -9. A descendant that leaves its group (`setsid`, `setpgid`) is out of its reach.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::process::{Child, Command};

#[cfg(target_os = "linux")]
mod watchdog;

#[cfg(target_os = "linux")]
use watchdog::Watchdog;

/// A child's process group (its ID is the child's PID). Dropping it kills the group, or, when
/// made with a grace period ([`ProcessGroup::with_grace_on_drop`]), asks it to stop (SIGTERM)
/// and kills it after that period.
#[derive(Debug)]
pub struct ProcessGroup {
    pgid: libc::pid_t,
    /// Set once the group was killed: it is not signalled again (its ID may be reused).
    done: AtomicBool,
    grace_on_drop: Option<Duration>,
}

impl ProcessGroup {
    /// The group's ID (the child's PID).
    pub fn id(&self) -> u32 {
        self.pgid.unsigned_abs()
    }

    /// Stops the group gracefully when dropped: SIGTERM at once, SIGKILL after `grace` (from a
    /// thread of its own, so a drop never waits).
    pub fn with_grace_on_drop(mut self, grace: Duration) -> ProcessGroup {
        self.grace_on_drop = Some(grace);
        self
    }

    /// Sends `signal` to every process of the group; false when none is left.
    fn signal(&self, signal: libc::c_int) -> bool {
        if self.done.load(Ordering::SeqCst) || self.pgid <= 1 {
            return false;
        }
        // SAFETY: kill(2) with a negative PID signals a process group; no memory is involved.
        unsafe { libc::kill(-self.pgid, signal) == 0 }
    }

    /// Kills every process of the group (SIGKILL).
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
        if !self.done.swap(true, Ordering::SeqCst) {
            forget(self.pgid);
        }
    }

    /// Asks the group to stop (SIGTERM), waits up to `grace` for `child` (the group's leader)
    /// to exit, then kills what is left of the group.
    pub async fn stop(&self, child: &mut Child, grace: Duration) {
        if self.signal(libc::SIGTERM) {
            let _ = tokio::time::timeout(grace, child.wait()).await;
        }
        self.kill();
        let _ = child.wait().await;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if self.done.load(Ordering::SeqCst) {
            return;
        }
        let Some(grace) = self.grace_on_drop else {
            self.kill();
            return;
        };
        let pgid = self.pgid;
        if !self.signal(libc::SIGTERM) {
            // The group is gone already: the watchdog need not kill it at cairn's death.
            forget(pgid);
            return;
        }
        let stopper = std::thread::Builder::new()
            .name("cairn-stop-group".into())
            .spawn(move || {
                let deadline = std::time::Instant::now() + grace;
                // SAFETY: signal 0 only checks that the group still exists.
                while std::time::Instant::now() < deadline && unsafe { libc::kill(-pgid, 0) } == 0 {
                    std::thread::sleep(Duration::from_millis(50));
                }
                // SAFETY: as above; SIGKILL to what is left of the group.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
                forget(pgid);
            });
        if stopper.is_err() {
            self.kill();
        }
    }
}

/// Starts `command` as a child in its own process group that dies with cairn (see the module
/// documentation); returns the child and its group. Must be called within a tokio runtime.
pub fn spawn(mut command: Command) -> io::Result<(Child, ProcessGroup)> {
    command.process_group(0);
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getpid has no preconditions.
        let cairn = unsafe { libc::getpid() };
        let watchdog = Watchdog::get().map(Watchdog::fd);
        // SAFETY: the hook runs in the forked child before exec and calls only
        // async-signal-safe functions (prctl, getppid, getpid, send), allocating nothing.
        unsafe {
            command.pre_exec(move || {
                let signal = libc::SIGKILL as libc::c_ulong;
                if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // Cairn died between fork and prctl: the signal will never come.
                if libc::getppid() != cairn {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                // Registered before exec, so before the child can start anything. The group's
                // ID is the child's PID (`process_group(0)`). A watchdog that has gone cannot
                // be told; the child still dies with cairn by the signal above.
                if let Some(fd) = watchdog {
                    let _ = watchdog::send(fd, libc::getpid());
                }
                Ok(())
            });
        }
    }
    let child = on_spawner_thread(command)?;
    let pid = child
        .id()
        .and_then(|pid| libc::pid_t::try_from(pid).ok())
        .ok_or_else(|| io::Error::other("the started process has no process ID"))?;
    Ok((
        child,
        ProcessGroup {
            pgid: pid,
            done: AtomicBool::new(false),
            grace_on_drop: None,
        },
    ))
}

/// Tells the watchdog that group `pgid` was killed (it is not killed again at cairn's death).
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
fn forget(pgid: libc::pid_t) {
    #[cfg(target_os = "linux")]
    if let Some(watchdog) = Watchdog::get() {
        watchdog.forget(pgid);
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The thread every child is forked from: it lives as long as the process (it waits for jobs
/// on a channel whose sender is never dropped), so a child's parent-death signal fires only
/// when cairn itself dies.
fn spawner() -> Option<&'static Mutex<mpsc::Sender<Job>>> {
    static SPAWNER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            let (jobs, receiver) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("cairn-spawner".into())
                .spawn(move || {
                    for job in receiver {
                        // A job that panics must not end the thread (and kill every child).
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                })
                .ok()?;
            Some(Mutex::new(jobs))
        })
        .as_ref()
}

/// Spawns `command` on the spawner thread (inside the caller's runtime, which reaps it).
fn on_spawner_thread(mut command: Command) -> io::Result<Child> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| io::Error::other("processes are started only within a tokio runtime"))?;
    let spawner = spawner()
        .ok_or_else(|| io::Error::other("the thread that starts processes could not be created"))?;
    let (reply, answer) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _entered = runtime.enter();
        let _ = reply.send(command.spawn());
    });
    spawner
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .send(job)
        .map_err(|_| io::Error::other("the thread that starts processes has stopped"))?;
    answer
        .recv()
        .map_err(|_| io::Error::other("the thread that starts processes failed"))?
}
