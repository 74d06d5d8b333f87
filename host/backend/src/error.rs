//! Why a backend operation failed: [`BackendError`]. Its messages are the ones people see (a
//! caller prints an error and then each `source()` under it, as the `cairn` CLI does), so a
//! variant that wraps a cause says what was being done, and the cause says why.

use std::error::Error;
use std::io;
use std::path::PathBuf;

use cairn_engine::deploy::journal::JournalError;
use cairn_engine::state::integrity::IntegrityError;
use cairn_engine::state::{DEPLOYMENT_VERSION, StateError};
use cairn_engine::text::quoted;

use crate::LockHolder;
use crate::names::NameError;

/// A backend operation's result.
pub type Result<T, E = BackendError> = std::result::Result<T, E>;

/// Why a backend operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// A stack or project name that breaks its rule.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The backend URL, or a setting from the environment for it (the libpq variables,
    /// `sslmode`, `sslrootcert`), is unusable; the message says which and why.
    #[error("{0}")]
    Config(String),
    /// `CAIRN_STATE_HISTORY` is not a number.
    #[error("CAIRN_STATE_HISTORY must be a number of versions to keep, got {value:?}")]
    HistoryLimit {
        value: String,
        #[source]
        source: std::num::ParseIntError,
    },
    /// A URL that names no kind of backend Cairn has (shown with any password redacted).
    #[error(
        "unsupported backend URL {}: Cairn keeps state in a local directory \
         (file://<directory>) or a PostgreSQL database (postgres://[user@]host[:port]/database)",
        quoted(.url)
    )]
    UnsupportedUrl { url: String },
    /// No such stack; `location` is where its checkpoint would be.
    #[error(
        "stack {stack:?} does not exist{}",
        .location.as_ref().map(|l| format!(" (no {l})")).unwrap_or_default()
    )]
    NoSuchStack {
        stack: String,
        location: Option<String>,
    },
    /// The stack a write was for disappeared (`place` names it and the backend).
    #[error("{place} does not exist")]
    Vanished { place: String },
    #[error("stack {stack:?} already exists")]
    StackExists { stack: String },
    /// Another process (or session) holds the stack's lock: `holder`, if it said who it is.
    #[error("{message}")]
    Locked {
        stack: String,
        holder: Option<Box<LockHolder>>,
        message: String,
    },
    /// The lock file kept being removed or replaced while this process tried to lock it.
    #[error("could not lock stack {stack:?}: the lock file {} kept being replaced", .path.display())]
    LockReplaced { stack: String, path: PathBuf },
    /// The stored checkpoint is of another format version.
    #[error(
        "{location}: unsupported checkpoint version {found} (this version of Cairn reads version {DEPLOYMENT_VERSION})"
    )]
    UnsupportedCheckpoint { location: String, found: u64 },
    /// The stored checkpoint is not a stack checkpoint.
    #[error("{location} is not a valid stack checkpoint")]
    MalformedCheckpoint {
        location: String,
        #[source]
        source: serde_json::Error,
    },
    /// The stack's state could not be decoded.
    #[error("reading the state of stack {stack:?}")]
    State {
        stack: String,
        #[source]
        source: Box<StateError>,
    },
    /// The stack's state fails the integrity check: every problem, and how to fix them.
    #[error(
        "the state of stack {stack:?} is refused: {problems}\n`cairn state repair` fixes what can be fixed safely (it shows the changes first); `cairn stack export` and `cairn stack import` let you edit the rest by hand"
    )]
    Inconsistent {
        stack: String,
        problems: IntegrityError,
    },
    /// The journal of an interrupted deployment cannot be replayed onto the checkpoint
    /// (`journal` and `checkpoint` say where they are; the checkpoint is left as it was).
    #[error(
        "cannot recover stack {stack:?} from the journal of its interrupted deployment, {journal} \
         (the checkpoint {checkpoint} is unchanged); if the journal belongs to another checkpoint, \
         move it out of the way"
    )]
    Unrecoverable {
        stack: String,
        journal: String,
        checkpoint: String,
        #[source]
        source: Box<ReplayError>,
    },
    /// A stored record (an update, a tags file, a row) that does not parse; `what` names it.
    #[error("{what}")]
    Malformed {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A file system (or thread) operation failed; `what` says which, on what.
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    /// A file system operation failed, with nothing to add to the error's own message.
    #[error(transparent)]
    PlainIo(#[from] io::Error),
    #[error("{} has no parent directory", .0.display())]
    NoParent(PathBuf),
    /// Setting up TLS for PostgreSQL failed; `what` says which step.
    #[error("{what}")]
    Tls {
        what: String,
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// The PostgreSQL server could not be reached or refused the connection; `hint` says what
    /// to check.
    #[error("cannot connect to the PostgreSQL backend {backend}: {reason}{hint}")]
    Connect {
        backend: String,
        reason: String,
        hint: &'static str,
    },
    #[error("the PostgreSQL connection thread ended before connecting")]
    ConnectionThread,
    /// The session broke during `what`: nothing after it was recorded.
    #[error(
        "{what}: lost the connection to the PostgreSQL backend {backend} ({reason}); nothing after this \
         point was recorded, and what was recorded before it is kept: run the command again \
         once the server is back"
    )]
    ConnectionLost {
        what: String,
        backend: String,
        reason: String,
    },
    /// The session's thread is gone (its connection failed earlier).
    #[error("{what}: the connection to the PostgreSQL backend {backend} is gone")]
    ConnectionGone { what: String, backend: String },
    /// A query failed; `reason` is the server's message.
    #[error("{what} on the PostgreSQL backend {backend}: {reason}")]
    Query {
        what: String,
        backend: String,
        reason: String,
    },
    /// The database's Cairn schema is newer than this Cairn.
    #[error(
        "the PostgreSQL backend {backend} holds Cairn schema version {found}, newer than this \
         Cairn knows ({known}): upgrade Cairn to use it"
    )]
    SchemaTooNew {
        backend: String,
        found: i64,
        known: i64,
    },
    /// A broken promise between the backend and its caller (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

/// Why a journal could not be replayed onto its checkpoint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    #[error("the checkpoint records no deployment")]
    NoDeployment,
    #[error(transparent)]
    Journal(#[from] JournalError),
}

impl BackendError {
    /// An I/O error with what was being done.
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> BackendError {
        BackendError::Io {
            what: what.into(),
            source,
        }
    }
}

/// `.io_context(|| what)`: an I/O result's error as [`BackendError::Io`], saying what was
/// being done.
pub(crate) trait IoContext<T> {
    fn io_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::result::Result<T, io::Error> {
    fn io_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| BackendError::io(what(), source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages people see, as `cairn` printed them when the backend was part of the CLI:
    /// the error, then each cause.
    fn chain(error: &dyn Error) -> Vec<String> {
        let mut lines = vec![error.to_string()];
        let mut source = error.source();
        while let Some(cause) = source {
            lines.push(cause.to_string());
            source = cause.source();
        }
        lines
    }

    #[test]
    fn messages_and_their_causes_read_as_before() {
        let io = || io::Error::new(io::ErrorKind::PermissionDenied, "denied");
        assert_eq!(
            chain(&BackendError::io("writing /s/dev.json", io())),
            ["writing /s/dev.json", "denied"]
        );
        assert_eq!(chain(&BackendError::PlainIo(io())), ["denied"]);
        assert_eq!(
            BackendError::NoSuchStack {
                stack: "dev".into(),
                location: Some("/s/dev.json".into()),
            }
            .to_string(),
            "stack \"dev\" does not exist (no /s/dev.json)"
        );
        assert_eq!(
            BackendError::NoSuchStack {
                stack: "dev".into(),
                location: None,
            }
            .to_string(),
            "stack \"dev\" does not exist"
        );
        assert_eq!(
            BackendError::UnsupportedUrl {
                url: "s3://b\x1b[2J".into()
            }
            .to_string(),
            "unsupported backend URL \"s3://b\\x1b[2J\": Cairn keeps state in a local directory \
             (file://<directory>) or a PostgreSQL database (postgres://[user@]host[:port]/database)"
        );
        assert_eq!(
            BackendError::Internal("x".into()).to_string(),
            "internal error: x"
        );
        let unrecoverable = BackendError::Unrecoverable {
            stack: "dev".into(),
            journal: "/s/dev.journal".into(),
            checkpoint: "/s/dev.json".into(),
            source: Box::new(ReplayError::NoDeployment),
        };
        assert_eq!(
            chain(&unrecoverable),
            [
                "cannot recover stack \"dev\" from the journal of its interrupted deployment, \
                 /s/dev.journal (the checkpoint /s/dev.json is unchanged); if the journal belongs \
                 to another checkpoint, move it out of the way",
                "the checkpoint records no deployment"
            ]
        );
        assert_eq!(
            cairn_engine::text::error_chain(&unrecoverable),
            chain(&unrecoverable).join(": "),
            "one line, as anyhow's {{:#}} wrote it"
        );
        let history = "x".parse::<usize>().unwrap_err();
        assert_eq!(
            chain(&BackendError::HistoryLimit {
                value: "x".into(),
                source: history,
            }),
            [
                "CAIRN_STATE_HISTORY must be a number of versions to keep, got \"x\"",
                "invalid digit found in string"
            ]
        );
    }
}
