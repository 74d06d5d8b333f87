//! Embeds what `cairn new` writes and what `cairn about` reports: the guest SDK's sources with
//! the WIT they are generated from (materialised under the Cairn home for generated Rust
//! projects), the project templates (`templates/`), and the versions of the Rust compiler and
//! of wasmtime this binary is built with.

// A build script talks to cargo through its stdout (`cargo:` lines), not to a terminal.
#![allow(clippy::disallowed_macros)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let repo = manifest_dir.join("../..");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));

    // The guest SDK as a dependency needs: its manifest, its sources, the WIT its bindings
    // are generated from (`path: "../wit"`) and cairn-wire (`path = "../wit/wire"`).
    let mut sdk = Vec::new();
    for (dir, prefix) in [
        ("guest-sdk/src", "guest-sdk/src"),
        ("wit/wire/src", "wit/wire/src"),
    ] {
        collect(&repo.join(dir), prefix, &mut sdk);
    }
    for file in [
        "guest-sdk/Cargo.toml",
        "guest-sdk/README.md",
        "wit/wire/Cargo.toml",
        "wit/provider.wit",
        "wit/program.wit",
        "wit/policy.wit",
    ] {
        sdk.push((file.to_owned(), repo.join(file)));
    }
    let mut templates = Vec::new();
    collect(&manifest_dir.join("templates"), "", &mut templates);

    for (file, name, files) in [
        ("sdk_files.rs", "SDK_FILES", &sdk),
        ("template_files.rs", "TEMPLATE_FILES", &templates),
    ] {
        let mut code = String::new();
        table(&mut code, name, files);
        std::fs::write(out.join(file), code).unwrap_or_else(|e| panic!("writing {file}: {e}"));
    }

    for dir in [
        "guest-sdk/src",
        "wit",
        "guest-sdk/Cargo.toml",
        "guest-sdk/README.md",
    ] {
        println!("cargo:rerun-if-changed={}", repo.join(dir).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("templates").display()
    );

    // Versions `cairn about` reports.
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let rustc_version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=CAIRN_RUSTC_VERSION={rustc_version}");
    let lock = repo.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let lock = std::fs::read_to_string(&lock).unwrap_or_default();
    println!(
        "cargo:rustc-env=CAIRN_WASMTIME_VERSION={}",
        locked_version(&lock, "wasmtime").unwrap_or("unknown")
    );
}

/// Every file under `dir` (sorted, recursively) as `(prefix/relative path, absolute path)`.
fn collect(dir: &Path, prefix: &str, into: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 file names")
            .to_owned();
        let relative = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if path.is_dir() {
            collect(&path, &relative, into);
        } else {
            into.push((relative, path));
        }
    }
}

fn table(code: &mut String, name: &str, files: &[(String, PathBuf)]) {
    writeln!(code, "pub static {name}: &[(&str, &[u8])] = &[").unwrap();
    for (relative, path) in files {
        let path = path.canonicalize().expect("an embedded file");
        writeln!(
            code,
            "    ({relative:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    writeln!(code, "];").unwrap();
}

/// The version of `package` in a Cargo.lock.
fn locked_version<'a>(lock: &'a str, package: &str) -> Option<&'a str> {
    let wanted = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == wanted {
            return lines
                .next()?
                .strip_prefix("version = \"")?
                .strip_suffix('"');
        }
    }
    None
}
