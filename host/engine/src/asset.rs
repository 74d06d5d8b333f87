//! Assets (blobs) and archives (collections of assets), with their SHA-256 content hashes.

use indexmap::IndexMap;

/// A blob: literal text, a local file, or a URI, plus the SHA-256 of its contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Asset {
    /// Lower-case hex SHA-256 of the contents, once computed.
    pub hash: Option<String>,
    pub source: AssetSource,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AssetSource {
    Text(String),
    Path(String),
    Uri(String),
    /// Only the hash is known (the contents were not recorded).
    HashOnly,
}

/// A collection of assets: a literal map, a local file or directory, or a URI, plus its hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Archive {
    pub hash: Option<String>,
    pub source: ArchiveSource,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveSource {
    /// Named members, each an asset or a nested archive.
    Assets(IndexMap<String, ArchiveMember>),
    Path(String),
    Uri(String),
    HashOnly,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveMember {
    Asset(Asset),
    Archive(Archive),
}
