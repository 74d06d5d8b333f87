//! The plugin store: installed provider components, by package and version.
//!
//! ```text
//! <dir>/<name>/<version>/<name>-<version>.wasm
//! <dir>/<name>/<version>/sha256          lower-case hex SHA-256 of the .wasm, no newline
//! ```
//!
//! Names never become paths unchecked: every method that takes a package name checks it
//! against the manifest's rule ([`is_plugin_name`]) before joining it to the store's
//! directory, a listing skips directories whose names break it, and removal refuses symbolic
//! links, so nothing outside the store is read or deleted whatever name is asked for.
//!
//! `install` verifies the file (a component with a valid manifest that compiles and exports the
//! provider interface), then writes both files into a temporary directory beside the target and
//! renames it into place, so a version directory is always complete. Loading checks the
//! `sha256` sidecar, so a file changed after installation is refused.
//!
//! # Lookup
//!
//! As the provider implementer's guide specifies: among the installed versions of a package
//! that are compatible with the requested version, the newest wins; none compatible is a
//! failure. "Compatible" is a [`semver::VersionReq`]: the loader asks for `^<version>` (same
//! major version — same minor while 0.x — and at least the requested one); an exact pin is
//! `=<version>`. Without a requirement the newest release wins (pre-releases only when there
//! is nothing else).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::WasmError;
use crate::manifest::Capabilities;
use crate::plugin::WasmPlugin;
use crate::runtime::{RuntimeOptions, WasmRuntime};

/// The sidecar holding the installed file's SHA-256.
const SHA_SIDECAR: &str = "sha256";

/// The rule for plugin (package) names, as errors state it.
pub const PLUGIN_NAME_RULE: &str =
    "plugin names are 1 to 128 letters, digits, '-', '_' or '.', starting with a letter or digit";

/// Whether `name` is a valid plugin name: the manifest's rule for package names (which become
/// directory names here).
pub fn is_plugin_name(name: &str) -> bool {
    name.len() <= 128 && crate::manifest::validate_package_name(name).is_ok()
}

/// `name` for an error: quoted, control characters escaped, at most 64 characters.
fn quoted(name: &str) -> String {
    let head: String = name.chars().take(64).collect();
    let shown = format!("\"{}\"", cairn_engine::text::visible_line(&head));
    if head.len() < name.len() {
        format!("{shown}… ({} bytes)", name.len())
    } else {
        shown
    }
}

/// An installed provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub name: String,
    pub version: semver::Version,
    /// Lower-case hex SHA-256 of the file (from the sidecar).
    pub sha256: String,
    /// The `.wasm` file.
    pub path: PathBuf,
}

/// What `inspect` reports about a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    pub name: String,
    pub version: semver::Version,
    pub sha256: String,
    pub path: Option<PathBuf>,
    /// The `cairn:deploy` WIT version it was built against.
    pub wit: String,
    pub schema: SchemaSummary,
    /// What it requests (it gets what the user also grants).
    pub capabilities: Capabilities,
}

/// The outline of a package schema.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaSummary {
    /// Resource type tokens.
    pub resources: Vec<String>,
    /// Function tokens.
    pub functions: Vec<String>,
    /// Provider configuration variables.
    pub config: Vec<String>,
}

impl SchemaSummary {
    /// Reads the keys of `resources`, `functions` and `config.variables`.
    pub fn of(schema: &serde_json::Value) -> SchemaSummary {
        let keys = |v: Option<&serde_json::Value>| -> Vec<String> {
            v.and_then(serde_json::Value::as_object)
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        SchemaSummary {
            resources: keys(schema.get("resources")),
            functions: keys(schema.get("functions")),
            config: keys(schema.get("config").and_then(|c| c.get("variables"))),
        }
    }
}

/// Installed providers in a directory.
#[derive(Clone)]
pub struct PluginStore {
    dir: PathBuf,
    runtime: Option<WasmRuntime>,
}

impl PluginStore {
    /// A store rooted at `dir` (created on first install).
    pub fn new(dir: impl Into<PathBuf>) -> PluginStore {
        PluginStore {
            dir: dir.into(),
            runtime: None,
        }
    }

    /// Compiles with `runtime` when verifying installs (so its cache is warmed too).
    pub fn with_runtime(mut self, runtime: WasmRuntime) -> PluginStore {
        self.runtime = Some(runtime);
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn error(&self, message: impl Into<String>) -> WasmError {
        WasmError::Store {
            dir: self.dir.clone(),
            message: message.into(),
        }
    }

    /// `<dir>/<name>`, for a valid plugin name only: one plain path component, so the result
    /// is a direct child of the store's directory.
    fn package_dir(&self, name: &str) -> Result<PathBuf, WasmError> {
        let plain = is_plugin_name(name)
            && matches!(
                Path::new(name).components().collect::<Vec<_>>().as_slice(),
                [std::path::Component::Normal(_)]
            );
        if !plain {
            return Err(self.error(format!(
                "invalid plugin name {}: {PLUGIN_NAME_RULE}",
                quoted(name)
            )));
        }
        Ok(self.dir.join(name))
    }

    fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> WasmError + 'a {
        move |source| WasmError::Io {
            what,
            path: path.to_owned(),
            source,
        }
    }

    /// Verifies and installs a provider file. Installing the same file again is a no-op; a
    /// different file with the same name and version replaces the old one.
    pub fn install(&self, path: impl AsRef<Path>) -> Result<Installed, WasmError> {
        let plugin = WasmPlugin::from_file(path)?;
        self.install_plugin(&plugin)
    }

    /// Verifies and installs a provider already read.
    pub fn install_plugin(&self, plugin: &WasmPlugin) -> Result<Installed, WasmError> {
        // Compile once to be sure it is a usable provider.
        match &self.runtime {
            Some(runtime) => {
                runtime.prepare(plugin)?;
            }
            None => {
                WasmRuntime::new(RuntimeOptions::default())?.prepare(plugin)?;
            }
        }
        let manifest = plugin.manifest();
        let package_dir = self.package_dir(&manifest.name)?;
        let target = package_dir.join(manifest.version.to_string());
        let installed = Installed {
            name: manifest.name.clone(),
            version: manifest.version.clone(),
            sha256: plugin.sha256().to_owned(),
            path: target.join(wasm_name(&manifest.name, &manifest.version)),
        };
        if let Ok(existing) = std::fs::read_to_string(target.join(SHA_SIDECAR))
            && existing.trim() == plugin.sha256()
            && installed.path.is_file()
        {
            return Ok(installed);
        }

        std::fs::create_dir_all(&package_dir)
            .map_err(Self::io("creating plugin directory", &package_dir))?;
        remove_abandoned(&package_dir);
        let tmp = package_dir.join(unique(".install"));
        let result = (|| -> Result<(), WasmError> {
            std::fs::create_dir(&tmp).map_err(Self::io("creating", &tmp))?;
            let wasm = tmp.join(wasm_name(&manifest.name, &manifest.version));
            write_synced(&wasm, plugin.bytes()).map_err(Self::io("writing", &wasm))?;
            let sidecar = tmp.join(SHA_SIDECAR);
            write_synced(&sidecar, plugin.sha256().as_bytes())
                .map_err(Self::io("writing", &sidecar))?;
            sync_dir(&tmp);
            if target.exists() {
                let old = package_dir.join(unique(".old"));
                std::fs::rename(&target, &old).map_err(Self::io("replacing", &target))?;
                std::fs::rename(&tmp, &target).map_err(Self::io("installing", &target))?;
                let _ = std::fs::remove_dir_all(&old);
            } else {
                std::fs::rename(&tmp, &target).map_err(Self::io("installing", &target))?;
            }
            sync_dir(&package_dir);
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        result?;
        tracing::info!(provider = %manifest.id(), path = %installed.path.display(), "installed provider");
        Ok(installed)
    }

    /// Every installed provider, by name then version.
    pub fn list(&self) -> Result<Vec<Installed>, WasmError> {
        let mut all = Vec::new();
        let names = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(all),
            Err(e) => return Err(Self::io("listing", &self.dir)(e)),
        };
        for entry in names.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !entry.path().is_dir() {
                continue;
            }
            if !is_plugin_name(&name) {
                tracing::warn!(path = %entry.path().display(), "ignoring a plugin store entry whose name is not a plugin name");
                continue;
            }
            all.extend(self.versions(&name)?);
        }
        all.sort_by(|a, b| a.name.cmp(&b.name).then(a.version.cmp(&b.version)));
        Ok(all)
    }

    /// The installed versions of one package, oldest first.
    pub fn versions(&self, name: &str) -> Result<Vec<Installed>, WasmError> {
        let package_dir = self.package_dir(name)?;
        let entries = match std::fs::read_dir(&package_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(Self::io("listing", &package_dir)(e)),
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let dir_name = entry.file_name().to_string_lossy().into_owned();
            if dir_name.starts_with('.') {
                continue;
            }
            let Ok(version) = semver::Version::parse(&dir_name) else {
                tracing::warn!(path = %entry.path().display(), "ignoring a plugin store entry that is not a version");
                continue;
            };
            let path = entry.path().join(wasm_name(name, &version));
            let sha256 = match std::fs::read_to_string(entry.path().join(SHA_SIDECAR)) {
                Ok(s) if path.is_file() => s.trim().to_owned(),
                _ => {
                    tracing::warn!(path = %entry.path().display(), "ignoring an incomplete plugin store entry");
                    continue;
                }
            };
            found.push(Installed {
                name: name.to_owned(),
                version,
                sha256,
                path,
            });
        }
        found.sort_by(|a, b| a.version.cmp(&b.version));
        Ok(found)
    }

    /// The spec's lookup: the newest installed version of `package` matching `requirement`.
    pub fn lookup(
        &self,
        package: &str,
        requirement: Option<&semver::VersionReq>,
    ) -> Result<Option<Installed>, WasmError> {
        let versions = self.versions(package)?;
        Ok(select_newest(versions, |i| &i.version, requirement))
    }

    /// Reads an installed provider, checking it still matches its recorded SHA-256.
    pub fn load(&self, installed: &Installed) -> Result<WasmPlugin, WasmError> {
        let plugin = WasmPlugin::from_file(&installed.path)?;
        if plugin.sha256() != installed.sha256 {
            return Err(self.error(format!(
                "{} was modified after it was installed (SHA-256 {} , recorded {}); reinstall it",
                installed.path.display(),
                plugin.sha256(),
                installed.sha256
            )));
        }
        if plugin.manifest().name != installed.name
            || plugin.manifest().version != installed.version
        {
            return Err(self.error(format!(
                "{} contains {}, not {}@{}",
                installed.path.display(),
                plugin.manifest().id(),
                installed.name,
                installed.version
            )));
        }
        Ok(plugin)
    }

    /// Describes a provider: a `.wasm` path, or an installed `name` / `name@version` (anything
    /// not ending in `.wasm` is a name, never a path).
    pub fn inspect(&self, name_or_path: &str) -> Result<Inspection, WasmError> {
        let as_path = Path::new(name_or_path);
        let plugin = if name_or_path.ends_with(".wasm") {
            WasmPlugin::from_file(as_path)?
        } else {
            let (name, requirement) = match name_or_path.split_once('@') {
                Some((name, version)) => {
                    let version = semver::Version::parse(version).map_err(|e| {
                        self.error(format!(
                            "{}: invalid version {}: {e}",
                            quoted(name_or_path),
                            quoted(version)
                        ))
                    })?;
                    (name, Some(exact(&version)))
                }
                None => (name_or_path, None),
            };
            let installed = self
                .lookup(name, requirement.as_ref())?
                .ok_or_else(|| WasmError::NotInstalled(name_or_path.to_owned()))?;
            self.load(&installed)?
        };
        let manifest = plugin.manifest();
        Ok(Inspection {
            name: manifest.name.clone(),
            version: manifest.version.clone(),
            sha256: plugin.sha256().to_owned(),
            path: plugin.path().map(Path::to_owned),
            wit: manifest.wit.clone(),
            schema: SchemaSummary::of(&manifest.schema),
            capabilities: manifest.capabilities.clone(),
        })
    }

    /// Removes one version, or every version when `version` is `None`; returns what was removed.
    pub fn remove(
        &self,
        name: &str,
        version: Option<&semver::Version>,
    ) -> Result<Vec<Installed>, WasmError> {
        let package_dir = self.package_dir(name)?;
        // A link would make the removal act on its target, outside the store.
        let refuse_link = |path: &Path| -> Result<(), WasmError> {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => Err(self.error(format!(
                    "{} is a symbolic link; Cairn removes only what it installed (remove the link by hand)",
                    path.display()
                ))),
                _ => Ok(()),
            }
        };
        refuse_link(&package_dir)?;
        let removed: Vec<Installed> = self
            .versions(name)?
            .into_iter()
            .filter(|i| version.is_none_or(|v| &i.version == v))
            .collect();
        if removed.is_empty() {
            let what = match version {
                Some(v) => format!("{name}@{v}"),
                None => name.to_owned(),
            };
            return Err(WasmError::NotInstalled(what));
        }
        for installed in &removed {
            refuse_link(&package_dir.join(installed.version.to_string()))?;
        }
        for installed in &removed {
            let dir = package_dir.join(installed.version.to_string());
            // Rename first so a concurrent reader never sees half a directory.
            let trash = package_dir.join(unique(".remove"));
            std::fs::rename(&dir, &trash).map_err(Self::io("removing", &dir))?;
            std::fs::remove_dir_all(&trash).map_err(Self::io("removing", &trash))?;
        }
        if self.versions(name)?.is_empty() {
            let _ = std::fs::remove_dir(&package_dir);
        }
        sync_dir(&package_dir);
        Ok(removed)
    }
}

/// The requirement an exact version pin means.
pub fn exact(version: &semver::Version) -> semver::VersionReq {
    semver::VersionReq {
        comparators: vec![semver::Comparator {
            op: semver::Op::Exact,
            major: version.major,
            minor: Some(version.minor),
            patch: Some(version.patch),
            pre: version.pre.clone(),
        }],
    }
}

/// The requirement "compatible with `version`": `^version`.
pub fn compatible(version: &semver::Version) -> semver::VersionReq {
    semver::VersionReq {
        comparators: vec![semver::Comparator {
            op: semver::Op::Caret,
            major: version.major,
            minor: Some(version.minor),
            patch: Some(version.patch),
            pre: version.pre.clone(),
        }],
    }
}

/// The newest item whose version matches `requirement` (or the newest release, then the
/// newest pre-release, without one).
pub(crate) fn select_newest<T>(
    items: impl IntoIterator<Item = T>,
    version: impl Fn(&T) -> &semver::Version,
    requirement: Option<&semver::VersionReq>,
) -> Option<T> {
    let mut best: Option<T> = None;
    let mut best_is_release = false;
    for item in items {
        let v = version(&item);
        let ok = match requirement {
            Some(req) => req.matches(v),
            None => true,
        };
        if !ok {
            continue;
        }
        let is_release = v.pre.is_empty();
        let better = match &best {
            None => true,
            Some(b) if requirement.is_none() && is_release != best_is_release => is_release,
            Some(b) => v > version(b),
        };
        if better {
            best_is_release = is_release;
            best = Some(item);
        }
    }
    best
}

fn wasm_name(name: &str, version: &semver::Version) -> String {
    format!("{name}-{version}.wasm")
}

fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Removes what an install killed midway left in `package_dir`: `.install-PID-N` and
/// `.old-PID-N` directories of processes that no longer run (where that can be told: Linux).
fn remove_abandoned(package_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(package_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix(".install-")
            .or_else(|| name.strip_prefix(".old-"))
        else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let gone = pid != std::process::id()
            && Path::new("/proc/self").exists()
            && !Path::new(&format!("/proc/{pid}")).exists();
        if gone && !entry.path().is_symlink() {
            tracing::debug!(path = %entry.path().display(), "removing an abandoned install");
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap()
    }

    #[test]
    fn lookup_picks_the_newest_compatible_version() {
        let versions = [
            "1.0.0",
            "1.4.2",
            "1.10.0",
            "2.0.0",
            "2.1.0-beta.1",
            "0.3.1",
            "0.3.9",
            "0.4.0",
        ];
        let pick = |req: Option<&str>| {
            let req = req.map(|r| semver::VersionReq::parse(r).unwrap());
            select_newest(versions.iter().map(|s| v(s)), |x| x, req.as_ref()).map(|x| x.to_string())
        };
        assert_eq!(pick(None).as_deref(), Some("2.0.0"));
        assert_eq!(pick(Some("^1.2.0")).as_deref(), Some("1.10.0"));
        assert_eq!(pick(Some("=1.4.2")).as_deref(), Some("1.4.2"));
        assert_eq!(pick(Some("^0.3.2")).as_deref(), Some("0.3.9"));
        assert_eq!(pick(Some("^3")), None);
        assert_eq!(
            pick(Some(">=2.1.0-beta.1")).as_deref(),
            Some("2.1.0-beta.1")
        );
        assert_eq!(compatible(&v("1.2.0")).to_string(), "^1.2.0");
        assert_eq!(exact(&v("1.2.0")).to_string(), "=1.2.0");
        // Only pre-releases installed: the newest is taken.
        let only_pre = [v("1.0.0-rc.1"), v("1.0.0-rc.2")];
        assert_eq!(select_newest(only_pre, |x| x, None), Some(v("1.0.0-rc.2")));
    }

    #[test]
    fn hostile_names_never_reach_outside_the_store() {
        let root = tempfile::tempdir().unwrap();
        let store = PluginStore::new(root.path().join("home/plugins"));
        // Shaped like a store entry, so a name resolving to it would list and remove it.
        let canary = root.path().join("canary/1.0.0");
        std::fs::create_dir_all(&canary).unwrap();
        std::fs::write(canary.join(SHA_SIDECAR), "00").unwrap();
        std::fs::write(root.path().join("canary-1.0.0.wasm"), "x").unwrap();
        let long = "a".repeat(129);
        for name in [
            "..",
            "../../canary",
            "/abs",
            "a/b",
            "a\0b",
            "a\x1b[2J",
            ".x",
            "",
            &long,
        ] {
            let expected = format!("invalid plugin name {}: {PLUGIN_NAME_RULE}", quoted(name));
            let errors = [
                store.versions(name).unwrap_err(),
                store.lookup(name, None).unwrap_err(),
                store.remove(name, None).unwrap_err(),
                store.remove(name, Some(&v("1.0.0"))).unwrap_err(),
                store.inspect(name).unwrap_err(),
                store.inspect(&format!("{name}@1.0.0")).unwrap_err(),
            ];
            for err in errors {
                assert!(err.to_string().ends_with(&expected), "{name:?}: {err}");
            }
        }
        assert!(canary.join(SHA_SIDECAR).is_file(), "the canary survives");
        assert_eq!(
            quoted(&long),
            format!("\"{}\"… (129 bytes)", "a".repeat(64))
        );
    }

    #[test]
    fn schema_summaries_count_tokens() {
        let s = SchemaSummary::of(&serde_json::json!({
            "resources": {"random:index:RandomString": {}, "random:index:RandomInteger": {}},
            "functions": {"random:index:shuffle": {}},
            "config": {"variables": {"seed": {}}}
        }));
        assert_eq!(
            s.resources,
            ["random:index:RandomString", "random:index:RandomInteger"]
        );
        assert_eq!(s.functions, ["random:index:shuffle"]);
        assert_eq!(s.config, ["seed"]);
        assert_eq!(
            SchemaSummary::of(&serde_json::Value::Null),
            SchemaSummary::default()
        );
    }
}
