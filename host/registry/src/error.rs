//! What can go wrong fetching from or publishing to a registry; every error names the
//! reference, URL or file at fault.

/// A registry or download failure.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{reference:?} is not a registry reference: {why}")]
    BadReference { reference: String, why: String },
    #[error("{url}: {message}")]
    Http { url: String, message: String },
    #[error("{url} answered {status}{detail}")]
    Status {
        url: String,
        status: u16,
        detail: String,
    },
    #[error(
        "{url}: not authorized ({status}){detail}; log in with `cairn plugin registry login {registry}` or `docker login {registry}`"
    )]
    Unauthorized {
        url: String,
        registry: String,
        status: u16,
        detail: String,
    },
    #[error("{url} sent more than the {limit} bytes expected of the {what}; stopped reading")]
    TooLarge {
        url: String,
        what: String,
        limit: u64,
    },
    #[error("{url} sent {actual} bytes of the {what}; the manifest says {expected}")]
    SizeMismatch {
        url: String,
        what: String,
        expected: u64,
        actual: u64,
    },
    #[error("{url} sent a {what} whose digest is {actual}, not the {expected} asked for")]
    DigestMismatch {
        url: String,
        what: String,
        expected: String,
        actual: String,
    },
    #[error("{reference} is not a Wasm component artifact: {why}")]
    Layout { reference: String, why: String },
    #[error("{url}: no answer within {seconds} s (CAIRN_REGISTRY_TIMEOUT)")]
    Timeout { url: String, seconds: u64 },
    #[error("{reference}: not found in the registry")]
    NotFound { reference: String },
    #[error("{url}: plain http is used only for loopback addresses; use https")]
    PlainHttp { url: String },
    #[error("{file}: {message}")]
    Credentials { file: String, message: String },
}
