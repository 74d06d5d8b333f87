//! Ctrl-C (SIGINT) and SIGTERM while a command runs.
//!
//! The first signal during a deployment that acts (`up`, `refresh`, `destroy`) interrupts it
//! gracefully: nothing new starts, the program's further requests are refused, operations in
//! flight finish and are recorded, the state is saved and the summary printed; the command then
//! fails with [`Interrupted`] and cairn exits with 128 + the signal's number (130, 143).
//!
//! Any other command that writes (a stack's state, its settings file, the workspace) stops at
//! the first signal, but never in the middle of a write: a write in progress completes (see
//! `cairn_backend::writes`), none starts after it, the stack locks this process holds are
//! removed, and cairn exits with the same status. So does a preview, and a deploying command
//! before or between its deployments.
//!
//! A second signal stops at once: the stack locks this process holds are removed and cairn
//! exits. Operations still in flight are then left pending (their begin records are durable),
//! and the next command reports them; a file being written keeps its old contents (writes go
//! to a temporary file renamed into place).
//!
//! The wording follows Pulumi's (`^C received; cancelling. If you would like to terminate
//! immediately, press ^C again.`), saying what is waited for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use anyhow::{Context as _, Result};
use cairn_engine::deploy::Interrupter;

use crate::terminal::errln;

/// A signal that ends a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Signal {
    fn number(self) -> u8 {
        match self {
            Signal::Interrupt => 2,
            Signal::Terminate => 15,
        }
    }

    /// The conventional exit status of a process ended by this signal.
    pub fn exit_code(self) -> u8 {
        128 + self.number()
    }

    fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "^C",
            Signal::Terminate => "SIGTERM",
        }
    }

    fn again(self) -> &'static str {
        match self {
            Signal::Interrupt => "press ^C again",
            Signal::Terminate => "send SIGTERM again",
        }
    }
}

/// The error of a command ended by a signal (after its deployment saved what it did); `main`
/// exits with the signal's status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Interrupted {
    pub signal: Signal,
    message: String,
}

impl Interrupted {
    /// The error of a command interrupted by `signal`; `message` says what happened.
    pub fn new(signal: Signal, message: String) -> Interrupted {
        Interrupted { signal, message }
    }
}

/// Listens for SIGINT and SIGTERM for the rest of the process (once a signal has a handler, its
/// default action is gone for good, so there is one listener, installed first).
pub struct Signals {
    shared: Arc<Mutex<Shared>>,
}

#[derive(Default)]
struct Shared {
    /// The first signal received.
    first: Option<Signal>,
    /// The deployment running now, if any.
    running: Option<Running>,
}

/// What a signal acts on while a deployment runs.
struct Running {
    interrupter: Interrupter,
    preview: bool,
    /// How many operations are in flight now.
    in_flight: Box<dyn Fn() -> usize + Send>,
    /// The deployment's runtime, where the interruption runs (its providers' clients live
    /// there).
    runtime: Option<tokio::runtime::Handle>,
}

static SIGNALS: OnceLock<Signals> = OnceLock::new();

/// Installs the process's signal listener, on a thread of its own (it must answer while the
/// main thread is busy, at a prompt or in a write); later calls return the one installed.
pub fn install() -> Result<&'static Signals> {
    if let Some(signals) = SIGNALS.get() {
        return Ok(signals);
    }
    let signals = Signals::start()?;
    Ok(SIGNALS.get_or_init(|| signals))
}

impl Signals {
    fn start() -> Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the signal listener")?;
        // Registered before this returns, so no signal slips between install and listening.
        let (mut interrupt, mut terminate) = {
            let _entered = runtime.enter();
            (
                signal(SignalKind::interrupt()).context("installing the SIGINT handler")?,
                signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
            )
        };
        let shared = Arc::new(Mutex::new(Shared::default()));
        let handler = shared.clone();
        std::thread::Builder::new()
            .name("cairn-signals".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    loop {
                        let signal = tokio::select! {
                            Some(()) = interrupt.recv() => Signal::Interrupt,
                            Some(()) = terminate.recv() => Signal::Terminate,
                            else => return,
                        };
                        on_signal(&handler, signal);
                    }
                })
            })
            .context("starting the signal listener")?;
        Ok(Signals { shared })
    }

    /// Makes signals act on `interrupter`'s deployment until the guard is dropped.
    pub fn running(
        &self,
        interrupter: Interrupter,
        preview: bool,
        in_flight: impl Fn() -> usize + Send + 'static,
    ) -> RunningGuard<'_> {
        lock(&self.shared).running = Some(Running {
            interrupter,
            preview,
            in_flight: Box::new(in_flight),
            runtime: tokio::runtime::Handle::try_current().ok(),
        });
        RunningGuard { signals: self }
    }

    /// The signal received, if any.
    pub fn received(&self) -> Option<Signal> {
        lock(&self.shared).first
    }
}

/// Ends what [`Signals::running`] started.
pub struct RunningGuard<'a> {
    signals: &'a Signals,
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        lock(&self.signals.shared).running = None;
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

fn on_signal(shared: &Mutex<Shared>, signal: Signal) {
    let mut state = lock(shared);
    if state.first.is_some() {
        stop_now(
            signal,
            "stopping at once; operations still in flight are left pending, and the next \
             command reports them",
        );
    }
    state.first = Some(signal);
    match &state.running {
        Some(running) if !running.preview => {
            let waiting = match (running.in_flight)() {
                0 => "waiting for the deployment to record what it did".to_owned(),
                1 => "waiting for 1 operation in flight to finish".to_owned(),
                n => format!("waiting for {n} operations in flight to finish"),
            };
            errln!(
                "{} received; interrupting: {waiting} (nothing new starts). To stop at once, {}; \
                 operations still in flight are then left pending.",
                signal.name(),
                signal.again()
            );
            let interrupter = running.interrupter.clone();
            let interrupt = async move { interrupter.interrupt().await };
            match &running.runtime {
                Some(runtime) => drop(runtime.spawn(interrupt)),
                None => drop(tokio::spawn(interrupt)),
            }
        }
        Some(_) => stop_after_writes(signal, "stopping the preview"),
        None => stop_after_writes(signal, "stopping"),
    }
}

/// Set once a signal is to stop the process after the writes in progress (a thread of its own
/// then exits): the command's end must not win the race and exit with its own status.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Called when the command has ended: if a signal is stopping the process, waits for that
/// (which exits with the signal's status) instead of returning.
pub fn await_stop() {
    if STOPPING.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// Stops once the write in progress, if any, has completed, and before another starts: on a
/// thread of its own, so that a second signal is still heard (and stops at once).
fn stop_after_writes(signal: Signal, what: &'static str) {
    let writing = cairn_backend::writes::in_progress();
    if writing {
        errln!(
            "{} received; {what} once the write in progress completes (files are written \
             whole, never in part). To stop at once, {}.",
            signal.name(),
            signal.again()
        );
    } else {
        errln!(
            "{} received; {what} (no write was in progress)",
            signal.name()
        );
    }
    STOPPING.store(true, Ordering::SeqCst);
    let stopper = std::thread::Builder::new()
        .name("cairn-stop".to_owned())
        .spawn(move || stop_when_written(signal, writing));
    if stopper.is_err() {
        // No thread to wait on: this one waits (a second signal then goes unheard).
        stop_when_written(signal, writing);
    }
}

fn stop_when_written(signal: Signal, writing: bool) -> ! {
    cairn_backend::writes::stop();
    if writing {
        errln!("The write completed; stopped before anything more was written.");
    }
    exit(signal)
}

/// Removes the stack locks this process holds and exits at once, writes in progress or not.
/// Child processes end with it (they die with their parent); the kernel releases the locks'
/// file locks.
fn stop_now(signal: Signal, what: &str) -> ! {
    errln!("{} received; {what}", signal.name());
    exit(signal)
}

fn exit(signal: Signal) -> ! {
    cairn_backend::release_held_locks();
    std::process::exit(i32::from(signal.exit_code()))
}
