//! Where providers are looked for by name: an ordered list of registries (`oci://HOST/PREFIX`,
//! the package's repository is `PREFIX/NAME`), some of which may be mirrors of another source
//! (`mirrorOf`): another registry prefix, or a directory `cairn plugin mirror` filled
//! (`file:///DIR`, components stored by digest). A mirror serves what its origin's lock entries
//! name, so a lock's sources stay the same whatever mirror a network uses.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::digest::Digest;
use crate::error::RegistryError;
use crate::lock::LockedProvider;
use crate::reference::{Reference, Target, tag_for_version, version_of_tag};

/// The file in the Cairn home listing registries.
pub const REGISTRIES_FILE: &str = "registries.json";

/// One registry entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegistryEntry {
    /// `oci://HOST[:PORT]/PREFIX`, or `file:///DIR` for a mirror directory.
    pub url: String,
    /// The source this entry mirrors (`oci://HOST/PREFIX`), if it is a mirror.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror_of: Option<String>,
}

impl RegistryEntry {
    /// Checks the entry's URLs.
    pub fn check(&self) -> Result<(), String> {
        if let Some(dir) = self.url.strip_prefix("file://") {
            if !Path::new(dir).is_absolute() {
                return Err(format!(
                    "{}: a mirror directory is file:///ABSOLUTE/PATH",
                    self.url
                ));
            }
            if self.mirror_of.is_none() {
                return Err(format!(
                    "{}: a directory can only be a mirror (--mirror-of oci://HOST/PREFIX)",
                    self.url
                ));
            }
        } else {
            let r = Reference::parse(&self.url).map_err(|e| e.to_string())?;
            if r.target.is_some() {
                return Err(format!(
                    "{}: a registry is HOST/PREFIX, without a tag or digest",
                    self.url
                ));
            }
        }
        if let Some(origin) = &self.mirror_of {
            let r = Reference::parse(origin).map_err(|e| e.to_string())?;
            if r.target.is_some() {
                return Err(format!(
                    "{origin}: a mirrored source is HOST/PREFIX, without a tag or digest"
                ));
            }
        }
        Ok(())
    }
}

/// The registries file's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryList {
    #[serde(default)]
    pub registries: Vec<RegistryEntry>,
}

impl RegistryList {
    /// Reads `path`; none if it does not exist.
    pub fn load(path: &Path) -> Result<RegistryList, RegistryError> {
        let bad = |message: String| RegistryError::Registries {
            file: path.display().to_string(),
            message,
        };
        let text = match std::fs::read(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(RegistryList::default());
            }
            Err(e) => return Err(bad(format!("cannot read it: {e}"))),
        };
        let list: RegistryList = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
        for entry in &list.registries {
            entry.check().map_err(bad)?;
        }
        Ok(list)
    }

    pub fn save(&self, path: &Path) -> Result<(), RegistryError> {
        let mut text = serde_json::to_vec_pretty(self).map_err(|e| RegistryError::Registries {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        text.push(b'\n');
        crate::files::write_atomically(path, &text, false).map_err(|e| RegistryError::Registries {
            file: path.display().to_string(),
            message: format!("cannot write it: {e}"),
        })
    }
}

/// `rest` when `url` is `prefix` or below it (on a `/` boundary).
fn below<'a>(url: &'a str, prefix: &str) -> Option<&'a str> {
    let prefix = prefix.trim_end_matches('/');
    let rest = url.strip_prefix(prefix)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

/// A version found for a package in a registry.
#[derive(Debug, Clone)]
pub struct Found {
    /// `oci://HOST/PREFIX/NAME`.
    pub source: String,
    pub version: semver::Version,
    pub tag: String,
}

/// The newest version of `name` fitting `requirement` (without one: the newest release) in the
/// first registry of `registries` (mirrors skipped) that has any. Tags that are not versions
/// are ignored.
pub async fn resolve(
    client: &Client,
    registries: &[RegistryEntry],
    name: &str,
    requirement: &semver::VersionReq,
) -> Result<Option<Found>, RegistryError> {
    for entry in registries.iter().filter(|e| e.mirror_of.is_none()) {
        let source = format!("{}/{name}", entry.url.trim_end_matches('/'));
        let repository = Reference::parse(&source)?;
        let tags = match client.tags(&repository).await {
            Ok(tags) => tags,
            Err(RegistryError::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        let newest = tags
            .iter()
            .filter_map(|tag| version_of_tag(tag).map(|v| (v, tag)))
            .filter(|(v, _)| {
                requirement.matches(v)
                    && (v.pre.is_empty() || *requirement != semver::VersionReq::STAR)
            })
            .max_by(|a, b| a.0.cmp(&b.0));
        if let Some((version, tag)) = newest {
            return Ok(Some(Found {
                source,
                version,
                tag: tag.clone(),
            }));
        }
    }
    Ok(None)
}

/// A component fetched for a lock entry or a resolution, and where it really came from.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub component: Vec<u8>,
    pub digest: Digest,
    /// The URL it was fetched from (a mirror's, or the source's).
    pub from: String,
}

/// Fetches version `version` of the provider at `source` (`oci://HOST/PREFIX/NAME`), trying
/// the mirrors of `source` in `registries` first, then `source` itself (unless `offline`, when
/// only directory mirrors are used). With `expected`, every candidate must serve exactly those
/// bytes: one that serves others is refused, naming both digests.
pub async fn fetch(
    client: &Client,
    registries: &[RegistryEntry],
    name: &str,
    source: &str,
    version: &semver::Version,
    expected: Option<&Digest>,
    offline: bool,
) -> Result<Fetched, RegistryError> {
    let mut failures = Vec::new();
    let tag = tag_for_version(version);
    let mut candidates: Vec<String> = registries
        .iter()
        .filter_map(|e| {
            let origin = e.mirror_of.as_deref()?;
            let rest = below(source, origin)?;
            Some(if e.url.starts_with("file://") || rest.is_empty() {
                e.url.clone()
            } else {
                format!("{}/{rest}", e.url.trim_end_matches('/'))
            })
        })
        .collect();
    if !offline {
        candidates.push(source.to_owned());
    }
    for candidate in candidates {
        let result = if let Some(dir) = candidate.strip_prefix("file://") {
            let Some(expected) = expected else {
                failures.push(format!(
                    "{candidate}: a mirror directory serves only locked digests"
                ));
                continue;
            };
            fetch_from_dir(Path::new(dir), expected).map(|component| Fetched {
                component,
                digest: *expected,
                from: candidate.clone(),
            })
        } else {
            let reference = Reference::parse(&candidate)?.with_target(Target::Tag(tag.clone()));
            client.pull(&reference).await.map(|pulled| Fetched {
                digest: pulled.digest,
                component: pulled.component,
                from: reference.to_string(),
            })
        };
        match result {
            Ok(fetched) => {
                if let Some(expected) = expected
                    && fetched.digest != *expected
                {
                    return Err(RegistryError::locked_digest_changed(
                        name,
                        version,
                        &fetched.from,
                        expected,
                        &fetched.digest,
                    ));
                }
                return Ok(fetched);
            }
            // A candidate that does not have it (or cannot be reached): the next one.
            Err(
                e @ (RegistryError::NotFound { .. }
                | RegistryError::Http { .. }
                | RegistryError::Timeout { .. }),
            ) => failures.push(e.to_string()),
            Err(e) => return Err(e),
        }
    }
    Err(RegistryError::NotFound {
        reference: format!(
            "{source}:{tag}{}",
            if failures.is_empty() {
                if offline {
                    " (offline, and no mirror directory has it)".to_owned()
                } else {
                    String::new()
                }
            } else {
                format!(" ({})", failures.join("; "))
            }
        ),
    })
}

/// `DIR/sha256/<hex>.wasm`, checked against its digest.
fn fetch_from_dir(dir: &Path, digest: &Digest) -> Result<Vec<u8>, RegistryError> {
    let path = mirror_path(dir, digest);
    let bytes = std::fs::read(&path).map_err(|e| RegistryError::NotFound {
        reference: format!("{}: {e}", path.display()),
    })?;
    let actual = Digest::of(&bytes);
    if actual != *digest {
        return Err(RegistryError::DigestMismatch {
            url: path.display().to_string(),
            what: "mirrored component".into(),
            expected: digest.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok(bytes)
}

/// Where a mirror directory keeps the component with `digest`.
pub fn mirror_path(dir: &Path, digest: &Digest) -> PathBuf {
    dir.join("sha256").join(format!("{}.wasm", digest.hex()))
}

/// Writes `component` into the mirror directory `dir` (by digest).
pub fn write_to_dir(dir: &Path, component: &[u8]) -> Result<PathBuf, RegistryError> {
    let path = mirror_path(dir, &Digest::of(component));
    crate::files::write_atomically(&path, component, false).map_err(|e| RegistryError::Http {
        url: path.display().to_string(),
        message: format!("cannot write it: {e}"),
    })?;
    Ok(path)
}

/// The lock entry for a fetched provider.
pub fn lock_entry(
    name: &str,
    source: &str,
    requirement: &semver::VersionReq,
    version: &semver::Version,
    digest: Digest,
    signer: Option<String>,
) -> LockedProvider {
    LockedProvider {
        name: name.to_owned(),
        source: source.to_owned(),
        requirement: requirement.to_string(),
        version: version.clone(),
        digest,
        signer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_below_a_prefix() {
        assert_eq!(below("oci://h/acme/x", "oci://h/acme"), Some("x"));
        assert_eq!(below("oci://h/acme/x", "oci://h/acme/"), Some("x"));
        assert_eq!(below("oci://h/acme", "oci://h/acme"), Some(""));
        assert_eq!(below("oci://h/acmex/x", "oci://h/acme"), None);
    }

    #[test]
    fn entries_are_checked() {
        let e = |url: &str, mirror_of: Option<&str>| RegistryEntry {
            url: url.into(),
            mirror_of: mirror_of.map(str::to_owned),
        };
        assert!(e("oci://h/acme", None).check().is_ok());
        assert!(e("file:///m", Some("oci://h/acme")).check().is_ok());
        assert!(
            e("file:///m", None)
                .check()
                .unwrap_err()
                .contains("only be a mirror")
        );
        assert!(
            e("file://rel", Some("oci://h/a"))
                .check()
                .unwrap_err()
                .contains("ABSOLUTE")
        );
        assert!(
            e("oci://h/acme:1.0", None)
                .check()
                .unwrap_err()
                .contains("without a tag")
        );
        assert!(
            e("https://h/acme", None)
                .check()
                .unwrap_err()
                .contains("oci://")
        );
    }
}
