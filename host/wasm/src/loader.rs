//! [`WasmLoader`]: the engine's [`ProviderLoader`] for wasm providers.
//!
//! Candidates for a package are the project's own plugin files (`plugins:` entries, given with
//! [`WasmLoader::with_local_plugin`]) and the [`PluginStore`]. A requested version `v` means
//! "compatible with `v`" (`^v`, see [`crate::store`]); the newest compatible version wins, and a
//! compatible project-local file wins over any installed one. Each `load` returns a new
//! [`WasmProvider`] (its own instance pool), sandboxed by the package's grant; compilation is
//! shared through the runtime and its cache.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::deploy::provider::{LoadError, NativePlugins, Provider, ProviderLoader};

use crate::error::WasmError;
use crate::grants::Grants;
use crate::log::LogSink;
use crate::plugin::WasmPlugin;
use crate::provider::WasmProvider;
use crate::runtime::WasmRuntime;
use crate::store::{PluginStore, compatible, select_newest};

/// Loads wasm providers from project-local files and the plugin store.
pub struct WasmLoader {
    runtime: WasmRuntime,
    store: Option<PluginStore>,
    local: Vec<WasmPlugin>,
    grants: Grants,
    log: LogSink,
}

impl WasmLoader {
    pub fn new(runtime: WasmRuntime, grants: Grants, log: LogSink) -> WasmLoader {
        WasmLoader {
            runtime,
            store: None,
            local: Vec::new(),
            grants,
            log,
        }
    }

    /// Looks up installed providers in `store` (whose directory no guest may then be granted).
    pub fn with_store(mut self, store: PluginStore) -> WasmLoader {
        self.runtime.protect(store.dir());
        self.store = Some(store);
        self
    }

    /// Adds a project-local provider file (read now, compiled on first use).
    pub fn with_local_plugin(mut self, path: impl AsRef<Path>) -> Result<WasmLoader, WasmError> {
        self.local.push(WasmPlugin::from_file(path)?);
        Ok(self)
    }

    pub fn runtime(&self) -> &WasmRuntime {
        &self.runtime
    }

    /// The plugin the spec's lookup selects for `package` compatible with `version`.
    pub fn find(
        &self,
        package: &str,
        version: Option<&semver::Version>,
    ) -> Result<WasmPlugin, LoadError> {
        let requirement = version.map(compatible);
        let local = select_newest(
            self.local.iter().filter(|p| p.manifest().name == package),
            |p| &p.manifest().version,
            requirement.as_ref(),
        );
        if let Some(plugin) = local {
            return Ok(plugin.clone());
        }
        let failed = |e: WasmError| LoadError::Failed {
            package: package.to_owned(),
            message: e.to_string(),
        };
        if let Some(store) = &self.store
            && let Some(installed) = store
                .lookup(package, requirement.as_ref())
                .map_err(failed)?
        {
            return store.load(&installed).map_err(failed);
        }
        Err(LoadError::NotFound {
            package: package.to_owned(),
            version: version.map(ToString::to_string),
        })
    }

    /// Whether a project-local file provides `package` compatible with `version` (local files
    /// win over the store and over anything fetched).
    pub fn has_local(&self, package: &str, version: Option<&semver::Version>) -> bool {
        let requirement = version.map(compatible);
        select_newest(
            self.local.iter().filter(|p| p.manifest().name == package),
            |p| &p.manifest().version,
            requirement.as_ref(),
        )
        .is_some()
    }

    /// Finds and instantiates a provider (compiling off the async executor).
    pub async fn load_wasm(
        &self,
        package: &str,
        version: Option<&semver::Version>,
    ) -> Result<WasmProvider, LoadError> {
        let plugin = self.find(package, version)?;
        self.load_plugin(plugin).await
    }

    /// Instantiates `plugin` (chosen by the caller, e.g. pinned by a lock file), sandboxed by its
    /// package's grant.
    pub async fn load_plugin(&self, plugin: WasmPlugin) -> Result<WasmProvider, LoadError> {
        let package = plugin.manifest().name.clone();
        let package = package.as_str();
        let grant = self.grants.package(package);
        let runtime = self.runtime.clone();
        let log = self.log.clone();
        let failed = |message: String| LoadError::Failed {
            package: package.to_owned(),
            message,
        };
        tokio::task::spawn_blocking(move || runtime.instantiate(&plugin, &grant, log))
            .await
            .map_err(|e| failed(format!("the loading task failed: {e}")))?
            .map_err(|e| failed(e.to_string()))
    }
}

/// Loads only wasm components, so every native-plugin rule allows what it returns.
#[async_trait]
impl ProviderLoader for WasmLoader {
    async fn load(
        &self,
        package: &str,
        version: Option<&semver::Version>,
        _: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        Ok(Arc::new(self.load_wasm(package, version).await?))
    }
}
