//! Logging through the host's `log` import: messages show with the deployment's progress.
//!
//! `urn` names the resource a message is about; pass `""` for the provider as a whole. Outside
//! a component (native unit tests) messages go to standard error instead.

/// How severe a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Warning,
    Error,
}

/// Logs `message` at `level`.
pub fn log(level: Level, urn: &str, message: &str) {
    let urn = (!urn.is_empty()).then_some(urn);
    #[cfg(target_family = "wasm")]
    {
        use crate::bindings::cairn::deploy::host::{Severity, log};
        let severity = match level {
            Level::Debug => Severity::Debug,
            Level::Info => Severity::Info,
            Level::Warning => Severity::Warning,
            Level::Error => Severity::Error,
        };
        log(severity, urn, message);
    }
    #[cfg(not(target_family = "wasm"))]
    eprintln!(
        "[{level:?}] {}{message}",
        urn.map(|u| format!("{u}: ")).unwrap_or_default()
    );
}

pub fn debug(urn: &str, message: impl AsRef<str>) {
    log(Level::Debug, urn, message.as_ref());
}

pub fn info(urn: &str, message: impl AsRef<str>) {
    log(Level::Info, urn, message.as_ref());
}

pub fn warn(urn: &str, message: impl AsRef<str>) {
    log(Level::Warning, urn, message.as_ref());
}

pub fn error(urn: &str, message: impl AsRef<str>) {
    log(Level::Error, urn, message.as_ref());
}
