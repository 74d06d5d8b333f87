//! `cairn.lock`: the providers a project fetched from registries, pinned. Beside `Pulumi.yaml`,
//! JSON with one provider per object and sorted entries, so a change reads well in a diff:
//!
//! ```json
//! {
//!   "version": 1,
//!   "providers": [
//!     {
//!       "name": "postgresql",
//!       "source": "oci://registry.example/acme/postgresql",
//!       "requirement": "^3.18.2",
//!       "version": "3.18.2",
//!       "digest": "sha256:…",
//!       "signer": "ed25519:…"
//!     }
//!   ]
//! }
//! ```
//!
//! `digest` is the SHA-256 of the component (its OCI layer digest); `signer`, when present, is
//! the key whose signature was verified when it was locked.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::error::RegistryError;

/// The lock file's name, beside `Pulumi.yaml`.
pub const LOCK_FILE: &str = "cairn.lock";
/// The format version this code reads and writes.
pub const LOCK_VERSION: u32 = 1;

/// One locked provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedProvider {
    pub name: String,
    /// Where it came from: `oci://HOST/REPO` (no tag) or an `https://` URL.
    pub source: String,
    /// What was asked for (`^3.18.2`, `*`).
    pub requirement: String,
    pub version: semver::Version,
    pub digest: Digest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// The lock file's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    pub version: u32,
    #[serde(default)]
    pub providers: Vec<LockedProvider>,
}

impl Default for LockFile {
    fn default() -> LockFile {
        LockFile {
            version: LOCK_VERSION,
            providers: Vec::new(),
        }
    }
}

impl LockFile {
    /// Reads `path`; an empty lock if it does not exist.
    pub fn load(path: &Path) -> Result<LockFile, RegistryError> {
        let bad = |message: String| RegistryError::Lock {
            file: path.display().to_string(),
            message,
        };
        let text = match std::fs::read(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LockFile::default()),
            Err(e) => return Err(bad(format!("cannot read it: {e}"))),
        };
        let lock: LockFile = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
        if lock.version != LOCK_VERSION {
            return Err(bad(format!(
                "it is format version {}; this Cairn reads version {LOCK_VERSION}",
                lock.version
            )));
        }
        for p in &lock.providers {
            if p.name.is_empty()
                || !p
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            {
                return Err(bad(format!("{:?} is not a provider name", p.name)));
            }
            semver::VersionReq::parse(&p.requirement)
                .map_err(|e| bad(format!("{}: requirement {:?}: {e}", p.name, p.requirement)))?;
        }
        Ok(lock)
    }

    /// Writes the lock to `path` (sorted; whole or not at all).
    pub fn save(&mut self, path: &Path) -> Result<(), RegistryError> {
        self.providers
            .sort_by(|a, b| a.name.cmp(&b.name).then(a.version.cmp(&b.version)));
        let mut text = serde_json::to_vec_pretty(self).map_err(|e| RegistryError::Lock {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        text.push(b'\n');
        crate::files::write_atomically(path, &text, false).map_err(|e| RegistryError::Lock {
            file: path.display().to_string(),
            message: format!("cannot write it: {e}"),
        })
    }

    /// The newest locked version of `name` that `version` asks for (compatible with it, `^v`),
    /// or the newest of `name` when no version is asked for.
    pub fn find(&self, name: &str, version: Option<&semver::Version>) -> Option<&LockedProvider> {
        let requirement = version.map(|v| semver::VersionReq::parse(&format!("^{v}")));
        self.providers
            .iter()
            .filter(|p| p.name == name)
            .filter(|p| match &requirement {
                Some(Ok(req)) => req.matches(&p.version),
                Some(Err(_)) => false,
                None => true,
            })
            .max_by(|a, b| a.version.cmp(&b.version))
    }

    /// Records `entry`, replacing the entry of the same name and version.
    pub fn upsert(&mut self, entry: LockedProvider) {
        self.providers
            .retain(|p| !(p.name == entry.name && p.version == entry.version));
        self.providers.push(entry);
    }

    /// Forgets every entry of `name`; how many there were.
    pub fn remove(&mut self, name: &str) -> usize {
        let before = self.providers.len();
        self.providers.retain(|p| p.name != name);
        before - self.providers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, version: &str) -> LockedProvider {
        LockedProvider {
            name: name.into(),
            source: format!("oci://r.example/acme/{name}"),
            requirement: format!("^{version}"),
            version: semver::Version::parse(version).unwrap(),
            digest: Digest::of(version.as_bytes()),
            signer: None,
        }
    }

    #[test]
    fn a_lock_round_trips_sorted_and_finds_compatible_versions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        assert_eq!(LockFile::load(&path).unwrap(), LockFile::default());
        let mut lock = LockFile::default();
        lock.upsert(entry("random", "4.16.0"));
        lock.upsert(entry("postgresql", "3.18.2"));
        lock.upsert(entry("random", "5.0.0"));
        lock.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.find("postgresql").unwrap() < text.find("random").unwrap());
        assert!(text.contains("\"digest\": \"sha256:"), "{text}");
        let lock = LockFile::load(&path).unwrap();
        let v = |s: &str| semver::Version::parse(s).unwrap();
        assert_eq!(
            lock.find("random", Some(&v("4.1.0"))).unwrap().version,
            v("4.16.0")
        );
        assert_eq!(lock.find("random", None).unwrap().version, v("5.0.0"));
        assert!(lock.find("random", Some(&v("6.0.0"))).is_none());
        assert!(lock.find("other", None).is_none());
    }

    #[test]
    fn a_bad_lock_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        for (text, why) in [
            ("{", "EOF"),
            (r#"{"version": 2, "providers": []}"#, "format version 2"),
            (
                r#"{"version": 1, "providers": [{"name": "x", "source": "s", "requirement": "^1", "version": "1.0.0", "digest": "sha256:00"}]}"#,
                "64 lower-case hex",
            ),
            (
                r#"{"version": 1, "providers": [{"name": "../x", "source": "s", "requirement": "^1", "version": "1.0.0", "digest": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}]}"#,
                "not a provider name",
            ),
            (r#"{"version": 1, "extra": 1}"#, "unknown field"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = LockFile::load(&path).unwrap_err().to_string();
            assert!(
                err.contains("cairn.lock") && err.contains(why),
                "{why}: {err}"
            );
        }
    }
}
