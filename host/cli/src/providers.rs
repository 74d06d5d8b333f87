//! Where the CLI finds providers: WebAssembly components installed in the Cairn home
//! (`cairn plugin install`) or named by the project's `plugins:` section, sandboxed with the
//! grants in the stack's `cairn:grants` configuration; and the built-in `pulumi` package
//! (stack references).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use cairn_engine::config::{ConfigKey, ResolvedConfig};
use cairn_engine::deploy::events::EventSink;
use cairn_engine::deploy::provider::{LoadError, Provider, ProviderLoader};
use cairn_engine::project::Project;
use cairn_wasm::{Grants, PluginStore, RuntimeOptions, WasmLoader, WasmRuntime, events_log_sink};
use indexmap::IndexMap;

use crate::backend::FileBackend;
use crate::builtins::Builtins;

/// The config key holding the user's sandbox grants.
pub const GRANTS_KEY: &str = "cairn:grants";

/// The installed-plugin store under the Cairn home.
pub fn store(home: &Path) -> PluginStore {
    PluginStore::new(home.join("plugins"))
}

/// The process's wasm runtime, caching compiled components under the Cairn home.
pub fn runtime(home: &Path) -> Result<WasmRuntime> {
    Ok(WasmRuntime::new(RuntimeOptions {
        cache_dir: Some(home.join("cache").join("wasm")),
        pool_size: None,
    })?)
}

/// A deployment's providers: the built-in `pulumi` package, else wasm components.
pub struct Loader {
    wasm: WasmLoader,
    builtins: Arc<Builtins>,
}

#[async_trait::async_trait]
impl ProviderLoader for Loader {
    async fn load(
        &self,
        package: &str,
        version: Option<&semver::Version>,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        if package == "pulumi" {
            return Ok(self.builtins.clone());
        }
        self.wasm.load(package, version).await
    }
}

/// The provider loader for a deployment of `project` (in `project_dir`, on `backend`) with its
/// resolved configuration; provider logs go to `events`.
pub fn loader(
    runtime: &WasmRuntime,
    home: &Path,
    backend: &FileBackend,
    project_dir: &Path,
    project: &Project,
    config: &IndexMap<ConfigKey, ResolvedConfig>,
    events: Arc<dyn EventSink>,
) -> Result<Loader> {
    Ok(Loader {
        wasm: wasm_loader(runtime, home, project_dir, project, config, events)?,
        builtins: Arc::new(Builtins::new(backend.clone(), &project.name)),
    })
}

fn wasm_loader(
    runtime: &WasmRuntime,
    home: &Path,
    project_dir: &Path,
    project: &Project,
    config: &IndexMap<ConfigKey, ResolvedConfig>,
    events: Arc<dyn EventSink>,
) -> Result<WasmLoader> {
    let grants = grants(config, project_dir)?;
    let runtime = runtime.clone();
    let mut loader = WasmLoader::new(runtime.clone(), grants, events_log_sink(events))
        .with_store(store(home).with_runtime(runtime));
    for path in local_plugins(project, project_dir)? {
        loader = loader
            .with_local_plugin(&path)
            .with_context(|| format!("loading the project's plugin {}", path.display()))?;
    }
    Ok(loader)
}

/// The user's grants from `cairn:grants` (a structured config value), relative paths resolved
/// against the project directory.
fn grants(config: &IndexMap<ConfigKey, ResolvedConfig>, project_dir: &Path) -> Result<Grants> {
    match structured(config, GRANTS_KEY)? {
        None => Ok(Grants::none()),
        Some(json) => {
            Grants::parse(&json, project_dir).with_context(|| format!("reading {GRANTS_KEY}"))
        }
    }
}

/// A structured configuration value (JSON text in the stack's settings), if set.
pub fn structured(
    config: &IndexMap<ConfigKey, ResolvedConfig>,
    key: &str,
) -> Result<Option<serde_json::Value>> {
    let Some(value) = config
        .iter()
        .find(|(k, _)| k.to_string() == key)
        .map(|(_, v)| v)
    else {
        return Ok(None);
    };
    serde_json::from_str(&value.value)
        .map(Some)
        .with_context(|| {
            format!("{key} must be a structured value (set it with `cairn config set --path`)")
        })
}

/// The `.wasm` providers the project names: `plugins: {providers: [{name, path}]}` in
/// Pulumi.yaml, paths relative to the project.
fn local_plugins(project: &Project, project_dir: &Path) -> Result<Vec<PathBuf>> {
    let Some(plugins) = &project.plugins else {
        return Ok(vec![]);
    };
    let Some(providers) = plugins.get("providers") else {
        return Ok(vec![]);
    };
    let Some(entries) = providers.as_sequence() else {
        bail!("Pulumi.yaml: plugins.providers must be a list of {{name, path}} entries");
    };
    let mut paths = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some(path) = entry.get("path").and_then(|p| p.as_str()) else {
            bail!("Pulumi.yaml: plugins.providers[{i}] has no path");
        };
        let path = project_dir.join(path);
        if path.extension().is_some_and(|e| e == "wasm") {
            paths.push(path);
        }
    }
    Ok(paths)
}
