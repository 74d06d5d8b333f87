//! Where provider output goes: `host.log` calls, captured stdout/stderr and sandbox notices,
//! as [`LogRecord`]s handed to a [`LogSink`] the loader is given.
//!
//! # Guests cannot flood the log
//!
//! `host.log` messages are cut to 64 KiB, at most 1 MiB per call is kept, and at most 16 MiB of log
//! output (`host.log`, stdout, stderr) per provider or program run per deployment; what is dropped
//! is counted in a note.
//!
//! # Log floods are dropped, not fatal
//!
//! Stdout/stderr over 1 MiB in a call still trap (as before); `host.log` over its caps is dropped
//! with a note, so a chatty provider keeps working.

use std::sync::Arc;

use cairn_engine::deploy::events::{EngineEvent, EventSink, Severity};
use cairn_engine::urn::Urn;

/// Where a log record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogSource {
    /// The provider called `host.log`.
    Host,
    /// A line the provider wrote to stdout.
    Stdout,
    /// A line the provider wrote to stderr.
    Stderr,
    /// The host, about the provider's sandbox (for example a capability it requested but was
    /// not granted).
    Sandbox,
}

/// One message from (or about) a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    /// `name@version`.
    pub provider: String,
    pub severity: Severity,
    /// The resource the message is about: the one given to `host.log`, else the resource of
    /// the call in progress.
    pub urn: Option<Urn>,
    pub message: String,
    pub source: LogSource,
}

/// Receives provider log records; called from many tasks, must not block for long.
pub type LogSink = Arc<dyn Fn(LogRecord) + Send + Sync>;

/// A sink that forwards records to the engine's event stream as diagnostics, the message
/// prefixed with the provider (`random@1.2.3: …`).
pub fn events_log_sink(events: Arc<dyn EventSink>) -> LogSink {
    Arc::new(move |record: LogRecord| {
        events.emit(EngineEvent::Diagnostic {
            severity: record.severity,
            urn: record.urn,
            message: format!("{}: {}", record.provider, record.message),
        })
    })
}

/// A sink that writes records as `tracing` events (target `cairn_wasm::guest`), with control
/// characters made visible (a subscriber may print them to a terminal).
pub fn tracing_log_sink() -> LogSink {
    Arc::new(|mut record: LogRecord| {
        let urn = record
            .urn
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        if let std::borrow::Cow::Owned(shown) = cairn_engine::text::visible_text(&record.message) {
            record.message = shown;
        }
        match record.severity {
            Severity::Debug => {
                tracing::debug!(target: "cairn_wasm::guest", provider = %record.provider, urn, "{}", record.message)
            }
            Severity::Info => {
                tracing::info!(target: "cairn_wasm::guest", provider = %record.provider, urn, "{}", record.message)
            }
            Severity::Warning => {
                tracing::warn!(target: "cairn_wasm::guest", provider = %record.provider, urn, "{}", record.message)
            }
            Severity::Error => {
                tracing::error!(target: "cairn_wasm::guest", provider = %record.provider, urn, "{}", record.message)
            }
        }
    })
}
