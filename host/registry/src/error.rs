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
    #[error("{file}: {message}")]
    Lock { file: String, message: String },
    #[error("{file}: {message}")]
    Registries { file: String, message: String },
    /// A source serving other bytes than `cairn.lock` pins (the message names both digests).
    #[error("{0}")]
    LockedDigestChanged(String),
    #[error("not a WebAssembly file wasmsign2 can sign: {why}")]
    NotWasm { why: String },
    #[error("not signed: no `signature` section")]
    Unsigned,
    #[error("no valid signature for {keys}")]
    NoValidSignature { keys: String },
    #[error("the signature section is malformed: {why}")]
    MalformedSignature { why: String },
    #[error("already signed by {key}")]
    AlreadySigned { key: String },
    #[error("signing failed: {why}")]
    Signing { why: String },
    #[error("{file}: {message}")]
    KeyFile { file: String, message: String },
    #[error("{text:?} is not a key fingerprint: {why}")]
    BadFingerprint { text: String, why: String },
    #[error("{text:?} is not a trust source: {why}")]
    BadTrustSource { text: String, why: String },
    #[error("{file}: {message}")]
    TrustPolicy { file: String, message: String },
    /// A component the trust policy (`trust.json`) refuses; `cause` says what its signature
    /// lacked.
    #[error("{from}: refused by the trust policy: {why}")]
    Untrusted {
        from: String,
        why: String,
        #[source]
        cause: Box<RegistryError>,
    },
}

impl RegistryError {
    /// `source` served `actual` for `name` `version`, where the lock pins `expected`.
    pub fn locked_digest_changed(
        name: &str,
        version: &semver::Version,
        source: &str,
        expected: &crate::digest::Digest,
        actual: &crate::digest::Digest,
    ) -> RegistryError {
        RegistryError::LockedDigestChanged(format!(
            "cairn.lock: {source} serves {actual} for {name} {version}, but the lock pins {expected}; if the change is expected, `cairn plugin lock --update {name}`"
        ))
    }
}
