//! Assets (blobs) and archives (collections of assets): reading, hashing and writing their
//! contents. The data types are `cairn-wire`'s, shared with the guest SDK and re-exported here.
//!
//! # Sources
//!
//! An [`Asset`] is literal text, a local file path, or a URI. An [`Archive`] is a literal map of
//! named members (assets or nested archives), a local path (an archive file or a directory), or a
//! URI. Relative paths resolve against [`AssetContext::base_dir`]. `file://` URIs are read
//! locally; `http`/`https` URIs go through the caller-supplied [`UriFetcher`] (the engine does no
//! network IO itself); any other scheme is an error. Either kind may also be `HashOnly`, when the
//! state recorded the hash but not the contents.
//!
//! Archive files are recognised by name: `.tar`, `.tar.gz`/`.tgz` and `.zip`/`.jar` (for URIs,
//! the extension of the URI's path). A directory is an archive of every file below it, named by
//! its `/`-separated path relative to the directory; nothing is skipped and no ignore files are
//! honoured.
//!
//! # Members
//!
//! [`ArchiveExt::read_members`] flattens an archive into a name-sorted list of files. In a literal
//! map an asset contributes its bytes under its key and a nested archive contributes each of its
//! own members as `<key>/<member>`, to any depth. Directory entries are skipped; `.` and empty
//! path components are dropped (`./a//b` is `a/b`). Names that are absolute or contain `..`,
//! links (symbolic or hard, in archive files or directories), other special files and duplicate
//! names are errors: links are never followed.
//!
//! # Hashes
//!
//! * An asset's hash is the lower-case hex SHA-256 of its bytes.
//! * An archive whose source is a single archive *file* (a path or URI naming a `.tar`,
//!   `.tar.gz`/`.tgz` or `.zip`/`.jar`) hashes to the SHA-256 of that file's raw bytes.
//! * A directory or a literal map hashes to the SHA-256 of its *canonical tar*: the flattened
//!   members, sorted by name, each written as a USTAR regular file with mode `0o600`, mtime 0,
//!   uid/gid 0, device numbers 0 and empty user/group names, followed by the two zero blocks
//!   that end a tar stream — the bytes Pulumi's engine hashes (Go's `archive/tar` writing
//!   `{Name, Mode: 0600, Size}`), so a state moved between the engines records the same hash.
//!   Names longer than 100 bytes are split into USTAR's prefix and name where they can be,
//!   else written as GNU long-name entries (where Go would write a PAX header). Equal contents
//!   therefore give equal hashes regardless of map order or file-system metadata.
//!   [`ArchiveExt::write`] with [`ArchiveFormat::Tar`] emits exactly this stream.
//!
//! [`fill_hashes`] fills in the missing hashes of every asset and archive in a value, where
//! values are admitted, so the state always records them.
//!
//! # The spec's "hello" hash
//!
//! The type-system spec says the asset "hello" hashes to `5891b5b5…6be03`; that is the SHA-256 of
//! `hello\n`. The SHA-256 of the five bytes `hello` is `2cf24dba…9824`. Cairn hashes the bytes
//! exactly; the asset tests check both strings.
//!
//! # Archive hashes
//!
//! A file archive (`.tar`, `.tar.gz`/`.tgz`, `.zip`/`.jar`) hashes to the SHA-256 of the file. A
//! directory or literal asset map hashes to the SHA-256 of a canonical tar of its flattened members
//! (sorted names, mode 0600, mtime 0, no owners), so equal contents give equal hashes whatever
//! their order or origin. Nested archives flatten under their key as a directory.

use std::fmt;
use std::fs;
use std::io::{self, Cursor, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

// The data types are shared with the guest SDK (`cairn-wire`); reading, hashing and writing
// them is the engine's, as the extension traits [`AssetExt`] and [`ArchiveExt`] (a foreign
// type takes no inherent methods, and a trait keeps `asset.ensure_hash(ctx)` as it was).
pub use cairn_wire::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Members};

/// Why an asset or archive could not be read, hashed or written.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    /// A local file or directory could not be read.
    #[error("reading {what} {}: {source}", .path.display())]
    Io {
        /// What was being read, e.g. "asset file" or "archive directory".
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The URI could not be parsed.
    #[error("invalid URI {uri:?}: {reason}")]
    InvalidUri { uri: String, reason: String },
    /// The URI's scheme is neither `file`, `http` nor `https`.
    #[error("URI {uri:?}: unsupported scheme {scheme:?} (expected file, http or https)")]
    UnsupportedScheme { uri: String, scheme: String },
    /// An http(s) URI was used but the context has no [`UriFetcher`].
    #[error("fetching {uri}: no URI fetcher is configured, so http(s) URIs cannot be read")]
    NoFetcher { uri: String },
    /// The [`UriFetcher`] failed.
    #[error("fetching {uri}: {message}")]
    Fetch { uri: String, message: String },
    /// The source is `HashOnly`, so there is nothing to read.
    #[error("{what}{}: contents are not available (only the hash was recorded)", hash_suffix(.hash))]
    ContentsUnavailable {
        /// "asset" or "archive".
        what: &'static str,
        hash: Option<String>,
    },
    /// The archive file's name has no supported extension.
    #[error(
        "archive {location}: unsupported format (expected .tar, .tar.gz/.tgz, .zip/.jar or a directory)"
    )]
    UnsupportedFormat { location: String },
    /// The archive file is not valid data of its format.
    #[error("archive {location}: malformed {format} data: {reason}")]
    Malformed {
        location: String,
        format: ArchiveFormat,
        reason: String,
    },
    /// One member of an archive is unacceptable (unsafe name, link, duplicate, unreadable).
    #[error("archive{} member {member:?}: {reason}", location_suffix(.archive))]
    Member {
        /// The archive file or directory, or `None` for a literal map.
        archive: Option<String>,
        member: String,
        reason: String,
    },
    /// Writing an archive stream failed.
    #[error("writing {format} archive: {reason}")]
    Write {
        format: ArchiveFormat,
        reason: String,
    },
}

fn hash_suffix(hash: &Option<String>) -> String {
    match hash {
        Some(hash) => format!(" with hash {hash}"),
        None => String::new(),
    }
}

fn location_suffix(archive: &Option<String>) -> String {
    match archive {
        Some(location) => format!(" {location}"),
        None => String::new(),
    }
}

fn member_error(archive: Option<&str>, member: &str, reason: impl Into<String>) -> AssetError {
    AssetError::Member {
        archive: archive.map(str::to_owned),
        member: member.to_owned(),
        reason: reason.into(),
    }
}

fn io_error<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> AssetError + 'a {
    move |source| AssetError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Retrieves the contents of remote (http/https) URIs on the engine's behalf.
pub trait UriFetcher: Send + Sync {
    /// Returns the body at `uri`, or a human-readable reason it could not be fetched.
    fn fetch(&self, uri: &str) -> Result<Vec<u8>, String>;
}

/// What reading an asset or archive may use: a directory for relative paths and a fetcher for
/// remote URIs. The default has neither (relative paths resolve against the process's current
/// directory and http(s) URIs fail).
#[derive(Clone, Copy, Default)]
pub struct AssetContext<'a> {
    /// Directory that relative `Path` sources are resolved against.
    pub base_dir: Option<&'a Path>,
    /// Fetcher for http and https URIs.
    pub fetcher: Option<&'a dyn UriFetcher>,
}

impl fmt::Debug for AssetContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AssetContext")
            .field("base_dir", &self.base_dir)
            .field("fetcher", &self.fetcher.map(|_| "<fetcher>"))
            .finish()
    }
}

impl AssetContext<'_> {
    fn resolve(&self, path: &str) -> PathBuf {
        let path = Path::new(path);
        match self.base_dir {
            Some(base) if path.is_relative() => base.join(path),
            _ => path.to_path_buf(),
        }
    }

    fn fetch(&self, uri: &str) -> Result<Vec<u8>, AssetError> {
        let fetcher = self.fetcher.ok_or_else(|| AssetError::NoFetcher {
            uri: uri.to_owned(),
        })?;
        fetcher.fetch(uri).map_err(|message| AssetError::Fetch {
            uri: uri.to_owned(),
            message,
        })
    }
}

/// Where a URI points, once its scheme is understood.
enum UriTarget {
    Local(PathBuf),
    Remote,
}

fn classify_uri(uri: &str) -> Result<UriTarget, AssetError> {
    let invalid = |reason: &str| AssetError::InvalidUri {
        uri: uri.to_owned(),
        reason: reason.to_owned(),
    };
    let (scheme, rest) = uri
        .split_once(':')
        .ok_or_else(|| invalid("missing scheme"))?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(invalid("missing scheme"));
    }
    match scheme.to_ascii_lowercase().as_str() {
        "file" => file_uri_path(uri, rest).map(UriTarget::Local),
        "http" | "https" => Ok(UriTarget::Remote),
        _ => Err(AssetError::UnsupportedScheme {
            uri: uri.to_owned(),
            scheme: scheme.to_owned(),
        }),
    }
}

/// The local path of a `file://` URI (`rest` is everything after `file:`).
fn file_uri_path(uri: &str, rest: &str) -> Result<PathBuf, AssetError> {
    let invalid = |reason: String| AssetError::InvalidUri {
        uri: uri.to_owned(),
        reason,
    };
    let after = rest
        .strip_prefix("//")
        .ok_or_else(|| invalid("file URIs must look like file:///absolute/path".to_owned()))?;
    let (authority, path) = match after.find('/') {
        Some(i) => after.split_at(i),
        None => (after, ""),
    };
    if !authority.is_empty() && !authority.eq_ignore_ascii_case("localhost") {
        return Err(invalid(format!(
            "file URIs with a host ({authority:?}) are not supported"
        )));
    }
    let path = strip_query_and_fragment(path);
    if path.is_empty() {
        return Err(invalid("file URI has no path".to_owned()));
    }
    let decoded = percent_decode(path).map_err(invalid)?;
    // `file:///C:/x` names `C:/x` on Windows; elsewhere the leading slash is part of the path.
    #[cfg(windows)]
    let decoded = match decoded.as_bytes() {
        [b'/', drive, b':', ..] if drive.is_ascii_alphabetic() => decoded[1..].to_owned(),
        _ => decoded,
    };
    Ok(PathBuf::from(decoded))
}

fn strip_query_and_fragment(s: &str) -> &str {
    match s.find(['?', '#']) {
        Some(i) => &s[..i],
        None => s,
    }
}

/// Decodes `%XX` escapes; the result must be UTF-8.
fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex_byte = bytes
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("invalid percent escape at byte {i}"))?;
            out.push(hex_byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "percent-decoded path is not valid UTF-8".to_owned())
}

/// The last segment of a URI's path (decoded when possible), used to pick an archive format.
fn uri_file_name(uri: &str) -> String {
    let rest = uri.split_once(':').map_or(uri, |(_, rest)| rest);
    let path = match rest.strip_prefix("//") {
        Some(after) => after.find('/').map_or("", |i| &after[i..]),
        None => rest,
    };
    let path = strip_query_and_fragment(path);
    let last = path.rsplit('/').next().unwrap_or(path);
    percent_decode(last).unwrap_or_else(|_| last.to_owned())
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Feeds everything written into a SHA-256, so the canonical tar is never held in memory.
struct HashWriter(Sha256);

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reading and hashing an [`Asset`]'s contents.
pub trait AssetExt {
    /// Reads the asset's contents.
    fn bytes(&self, ctx: &AssetContext<'_>) -> Result<Vec<u8>, AssetError>;

    /// The lower-case hex SHA-256 of the contents, computed afresh (ignores `self.hash`).
    /// Local files are hashed as they are read, never held in memory whole.
    fn compute_hash(&self, ctx: &AssetContext<'_>) -> Result<String, AssetError>;

    /// Fills `hash` if it is absent and returns it.
    fn ensure_hash(&mut self, ctx: &AssetContext<'_>) -> Result<&str, AssetError>;
}

impl AssetExt for Asset {
    fn bytes(&self, ctx: &AssetContext<'_>) -> Result<Vec<u8>, AssetError> {
        match &self.source {
            AssetSource::Text(text) => Ok(text.as_bytes().to_vec()),
            AssetSource::Path(path) => {
                let path = ctx.resolve(path);
                fs::read(&path).map_err(io_error("asset file", &path))
            }
            AssetSource::Uri(uri) => match classify_uri(uri)? {
                UriTarget::Local(path) => fs::read(&path).map_err(io_error("asset file", &path)),
                UriTarget::Remote => ctx.fetch(uri),
            },
            AssetSource::HashOnly => Err(AssetError::ContentsUnavailable {
                what: "asset",
                hash: self.hash.clone(),
            }),
        }
    }

    fn compute_hash(&self, ctx: &AssetContext<'_>) -> Result<String, AssetError> {
        let local = match &self.source {
            AssetSource::Path(path) => Some(ctx.resolve(path)),
            AssetSource::Uri(uri) => match classify_uri(uri)? {
                UriTarget::Local(path) => Some(path),
                UriTarget::Remote => None,
            },
            AssetSource::Text(_) | AssetSource::HashOnly => None,
        };
        match local {
            Some(path) => {
                let read = io_error("asset file", &path);
                let mut file = fs::File::open(&path).map_err(io_error("asset file", &path))?;
                let mut hasher = HashWriter(Sha256::new());
                io::copy(&mut file, &mut hasher).map_err(read)?;
                Ok(hex::encode(hasher.0.finalize()))
            }
            None => self.bytes(ctx).map(|bytes| sha256_hex(&bytes)),
        }
    }

    fn ensure_hash(&mut self, ctx: &AssetContext<'_>) -> Result<&str, AssetError> {
        let hash = match self.hash.take() {
            Some(hash) => hash,
            None => self.compute_hash(ctx)?,
        };
        Ok(self.hash.insert(hash))
    }
}

/// A container format for archive files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArchiveFormat {
    /// `.tar`
    Tar,
    /// `.tar.gz` / `.tgz`
    TarGz,
    /// `.zip` / `.jar`
    Zip,
}

impl ArchiveFormat {
    /// The format named by a file name's extension (case-insensitive), if supported.
    pub fn from_file_name(name: &str) -> Option<Self> {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
            Some(ArchiveFormat::TarGz)
        } else if lower.ends_with(".tar") {
            Some(ArchiveFormat::Tar)
        } else if lower.ends_with(".zip") || lower.ends_with(".jar") {
            Some(ArchiveFormat::Zip)
        } else {
            None
        }
    }

    /// The canonical file extension, without the leading dot.
    pub fn extension(self) -> &'static str {
        match self {
            ArchiveFormat::Tar => "tar",
            ArchiveFormat::TarGz => "tar.gz",
            ArchiveFormat::Zip => "zip",
        }
    }
}

impl fmt::Display for ArchiveFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.extension())
    }
}

/// An archive source made concrete: raw archive-file bytes, a directory, or a literal map.
enum Opened<'s> {
    File {
        location: String,
        format: ArchiveFormat,
        bytes: Vec<u8>,
    },
    Dir(PathBuf),
    Literal(&'s Members),
}

fn open_local(path: PathBuf) -> Result<Opened<'static>, AssetError> {
    let meta = fs::metadata(&path).map_err(io_error("archive", &path))?;
    if meta.is_dir() {
        return Ok(Opened::Dir(path));
    }
    let location = path.display().to_string();
    let format = path
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(ArchiveFormat::from_file_name)
        .ok_or_else(|| AssetError::UnsupportedFormat {
            location: location.clone(),
        })?;
    let bytes = fs::read(&path).map_err(io_error("archive file", &path))?;
    Ok(Opened::File {
        location,
        format,
        bytes,
    })
}

/// Reading, hashing and writing an [`Archive`]'s members.
pub trait ArchiveExt {
    /// The flattened member files, sorted by name (see the module docs for naming rules).
    fn read_members(&self, ctx: &AssetContext<'_>) -> Result<Vec<(String, Vec<u8>)>, AssetError>;

    /// The archive's hash (see the module docs), computed afresh (ignores `self.hash`).
    fn compute_hash(&self, ctx: &AssetContext<'_>) -> Result<String, AssetError>;

    /// Fills `hash` if it is absent and returns it.
    fn ensure_hash(&mut self, ctx: &AssetContext<'_>) -> Result<&str, AssetError>;

    /// Writes the flattened members to `out` as a `format` archive: sorted by name, with fixed
    /// timestamps and permissions, so equal contents always give identical bytes.
    fn write(
        &self,
        ctx: &AssetContext<'_>,
        format: ArchiveFormat,
        out: &mut impl Write,
    ) -> Result<(), AssetError>;
}

/// The archive's source made concrete.
fn open<'a>(archive: &'a Archive, ctx: &AssetContext<'_>) -> Result<Opened<'a>, AssetError> {
    match &archive.source {
        ArchiveSource::Assets(map) => Ok(Opened::Literal(map)),
        ArchiveSource::Path(path) => open_local(ctx.resolve(path)),
        ArchiveSource::Uri(uri) => {
            match classify_uri(uri)? {
                UriTarget::Local(path) => open_local(path),
                UriTarget::Remote => {
                    // Check the name first so an unusable URI is not fetched for nothing.
                    let format =
                        ArchiveFormat::from_file_name(&uri_file_name(uri)).ok_or_else(|| {
                            AssetError::UnsupportedFormat {
                                location: uri.clone(),
                            }
                        })?;
                    Ok(Opened::File {
                        location: uri.clone(),
                        format,
                        bytes: ctx.fetch(uri)?,
                    })
                }
            }
        }
        ArchiveSource::HashOnly => Err(AssetError::ContentsUnavailable {
            what: "archive",
            hash: archive.hash.clone(),
        }),
    }
}

impl ArchiveExt for Archive {
    fn read_members(&self, ctx: &AssetContext<'_>) -> Result<Vec<(String, Vec<u8>)>, AssetError> {
        members_of(open(self, ctx)?, ctx)
    }

    fn compute_hash(&self, ctx: &AssetContext<'_>) -> Result<String, AssetError> {
        match open(self, ctx)? {
            Opened::File { bytes, .. } => Ok(sha256_hex(&bytes)),
            opened => {
                let members = members_of(opened, ctx)?;
                let mut hasher = HashWriter(Sha256::new());
                write_tar(&members, &mut hasher, ArchiveFormat::Tar)?;
                Ok(hex::encode(hasher.0.finalize()))
            }
        }
    }

    fn ensure_hash(&mut self, ctx: &AssetContext<'_>) -> Result<&str, AssetError> {
        let hash = match self.hash.take() {
            Some(hash) => hash,
            None => self.compute_hash(ctx)?,
        };
        Ok(self.hash.insert(hash))
    }

    fn write(
        &self,
        ctx: &AssetContext<'_>,
        format: ArchiveFormat,
        out: &mut impl Write,
    ) -> Result<(), AssetError> {
        let members = self.read_members(ctx)?;
        match format {
            ArchiveFormat::Tar => write_tar(&members, out, format),
            ArchiveFormat::TarGz => {
                let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
                write_tar(&members, &mut gz, format)?;
                gz.finish().map(drop).map_err(|e| AssetError::Write {
                    format,
                    reason: e.to_string(),
                })
            }
            ArchiveFormat::Zip => write_zip(&members, out),
        }
    }
}

fn members_of(
    opened: Opened<'_>,
    ctx: &AssetContext<'_>,
) -> Result<Vec<(String, Vec<u8>)>, AssetError> {
    let (location, mut members) = match opened {
        Opened::File {
            location,
            format,
            bytes,
        } => {
            let members = match format {
                ArchiveFormat::Tar => read_tar(bytes.as_slice(), &location, format)?,
                ArchiveFormat::TarGz => read_tar(
                    flate2::read::MultiGzDecoder::new(bytes.as_slice()),
                    &location,
                    format,
                )?,
                ArchiveFormat::Zip => read_zip(bytes, &location)?,
            };
            (Some(location), members)
        }
        Opened::Dir(root) => {
            let location = root.display().to_string();
            let mut members = Vec::new();
            walk_dir(&location, &root, "", &mut members)?;
            (Some(location), members)
        }
        Opened::Literal(map) => {
            let mut members = Vec::new();
            flatten_literal(map, ctx, "", &mut members)?;
            (None, members)
        }
    };
    members.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(pair) = members.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        return Err(member_error(
            location.as_deref(),
            &pair[0].0,
            "duplicate member name",
        ));
    }
    Ok(members)
}

fn is_absolute_name(name: &str) -> bool {
    let b = name.as_bytes();
    // Also reject Windows roots and drive prefixes, since providers may extract on Windows.
    name.starts_with(['/', '\\']) || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// Rejects names that could escape the extraction directory.
fn check_relative(name: &str) -> Result<(), &'static str> {
    if name.contains('\0') {
        Err("name contains a NUL byte")
    } else if is_absolute_name(name) {
        Err("absolute paths are not allowed")
    } else if name.split(['/', '\\']).any(|part| part == "..") {
        Err("\"..\" components are not allowed (path traversal)")
    } else {
        Ok(())
    }
}

/// Validates a member name and drops `.` and empty components.
fn normalize_member_name(name: &str) -> Result<String, &'static str> {
    check_relative(name)?;
    let parts: Vec<&str> = name
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts.is_empty() {
        return Err("empty member name");
    }
    Ok(parts.join("/"))
}

fn join_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}/{name}")
    }
}

fn flatten_literal(
    map: &Members,
    ctx: &AssetContext<'_>,
    prefix: &str,
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), AssetError> {
    for (key, member) in map {
        let name = join_name(prefix, key);
        // Check each key on its own too: `/x` under a prefix would otherwise pass as `prefix/x`.
        check_relative(key).map_err(|reason| member_error(None, &name, reason))?;
        let normalized =
            |full: &str| normalize_member_name(full).map_err(|r| member_error(None, full, r));
        match member {
            ArchiveMember::Asset(asset) => out.push((normalized(&name)?, asset.bytes(ctx)?)),
            ArchiveMember::Archive(archive) => match &archive.source {
                // Recurse directly so errors name the full nested member path.
                ArchiveSource::Assets(inner) => flatten_literal(inner, ctx, &name, out)?,
                _ => {
                    for (sub, data) in archive.read_members(ctx)? {
                        out.push((normalized(&join_name(&name, &sub))?, data));
                    }
                }
            },
        }
    }
    Ok(())
}

fn read_tar(
    reader: impl Read,
    location: &str,
    format: ArchiveFormat,
) -> Result<Vec<(String, Vec<u8>)>, AssetError> {
    let malformed = |e: io::Error| AssetError::Malformed {
        location: location.to_owned(),
        format,
        reason: e.to_string(),
    };
    let mut archive = tar::Archive::new(reader);
    let mut out = Vec::new();
    for entry in archive.entries().map_err(malformed)? {
        let mut entry = entry.map_err(malformed)?;
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        match entry.header().entry_type() {
            tar::EntryType::Regular | tar::EntryType::Continuous => {}
            // Directories are implied by member names; global pax headers carry no file.
            tar::EntryType::Directory | tar::EntryType::XGlobalHeader => continue,
            tar::EntryType::Symlink | tar::EntryType::Link => {
                return Err(member_error(
                    Some(location),
                    &raw_name,
                    "links are not supported (they are never followed)",
                ));
            }
            other => {
                return Err(member_error(
                    Some(location),
                    &raw_name,
                    format!("unsupported tar entry type {other:?}"),
                ));
            }
        }
        let name = std::str::from_utf8(&entry.path_bytes())
            .map_err(|_| member_error(Some(location), &raw_name, "name is not valid UTF-8"))
            .and_then(|name| {
                normalize_member_name(name)
                    .map_err(|reason| member_error(Some(location), &raw_name, reason))
            })?;
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| {
            member_error(Some(location), &raw_name, format!("reading contents: {e}"))
        })?;
        out.push((name, data));
    }
    Ok(out)
}

fn read_zip(bytes: Vec<u8>, location: &str) -> Result<Vec<(String, Vec<u8>)>, AssetError> {
    let malformed = |e: zip::result::ZipError| AssetError::Malformed {
        location: location.to_owned(),
        format: ArchiveFormat::Zip,
        reason: e.to_string(),
    };
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(malformed)?;
    let mut out = Vec::new();
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).map_err(malformed)?;
        let raw_name = file.name().map_err(malformed)?.into_owned();
        if file.is_dir() {
            continue;
        }
        if file.is_symlink() {
            return Err(member_error(
                Some(location),
                &raw_name,
                "links are not supported (they are never followed)",
            ));
        }
        let name = normalize_member_name(&raw_name)
            .map_err(|reason| member_error(Some(location), &raw_name, reason))?;
        let mut data = Vec::new();
        file.read_to_end(&mut data).map_err(|e| {
            member_error(Some(location), &raw_name, format!("reading contents: {e}"))
        })?;
        out.push((name, data));
    }
    Ok(out)
}

/// Collects every regular file below `dir`, named relative to the archive root.
fn walk_dir(
    root: &str,
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), AssetError> {
    for entry in fs::read_dir(dir).map_err(io_error("archive directory", dir))? {
        let entry = entry.map_err(io_error("archive directory", dir))?;
        let path = entry.path();
        let file_name = entry.file_name();
        let name = match file_name.to_str() {
            Some(file_name) => join_name(prefix, file_name),
            None => {
                let lossy = join_name(prefix, &file_name.to_string_lossy());
                return Err(member_error(Some(root), &lossy, "name is not valid UTF-8"));
            }
        };
        // `file_type` does not follow symlinks, so links are seen (and refused) as links.
        let file_type = entry
            .file_type()
            .map_err(io_error("archive member", &path))?;
        if file_type.is_symlink() {
            return Err(member_error(
                Some(root),
                &name,
                "symbolic links are not supported (they are never followed)",
            ));
        } else if file_type.is_dir() {
            walk_dir(root, &path, &name, out)?;
        } else if file_type.is_file() {
            let data = fs::read(&path).map_err(io_error("archive member", &path))?;
            out.push((name, data));
        } else {
            return Err(member_error(
                Some(root),
                &name,
                "not a regular file or directory",
            ));
        }
    }
    Ok(())
}

/// Writes the canonical tar stream described in the module docs.
fn write_tar(
    members: &[(String, Vec<u8>)],
    out: &mut impl Write,
    format: ArchiveFormat,
) -> Result<(), AssetError> {
    let write_error = |reason: String| AssetError::Write { format, reason };
    let mut builder = tar::Builder::new(out);
    for (name, data) in members {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o600);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_size(data.len() as u64);
        // Written as octal zeros, as Go writes them; a USTAR header always has these fields.
        for set in [tar::Header::set_device_major, tar::Header::set_device_minor] {
            set(&mut header, 0).map_err(|e| write_error(format!("member {name:?}: {e}")))?;
        }
        let appended = if header.set_path(name).is_ok() {
            // Go writes the checksum as six octal digits, NUL, space; the tar crate as seven
            // digits and NUL: the same number, but other bytes, so another hash.
            header.set_cksum();
            let sum = header
                .cksum()
                .map_err(|e| write_error(format!("member {name:?}: {e}")))?;
            let field = format!("{sum:06o}\0 ");
            header.as_old_mut().cksum.copy_from_slice(field.as_bytes());
            builder.append(&header, data.as_slice())
        } else {
            // Too long for USTAR's prefix and name: a GNU long-name entry.
            builder.append_data(&mut header, name, data.as_slice())
        };
        appended.map_err(|e| write_error(format!("member {name:?}: {e}")))?;
    }
    builder
        .into_inner()
        .map(drop)
        .map_err(|e| write_error(e.to_string()))
}

fn write_zip(members: &[(String, Vec<u8>)], out: &mut impl Write) -> Result<(), AssetError> {
    let write_error = |reason: String| AssetError::Write {
        format: ArchiveFormat::Zip,
        reason,
    };
    // ZipWriter needs Seek, which `out` need not have, so build in memory and copy.
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644)
        .system(zip::System::Unix);
    for (name, data) in members {
        let options = options.large_file(data.len() as u64 >= u64::from(u32::MAX));
        writer
            .start_file(name.as_str(), options)
            .map_err(|e| write_error(format!("member {name:?}: {e}")))?;
        writer
            .write_all(data)
            .map_err(|e| write_error(format!("member {name:?}: {e}")))?;
    }
    let cursor = writer.finish().map_err(|e| write_error(e.to_string()))?;
    out.write_all(cursor.get_ref())
        .map_err(|e| write_error(e.to_string()))
}

/// An asset or archive in a property value whose hash could not be computed.
#[derive(Debug, thiserror::Error)]
#[error("{path}: computing the {what}'s hash: {source}")]
pub struct HashError {
    /// The property path, as errors print it (`code["index.js"]`, `files[0]`).
    pub path: String,
    /// "asset" or "archive".
    pub what: &'static str,
    #[source]
    pub source: AssetError,
}

/// Fills in the hash of every asset and archive in `values` that has none, so every one the
/// state records carries its SHA-256 `hash` (Pulumi's SDK programs send assets without one;
/// Pulumi's engine computes it where it receives them).
///
/// Walks objects, arrays, secrets, known outputs and the members of literal archives (each
/// hashed, as Pulumi's engine hashes them). A hash already present is kept.
/// Relative paths resolve against `ctx.base_dir` (the program's directory); remote URIs are
/// fetched through `ctx.fetcher`. Stops at the first failure, naming its property path.
pub fn fill_hashes(
    values: &mut crate::value::PropertyMap,
    ctx: &AssetContext<'_>,
) -> Result<(), HashError> {
    let mut path = Vec::new();
    for (key, value) in values.iter_mut() {
        path.push(PathStep::Key(key.clone()));
        fill_value(value, ctx, &mut path)?;
        path.pop();
    }
    Ok(())
}

/// One step of the property path to the value being hashed (owned: the walk mutates).
enum PathStep {
    Key(String),
    Index(usize),
}

fn fill_value(
    value: &mut crate::value::PropertyValue,
    ctx: &AssetContext<'_>,
    path: &mut Vec<PathStep>,
) -> Result<(), HashError> {
    use crate::value::PropertyValue;
    match value {
        PropertyValue::Asset(asset) => fill_asset(asset, ctx, path)?,
        PropertyValue::Archive(archive) => fill_archive(archive, ctx, path)?,
        PropertyValue::Object(map) => {
            for (key, item) in map.iter_mut() {
                path.push(PathStep::Key(key.clone()));
                fill_value(item, ctx, path)?;
                path.pop();
            }
        }
        PropertyValue::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(PathStep::Index(i));
                fill_value(item, ctx, path)?;
                path.pop();
            }
        }
        PropertyValue::Secret(inner) => fill_value(inner, ctx, path)?,
        PropertyValue::Output(output) => {
            if let Some(inner) = output.value.as_deref_mut() {
                fill_value(inner, ctx, path)?;
            }
        }
        PropertyValue::Null
        | PropertyValue::Bool(_)
        | PropertyValue::Number(_)
        | PropertyValue::String(_)
        | PropertyValue::ResourceReference(_)
        | PropertyValue::Computed => {}
    }
    Ok(())
}

fn fill_asset(
    asset: &mut Asset,
    ctx: &AssetContext<'_>,
    path: &[PathStep],
) -> Result<(), HashError> {
    if asset.hash.is_none() {
        asset
            .ensure_hash(ctx)
            .map_err(|e| hash_failed("asset", path, e))?;
    }
    Ok(())
}

/// Hashes an archive and, as Pulumi's engine does, each member of a literal archive (nested
/// literal archives too), so the state records every member's hash.
fn fill_archive(
    archive: &mut Archive,
    ctx: &AssetContext<'_>,
    path: &mut Vec<PathStep>,
) -> Result<(), HashError> {
    if let ArchiveSource::Assets(members) = &mut archive.source {
        for (name, member) in members.iter_mut() {
            path.push(PathStep::Key(name.clone()));
            match member {
                ArchiveMember::Asset(asset) => fill_asset(asset, ctx, path)?,
                ArchiveMember::Archive(nested) => fill_archive(nested, ctx, path)?,
            }
            path.pop();
        }
    }
    if archive.hash.is_none() {
        archive
            .ensure_hash(ctx)
            .map_err(|e| hash_failed("archive", path, e))?;
    }
    Ok(())
}

fn hash_failed(what: &'static str, path: &[PathStep], source: AssetError) -> HashError {
    let steps: Vec<crate::limits::Step<'_>> = path
        .iter()
        .map(|step| match step {
            PathStep::Key(key) => crate::limits::Step::Key(key),
            PathStep::Index(i) => crate::limits::Step::Index(*i),
        })
        .collect();
    HashError {
        path: crate::limits::format_path(&steps),
        what,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// SHA-256 of the five bytes `hello`.
    const HELLO_HASH: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
    /// The hash the spec prints next to "hello"; it is really the SHA-256 of `hello\n`.
    const HELLO_NEWLINE_HASH: &str =
        "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

    type Members = Vec<(String, Vec<u8>)>;

    fn ctx() -> AssetContext<'static> {
        AssetContext::default()
    }

    fn members(pairs: &[(&str, &str)]) -> Members {
        pairs
            .iter()
            .map(|(n, d)| (n.to_string(), d.as_bytes().to_vec()))
            .collect()
    }

    fn literal(pairs: &[(&str, &str)]) -> Archive {
        Archive::from_assets(
            pairs
                .iter()
                .map(|(n, d)| (n.to_string(), Asset::from_text(*d).into()))
                .collect(),
        )
    }

    fn file_uri(path: &Path) -> String {
        let s = path
            .to_str()
            .unwrap()
            .replace('\\', "/")
            .replace(' ', "%20");
        if s.starts_with('/') {
            format!("file://{s}")
        } else {
            format!("file:///{s}")
        }
    }

    /// Raw tar entry for fixtures; bypasses the tar crate's name checks so we can forge
    /// hostile names.
    enum Entry<'a> {
        File(&'a str, &'a str),
        Dir(&'a str),
        Symlink(&'a str, &'a str),
    }

    fn tar_bytes(entries: &[Entry<'_>]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for entry in entries {
            let mut header = tar::Header::new_gnu();
            let (name, kind, data, link) = match entry {
                Entry::File(n, d) => (*n, tar::EntryType::Regular, d.as_bytes(), None),
                Entry::Dir(n) => (*n, tar::EntryType::Directory, &b""[..], None),
                Entry::Symlink(n, l) => (*n, tar::EntryType::Symlink, &b""[..], Some(*l)),
            };
            header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_entry_type(kind);
            header.set_mode(0o644);
            header.set_size(data.len() as u64);
            if let Some(link) = link {
                header.set_link_name(link).unwrap();
            }
            header.set_cksum();
            builder.append(&header, data).unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    fn zip_bytes(files: &[(&str, &str)], dirs: &[&str]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        for dir in dirs {
            writer.add_directory(*dir, options).unwrap();
        }
        for (name, data) in files {
            writer.start_file(*name, options).unwrap();
            writer.write_all(data.as_bytes()).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    fn write_file(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, data).unwrap();
        path
    }

    /// Serves fixed bodies and records which URIs were asked for.
    #[derive(Default)]
    struct MapFetcher {
        bodies: Vec<(String, Vec<u8>)>,
        calls: Mutex<Vec<String>>,
    }

    impl UriFetcher for MapFetcher {
        fn fetch(&self, uri: &str) -> Result<Vec<u8>, String> {
            self.calls.lock().unwrap().push(uri.to_owned());
            self.bodies
                .iter()
                .find(|(u, _)| u == uri)
                .map(|(_, b)| b.clone())
                .ok_or_else(|| "404 Not Found".to_owned())
        }
    }

    #[test]
    fn hello_hashes_the_same_from_text_path_and_uris() {
        for (contents, want) in [("hello", HELLO_HASH), ("hello\n", HELLO_NEWLINE_HASH)] {
            let dir = tempfile::tempdir().unwrap();
            let path = write_file(dir.path(), "hello file.txt", contents.as_bytes());
            let fetcher = MapFetcher {
                bodies: vec![(
                    "https://example.com/file.txt".into(),
                    contents.as_bytes().to_vec(),
                )],
                ..Default::default()
            };
            let with_base = AssetContext {
                base_dir: Some(dir.path()),
                fetcher: Some(&fetcher),
            };
            let cases = [
                ("text", Asset::from_text(contents)),
                ("absolute path", Asset::from_path(path.to_str().unwrap())),
                ("relative path", Asset::from_path("hello file.txt")),
                ("file uri", Asset::from_uri(file_uri(&path))),
                ("https uri", Asset::from_uri("https://example.com/file.txt")),
            ];
            for (label, mut asset) in cases {
                let label = format!("{label} {contents:?}");
                assert_eq!(
                    asset.bytes(&with_base).unwrap(),
                    contents.as_bytes(),
                    "{label}"
                );
                assert_eq!(asset.compute_hash(&with_base).unwrap(), want, "{label}");
                assert_eq!(asset.ensure_hash(&with_base).unwrap(), want, "{label}");
                assert_eq!(asset.hash.as_deref(), Some(want), "{label}");
            }
        }
    }

    #[test]
    fn ensure_hash_keeps_an_existing_hash_without_reading() {
        let mut asset = Asset {
            hash: Some("recorded".into()),
            source: AssetSource::Path("/definitely/not/here".into()),
        };
        assert_eq!(asset.ensure_hash(&ctx()).unwrap(), "recorded");
        let mut archive = Archive {
            hash: Some("recorded".into()),
            source: ArchiveSource::HashOnly,
        };
        assert_eq!(archive.ensure_hash(&ctx()).unwrap(), "recorded");
    }

    #[test]
    fn file_uris_decode_escapes_and_accept_localhost() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(dir.path(), "a b%c.txt", b"data");
        let plain = file_uri(&path).replace("%c", "%25c");
        let localhost = plain.replacen("file://", "file://localhost", 1);
        for uri in [
            plain,
            localhost,
            format!("{}?query#frag", file_uri(&path).replace("%c", "%25c")),
        ] {
            assert_eq!(
                Asset::from_uri(&uri).bytes(&ctx()).unwrap(),
                b"data",
                "{uri}"
            );
        }
    }

    /// Runs `f` and asserts the error message contains every needle.
    fn assert_err_mentions<T: fmt::Debug>(result: Result<T, AssetError>, needles: &[&str]) {
        let message = result.expect_err("expected an error").to_string();
        for needle in needles {
            assert!(
                message.contains(needle),
                "{message:?} should mention {needle:?}"
            );
        }
    }

    #[test]
    fn asset_errors_name_the_culprit() {
        let failing = MapFetcher::default();
        let with_fetcher = AssetContext {
            base_dir: None,
            fetcher: Some(&failing),
        };
        let cases: Vec<(Asset, AssetContext<'_>, Vec<&str>)> = vec![
            (
                Asset::from_path("/no/such/dir/file.txt"),
                ctx(),
                vec!["reading asset file", "/no/such/dir/file.txt"],
            ),
            (
                Asset::from_uri("file:///no/such/uri%20file"),
                ctx(),
                vec!["/no/such/uri file"],
            ),
            (
                Asset::from_uri("https://example.com/x.txt"),
                ctx(),
                vec!["https://example.com/x.txt", "no URI fetcher"],
            ),
            (
                Asset::from_uri("http://example.com/y.txt"),
                with_fetcher,
                vec!["http://example.com/y.txt", "404 Not Found"],
            ),
            (
                Asset::from_uri("ftp://example.com/z"),
                ctx(),
                vec!["ftp://example.com/z", "\"ftp\""],
            ),
            (
                Asset::from_uri("file://server/share/x"),
                ctx(),
                vec!["file://server/share/x", "\"server\""],
            ),
            (
                Asset::from_uri("file:///bad%zzescape"),
                ctx(),
                vec!["file:///bad%zzescape", "percent escape"],
            ),
            (
                Asset::from_uri("no-scheme"),
                ctx(),
                vec!["no-scheme", "missing scheme"],
            ),
            (
                Asset {
                    hash: Some("abc123".into()),
                    source: AssetSource::HashOnly,
                },
                ctx(),
                vec!["asset with hash abc123", "contents are not available"],
            ),
        ];
        for (asset, cx, needles) in cases {
            assert_err_mentions(asset.bytes(&cx), &needles);
            assert_err_mentions(asset.compute_hash(&cx), &needles);
        }
    }

    #[test]
    fn archive_format_from_file_name() {
        let cases = [
            ("a.tar", Some(ArchiveFormat::Tar)),
            ("a.TAR.GZ", Some(ArchiveFormat::TarGz)),
            ("a.tgz", Some(ArchiveFormat::TarGz)),
            ("a.zip", Some(ArchiveFormat::Zip)),
            ("lib.jar", Some(ArchiveFormat::Zip)),
            ("a.gz", None),
            ("a.rar", None),
            ("tar", None),
        ];
        for (name, want) in cases {
            assert_eq!(ArchiveFormat::from_file_name(name), want, "{name}");
        }
    }

    #[test]
    fn archive_files_of_every_format_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let tar = tar_bytes(&[
            Entry::Dir("dir/"),
            Entry::File("./file2", "world"),
            Entry::File("dir/sub.txt", "sub"),
            Entry::File("file1", "hello"),
        ]);
        let zip = zip_bytes(
            &[
                ("file2", "world"),
                ("dir/sub.txt", "sub"),
                ("file1", "hello"),
            ],
            &["dir/"],
        );
        let want = members(&[
            ("dir/sub.txt", "sub"),
            ("file1", "hello"),
            ("file2", "world"),
        ]);
        let cases = [
            ("a.tar", tar.clone()),
            ("a.tar.gz", gzip(&tar)),
            ("a.tgz", gzip(&tar)),
            ("a.zip", zip.clone()),
            ("a.jar", zip),
        ];
        for (name, bytes) in cases {
            let path = write_file(dir.path(), name, &bytes);
            for archive in [
                Archive::from_path(path.to_str().unwrap()),
                Archive::from_uri(file_uri(&path)),
            ] {
                assert_eq!(archive.read_members(&ctx()).unwrap(), want, "{name}");
                // A single archive file hashes to the SHA-256 of its raw bytes.
                assert_eq!(
                    archive.compute_hash(&ctx()).unwrap(),
                    sha256_hex(&bytes),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn literal_and_directory_with_the_same_files_hash_alike() {
        let files = [("file1", "hello"), ("file2", "world"), ("dir/sub/x", "x")];
        let dir = tempfile::tempdir().unwrap();
        for (name, data) in files {
            write_file(dir.path(), name, data.as_bytes());
        }
        let from_dir = Archive::from_path(dir.path().to_str().unwrap());
        let forward = literal(&files);
        let mut reversed_files = files;
        reversed_files.reverse();
        let reversed = literal(&reversed_files);
        // Same files expressed as a nested literal archive.
        let nested = Archive::from_assets(super::Members::from_iter([
            ("file2".to_string(), Asset::from_text("world").into()),
            (
                "dir".to_string(),
                Archive::from_assets(super::Members::from_iter([(
                    "sub".to_string(),
                    literal(&[("x", "x")]).into(),
                )]))
                .into(),
            ),
            ("file1".to_string(), Asset::from_text("hello").into()),
        ]));

        let want = from_dir.compute_hash(&ctx()).unwrap();
        for (label, archive) in [
            ("forward", &forward),
            ("reversed", &reversed),
            ("nested", &nested),
        ] {
            assert_eq!(archive.compute_hash(&ctx()).unwrap(), want, "{label}");
        }
        assert_eq!(
            from_dir.read_members(&ctx()).unwrap(),
            members(&[("dir/sub/x", "x"), ("file1", "hello"), ("file2", "world")])
        );

        // The hash is that of the canonical tar stream that `write` emits.
        let mut tar = Vec::new();
        forward.write(&ctx(), ArchiveFormat::Tar, &mut tar).unwrap();
        assert_eq!(sha256_hex(&tar), want);

        let changed = literal(&[("file1", "hello"), ("file2", "World"), ("dir/sub/x", "x")]);
        assert_ne!(changed.compute_hash(&ctx()).unwrap(), want);
        let renamed = literal(&[("file1", "hello"), ("file3", "world"), ("dir/sub/x", "x")]);
        assert_ne!(renamed.compute_hash(&ctx()).unwrap(), want);
    }

    /// The hashes Pulumi's engine records for the same archives (read from its state after
    /// an `up` of a Node.js dynamic resource with these inputs).
    #[test]
    fn archives_hash_as_pulumi_hashes_them() {
        let dir = tempfile::tempdir().unwrap();
        write_file(dir.path(), "one.txt", b"one\n");
        write_file(dir.path(), "two.txt", b"two\n");
        let from_dir = Archive::from_path(dir.path().to_str().unwrap());
        let mut dbg = Vec::new();
        from_dir
            .write(&ctx(), ArchiveFormat::Tar, &mut dbg)
            .unwrap();
        fs::write("/tmp/p9/rust.tar", &dbg).unwrap();
        assert_eq!(
            from_dir.compute_hash(&ctx()).unwrap(),
            "65f843259b60bc18e806210e867c80ae72dece11999586b144a9257d6a07a2df"
        );
        let mixed = Archive::from_assets(super::Members::from_iter([
            ("a.txt".to_string(), Asset::from_text("a").into()),
            ("sub".to_string(), from_dir.into()),
        ]));
        assert_eq!(
            mixed.compute_hash(&ctx()).unwrap(),
            "9436d64f480e66ee48715dcd3ca2b402c59a49e43bf205074fe8e97d2c84f9df"
        );
    }

    #[test]
    fn canonical_tar_headers_are_fixed() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(dir.path(), "b/x.txt", b"x");
        write_file(dir.path(), "a.txt", b"a");
        // Give the real files unusual metadata that must not leak into the stream.
        let file = fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(12345),
        )
        .unwrap();
        let mut tar = Vec::new();
        Archive::from_path(dir.path().to_str().unwrap())
            .write(&ctx(), ArchiveFormat::Tar, &mut tar)
            .unwrap();
        let mut archive = tar::Archive::new(tar.as_slice());
        let mut names = Vec::new();
        for entry in archive.entries().unwrap() {
            let entry = entry.unwrap();
            let header = entry.header();
            names.push(String::from_utf8(entry.path_bytes().into_owned()).unwrap());
            assert!(header.as_ustar().is_some());
            assert_eq!(header.entry_type(), tar::EntryType::Regular);
            assert_eq!(header.mode().unwrap(), 0o600);
            assert_eq!(header.mtime().unwrap(), 0);
            assert_eq!((header.uid().unwrap(), header.gid().unwrap()), (0, 0));
            assert_eq!(header.username_bytes(), Some(&b""[..]));
            assert_eq!(header.groupname_bytes(), Some(&b""[..]));
        }
        assert_eq!(names, ["a.txt", "b/x.txt"]);
        // Members plus the two terminating zero blocks, nothing else.
        assert_eq!(tar.len(), 512 * (2 * 2 + 2));
    }

    #[test]
    fn nested_archives_flatten_under_their_keys() {
        let dir = tempfile::tempdir().unwrap();
        let tgz = gzip(&tar_bytes(&[
            Entry::File("a.txt", "A"),
            Entry::File("b/c.txt", "C"),
        ]));
        write_file(dir.path(), "pkg.tgz", &tgz);
        let mut archive = Archive::from_assets(super::Members::from_iter([
            ("top.txt".to_string(), Asset::from_text("T").into()),
            (
                "lit".to_string(),
                Archive::from_assets(super::Members::from_iter([
                    ("x".to_string(), Asset::from_text("X").into()),
                    ("deeper".to_string(), literal(&[("y", "Y")]).into()),
                ]))
                .into(),
            ),
            ("pkg".to_string(), Archive::from_path("pkg.tgz").into()),
        ]));
        let with_base = AssetContext {
            base_dir: Some(dir.path()),
            fetcher: None,
        };
        let want = members(&[
            ("lit/deeper/y", "Y"),
            ("lit/x", "X"),
            ("pkg/a.txt", "A"),
            ("pkg/b/c.txt", "C"),
            ("top.txt", "T"),
        ]);
        assert_eq!(archive.read_members(&with_base).unwrap(), want);

        // The nested file archive is flattened, so the hash is that of the flat literal.
        let flat = Archive::from_assets(
            want.iter()
                .map(|(n, d)| {
                    let text = String::from_utf8(d.clone()).unwrap();
                    (n.clone(), Asset::from_text(text).into())
                })
                .collect(),
        );
        let hash = archive.ensure_hash(&with_base).unwrap().to_owned();
        assert_eq!(hash, flat.compute_hash(&ctx()).unwrap());
    }

    #[test]
    fn write_then_read_round_trips_in_every_format() {
        let long_name = format!("deep/{}/file.txt", "d".repeat(120));
        let source = Archive::from_assets(super::Members::from_iter([
            ("z.txt".to_string(), Asset::from_text("last").into()),
            ("a.txt".to_string(), Asset::from_text("first").into()),
            ("empty".to_string(), Asset::from_text("").into()),
            (long_name.clone(), Asset::from_text("long").into()),
            (
                "sub".to_string(),
                literal(&[("inner.bin", "\u{1}\u{2}")]).into(),
            ),
        ]));
        let want = source.read_members(&ctx()).unwrap();
        assert_eq!(want.len(), 5);
        assert_eq!(want[1].0, long_name);

        let dir = tempfile::tempdir().unwrap();
        for format in [ArchiveFormat::Tar, ArchiveFormat::TarGz, ArchiveFormat::Zip] {
            let mut first = Vec::new();
            source.write(&ctx(), format, &mut first).unwrap();
            let mut second = Vec::new();
            source.write(&ctx(), format, &mut second).unwrap();
            assert_eq!(first, second, "{format} output is deterministic");

            let path = write_file(dir.path(), &format!("out.{}", format.extension()), &first);
            let read_back = Archive::from_path(path.to_str().unwrap());
            assert_eq!(read_back.read_members(&ctx()).unwrap(), want, "{format}");
        }
    }

    #[test]
    fn archive_errors_name_the_culprit() {
        let dir = tempfile::tempdir().unwrap();
        let evil_tar = write_file(
            dir.path(),
            "evil.tar",
            &tar_bytes(&[Entry::File("ok", "1"), Entry::File("../evil", "x")]),
        );
        let abs_tar = write_file(
            dir.path(),
            "abs.tar",
            &tar_bytes(&[Entry::File("/etc/evil", "x")]),
        );
        let link_tar = write_file(
            dir.path(),
            "link.tar.gz",
            &gzip(&tar_bytes(&[Entry::Symlink("dir/link", "/etc/passwd")])),
        );
        let evil_zip = write_file(
            dir.path(),
            "evil.zip",
            &zip_bytes(&[("a/../../evil", "x")], &[]),
        );
        let garbage = write_file(dir.path(), "garbage.zip", b"not a zip");
        let rar = write_file(dir.path(), "a.rar", b"whatever");
        let dup_tar = write_file(
            dir.path(),
            "dup.tar",
            &tar_bytes(&[Entry::File("./same", "1"), Entry::File("same", "2")]),
        );

        let p = |path: &Path| path.to_str().unwrap().to_owned();
        let file = |path: &Path| Archive::from_path(p(path));
        // `raw_hash_ok` marks single archive files whose *contents* are bad: their hash is that
        // of the raw bytes, so hashing succeeds while reading or rewriting members fails.
        let cases: Vec<(Archive, bool, Vec<String>)> = vec![
            (
                Archive::from_path("/no/such/archive.tar"),
                false,
                vec!["/no/such/archive.tar".into()],
            ),
            (
                file(&rar),
                false,
                vec![p(&rar), "unsupported format".into()],
            ),
            (
                Archive::from_uri("https://example.com/a.rar?x=1.zip"),
                false,
                vec![
                    "https://example.com/a.rar?x=1.zip".into(),
                    "unsupported format".into(),
                ],
            ),
            (
                file(&evil_tar),
                true,
                vec![
                    p(&evil_tar),
                    "member \"../evil\"".into(),
                    "path traversal".into(),
                ],
            ),
            (
                file(&abs_tar),
                true,
                vec!["member \"/etc/evil\"".into(), "absolute".into()],
            ),
            (
                file(&link_tar),
                true,
                vec![p(&link_tar), "member \"dir/link\"".into(), "links".into()],
            ),
            (
                file(&evil_zip),
                true,
                vec![p(&evil_zip), "member \"a/../../evil\"".into()],
            ),
            (
                file(&garbage),
                true,
                vec![p(&garbage), "malformed zip".into()],
            ),
            (
                file(&dup_tar),
                true,
                vec![p(&dup_tar), "member \"same\"".into(), "duplicate".into()],
            ),
            (
                literal(&[("fine", "1"), ("../evil", "x")]),
                false,
                vec!["archive member \"../evil\"".into(), "path traversal".into()],
            ),
            (
                Archive::from_assets(super::Members::from_iter([(
                    "sub".to_string(),
                    literal(&[("/abs", "x")]).into(),
                )])),
                false,
                vec!["archive member \"sub//abs\"".into(), "absolute".into()],
            ),
            (
                // A literal map containing a bad file archive is hashed via its members.
                Archive::from_assets(super::Members::from_iter([(
                    "pkg".to_string(),
                    file(&evil_tar).into(),
                )])),
                false,
                vec![p(&evil_tar), "\"../evil\"".into()],
            ),
            (
                literal(&[("a/b", "1"), ("a/./b", "2")]),
                false,
                vec!["archive member \"a/b\"".into(), "duplicate".into()],
            ),
            (
                Archive::from_uri("https://example.com/a.zip"),
                false,
                vec!["https://example.com/a.zip".into(), "no URI fetcher".into()],
            ),
            (
                Archive {
                    hash: None,
                    source: ArchiveSource::HashOnly,
                },
                false,
                vec!["archive: contents are not available".into()],
            ),
        ];
        for (archive, raw_hash_ok, needles) in cases {
            let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
            assert_err_mentions(archive.read_members(&ctx()), &needles);
            assert_err_mentions(
                archive.write(&ctx(), ArchiveFormat::Zip, &mut Vec::new()),
                &needles,
            );
            if raw_hash_ok {
                assert!(archive.compute_hash(&ctx()).is_ok(), "{needles:?}");
            } else {
                assert_err_mentions(archive.compute_hash(&ctx()), &needles);
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn directory_archives_refuse_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        write_file(dir.path(), "real.txt", b"r");
        std::os::unix::fs::symlink(dir.path().join("real.txt"), dir.path().join("alias")).unwrap();
        let archive = Archive::from_path(dir.path().to_str().unwrap());
        assert_err_mentions(
            archive.read_members(&ctx()),
            &[
                dir.path().to_str().unwrap(),
                "member \"alias\"",
                "symbolic links",
            ],
        );
    }

    #[test]
    fn https_archives_use_the_fetcher() {
        let zip = zip_bytes(&[("file1", "hello"), ("file2", "world")], &[]);
        let uri = "https://example.com/archive.zip?sig=abc";
        let fetcher = MapFetcher {
            bodies: vec![(uri.into(), zip.clone())],
            ..Default::default()
        };
        let cx = AssetContext {
            base_dir: None,
            fetcher: Some(&fetcher),
        };
        let archive = Archive::from_uri(uri);
        assert_eq!(
            archive.read_members(&cx).unwrap(),
            members(&[("file1", "hello"), ("file2", "world")])
        );
        assert_eq!(archive.compute_hash(&cx).unwrap(), sha256_hex(&zip));
        // Same contents as a literal hash the canonical-tar way, not the zip-bytes way.
        let lit = literal(&[("file1", "hello"), ("file2", "world")]);
        assert_ne!(lit.compute_hash(&cx).unwrap(), sha256_hex(&zip));
        assert_eq!(
            *fetcher.calls.lock().unwrap(),
            vec![uri.to_owned(), uri.to_owned()]
        );

        // An unsupported extension is refused before anything is fetched.
        fetcher.calls.lock().unwrap().clear();
        assert!(
            Archive::from_uri("https://example.com/a.rar")
                .read_members(&cx)
                .is_err()
        );
        assert!(fetcher.calls.lock().unwrap().is_empty());
    }

    #[test]
    fn member_name_normalization() {
        let cases = [
            ("a", Ok("a")),
            ("./a//b/", Ok("a/b")),
            ("a/./b", Ok("a/b")),
            ("..", Err("path traversal")),
            ("a/../b", Err("path traversal")),
            ("a\\..\\b", Err("path traversal")),
            ("/a", Err("absolute")),
            ("\\a", Err("absolute")),
            ("C:/a", Err("absolute")),
            ("./", Err("empty")),
            ("", Err("empty")),
            ("a\0b", Err("NUL")),
        ];
        for (name, want) in cases {
            match (normalize_member_name(name), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{name:?}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{name:?}: {got}"),
                (got, want) => panic!("{name:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn uri_file_names_ignore_query_and_fragment() {
        let cases = [
            ("https://example.com/dir/a.tar.gz?x=1#f", "a.tar.gz"),
            ("https://example.com/a%20b.zip", "a b.zip"),
            ("https://example.com", ""),
            ("file:///tmp/x.tgz", "x.tgz"),
        ];
        for (uri, want) in cases {
            assert_eq!(uri_file_name(uri), want, "{uri}");
        }
    }
}

#[cfg(test)]
mod fill_tests {
    //! `fill_hashes`: every asset and archive of a value gets its hash, wherever it sits.
    use super::*;
    use crate::value::{OutputValue, PropertyMap, PropertyValue};

    const HELLO_HASH: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    fn hash_of(value: &PropertyValue) -> Option<&str> {
        match value {
            PropertyValue::Asset(a) => a.hash.as_deref(),
            PropertyValue::Archive(a) => a.hash.as_deref(),
            PropertyValue::Secret(inner) => hash_of(inner),
            PropertyValue::Output(o) => o.value.as_deref().and_then(hash_of),
            other => panic!("not an asset or archive: {other:?}"),
        }
    }

    #[test]
    fn every_asset_and_archive_gets_its_hash() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("hello.txt"), "hello").unwrap();
        fs::create_dir(dir.path().join("site")).unwrap();
        fs::write(dir.path().join("site/index.html"), "<p>hi</p>").unwrap();
        let members: Members = [
            ("a.txt".to_owned(), Asset::from_text("hello").into()),
            ("b.txt".to_owned(), Asset::from_path("hello.txt").into()),
        ]
        .into_iter()
        .collect();
        let literal = Archive::from_assets(members);
        let directory = Archive::from_path("site");
        let mut values: PropertyMap = [
            (
                "text",
                PropertyValue::Asset(Box::new(Asset::from_text("hello"))),
            ),
            (
                "file",
                PropertyValue::Asset(Box::new(Asset::from_path("hello.txt"))),
            ),
            ("literal", PropertyValue::Archive(Box::new(literal.clone()))),
            (
                "nested",
                PropertyValue::Object(
                    [(
                        "list".to_owned(),
                        PropertyValue::Array(vec![
                            PropertyValue::Null,
                            PropertyValue::secret(PropertyValue::Archive(Box::new(
                                directory.clone(),
                            ))),
                        ]),
                    )]
                    .into_iter()
                    .collect::<crate::value::PropertyMap>()
                    .into(),
                ),
            ),
            (
                "output",
                PropertyValue::Output(Box::new(OutputValue {
                    value: Some(Box::new(PropertyValue::Asset(Box::new(Asset::from_uri(
                        file_uri(&dir.path().join("hello.txt")),
                    ))))),
                    ..OutputValue::default()
                })),
            ),
            ("unknown", PropertyValue::Computed),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let ctx = AssetContext {
            base_dir: Some(dir.path()),
            fetcher: None,
        };
        fill_hashes(&mut values, &ctx).unwrap();
        assert_eq!(hash_of(&values["text"]), Some(HELLO_HASH));
        assert_eq!(hash_of(&values["file"]), Some(HELLO_HASH));
        assert_eq!(hash_of(&values["output"]), Some(HELLO_HASH));
        let literal_hash = literal.compute_hash(&ctx).unwrap();
        assert_eq!(hash_of(&values["literal"]), Some(literal_hash.as_str()));
        let PropertyValue::Object(nested) = &values["nested"] else {
            panic!("nested is an object")
        };
        let PropertyValue::Array(list) = &nested["list"] else {
            panic!("list is an array")
        };
        assert_eq!(
            hash_of(&list[1]),
            Some(directory.compute_hash(&ctx).unwrap().as_str())
        );
        assert!(
            matches!(list[1], PropertyValue::Secret(_)),
            "the secret stays secret"
        );
        // Each member gets its own hash too, as Pulumi records them.
        let PropertyValue::Archive(archive) = &values["literal"] else {
            panic!("literal is an archive")
        };
        let Archive {
            source: ArchiveSource::Assets(members),
            ..
        } = &**archive
        else {
            panic!("literal is a literal archive")
        };
        assert!(members.values().all(|m| match m {
            ArchiveMember::Asset(a) => a.hash.is_some(),
            ArchiveMember::Archive(a) => a.hash.is_some(),
        }));
        assert_eq!(values["unknown"], PropertyValue::Computed);
    }

    #[test]
    fn a_hash_already_there_is_kept_and_nothing_is_read() {
        let recorded = "0".repeat(64);
        let mut values: PropertyMap = [(
            "gone".to_owned(),
            PropertyValue::Asset(Box::new(Asset {
                hash: Some(recorded.clone()),
                source: AssetSource::Path("/no/such/file".into()),
            })),
        )]
        .into_iter()
        .collect();
        fill_hashes(&mut values, &AssetContext::default()).unwrap();
        assert_eq!(hash_of(&values["gone"]), Some(recorded.as_str()));
    }

    #[test]
    fn remote_uris_are_hashed_through_the_fetcher() {
        struct Hello;
        impl UriFetcher for Hello {
            fn fetch(&self, uri: &str) -> Result<Vec<u8>, String> {
                assert_eq!(uri, "https://example.com/hello.txt");
                Ok(b"hello".to_vec())
            }
        }
        let mut values: PropertyMap = [(
            "remote".to_owned(),
            PropertyValue::Asset(Box::new(Asset::from_uri("https://example.com/hello.txt"))),
        )]
        .into_iter()
        .collect();
        let ctx = AssetContext {
            base_dir: None,
            fetcher: Some(&Hello),
        };
        fill_hashes(&mut values, &ctx).unwrap();
        assert_eq!(hash_of(&values["remote"]), Some(HELLO_HASH));
    }

    #[test]
    fn a_failure_names_the_property_and_the_cause() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = AssetContext {
            base_dir: Some(dir.path()),
            fetcher: None,
        };
        let cases: Vec<(PropertyValue, &str)> = vec![
            (
                PropertyValue::Asset(Box::new(Asset::from_path("missing.txt"))),
                "code[\"my file\"][1]: computing the asset's hash: reading asset file",
            ),
            (
                PropertyValue::Archive(Box::new(Archive::from_path("missing.zip"))),
                "code[\"my file\"][1]: computing the archive's hash: reading archive",
            ),
            (
                PropertyValue::Asset(Box::new(Asset {
                    hash: None,
                    source: AssetSource::HashOnly,
                })),
                "code[\"my file\"][1]: computing the asset's hash: asset: contents are not available",
            ),
            (
                PropertyValue::Asset(Box::new(Asset::from_uri("https://example.com/x"))),
                "no URI fetcher is configured",
            ),
        ];
        for (value, expected) in cases {
            let mut values: PropertyMap = [(
                "code".to_owned(),
                PropertyValue::Object(
                    [(
                        "my file".to_owned(),
                        PropertyValue::Array(vec![PropertyValue::Null, value]),
                    )]
                    .into_iter()
                    .collect::<crate::value::PropertyMap>()
                    .into(),
                ),
            )]
            .into_iter()
            .collect();
            let err = fill_hashes(&mut values, &ctx).unwrap_err().to_string();
            assert!(err.contains(expected), "{err:?} lacks {expected:?}");
        }
    }

    fn file_uri(path: &Path) -> String {
        format!("file://{}", path.to_str().unwrap())
    }
}
