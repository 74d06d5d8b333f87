//! The watchdog: a process that outlives cairn just long enough to kill every process group
//! cairn's children lead, so their own children (grandchildren of cairn) die with cairn too,
//! however cairn dies (kill -9 included).
//!
//! The parent-death signal reaches only a direct child; a program's subprocess or a plugin's
//! helper is reparented to init when its parent is killed, and lives on. So cairn forks, on
//! its first child, one watchdog holding one end of a socket pair whose other end only cairn
//! holds (close-on-exec: no child keeps it past exec). Each child, between fork and exec,
//! sends its process group's ID (so it is registered before it can start anything); cairn
//! sends the ID negated once it has killed the group. When the socket reaches end-of-file,
//! cairn is gone (no other process can hold its end): the watchdog sends SIGKILL to every
//! group still registered and exits. A sequenced-packet socket rather than a pipe: each ID is
//! one message, and a send to a watchdog that has gone fails (`MSG_NOSIGNAL`) instead of
//! raising SIGPIPE in a child about to exec.
//!
//! The watchdog is a fork that never execs, of a multi-threaded process: until it exits it
//! calls only async-signal-safe functions (no allocation, no lock; another thread may have
//! held the allocator's lock at fork time). It runs in a process group of its own, ignoring
//! SIGINT, SIGTERM, SIGHUP and SIGQUIT, so Ctrl-C or a signal sent to cairn's group does not
//! stop it before cairn.
//!
//! Limits: a descendant that leaves its group (`setsid`, `setpgid`) is not in reach; catching
//! it would need a cgroup (not delegated to unprivileged processes on common hosts) or a PID
//! namespace (unprivileged user namespaces, disabled on some distributions). A group that
//! emptied while cairn still held its handle (or whose child failed to exec, so no handle was
//! made) is signalled by ID at cairn's death; the kernel does not reuse the ID while a process
//! of the group lives, so only an ID recycled (after the PID space wrapped) could be hit.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// How many groups the watchdog records (it cannot allocate: a fixed array on its stack). A
/// group beyond this is not killed at cairn's death; cairn runs far fewer processes at once.
const CAPACITY: usize = 4096;

/// Cairn's end of the watchdog's socket (close-on-exec).
#[derive(Debug)]
pub(super) struct Watchdog {
    socket: OwnedFd,
}

impl Watchdog {
    /// The process-wide watchdog, forked on first use; `None` when it could not be started
    /// (logged once; children then die with cairn only by their parent-death signal).
    pub(super) fn get() -> Option<&'static Watchdog> {
        static WATCHDOG: OnceLock<Option<Watchdog>> = OnceLock::new();
        WATCHDOG
            .get_or_init(|| match start() {
                Ok(watchdog) => Some(watchdog),
                Err(error) => {
                    tracing::warn!(
                        %error,
                        "could not start the watchdog: processes that plugins or programs \
                         start may outlive cairn if it is killed"
                    );
                    None
                }
            })
            .as_ref()
    }

    /// Cairn's end, for a child to register its group between fork and exec ([`send`]).
    pub(super) fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// Tells the watchdog that group `pgid` was killed: it is not killed again at cairn's
    /// death (its ID may be reused by then).
    pub(super) fn forget(&self, pgid: libc::pid_t) {
        // Failing, the watchdog is gone: there is nothing to tell it.
        let _ = send(self.fd(), -pgid);
    }
}

/// Sends `pgid` (a group to kill at cairn's death, or negated, one to forget) to the watchdog
/// on `fd`. Async-signal-safe: a child calls it between fork and exec.
///
/// Never waits: a watchdog that stopped reading (stopped by a signal, say) must not stop cairn
/// from starting processes; the message is then lost, as it is when the watchdog has gone.
pub(super) fn send(fd: RawFd, pgid: libc::pid_t) -> io::Result<()> {
    let record = pgid.to_ne_bytes();
    let flags = libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT;
    // SAFETY: `record` is a live 4-byte buffer; one send is one message of the socket.
    let sent = unsafe { libc::send(fd, record.as_ptr().cast(), record.len(), flags) };
    if usize::try_from(sent).ok() == Some(record.len()) {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes the socket pair and forks the watchdog.
fn start() -> io::Result<Watchdog> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    let made = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if made != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here alone.
    let (cairns, watchdogs) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let watchdogs_fd = watchdogs.as_raw_fd();
    // SAFETY: getpid has no preconditions.
    let cairn = unsafe { libc::getpid() };
    // SAFETY: in the child, `watch` calls only async-signal-safe functions and never returns.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => unsafe { watch(watchdogs_fd, cairn) },
        _ => Ok(Watchdog { socket: cairns }),
    }
}

/// The watchdog's life: detach from cairn's group, signals and files; record groups until the
/// socket ends; kill them; exit.
///
/// # Safety
/// Only in the child of a fork of `cairn`, holding its end of the socket, `socket`.
unsafe fn watch(socket: RawFd, cairn: libc::pid_t) -> ! {
    // SAFETY (whole function): only async-signal-safe calls on memory of this frame.
    unsafe {
        // Signals meant for cairn's group (Ctrl-C, a kill of the whole job) must not stop the
        // watchdog first: it stops when cairn has gone.
        libc::setpgid(0, 0);
        for signal in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
        ] {
            libc::signal(signal, libc::SIG_IGN);
        }
        // Hold none of cairn's files (its output pipes, its end of the socket): the socket
        // ends only when cairn has gone, and whoever reads cairn's output sees it end with
        // cairn.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        const SOCKET: RawFd = 3;
        if socket != SOCKET {
            // dup2 leaves the copy without close-on-exec, which a process that never execs
            // does not need anyway.
            libc::dup2(socket, SOCKET);
        }
        close_from(SOCKET + 1);
        // Pin no directory (a project's, a test's temporary one).
        libc::chdir(c"/".as_ptr());
        libc::prctl(libc::PR_SET_NAME, c"cairn-watchdog".as_ptr(), 0, 0, 0);

        let mut groups = [0 as libc::pid_t; CAPACITY];
        let mut count = 0usize;
        let mut record = [0u8; 4];
        loop {
            // One message per read: end-of-file (0) once cairn's end is closed everywhere.
            match libc::read(SOCKET, record.as_mut_ptr().cast(), record.len()) {
                0 => break,
                4 => apply(&mut groups, &mut count, libc::pid_t::from_ne_bytes(record)),
                -1 if *libc::__errno_location() == libc::EINTR => {}
                // Any other failure: kill only once cairn has really gone (the watchdog is
                // then no longer its child); while it lives, try again shortly.
                -1 if libc::getppid() != cairn => break,
                -1 => {
                    let pause = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 100_000_000,
                    };
                    libc::nanosleep(&pause, std::ptr::null_mut());
                }
                _ => {}
            }
        }
        for &pgid in groups.get(..count).unwrap_or_default() {
            libc::kill(-pgid, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}

/// Records group `pgid` (positive) or forgets one record of it (negative).
fn apply(groups: &mut [libc::pid_t; CAPACITY], count: &mut usize, pgid: libc::pid_t) {
    if pgid > 1 {
        if let Some(slot) = groups.get_mut(*count) {
            *slot = pgid;
            *count += 1;
        }
    } else if pgid < -1 {
        let live = groups.get(..*count).unwrap_or_default();
        if let Some(at) = live.iter().position(|&g| g == -pgid) {
            groups.swap(at, *count - 1);
            *count -= 1;
        }
    }
}

/// Closes every descriptor from `first` on.
///
/// # Safety
/// Async-signal-safe; the caller must need none of those descriptors.
unsafe fn close_from(first: RawFd) {
    // SAFETY: close_range(2) only closes descriptors.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) };
    if closed == 0 {
        return;
    }
    // Kernels before 5.9: close them one by one, up to the descriptor limit.
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into `limit`.
    let top = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        RawFd::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1 << 20)
    } else {
        1 << 16
    };
    for fd in first..top {
        // SAFETY: closing a descriptor number, open or not.
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_forgets_groups_as_a_multiset() {
        let mut groups = [0; CAPACITY];
        let mut count = 0;
        for pgid in [10, 20, 10, -10, 30, -20, -99, 0, 1, -1] {
            apply(&mut groups, &mut count, pgid);
        }
        let mut live = groups[..count].to_vec();
        live.sort_unstable();
        assert_eq!(live, [10, 30], "one 10 forgotten, the other kept");
    }

    #[test]
    fn a_full_table_drops_new_groups_instead_of_failing() {
        let mut groups = [0; CAPACITY];
        let mut count = 0;
        for pgid in 2..(CAPACITY as i32 + 10) {
            apply(&mut groups, &mut count, pgid);
        }
        assert_eq!(count, CAPACITY);
    }
}
