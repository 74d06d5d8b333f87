//! Providers named by their source directory in `plugins.providers` (`{name, path: ./provider}`):
//! a directory with `cairn.json` and either `Cargo.toml` (Rust, built with cargo for
//! wasm32-wasip2) or `app.py` (Python, built with the Python SDK and componentize-py) is built
//! into a component before the deployment, so `cairn up` alone builds what it needs.
//!
//! Python: the SDK (guest-sdk/python) and the WIT are embedded in `cairn` and written to
//! `$CAIRN_HOME/sdk/python-<hash>`; componentize-py is installed on first use into
//! `$CAIRN_HOME/toolchains/python` (a venv, from PyPI). A built component is kept in
//! `$CAIRN_HOME/cache/python-build/<hash of the sources and the SDK>.wasm`, so an unchanged
//! provider is not built again.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

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
];

/// What language a provider source directory is in, if it is one.
pub enum Language {
    Rust,
    Python,
}

/// `Some` when `dir` is a provider's source: `cairn.json` beside `Cargo.toml` or `app.py`.
pub fn language(dir: &Path) -> Option<Language> {
    if !dir.is_dir() || !dir.join("cairn.json").is_file() {
        return None;
    }
    if dir.join("Cargo.toml").is_file() {
        Some(Language::Rust)
    } else if dir.join("app.py").is_file() {
        Some(Language::Python)
    } else {
        None
    }
}

/// Builds the provider source in `dir` and returns its component.
pub fn build(home: &Path, dir: &Path, language: Language) -> Result<PathBuf> {
    match language {
        Language::Rust => crate::program::build_cargo(dir, "the provider"),
        Language::Python => build_python(home, dir),
    }
}

fn build_python(home: &Path, dir: &Path) -> Result<PathBuf> {
    let sdk_hash = {
        let mut h = Sha256::new();
        for (path, text) in PYTHON_SDK {
            h.update(path.as_bytes());
            h.update(text.as_bytes());
        }
        h.update(COMPONENTIZE_PY.as_bytes());
        hex::encode(h.finalize())
    };
    // The sources' hash: every file under `dir` but caches and dot-directories, in order.
    let mut hasher = Sha256::new();
    hasher.update(sdk_hash.as_bytes());
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    files.sort();
    for relative in &files {
        let bytes = std::fs::read(dir.join(relative))
            .with_context(|| format!("reading {}", dir.join(relative).display()))?;
        hasher.update(relative.to_string_lossy().as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    let out = home
        .join("cache/python-build")
        .join(format!("{}.wasm", hex::encode(hasher.finalize())));
    if out.is_file() {
        return Ok(out);
    }
    let sdk = home.join("sdk").join(format!("python-{}", &sdk_hash[..16]));
    if !sdk.join("cairn_sdk/build.py").is_file() {
        for (path, text) in PYTHON_SDK {
            let file = sdk.join(path);
            std::fs::create_dir_all(file.parent().unwrap_or(&sdk))
                .with_context(|| format!("creating {}", sdk.display()))?;
            std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
        }
    }
    let python = toolchain(home)?;
    crate::terminal::errln!(
        "Building the provider ({}) with the Python SDK and componentize-py…",
        dir.display()
    );
    std::fs::create_dir_all(out.parent().unwrap_or(home))
        .with_context(|| format!("creating {}", home.join("cache/python-build").display()))?;
    let partial = out.with_extension("wasm.partial");
    let status = Command::new(&python)
        .args(["-m", "cairn_sdk.build"])
        .arg(dir)
        .arg("-o")
        .arg(&partial)
        .env("PYTHONPATH", &sdk)
        .env("CAIRN_WIT", sdk.join("wit"))
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .with_context(|| format!("running {}", python.display()))?;
    if !status.success() {
        let _ = std::fs::remove_file(&partial);
        bail!(
            "building the Python provider in {} failed (see the messages above)",
            dir.display()
        );
    }
    std::fs::rename(&partial, &out).with_context(|| format!("writing {}", out.display()))?;
    Ok(out)
}

/// The files of a provider source, relative to `root`, skipping caches and dot-entries.
fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "__pycache__" {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect(root, &path, out)?;
        } else if kind.is_file() {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_owned());
        }
    }
    Ok(())
}

/// The Python of Cairn's toolchain venv, with componentize-py, made on first use.
fn toolchain(home: &Path) -> Result<PathBuf> {
    let venv = home.join("toolchains/python");
    let python = venv.join("bin/python");
    let ready = venv.join(".installed");
    if std::fs::read_to_string(&ready).ok().as_deref() == Some(COMPONENTIZE_PY) {
        return Ok(python);
    }
    crate::terminal::errln!(
        "Installing {COMPONENTIZE_PY} into {} (first use)…",
        venv.display()
    );
    if !python.exists() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .context("running python3 -m venv (Python providers need Python 3.10 or newer: install python3)")?;
        if !status.success() {
            bail!("python3 -m venv {} failed", venv.display());
        }
    }
    let status = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", COMPONENTIZE_PY])
        .status()
        .with_context(|| format!("running {} -m pip", python.display()))?;
    if !status.success() {
        bail!(
            "installing {COMPONENTIZE_PY} from PyPI into {} failed (see pip's messages above)",
            venv.display()
        );
    }
    std::fs::write(&ready, COMPONENTIZE_PY)
        .with_context(|| format!("writing {}", ready.display()))?;
    Ok(python)
}
