//! Assets (blobs) and archives (collections of assets) as data: where their contents come from
//! and the SHA-256 hash, once known. Reading, hashing and writing them is the engine's
//! (`cairn_engine::asset`, whose file and network access a guest has no business with).

use alloc::string::String;

use indexmap::IndexMap;

use crate::hash::MemberState;

/// A blob: literal text, a local file, or a URI, plus the SHA-256 of its contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Asset {
    /// Lower-case hex SHA-256 of the contents, once computed.
    pub hash: Option<String>,
    /// Where the contents come from.
    pub source: AssetSource,
}

/// Where an [`Asset`]'s contents come from.
#[derive(Debug, Clone, PartialEq)]
pub enum AssetSource {
    /// Literal text, hashed as its UTF-8 bytes.
    Text(String),
    /// A local file; relative paths resolve against the program's directory.
    Path(String),
    /// A `file`, `http` or `https` URI.
    Uri(String),
    /// Only the hash is known (the contents were not recorded).
    HashOnly,
}

/// A collection of assets: a literal map, a local file or directory, or a URI, plus its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Archive {
    /// Lower-case hex hash (see `cairn_engine::asset` for how it is computed), once known.
    pub hash: Option<String>,
    /// Where the members come from.
    pub source: ArchiveSource,
}

/// A literal archive's named members, in order. Names come from untrusted parties, hence the
/// randomly keyed hasher ([`MemberState`]); build one with `collect()` or `Members::default()`.
pub type Members = IndexMap<String, ArchiveMember, MemberState>;

/// Where an [`Archive`]'s contents come from.
#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveSource {
    /// Named members, each an asset or a nested archive.
    Assets(Members),
    /// A local archive file or directory; relative paths resolve against the program's
    /// directory.
    Path(String),
    /// A `file`, `http` or `https` URI naming an archive file.
    Uri(String),
    /// Only the hash is known (the contents were not recorded).
    HashOnly,
}

/// One named entry of a literal archive.
#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveMember {
    Asset(Asset),
    Archive(Archive),
}

impl From<Asset> for ArchiveMember {
    fn from(asset: Asset) -> Self {
        ArchiveMember::Asset(asset)
    }
}

impl From<Archive> for ArchiveMember {
    fn from(archive: Archive) -> Self {
        ArchiveMember::Archive(archive)
    }
}

impl Asset {
    /// An asset whose contents are `text` (UTF-8).
    pub fn from_text(text: impl Into<String>) -> Self {
        Asset {
            hash: None,
            source: AssetSource::Text(text.into()),
        }
    }

    /// An asset whose contents are the file at `path`.
    pub fn from_path(path: impl Into<String>) -> Self {
        Asset {
            hash: None,
            source: AssetSource::Path(path.into()),
        }
    }

    /// An asset whose contents are found at `uri` (`file`, `http` or `https`).
    pub fn from_uri(uri: impl Into<String>) -> Self {
        Asset {
            hash: None,
            source: AssetSource::Uri(uri.into()),
        }
    }
}

impl Archive {
    /// An archive of the given named members.
    pub fn from_assets(assets: Members) -> Self {
        Archive {
            hash: None,
            source: ArchiveSource::Assets(assets),
        }
    }

    /// An archive read from a local archive file or directory.
    pub fn from_path(path: impl Into<String>) -> Self {
        Archive {
            hash: None,
            source: ArchiveSource::Path(path.into()),
        }
    }

    /// An archive file found at `uri` (`file`, `http` or `https`).
    pub fn from_uri(uri: impl Into<String>) -> Self {
        Archive {
            hash: None,
            source: ArchiveSource::Uri(uri.into()),
        }
    }
}
