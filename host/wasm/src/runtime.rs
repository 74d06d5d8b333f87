//! The shared wasmtime runtime: one [`wasmtime::Engine`], a [`Linker`] per world (providers,
//! programs) with every host API, an epoch ticker, and compile-once caching of components (in
//! memory and on disk).
//!
//! # The compiled-artifact cache
//!
//! With a cache directory, a component compiled once is written to
//! `<cache dir>/<sha256 of the .wasm>-<engine compatibility hash>.cwasm` and later loads
//! deserialize it instead of compiling (~1 ms instead of ~20 ms–1 s). The compatibility hash
//! is [`Engine::precompile_compatibility_hash`] (wasmtime version and every setting that
//! affects code generation), so an artifact is never loaded by an engine that would run it
//! differently; a new wasmtime or configuration simply misses the cache. Files are written to a
//! temporary name, fsynced and renamed, so a reader never sees a torn artifact.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine};

use crate::bindings::ProviderWorldPre;
use crate::error::WasmError;
use crate::grants::{PackageGrant, Sandbox};
use crate::log::LogSink;
use crate::plugin::WasmPlugin;
use crate::program::{ProgramFile, WasmProgram};
use crate::program_bindings::ProgramWorldPre;
use crate::provider::WasmProvider;
use crate::state::{self, InstanceState};

/// How often the epoch ticker advances the engine's epoch. A guest running wasm code yields to
/// the async executor once per tick and notices an expired deadline within one tick.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Settings of a [`WasmRuntime`].
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Where compiled artifacts are cached; `None` compiles every file once per process.
    pub cache_dir: Option<PathBuf>,
    /// Idle instances kept per provider (default: [`DEFAULT_POOL_SIZE`]).
    pub pool_size: Option<usize>,
}

/// Idle instances a provider keeps by default.
pub const DEFAULT_POOL_SIZE: usize = 16;

/// Counters of how components were obtained, so tests can assert that a load did not compile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompileStats {
    /// Components compiled from wasm.
    pub compiled: u64,
    /// Components deserialized from the on-disk cache.
    pub loaded_from_cache: u64,
    /// Components found already loaded in this runtime.
    pub reused: u64,
}

/// The wasmtime host shared by every provider of a process. Cheap to clone.
#[derive(Clone)]
pub struct WasmRuntime {
    inner: Arc<RuntimeInner>,
}

struct RuntimeInner {
    engine: Engine,
    linker: Linker<InstanceState>,
    /// Built on first use: most processes only run providers.
    program_linker: std::sync::OnceLock<Result<Linker<InstanceState>, String>>,
    cache_dir: Option<PathBuf>,
    /// Hex of the engine's precompile compatibility hash.
    compat: String,
    pool_size: usize,
    /// Prepared components by SHA-256.
    prepared: Mutex<HashMap<String, ProviderWorldPre<InstanceState>>>,
    compiled: AtomicU64,
    loaded_from_cache: AtomicU64,
    reused: AtomicU64,
    /// Dropping the sender stops the epoch ticker thread.
    _ticker: mpsc::Sender<()>,
}

impl WasmRuntime {
    /// Creates the engine, the linker and the epoch ticker thread.
    pub fn new(options: RuntimeOptions) -> Result<WasmRuntime, WasmError> {
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .cranelift_opt_level(wasmtime::OptLevel::Speed);
        // `perf` can name guest functions when this is set (writes /tmp/perf-<pid>.map).
        if std::env::var_os("CAIRN_WASM_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config).map_err(|e| WasmError::Engine(format!("{e:#}")))?;
        let linker = state::linker(&engine).map_err(|e| WasmError::Engine(format!("{e:#}")))?;

        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let compat = format!("{:016x}", hasher.finish());

        let (stop, stopped) = mpsc::channel::<()>();
        let ticker = engine.clone();
        std::thread::Builder::new()
            .name("cairn-wasm-epoch".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(EPOCH_TICK) {
                    ticker.increment_epoch();
                }
            })
            .map_err(|e| WasmError::Engine(format!("starting the epoch ticker: {e}")))?;

        if let Some(dir) = &options.cache_dir {
            std::fs::create_dir_all(dir).map_err(|source| WasmError::Io {
                what: "creating the compile cache directory",
                path: dir.clone(),
                source,
            })?;
        }
        Ok(WasmRuntime {
            inner: Arc::new(RuntimeInner {
                engine,
                linker,
                program_linker: std::sync::OnceLock::new(),
                cache_dir: options.cache_dir,
                compat,
                pool_size: options.pool_size.unwrap_or(DEFAULT_POOL_SIZE),
                prepared: Mutex::new(HashMap::new()),
                compiled: AtomicU64::new(0),
                loaded_from_cache: AtomicU64::new(0),
                reused: AtomicU64::new(0),
                _ticker: stop,
            }),
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    pub fn stats(&self) -> CompileStats {
        CompileStats {
            compiled: self.inner.compiled.load(Ordering::Relaxed),
            loaded_from_cache: self.inner.loaded_from_cache.load(Ordering::Relaxed),
            reused: self.inner.reused.load(Ordering::Relaxed),
        }
    }

    /// The cache file a plugin's compiled artifact is stored in, if caching is on.
    pub fn cache_path(&self, plugin: &WasmPlugin) -> Option<PathBuf> {
        let dir = self.inner.cache_dir.as_ref()?;
        Some(dir.join(format!("{}-{}.cwasm", plugin.sha256(), self.inner.compat)))
    }

    /// Compiles (or loads from cache) a plugin and checks it is a provider: every import is one
    /// the host provides and the `provider` interface is exported with the expected types.
    pub fn prepare(&self, plugin: &WasmPlugin) -> Result<(), WasmError> {
        self.pre(plugin).map(drop)
    }

    pub(crate) fn pre(
        &self,
        plugin: &WasmPlugin,
    ) -> Result<ProviderWorldPre<InstanceState>, WasmError> {
        if let Some(pre) = lock(&self.inner.prepared).get(plugin.sha256()) {
            self.inner.reused.fetch_add(1, Ordering::Relaxed);
            return Ok(pre.clone());
        }
        let component = self.component(plugin)?;
        let not_a_provider = |e: wasmtime::Error| WasmError::NotAProvider {
            provider: plugin.manifest().id(),
            file: plugin.display_name(),
            message: format!("{e:#}"),
        };
        let instance_pre = self
            .inner
            .linker
            .instantiate_pre(&component)
            .map_err(not_a_provider)?;
        let pre = ProviderWorldPre::new(instance_pre).map_err(not_a_provider)?;
        lock(&self.inner.prepared).insert(plugin.sha256().to_owned(), pre.clone());
        Ok(pre)
    }

    /// A new provider for `plugin`, sandboxed by `grant` (intersected with its manifest).
    pub fn instantiate(
        &self,
        plugin: &WasmPlugin,
        grant: &PackageGrant,
        log: LogSink,
    ) -> Result<WasmProvider, WasmError> {
        let pre = self.pre(plugin)?;
        let sandbox = Sandbox::new(plugin.manifest(), grant)?;
        Ok(WasmProvider::new(
            self.inner.engine.clone(),
            pre,
            Arc::new(plugin.manifest().clone()),
            Arc::new(sandbox),
            log,
            self.inner.pool_size,
        ))
    }

    /// Compiles (or loads from cache) a program and checks its imports and `run` export, then
    /// sandboxes it by `grant` (everything granted is given: the user wrote both).
    pub fn load_program(
        &self,
        file: &ProgramFile,
        grant: &PackageGrant,
        log: LogSink,
    ) -> Result<WasmProgram, WasmError> {
        let component = self.compile(&Source {
            sha256: &file.sha256,
            bytes: &file.bytes,
            id: file.name.clone(),
            file: file.path.display().to_string(),
        })?;
        let not_a_program = |e: wasmtime::Error| WasmError::NotAProgram {
            file: file.path.display().to_string(),
            message: format!("{e:#}"),
        };
        let linker = self
            .inner
            .program_linker
            .get_or_init(|| state::program_linker(&self.inner.engine).map_err(|e| format!("{e:#}")))
            .as_ref()
            .map_err(|e| WasmError::Engine(e.clone()))?;
        let instance_pre = linker.instantiate_pre(&component).map_err(not_a_program)?;
        let pre = ProgramWorldPre::new(instance_pre).map_err(not_a_program)?;
        let sandbox = Sandbox::for_program(&file.name, grant)?;
        Ok(WasmProgram::new(
            self.inner.engine.clone(),
            pre,
            Arc::new(sandbox),
            log,
        ))
    }

    fn component(&self, plugin: &WasmPlugin) -> Result<Component, WasmError> {
        self.compile(&Source {
            sha256: plugin.sha256(),
            bytes: plugin.bytes(),
            id: plugin.manifest().id(),
            file: plugin.display_name(),
        })
    }

    /// Compiles a component, or loads it from the cache.
    fn compile(&self, source: &Source<'_>) -> Result<Component, WasmError> {
        let engine = &self.inner.engine;
        let cache_path = self
            .inner
            .cache_dir
            .as_ref()
            .map(|dir| dir.join(format!("{}-{}.cwasm", source.sha256, self.inner.compat)));
        if let Some(path) = &cache_path
            && path.is_file()
        {
            // SAFETY: `deserialize_file` trusts the file to be an artifact this wasmtime wrote
            // (it checks the header and engine compatibility, not the machine code). The file
            // is ours: it lives in Cairn's own cache directory, is named by the SHA-256 of the
            // exact wasm it was compiled from plus the engine's compatibility hash, and is only
            // ever created by `store_artifact` below, which writes a temporary file, fsyncs it
            // and renames it into place — so it is never partially written and never modified
            // in place (a replacement is a new inode; existing mappings stay valid). Anyone able
            // to write there could equally replace the cairn binary itself.
            match unsafe { Component::deserialize_file(engine, path) } {
                Ok(component) => {
                    self.inner.loaded_from_cache.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(path = %path.display(), "loaded compiled component from cache");
                    return Ok(component);
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %format!("{e:#}"), "ignoring unusable cached artifact");
                }
            }
        }
        let started = std::time::Instant::now();
        let component = Component::new(engine, source.bytes).map_err(|e| WasmError::Compile {
            provider: source.id.clone(),
            file: source.file.clone(),
            message: format!("{e:#}"),
        })?;
        self.inner.compiled.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(component = %source.id, elapsed = ?started.elapsed(), "compiled component");
        if let Some(path) = &cache_path {
            match component.serialize() {
                Ok(bytes) => {
                    if let Err(e) = store_artifact(path, &bytes) {
                        tracing::warn!(path = %path.display(), error = %e, "could not cache compiled component");
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "could not serialize compiled component")
                }
            }
        }
        Ok(component)
    }
}

/// A component to compile: its identity for the cache and for messages.
struct Source<'a> {
    sha256: &'a str,
    bytes: &'a [u8],
    /// `name@version` of a provider, the program's name.
    id: String,
    file: String,
}

/// Writes `bytes` to `path` atomically: temporary file in the same directory, fsync, rename,
/// directory fsync.
pub(crate) fn store_artifact(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("artifact"),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
