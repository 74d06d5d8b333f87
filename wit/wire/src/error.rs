//! [`WireError`]: why a table is not a valid value. Its `Display` is the wording the guest SDK
//! shows; the host words the same faults in the engine's terms (`cairn-wasm`'s `convert.rs`).

use alloc::string::String;
use core::fmt;

use crate::format::WORDS;

/// Why a table is not a valid value. Node and extra indices are as in the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The table has no nodes where a single value was expected.
    Empty,
    /// The `nodes` list is not a whole number of nodes ([`WORDS`] words each).
    WordCount { words: usize },
    /// A node's kind code is not one of [`kind`](crate::kind)'s.
    UnknownKind { node: u32, kind: u32 },
    /// A node refers to an index past the end of the table.
    OutOfRange { node: u32, index: u32, len: usize },
    /// A node refers to itself or an earlier node (this is how cycles show up).
    NotAfterParent { node: u32, index: u32 },
    /// Two references to the same node.
    SharedNode { index: u32 },
    /// A node nothing refers to.
    Unreferenced { index: u32 },
    /// A node refers to an extra past the end of `extras`.
    ExtraOutOfRange { node: u32, index: u32, len: usize },
    /// Two nodes refer to the same extra.
    SharedExtra { index: u32 },
    /// An extra no node refers to.
    UnusedExtra { index: u32 },
    /// A node's extra is of another kind.
    WrongExtra {
        node: u32,
        expected: &'static str,
        found: &'static str,
    },
    /// A resource reference whose ID is neither text nor unknown.
    BadReferenceId { node: u32, kind: &'static str },
    /// An object or archive with the same key twice (the first key, in member order, that
    /// repeats an earlier one).
    DuplicateKey { node: u32, key: String },
    /// An archive member that is neither an asset nor an archive.
    BadArchiveMember {
        node: u32,
        key: String,
        kind: &'static str,
    },
    /// The value nests deeper than the rules allow (`limit` levels).
    TooDeep { node: u32, limit: usize },
    /// A property map's root is not an object.
    NotAnObject { kind: &'static str },
    /// A text or key span reaches past the end of the string buffer.
    SpanOutOfRange {
        node: u32,
        offset: u32,
        len: u32,
        buffer: usize,
    },
    /// A text or key span's bytes are not valid UTF-8 (or cut a character in two).
    InvalidUtf8 { node: u32, offset: u32, len: u32 },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Empty => write!(f, "the value has no nodes"),
            WireError::WordCount { words } => write!(
                f,
                "the value has {words} words, which is not a whole number of nodes ({WORDS} words each)"
            ),
            WireError::UnknownKind { node, kind } => {
                write!(f, "node {node} has unknown kind {kind}")
            }
            WireError::OutOfRange { node, index, len } => {
                write!(
                    f,
                    "node {node} refers to node {index}, but there are only {len}"
                )
            }
            WireError::NotAfterParent { node, index } => {
                write!(
                    f,
                    "node {node} refers to node {index}, which is not after it"
                )
            }
            WireError::SharedNode { index } => write!(f, "node {index} is referenced twice"),
            WireError::Unreferenced { index } => write!(f, "node {index} is not referenced"),
            WireError::ExtraOutOfRange { node, index, len } => write!(
                f,
                "node {node} refers to extra {index}, but there are only {len}"
            ),
            WireError::SharedExtra { index } => write!(f, "extra {index} is referenced twice"),
            WireError::UnusedExtra { index } => write!(f, "extra {index} is not referenced"),
            WireError::WrongExtra {
                node,
                expected,
                found,
            } => write!(
                f,
                "node {node} ({expected}) refers to an extra of kind {found}"
            ),
            WireError::BadReferenceId { node, kind } => write!(
                f,
                "node {node}: a resource reference's ID must be text or unknown, found {kind}"
            ),
            WireError::DuplicateKey { node, key } => {
                write!(f, "node {node} has the key {key:?} twice")
            }
            WireError::BadArchiveMember { node, key, kind } => write!(
                f,
                "archive node {node}: member {key:?} is a {kind}, not an asset or archive"
            ),
            WireError::TooDeep { node, limit } => {
                write!(f, "node {node} nests deeper than {limit} levels")
            }
            WireError::NotAnObject { kind } => {
                write!(f, "expected an object of properties, found a {kind}")
            }
            WireError::SpanOutOfRange {
                node,
                offset,
                len,
                buffer,
            } => write!(
                f,
                "node {node}: text span (offset {offset}, length {len}) is outside the \
                 {buffer}-byte string buffer"
            ),
            WireError::InvalidUtf8 { node, offset, len } => write!(
                f,
                "node {node}: text span (offset {offset}, length {len}) is not valid UTF-8"
            ),
        }
    }
}

impl core::error::Error for WireError {}
