//! The guest SDK (`cairn-sdk`) this binary embeds, for Rust projects outside the repository.
//!
//! `cairn new` writes Rust programs and providers that depend on `cairn-sdk` by path. The SDK's
//! sources, with the WIT its bindings are generated from and `cairn-wire`, are embedded at
//! build time (`build.rs`) and written once under the Cairn home, in a directory named by the
//! SDK's version and a hash of its contents:
//!
//! ```text
//! <home>/sdk/cairn-sdk-<version>-<hash>/guest-sdk/   the crate (path dependency)
//!                                       wit/         provider.wit, program.wit, policy.wit
//!                                       wit/wire/    cairn-wire
//! ```
//!
//! A directory is complete once it holds `.complete` (it is built under another name and
//! renamed into place), so concurrent or interrupted runs never leave a half-written SDK, and a
//! newer cairn writes its SDK beside the old one instead of changing it under existing
//! projects.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use sha2::{Digest, Sha256};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/sdk_files.rs"));
}

/// The file whose presence marks a complete SDK directory.
const COMPLETE: &str = ".complete";

/// The embedded SDK's version (its `Cargo.toml`'s).
pub fn version() -> &'static str {
    let manifest = embedded::SDK_FILES
        .iter()
        .find(|(path, _)| *path == "guest-sdk/Cargo.toml")
        .map(|(_, bytes)| std::str::from_utf8(bytes).unwrap_or_default())
        .unwrap_or_default();
    manifest
        .lines()
        .find_map(|line| {
            line.strip_prefix("version = \"")
                .and_then(|v| v.strip_suffix('"'))
        })
        .unwrap_or("0.0.0")
}

/// The first 12 hex digits of a hash over the embedded files (names and contents).
fn content_hash() -> String {
    let mut hasher = Sha256::new();
    for (path, bytes) in embedded::SDK_FILES {
        hasher.update((path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    hex::encode(hasher.finalize())[..12].to_owned()
}

/// The directory (under the Cairn home) this binary's SDK is written to.
pub fn location(home: &Path) -> PathBuf {
    home.join("sdk")
        .join(format!("cairn-sdk-{}-{}", version(), content_hash()))
}

/// Writes the SDK under the Cairn home unless it is there already, and returns the crate's
/// directory (`…/guest-sdk`), with symbolic links resolved.
pub fn materialise(home: &Path) -> Result<PathBuf> {
    let dir = location(home);
    if !dir.join(COMPLETE).is_file() {
        write(&dir).with_context(|| {
            format!(
                "writing the guest SDK (cairn-sdk {}) to {}",
                version(),
                dir.display()
            )
        })?;
    }
    let crate_dir = dir.join("guest-sdk");
    crate_dir
        .canonicalize()
        .with_context(|| format!("resolving {}", crate_dir.display()))
}

fn write(dir: &Path) -> Result<()> {
    let parent = dir
        .parent()
        .ok_or_else(|| anyhow!("{} has no parent directory", dir.display()))?;
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let staging = parent.join(format!(
        ".staging-{}-{}",
        std::process::id(),
        content_hash()
    ));
    let _ = std::fs::remove_dir_all(&staging);
    for (path, bytes) in embedded::SDK_FILES {
        let target = staging.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let contents = if *path == "guest-sdk/Cargo.toml" {
            std::borrow::Cow::Owned(standalone_manifest(bytes).into_bytes())
        } else {
            std::borrow::Cow::Borrowed(*bytes)
        };
        std::fs::write(&target, contents)
            .with_context(|| format!("writing {}", target.display()))?;
    }
    std::fs::write(staging.join(COMPLETE), content_hash())
        .with_context(|| format!("writing {}", staging.join(COMPLETE).display()))?;
    match std::fs::rename(&staging, dir) {
        Ok(()) => Ok(()),
        // Another cairn finished first: its copy is the same.
        Err(_) if dir.join(COMPLETE).is_file() => {
            let _ = std::fs::remove_dir_all(&staging);
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(e).with_context(|| format!("moving the SDK into {}", dir.display()))
        }
    }
}

/// The SDK's `Cargo.toml` as a dependency needs it: without its `[dev-dependencies]` (the fuzz
/// driver, a path into the repository, which a dependency's manifest must still resolve).
fn standalone_manifest(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with('[') {
            skipping = line.trim() == "[dev-dependencies]";
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_is_written_once_and_complete() {
        let home = tempfile::tempdir().unwrap();
        let crate_dir = materialise(home.path()).unwrap();
        let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains("name = \"cairn-sdk\""));
        assert!(!manifest.contains("dev-dependencies"), "{manifest}");
        assert!(!manifest.contains("host/fuzz"), "{manifest}");
        let root = crate_dir.parent().unwrap();
        for file in [
            "wit/provider.wit",
            "wit/program.wit",
            "wit/wire/Cargo.toml",
            "wit/wire/src/lib.rs",
            "guest-sdk/src/lib.rs",
        ] {
            assert!(root.join(file).is_file(), "{file}");
        }
        // A second run reuses it.
        std::fs::write(crate_dir.join("marker"), "kept").unwrap();
        assert_eq!(materialise(home.path()).unwrap(), crate_dir);
        assert!(crate_dir.join("marker").is_file());
        assert!(
            root.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("cairn-sdk-{}-", version()))
        );
    }
}
