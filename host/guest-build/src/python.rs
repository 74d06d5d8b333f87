//! Python guests (a directory with `app.py`), built with the Python SDK and componentize-py:
//! providers (`provider-world`, with a `cairn.json`) and programs (`program-world`).
//!
//! The SDK (guest-sdk/python) and the WIT are embedded in `cairn` and written to
//! `$CAIRN_HOME/sdk/python-<hash>`; componentize-py is installed on first use into a venv
//! among the toolchains ([`crate::Builder::toolchain`]), from PyPI. Built components are cached
//! ([`crate::Cache`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{BuildError, Builder, Cache, Result, World, files_hash, io, unpack};

/// The componentize-py release the SDK is built and tested with.
pub const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";

/// The Python SDK's files and the WIT, as embedded: (path under the SDK directory, contents).
const PYTHON_SDK: &[(&str, &str)] = &[
    (
        "cairn_sdk/__init__.py",
        include_str!("../../../guest-sdk/python/cairn_sdk/__init__.py"),
    ),
    (
        "cairn_sdk/build.py",
        include_str!("../../../guest-sdk/python/cairn_sdk/build.py"),
    ),
    (
        "cairn_sdk/engine.py",
        include_str!("../../../guest-sdk/python/cairn_sdk/engine.py"),
    ),
    (
        "cairn_sdk/program.py",
        include_str!("../../../guest-sdk/python/cairn_sdk/program.py"),
    ),
    (
        "cairn_sdk/provider.py",
        include_str!("../../../guest-sdk/python/cairn_sdk/provider.py"),
    ),
    (
        "cairn_sdk/values.py",
        include_str!("../../../guest-sdk/python/cairn_sdk/values.py"),
    ),
    (
        "wit/provider.wit",
        include_str!("../../../wit/provider.wit"),
    ),
    ("wit/program.wit", include_str!("../../../wit/program.wit")),
];

/// Builds the Python guest in `dir` (its module `app`) into a component of `world`.
pub fn build(builder: &Builder, dir: &Path, world: World) -> Result<PathBuf> {
    let home = &builder.home;
    let sdk_hash = files_hash(PYTHON_SDK, COMPONENTIZE_PY);
    let cache = Cache::new(
        builder,
        "python",
        dir,
        &[sdk_hash.as_bytes(), world.wit_name().as_bytes()],
    )?;
    if let Some(hit) = cache.hit() {
        return Ok(hit);
    }
    let sdk = home.join("sdk").join(format!("python-{}", &sdk_hash[..16]));
    unpack(&sdk, PYTHON_SDK, "cairn_sdk/build.py")?;
    let python = toolchain(builder)?;
    builder.tell(&format!(
        "Building the {} ({}) with the Python SDK and componentize-py…",
        world.noun(),
        dir.display()
    ));
    let partial = cache.partial()?;
    let status = Command::new(&python)
        .args(["-m", "cairn_sdk.build"])
        .arg(dir)
        .arg("-o")
        .arg(&partial)
        .args(["--world", world.wit_name()])
        .env("PYTHONPATH", &sdk)
        .env("CAIRN_WIT", sdk.join("wit"))
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .map_err(io("running", &python))?;
    if !status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(BuildError::Failed(format!(
            "building the Python {} in {} failed (see the messages above)",
            world.noun(),
            dir.display()
        )));
    }
    cache.commit(&partial)
}

/// The Python of Cairn's toolchain venv, with componentize-py, made on first use.
///
/// A venv records its own path, so it is made in place by `python3 -m venv` and then
/// moved: the moved venv's `bin/python` still runs (it resolves its home through
/// `pyvenv.cfg` beside it), and the SDK's build runs it as `python -m`, never through a
/// console script with the old path in its shebang.
fn toolchain(builder: &Builder) -> Result<PathBuf> {
    let name = format!("python-{}", COMPONENTIZE_PY.replace("==", "-"));
    builder
        .toolchain(&name, |venv| {
            builder.tell(&format!(
                "Installing {COMPONENTIZE_PY} into {} (first use)…",
                builder.toolchains.join(&name).display()
            ));
            let status = Command::new("python3")
                .args(["-m", "venv"])
                .arg(venv)
                .status()
                .map_err(|e| {
                    BuildError::Toolchain(format!(
                        "running python3 -m venv: {e} (Python guests need Python 3.10 or newer: install python3)"
                    ))
                })?;
            if !status.success() {
                return Err(BuildError::Toolchain(format!(
                    "python3 -m venv {} failed",
                    venv.display()
                )));
            }
            let python = venv.join("bin/python");
            let status = Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", COMPONENTIZE_PY])
                .status()
                .map_err(io("running", &python))?;
            if !status.success() {
                return Err(BuildError::Toolchain(format!(
                    "installing {COMPONENTIZE_PY} from PyPI failed (see pip's messages above)"
                )));
            }
            Ok(())
        })
        .map(|venv| venv.join("bin/python"))
}

#[cfg(test)]
mod tests {
    use super::PYTHON_SDK;

    /// Every module of the SDK is embedded: a module left out builds with the repository's
    /// `python -m cairn_sdk.build` but not with `cairn up`, whose copy would lack it.
    #[test]
    fn every_sdk_module_is_embedded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../guest-sdk/python/cairn_sdk");
        let mut modules: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".py"))
            .map(|name| format!("cairn_sdk/{name}"))
            .collect();
        modules.sort();
        let mut embedded: Vec<&str> = PYTHON_SDK
            .iter()
            .map(|(path, _)| *path)
            .filter(|path| path.ends_with(".py"))
            .collect();
        embedded.sort_unstable();
        assert_eq!(embedded, modules);
    }
}
