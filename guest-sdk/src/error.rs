//! The SDK's error type, which becomes the WIT `provider-error`, and check failures.

use std::fmt;

use crate::value::PropertyMap;

/// What an operation that partly succeeded left behind (e.g. created but not healthy). The engine
/// records it so the resource is not leaked.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartialState {
    pub id: String,
    pub inputs: PropertyMap,
    pub outputs: PropertyMap,
}

/// Why a provider operation failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The operation failed; `partial` is set when it left a real resource behind.
    Failed {
        message: String,
        partial: Option<Box<PartialState>>,
    },
    /// The provider does not implement this method (its WIT name, e.g. `construct`).
    Unimplemented(String),
    /// The operation was cancelled.
    Cancelled,
    /// The operation did not finish within this many seconds.
    Timeout(f64),
}

/// The SDK's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A plain failure.
    pub fn failed(message: impl Into<String>) -> Error {
        Error::Failed {
            message: message.into(),
            partial: None,
        }
    }

    /// A failure that left a resource behind.
    pub fn partial(message: impl Into<String>, state: PartialState) -> Error {
        Error::Failed {
            message: message.into(),
            partial: Some(Box::new(state)),
        }
    }

    /// The method `name` is not implemented.
    pub fn unimplemented(name: impl Into<String>) -> Error {
        Error::Unimplemented(name.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Failed { message, .. } => f.write_str(message),
            Error::Unimplemented(method) => write!(f, "the provider does not implement {method}"),
            Error::Cancelled => f.write_str("the operation was cancelled"),
            Error::Timeout(s) => write!(f, "the operation did not finish within {s} s"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::failed(e.to_string())
    }
}

impl From<CheckFailure> for Error {
    fn from(f: CheckFailure) -> Self {
        Error::failed(f.to_string())
    }
}

impl From<crate::wire::WireError> for Error {
    fn from(e: crate::wire::WireError) -> Self {
        Error::failed(format!("invalid value from the host: {e}"))
    }
}

/// Adds context to any error: `fs::write(p, c).context(format!("writing {p}"))?`.
pub trait Context<T> {
    /// Turns an error into [`Error::Failed`] with `"{message}: {error}"`.
    fn context(self, message: impl fmt::Display) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, message: impl fmt::Display) -> Result<T> {
        self.map_err(|e| Error::failed(format!("{message}: {e}")))
    }
}

// The check failure is shared with the engine (`cairn-wire`).
pub use cairn_wire::CheckFailure;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        assert_eq!(
            Error::unimplemented("call").to_string(),
            "the provider does not implement call"
        );
        let r: std::result::Result<(), &str> = Err("denied");
        assert_eq!(
            r.context("writing a").unwrap_err(),
            Error::failed("writing a: denied")
        );
        assert_eq!(
            CheckFailure::new("path", "must be relative").to_string(),
            "path: must be relative"
        );
        assert_eq!(CheckFailure::new("", "bad").to_string(), "bad");
    }
}
