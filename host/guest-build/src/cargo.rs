//! Rust guests (a directory with `Cargo.toml`), built by cargo for `wasm32-wasip2`; cargo's own
//! incremental build is the cache.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{BuildError, Builder, Result, World, io};

/// Builds the cargo package in `dir` for `wasm32-wasip2` and returns its component.
pub fn build(builder: &Builder, dir: &Path, world: World) -> Result<PathBuf> {
    let manifest = dir.join("Cargo.toml");
    let manifest = manifest
        .canonicalize()
        .map_err(io("resolving", &manifest))?;
    builder.tell(&format!(
        "Building the {} ({}) for wasm32-wasip2 with cargo…",
        world.noun(),
        manifest.display()
    ));
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .args([
            "--message-format",
            "json-render-diagnostics",
            "--manifest-path",
        ])
        .arg(&manifest)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| BuildError::Toolchain(format!("running cargo (is Rust installed?): {e}")))?;
    if !output.status.success() {
        return Err(BuildError::Failed(format!(
            "building the {} {} failed (see cargo's messages above; `rustup target add wasm32-wasip2` installs the target if it is missing)",
            world.noun(),
            manifest.display()
        )));
    }
    let mut found = None;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact"
            || message["manifest_path"].as_str().map(Path::new) != Some(manifest.as_path())
        {
            continue;
        }
        if let Some(files) = message["filenames"].as_array() {
            found = files
                .iter()
                .filter_map(|f| f.as_str())
                .find(|f| f.ends_with(".wasm"))
                .map(PathBuf::from)
                .or(found);
        }
    }
    found.ok_or_else(|| {
        BuildError::Failed(format!(
            "building {} produced no .wasm component (its [lib] needs crate-type = [\"cdylib\"])",
            manifest.display()
        ))
    })
}
