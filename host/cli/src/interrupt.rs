//! Ctrl-C (SIGINT) and SIGTERM while a command runs.
//!
//! The first signal during a deployment that acts (`up`, `refresh`, `destroy`) interrupts it
//! gracefully: nothing new starts, the program's further requests are refused, operations in
//! flight finish and are recorded, the state is saved and the summary printed; the command then
//! fails with [`Interrupted`] and cairn exits with 128 + the signal's number (130, 143).
//!
//! A second signal, or the first one when there is nothing to wait for (a preview, which acts on
//! nothing; no deployment running yet), stops at once: the stack locks this process holds are
//! removed and cairn exits. Operations still in flight are then left pending (their begin
//! records are durable), and the next command reports them.
//!
//! The wording follows Pulumi's (`^C received; cancelling. If you would like to terminate
//! immediately, press ^C again.`), saying what is waited for.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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
}

impl Signals {
    /// Installs the handlers on `runtime`, which runs them (also while the main thread is busy
    /// elsewhere, e.g. at a prompt).
    pub fn install(runtime: &tokio::runtime::Runtime) -> Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        let _entered = runtime.enter();
        let mut interrupt =
            signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
        let mut terminate =
            signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
        let shared = Arc::new(Mutex::new(Shared::default()));
        let handler = shared.clone();
        runtime.spawn(async move {
            loop {
                let signal = tokio::select! {
                    Some(()) = interrupt.recv() => Signal::Interrupt,
                    Some(()) = terminate.recv() => Signal::Terminate,
                    else => return,
                };
                on_signal(&handler, signal);
            }
        });
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
            tokio::spawn(async move { interrupter.interrupt().await });
        }
        Some(_) => stop_now(signal, "stopping the preview"),
        None => stop_now(signal, "stopping"),
    }
}

/// Removes the stack locks this process holds and exits at once. Child processes end with it
/// (they die with their parent); the kernel releases the locks' file locks.
fn stop_now(signal: Signal, what: &str) -> ! {
    errln!("{} received; {what}", signal.name());
    cairn_backend::release_held_locks();
    std::process::exit(i32::from(signal.exit_code()))
}
