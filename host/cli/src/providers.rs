//! Where the CLI finds providers: WebAssembly components installed in the Cairn home
//! (`cairn plugin install`) or named by the project's `plugins:` section, sandboxed with the
//! grants in the stack's `cairn:grants` configuration; and the built-in `pulumi` package
//! (stack references).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use cairn_backend::Backend;
use cairn_engine::config::{ConfigKey, ResolvedConfig};
use cairn_engine::deploy::events::EventSink;
use cairn_engine::deploy::provider::{
    LoadError, NativePlugins, Provider, ProviderLoader, ProviderOrigin,
};
use cairn_engine::project::Project;
use cairn_wasm::{Grants, PluginStore, RuntimeOptions, WasmLoader, WasmRuntime, events_log_sink};
use indexmap::IndexMap;

use crate::builtins::Builtins;

/// The config key holding the user's sandbox grants.
pub const GRANTS_KEY: &str = "cairn:grants";

/// The installed-plugin store under the Cairn home.
pub fn store(home: &Path) -> PluginStore {
    PluginStore::new(home.join("plugins"))
}

/// The process's wasm runtime, caching compiled components under the Cairn home.
pub fn runtime(home: &Path) -> Result<WasmRuntime> {
    let runtime = WasmRuntime::new(RuntimeOptions {
        cache_dir: Some(home.join("cache").join("wasm")),
        pool_size: None,
    })?;
    // A guest that could write the Cairn home could plant compiled code or plugins: no grant
    // may show it.
    runtime.protect(home);
    Ok(runtime)
}

/// A deployment's providers: the built-in `pulumi` package, else wasm components, else gRPC
/// provider plugins (`pulumi-resource-<package>`) — only those the project names when the
/// request comes from a wasm program or a sandboxed provider.
pub struct Loader {
    wasm: WasmLoader,
    builtins: Arc<Builtins>,
    grpc: GrpcPlugins,
    /// Providers pinned by `cairn.lock` or found in registries, fetched when not installed.
    fetcher: crate::registry::ProviderFetcher,
    /// Where the fetcher reports what it locked.
    notice: crate::registry::Notice,
}

/// Where gRPC provider plugins are found, and the engine address they are given.
struct GrpcPlugins {
    /// Plugin files or directories named in the project's `plugins.providers`.
    named: Vec<PathBuf>,
    /// Where plugins are looked up by name: `<home>/plugins/bin`, then `$PATH`.
    discovered: Vec<PathBuf>,
    /// Plugins started by command: the project's plugin directories (named), and the packages
    /// served by the program's SDK (dynamic providers, which run code the program sends).
    commands: Vec<(String, cairn_grpc::PluginCommand, ProviderOrigin)>,
    events: Arc<dyn EventSink>,
    engine: tokio::sync::OnceCell<cairn_grpc::Served>,
}

impl GrpcPlugins {
    /// `pulumi-resource-<package>`: an entry that is that file, or a file by that name in an
    /// entry's directory.
    fn find_in(entries: &[PathBuf], package: &str) -> Option<PathBuf> {
        let binary = format!("pulumi-resource-{package}");
        entries.iter().find_map(|entry| {
            if entry.is_file() && entry.file_name().is_some_and(|n| n == binary.as_str()) {
                return Some(entry.clone());
            }
            let candidate = entry.join(&binary);
            candidate.is_file().then_some(candidate)
        })
    }

    /// The plugin for `package` the rule allows: one the project names, else (under
    /// [`NativePlugins::Any`]) one found by lookup. Decided before anything is started.
    fn command(
        &self,
        package: &str,
        native: NativePlugins,
    ) -> Option<(cairn_grpc::PluginCommand, ProviderOrigin)> {
        let named = |path: PathBuf| {
            (
                cairn_grpc::PluginCommand::new(format!("pulumi-resource-{package}"), path),
                ProviderOrigin::NamedPlugin,
            )
        };
        let by_command = self
            .commands
            .iter()
            .find(|(p, _, origin)| p == package && native.allows(*origin))
            .map(|(_, command, origin)| (command.clone(), *origin));
        by_command
            .or_else(|| Self::find_in(&self.named, package).map(named))
            .or_else(|| {
                (native == NativePlugins::Any)
                    .then(|| Self::find_in(&self.discovered, package))
                    .flatten()
                    .map(|path| {
                        (
                            cairn_grpc::PluginCommand::new(
                                format!("pulumi-resource-{package}"),
                                path,
                            ),
                            ProviderOrigin::DiscoveredPlugin,
                        )
                    })
            })
    }

    async fn load(
        &self,
        package: &str,
        native: NativePlugins,
    ) -> Option<Result<Arc<dyn Provider>, LoadError>> {
        let (command, origin) = self.command(package, native)?;
        let failed = |message: String| LoadError::Failed {
            package: package.to_owned(),
            message,
        };
        let events = self.events.clone();
        let engine = self
            .engine
            .get_or_try_init(|| cairn_grpc::serve_engine(events, None))
            .await;
        let engine = match engine {
            Ok(engine) => engine,
            Err(e) => return Some(Err(failed(e.to_string()))),
        };
        let events = self.events.clone();
        let name = command.name.clone();
        let output: cairn_grpc::plugin::OutputSink = Arc::new(move |stderr, line| {
            events.emit(cairn_engine::deploy::events::EngineEvent::Diagnostic {
                severity: cairn_engine::deploy::events::Severity::Debug,
                urn: None,
                message: format!("{name}{}: {line}", if stderr { " (stderr)" } else { "" }),
            });
        });
        Some(
            cairn_grpc::GrpcProvider::start(
                package,
                &command,
                &engine.target(),
                cairn_grpc::plugin::DEFAULT_START_TIMEOUT,
                output,
            )
            .await
            .map(|p| match origin {
                ProviderOrigin::NamedPlugin => p.named_by_project(),
                _ => p,
            })
            .map(|p| Arc::new(p) as Arc<dyn Provider>)
            .map_err(|e| failed(e.to_string())),
        )
    }
}

#[async_trait::async_trait]
impl ProviderLoader for Loader {
    async fn load(
        &self,
        package: &str,
        version: Option<&semver::Version>,
        native: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        self.load_from(package, version, None, native).await
    }

    async fn load_from(
        &self,
        package: &str,
        version: Option<&semver::Version>,
        download_url: Option<&str>,
        native: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        if package == "pulumi" {
            return Ok(self.builtins.clone());
        }
        let failed = |e: anyhow::Error| LoadError::Failed {
            package: package.to_owned(),
            message: format!("{e:#}"),
        };
        // The project's own files first; then what cairn.lock pins.
        if !self.wasm.has_local(package, version)
            && let Some(plugin) = self
                .fetcher
                .locked(package, version)
                .await
                .map_err(failed)?
        {
            return Ok(Arc::new(self.wasm.load_plugin(plugin).await?));
        }
        match self.wasm.load(package, version, native).await {
            Err(LoadError::NotFound { .. }) => {
                if let Some(plugin) = self
                    .fetcher
                    .resolve(package, version, download_url, &self.notice)
                    .await
                    .map_err(failed)?
                {
                    return Ok(Arc::new(self.wasm.load_plugin(plugin).await?));
                }
                match self.grpc.load(package, native).await {
                    Some(result) => result,
                    None => Err(LoadError::Failed {
                        package: package.to_owned(),
                        message: match native {
                            NativePlugins::Any => format!(
                                "no provider found{}: install a wasm component (`cairn plugin install`), name one in Pulumi.yaml `plugins: {{providers: [{{name, path}}]}}`, or put a pulumi-resource-{package} plugin on PATH",
                                version
                                    .map(|v| format!(" compatible with version {v}"))
                                    .unwrap_or_default()
                            ),
                            NativePlugins::ProjectNamed => format!(
                                "no wasm provider found{}: install a wasm component (`cairn plugin install`) or name a provider in Pulumi.yaml `plugins: {{providers: [{{name, path}}]}}` (a wasm program, and what a sandboxed provider registers, never start native plugins found on PATH or in the plugin directory)",
                                version
                                    .map(|v| format!(" compatible with version {v}"))
                                    .unwrap_or_default()
                            ),
                        },
                    }),
                }
            }
            other => other,
        }
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "the deployment's parts, each from a different place; a struct would only rename them"
)]
/// The provider loader for a deployment of `project` (in `project_dir`, on `backend`) with its
/// resolved configuration; provider logs go to `events`.
pub fn loader(
    runtime: &WasmRuntime,
    home: &Path,
    backend: &Backend,
    project_dir: &Path,
    project: &Project,
    config: &IndexMap<ConfigKey, ResolvedConfig>,
    events: Arc<dyn EventSink>,
    offline: bool,
) -> Result<Loader> {
    let entries = plugin_entries(project, project_dir)?;
    let registries = crate::registry::registries(
        home,
        structured(config, crate::registry::PROJECT_REGISTRIES_KEY)?,
    )?;
    let fetcher = crate::registry::ProviderFetcher::new(
        home,
        project_dir,
        registries,
        offline,
        store(home).with_runtime(runtime.clone()),
    )?;
    let notice_events = events.clone();
    let notice: crate::registry::Notice = Box::new(move |message| {
        notice_events.emit(cairn_engine::deploy::events::EngineEvent::Diagnostic {
            severity: cairn_engine::deploy::events::Severity::Info,
            urn: None,
            message,
        });
    });
    let mut commands: Vec<_> = crate::program::dynamic_providers(project_dir, project)
        .into_iter()
        .map(|(package, command)| (package, command, ProviderOrigin::DiscoveredPlugin))
        .collect();
    // Plugin directories with a PulumiPlugin.yaml run in their language (e.g. a Python
    // `pulumi.provider.main` provider).
    for (name, path) in &entries {
        if let Some(command) = crate::program::plugin_directory(name, path)? {
            commands.push((name.clone(), command, ProviderOrigin::NamedPlugin));
        }
    }
    let named = entries
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| {
            p.extension().is_none_or(|e| e != "wasm")
                && cairn_guest_build::provider_language(p).is_none()
        })
        .collect::<Vec<_>>();
    // The Cairn plugin directory for gRPC plugins, then PATH.
    let mut discovered = vec![home.join("plugins").join("bin")];
    discovered.extend(
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    Ok(Loader {
        wasm: wasm_loader(runtime, home, project_dir, project, config, events.clone())?,
        builtins: Arc::new(Builtins::new(backend.clone(), &project.name)),
        grpc: GrpcPlugins {
            named,
            discovered,
            commands,
            events,
            engine: tokio::sync::OnceCell::new(),
        },
        fetcher,
        notice,
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
    for (_, path) in plugin_entries(project, project_dir)? {
        // A provider's source directory is built first (`cairn up` alone builds what it needs).
        let path = match cairn_guest_build::provider_language(&path) {
            Some(language) => crate::program::builder(home).build(
                &path,
                language,
                cairn_guest_build::World::Provider,
            )?,
            None if path.extension().is_some_and(|e| e == "wasm") => path,
            None => continue,
        };
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

/// The providers the project names: `plugins: {providers: [{name, path}]}` in Pulumi.yaml,
/// paths relative to the project (`.wasm` components, gRPC plugin binaries or directories).
fn plugin_entries(project: &Project, project_dir: &Path) -> Result<Vec<(String, PathBuf)>> {
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
        let name = entry
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .to_owned();
        paths.push((name, project_dir.join(path)));
    }
    Ok(paths)
}
