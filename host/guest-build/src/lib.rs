//! Guest sources built into components before a deployment, so `cairn up` alone builds what it
//! needs: a provider's source directory named in `plugins.providers`, and a `runtime: wasm`
//! program whose `main` is a project directory. One entry point for the four guest languages:
//!
//! | language   | recognised by   | built with                                              |
//! |------------|-----------------|---------------------------------------------------------|
//! | Rust       | `Cargo.toml`    | cargo for `wasm32-wasip2` (its own incremental cache)   |
//! | Python     | `app.py`        | the embedded Python SDK and componentize-py             |
//! | TypeScript | `package.json`  | the embedded TypeScript SDK and jco                     |
//! | Go         | `go.mod`        | the machine's Go (wasip1 reactor) and the preview1 adapter |
//!
//! A provider directory also has `cairn.json` (its manifest). Toolchains other than the
//! machine's own (`cargo`, `go`, `python3`, `node`) are installed on first use under
//! `$CAIRN_HOME/toolchains`, and built components are cached under
//! `$CAIRN_HOME/cache/<language>-build/<hash of the sources and the SDK>.wasm` ([`Cache`]), so an
//! unchanged source is not built again.

mod cargo;
mod go;
mod python;
mod typescript;
mod wasi_copies;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Why a guest could not be built. Each message names the directory, file or tool at fault.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Reading or writing a file or directory failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A toolchain could not be found, started or installed.
    #[error("{0}")]
    Toolchain(String),
    /// The toolchain ran and rejected the sources (its own messages went to stderr).
    #[error("{0}")]
    Failed(String),
}

pub type Result<T> = std::result::Result<T, BuildError>;

/// `map_err` for IO: `io(what, path)` names the operation and the path.
pub(crate) fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BuildError {
    let path = path.to_owned();
    move |source| BuildError::Io { what, path, source }
}

/// Where builds keep toolchains and results, and where their progress is told.
pub struct Builder {
    /// `$CAIRN_HOME`: SDKs under `sdk/`, results under `cache/`.
    pub home: PathBuf,
    /// Where toolchains are installed on first use (`$CAIRN_HOME/toolchains` unless
    /// `CAIRN_TOOLCHAINS` says otherwise), one directory per toolchain and version.
    pub toolchains: PathBuf,
    /// Told one line per slow step ("Installing …", "Building …").
    pub progress: Box<dyn Fn(&str) + Send + Sync>,
}

impl Builder {
    /// A builder that tells its progress on stderr.
    pub fn new(home: impl Into<PathBuf>) -> Builder {
        let home = home.into();
        Builder {
            toolchains: std::env::var_os("CAIRN_TOOLCHAINS")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join("toolchains")),
            home,
            progress: Box::new(|line| eprintln!("{line}")),
        }
    }

    /// Builds the guest source in `dir` (implementing `world`) and returns its component.
    pub fn build(&self, dir: &Path, language: Language, world: World) -> Result<PathBuf> {
        match language {
            Language::Rust => cargo::build(self, dir, world),
            Language::Python => python::build(self, dir, world),
            Language::TypeScript => typescript::build(self, dir, world),
            Language::Go => go::build(self, dir, world),
        }
    }

    pub(crate) fn tell(&self, line: &str) {
        (self.progress)(line)
    }

    /// The toolchain directory `name` (say `node-jco-1.35`), installed by `install` on first
    /// use. `install` fills a fresh directory; it becomes `name` only once it returns `Ok`, so an
    /// interrupted or failed install leaves nothing half-made, and builds racing to install the
    /// same toolchain (parallel tests, two terminals) each see a complete one.
    pub fn toolchain(
        &self,
        name: &str,
        install: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<PathBuf> {
        let dir = self.toolchains.join(name);
        if dir.is_dir() {
            return Ok(dir);
        }
        std::fs::create_dir_all(&self.toolchains).map_err(io("creating", &self.toolchains))?;
        let partial = self
            .toolchains
            .join(format!(".{name}.partial-{}", std::process::id()));
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(io("removing", &partial))?;
        }
        std::fs::create_dir_all(&partial).map_err(io("creating", &partial))?;
        if let Err(e) = install(&partial) {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(e);
        }
        if let Err(e) = std::fs::rename(&partial, &dir) {
            let _ = std::fs::remove_dir_all(&partial);
            // Another build finished the same install first.
            if !dir.is_dir() {
                return Err(io("installing", &dir)(e));
            }
        }
        Ok(dir)
    }
}

/// Which world a guest source implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum World {
    Provider,
    Program,
}

impl World {
    /// The WIT world's name (`cairn:deploy/<name>`).
    pub fn wit_name(self) -> &'static str {
        match self {
            World::Provider => "provider-world",
            World::Program => "program-world",
        }
    }

    /// How messages name the guest.
    pub fn noun(self) -> &'static str {
        match self {
            World::Provider => "provider",
            World::Program => "program",
        }
    }
}

/// What language a guest source directory is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Rust,
    Python,
    TypeScript,
    Go,
}

/// The language of the guest source in `dir`, if it is one (the first marker file found, in
/// the table's order).
pub fn language(dir: &Path) -> Option<Language> {
    if !dir.is_dir() {
        return None;
    }
    [
        ("Cargo.toml", Language::Rust),
        ("app.py", Language::Python),
        ("package.json", Language::TypeScript),
        ("go.mod", Language::Go),
    ]
    .into_iter()
    .find(|(marker, _)| dir.join(marker).is_file())
    .map(|(_, language)| language)
}

/// The language of a provider's source directory: a guest source with a `cairn.json`.
pub fn provider_language(dir: &Path) -> Option<Language> {
    if !dir.join("cairn.json").is_file() {
        return None;
    }
    language(dir)
}

/// A built component's place in the cache, keyed by everything that goes into it.
pub struct Cache {
    /// Where the component is (or will be) kept.
    pub out: PathBuf,
}

impl Cache {
    /// The cache entry for the sources in `dir` built by `kind` (`python`, `go`, …) with `sdk`
    /// (anything else the result depends on: the SDK's files, the toolchain's version, the
    /// world).
    pub fn new(builder: &Builder, kind: &str, dir: &Path, sdk: &[&[u8]]) -> Result<Cache> {
        let mut hasher = Sha256::new();
        for part in sdk {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        let mut files = Vec::new();
        collect(dir, dir, &mut files)?;
        files.sort();
        for relative in &files {
            let path = dir.join(relative);
            let bytes = std::fs::read(&path).map_err(io("reading", &path))?;
            hasher.update(relative.to_string_lossy().as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
        let out = builder
            .home
            .join("cache")
            .join(format!("{kind}-build"))
            .join(format!("{}.wasm", hex::encode(hasher.finalize())));
        Ok(Cache { out })
    }

    /// The component, when an identical source was built before.
    pub fn hit(&self) -> Option<PathBuf> {
        self.out.is_file().then(|| self.out.clone())
    }

    /// A path to build into; [`Cache::commit`] moves it into place once the build succeeded.
    pub fn partial(&self) -> Result<PathBuf> {
        if let Some(parent) = self.out.parent() {
            std::fs::create_dir_all(parent).map_err(io("creating", parent))?;
        }
        Ok(self
            .out
            .with_extension(format!("wasm.partial-{}", std::process::id())))
    }

    /// Moves a finished build into the cache (atomically: a reader sees the whole file or none).
    pub fn commit(&self, partial: &Path) -> Result<PathBuf> {
        std::fs::rename(partial, &self.out).map_err(io("writing", &self.out))?;
        Ok(self.out.clone())
    }
}

/// Directories that never belong to a guest's sources: caches, dependencies installed by a
/// package manager, build output.
const SKIPPED: &[&str] = &["__pycache__", "node_modules", "target"];

/// Whether `name` is a project or stack settings file (`Pulumi.yaml`, `Pulumi.dev.yaml`).
fn is_settings_file(name: &str) -> bool {
    name.starts_with("Pulumi.") && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

/// Whether the subdirectory `dir` of a guest is another guest (a provider's example program, a
/// program's provider) rather than part of it: it has a language's marker file — but a Python
/// package (`__init__.py`) is part of the guest that imports it.
fn is_other_guest(dir: &Path) -> bool {
    language(dir).is_some() && !dir.join("__init__.py").is_file()
}

/// The files of a guest source, relative to `root`: what the cache key covers. A provider's
/// directory is often the project's too (`path: .`), so its settings files (which `cairn
/// config set` changes) and other guests living in subdirectories are left out, as are
/// dot-entries and [`SKIPPED`] directories.
fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let top = root == dir;
    for entry in std::fs::read_dir(dir).map_err(io("listing", dir))? {
        let entry = entry.map_err(io("listing", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || SKIPPED.contains(&name.as_str()) {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(io("reading", &path))?;
        if kind.is_dir() {
            if !is_other_guest(&path) {
                collect(root, &path, out)?;
            }
        } else if kind.is_file() && !(top && is_settings_file(&name)) {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_owned());
        }
    }
    Ok(())
}

/// Writes embedded SDK files (`(path, contents)`) under `dir` unless `marker` is already there.
pub fn unpack(dir: &Path, files: &[(&str, &str)], marker: &str) -> Result<()> {
    if dir.join(marker).is_file() {
        return Ok(());
    }
    for (path, text) in files {
        let file = dir.join(path);
        let parent = file.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(io("creating", parent))?;
        std::fs::write(&file, text).map_err(io("writing", &file))?;
    }
    Ok(())
}

/// The SHA-256 of embedded files, hex: names an unpacked SDK directory and keys the cache.
pub fn files_hash(files: &[(&str, &str)], extra: &str) -> String {
    let mut h = Sha256::new();
    for (path, text) in files {
        h.update(path.as_bytes());
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    h.update(extra.as_bytes());
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache key follows the guest's own sources and nothing else: the project's settings
    /// files, another guest in a subdirectory, dependencies a package manager installed and
    /// dot-directories do not rebuild a guest; a source edit, a new file, a file of a Python
    /// package or a settings file below the top, or another SDK does.
    #[test]
    fn the_cache_key_follows_the_sources_only() {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let builder = Builder::new(home.path());
        std::fs::write(dir.path().join("main.go"), "package main\n").unwrap();
        let key = |sdk: &str| {
            Cache::new(&builder, "go", dir.path(), &[sdk.as_bytes()])
                .unwrap()
                .out
        };
        let first = key("sdk-1");
        for (path, text) in [
            ("Pulumi.yaml", "name: p\n"),
            ("Pulumi.dev.yaml", "config: {}\n"),
            ("node_modules/x/index.js", "x"),
            ("target/out.wasm", "x"),
            (".git/HEAD", "x"),
            ("__pycache__/a.pyc", "x"),
            ("example/app.py", "x"),
            ("example/Pulumi.yaml", "x"),
            ("example-go/go.mod", "x"),
            ("example-ts/package.json", "x"),
        ] {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
            assert_eq!(key("sdk-1"), first, "{path} changed the key");
        }
        assert_ne!(key("sdk-2"), first, "another SDK");
        let mut last = first.clone();
        for (path, text) in [
            ("pkg/__init__.py", "x"),
            ("pkg/app.py", "x"),
            ("sub/Pulumi.yaml", "x"),
            ("data/table.txt", "x"),
        ] {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
            let now = key("sdk-1");
            assert_ne!(now, last, "{path} did not change the key");
            last = now;
        }
        std::fs::write(dir.path().join("util.go"), "package main\n").unwrap();
        let second = key("sdk-1");
        assert_ne!(second, last, "a new source file");
        std::fs::write(dir.path().join("main.go"), "package main // edited\n").unwrap();
        assert_ne!(key("sdk-1"), second, "an edited source file");
    }
}
