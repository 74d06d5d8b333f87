//! Write sections: the process-wide count of state writes in progress, so that a signal
//! handler can end the process between writes, never in the middle of one.
//!
//! Every write of a stack (checkpoint, journal, history, tags, removal, rename) and every
//! [`crate::file::write_atomically`] runs in a [`WriteSection`]; a command whose write spans
//! several of them (a stack rename, `state move`) holds one section around them all. When the
//! CLI receives Ctrl-C outside a deployment it calls [`stop`]: the writes in progress finish,
//! none starts after, and the process exits with every file whole.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

struct Writes {
    /// Threads inside a section.
    active: usize,
    /// Set by [`stop`]: no section starts any more.
    stopping: bool,
}

static WRITES: Mutex<Writes> = Mutex::new(Writes {
    active: 0,
    stopping: false,
});
static CHANGED: Condvar = Condvar::new();

thread_local! {
    /// How deep this thread is in nested sections (only the outermost one counts).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

fn writes() -> MutexGuard<'static, Writes> {
    WRITES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A write in progress on this thread; it ends when dropped.
#[must_use = "the section ends when dropped"]
pub struct WriteSection {
    /// Bound to its thread: the nesting depth is the thread's.
    _thread: PhantomData<*const ()>,
}

/// Starts a write section. Sections nest; once the process is stopping ([`stop`]), a new
/// outermost section waits for the exit instead of starting.
pub fn section() -> WriteSection {
    let depth = DEPTH.get();
    if depth == 0 {
        let mut state = writes();
        while state.stopping {
            state = CHANGED.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.active += 1;
        drop(state);
        test_hook::pause();
    }
    DEPTH.set(depth + 1);
    WriteSection {
        _thread: PhantomData,
    }
}

impl Drop for WriteSection {
    fn drop(&mut self) {
        let depth = DEPTH.get().saturating_sub(1);
        DEPTH.set(depth);
        if depth == 0 {
            let mut state = writes();
            state.active = state.active.saturating_sub(1);
            CHANGED.notify_all();
        }
    }
}

/// Whether a write is in progress on any thread.
pub fn in_progress() -> bool {
    writes().active > 0
}

/// Lets the writes in progress finish, and starts no new one: for a process about to exit.
/// Returns once no write is in progress.
pub fn stop() {
    let mut state = writes();
    state.stopping = true;
    while state.active > 0 {
        state = CHANGED.wait(state).unwrap_or_else(PoisonError::into_inner);
    }
}

/// A test-only hook: `CAIRN_TEST_WRITE_PAUSE=<file>` makes the first write section of the
/// process write `<file>.reached` and wait until `<file>` exists (at most a minute), so tests
/// can interrupt a command in the middle of a write. Unset, it costs one variable lookup.
mod test_hook {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    static PAUSED: AtomicBool = AtomicBool::new(false);

    pub fn pause() {
        let Some(file) = std::env::var_os("CAIRN_TEST_WRITE_PAUSE") else {
            return;
        };
        if PAUSED.swap(true, Ordering::SeqCst) {
            return;
        }
        let release = PathBuf::from(&file);
        let mut reached = release.clone().into_os_string();
        reached.push(".reached");
        let _ = std::fs::write(&reached, std::process::id().to_string());
        let deadline = Instant::now() + Duration::from_secs(60);
        while !release.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_sections_count_once_and_end_with_the_outermost() {
        // Other tests write in parallel: only this thread's depth is certain.
        let outer = section();
        let inner = section();
        assert_eq!(DEPTH.get(), 2);
        assert!(in_progress());
        drop(inner);
        assert_eq!(DEPTH.get(), 1, "the outer section still runs");
        drop(outer);
        assert_eq!(DEPTH.get(), 0);
    }
}
