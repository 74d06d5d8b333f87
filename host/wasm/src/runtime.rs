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
//!
//! **An artifact is used only for the exact bytes it was compiled from.** Its file is
//! wasmtime's serialized component followed by the full SHA-256 of the component it was compiled
//! from and [`ARTIFACT_MAGIC`]. A load opens the file once, reads that trailer from the open
//! file, compares the digest with the SHA-256 of the bytes being loaded (computed here, from
//! those bytes), and then memory-maps the very file it checked (on Linux through
//! `/proc/self/fd`, which reaches the open inode even if the path is replaced meanwhile;
//! elsewhere by reading it from the open file). A file renamed or copied to another
//! component's name, an artifact of an older format, or one left behind by a plugin whose file
//! changed is ignored and the component recompiled (and the artifact rewritten), so one
//! component's code never runs under another's manifest and grants.
//!
//! Mapping instead of reading keeps the code out of the heap: only the pages of machine code a
//! run executes become resident, shared with the page cache, so a process that loads a
//! provider pays for the code it uses rather than a private copy of all of it. (The PostgreSQL
//! provider compiles to 5.8 MiB; a 411-resource deployment touches under 1 MiB of it, and an
//! idle `cairn provider serve` of it went from 41 MiB read to 30 MiB mapped.) Artifacts are
//! never changed in place (written to a temporary name and renamed), as a mapping requires.
//!
//! # Threat model
//!
//! Deserializing an artifact runs machine code it contains: wasmtime checks its header and
//! engine compatibility, not the code. The digest check above stops mix-ups (renames, copies,
//! changed plugins), not a forger: **whoever can write the cache directory can run native code
//! as the user**, exactly as whoever can write the Cairn home can replace installed plugins or
//! the configuration that grants them. So the Cairn home (and this cache in it) must be
//! writable only by the user who runs Cairn — never shared, never restored from an untrusted
//! CI cache. The runtime protects it from the guests it runs: a directory grant that would
//! expose the cache directory (or another directory given to [`WasmRuntime::protect`], such as
//! the plugin store) to a guest is refused.
//!
//! # A cached artifact runs only for the bytes it was compiled from
//!
//! Each `.cwasm` records the SHA-256 of its component in a trailer; a load opens the file once,
//! compares that digest with the bytes being loaded and maps the very file it checked (only the
//! code a run executes becomes resident), else recompiles. Whoever can write the Cairn home can run
//! native code as the user, so it must be the user's alone; no guest may be granted a directory
//! that shows the cache or the plugin store.
//!
//! # Hostcall fuel is the memory limit
//!
//! wasmtime bounds the bytes it copies out of a guest in one call ("hostcall fuel", 128 MiB by
//! default). Cairn sets it to the instance's memory limit: a guest cannot hold more than that, so
//! passing more means the same bytes counted many times (list entries aliasing one string) — the
//! error names the limit and `memoryMiB`.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use sha2::{Digest, Sha256};
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

/// The last bytes of a cached artifact (format version 2). The file is wasmtime's serialized
/// component (an ELF image, which must start the file for it to be mapped), then the 32-byte
/// SHA-256 of the component it was compiled from, then this magic. (Version 1 put both first and
/// had to be read into memory; its files are ignored and rewritten.)
pub const ARTIFACT_MAGIC: &[u8; 16] = b"cairn-cwasm-v2\0\0";

/// The digest and the magic that end an artifact.
const ARTIFACT_TRAILER: usize = 32 + ARTIFACT_MAGIC.len();

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
    /// Directories no guest may be granted (canonical paths): the cache directory and what
    /// [`WasmRuntime::protect`] adds.
    protected: Mutex<Vec<PathBuf>>,
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

        let mut protected = Vec::new();
        if let Some(dir) = &options.cache_dir {
            std::fs::create_dir_all(dir).map_err(|source| WasmError::Io {
                what: "creating the compile cache directory",
                path: dir.clone(),
                source,
            })?;
            protected.push(canonical(dir));
        }
        Ok(WasmRuntime {
            inner: Arc::new(RuntimeInner {
                engine,
                linker,
                program_linker: std::sync::OnceLock::new(),
                cache_dir: options.cache_dir,
                protected: Mutex::new(protected),
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

    /// Refuses, from now on, directory grants that would show `dir` (or anything in it) to a
    /// guest: grants of `dir`, of a directory inside it or of one containing it. The cache
    /// directory is protected from the start; [`crate::WasmLoader::with_store`] protects the
    /// plugin store; a front end should protect the whole Cairn home.
    pub fn protect(&self, dir: impl AsRef<Path>) {
        let dir = canonical(dir.as_ref());
        let mut protected = lock(&self.inner.protected);
        if !protected.contains(&dir) {
            protected.push(dir);
        }
    }

    /// Fails when a directory of `grant` (the grant at `key` + `at`) overlaps a protected
    /// directory.
    fn check_directories(
        &self,
        grant: &PackageGrant,
        key: &'static str,
        at: &str,
    ) -> Result<(), WasmError> {
        let protected = lock(&self.inner.protected);
        for (i, dir) in grant.directories.iter().enumerate() {
            let host = canonical(&dir.host);
            if let Some(p) = protected
                .iter()
                .find(|p| host.starts_with(p) || p.starts_with(&host))
            {
                return Err(WasmError::Grants(crate::grants::GrantsError {
                    key,
                    path: format!("{at}.directories[{i}].host"),
                    reason: format!(
                        "{} would show Cairn's own files ({}) to the guest, which could then change the code other components run; grant a directory outside them",
                        dir.host.display(),
                        p.display()
                    ),
                }));
            }
        }
        Ok(())
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
        self.check_directories(
            grant,
            crate::grants::GRANTS_KEY,
            &format!(".{}", plugin.manifest().name),
        )?;
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
        self.check_directories(grant, crate::grants::PROGRAM_KEY, "")?;
        let sandbox = Sandbox::for_program(&file.name, grant)?;
        Ok(WasmProgram::new(
            self.inner.engine.clone(),
            pre,
            Arc::new(sandbox),
            log,
        ))
    }

    /// Loads a policy pack component, sandboxed with nothing granted (`memory` and `timeout`
    /// per call), instantiates it and asks for its description (see [`crate::policy`]).
    pub async fn load_policy_pack(
        &self,
        file: &ProgramFile,
        limits: crate::policy::PolicyLimits,
        log: LogSink,
    ) -> Result<crate::policy::WasmPolicyPack, WasmError> {
        let component = self.compile(&Source {
            bytes: &file.bytes,
            id: file.name.clone(),
            file: file.path.display().to_string(),
        })?;
        let not_a_pack = |message: String| WasmError::NotAPolicyPack {
            file: file.path.display().to_string(),
            message,
        };
        let linker = state::policy_linker(&self.inner.engine)
            .map_err(|e| WasmError::Engine(format!("{e:#}")))?;
        let instance_pre = linker
            .instantiate_pre(&component)
            .map_err(|e| not_a_pack(format!("{e:#}")))?;
        let pre = crate::policy_bindings::PolicyWorldPre::new(instance_pre)
            .map_err(|e| not_a_pack(format!("{e:#}")))?;
        crate::policy::WasmPolicyPack::start(self.inner.engine.clone(), pre, file, limits, log)
            .await
            .map_err(not_a_pack)
    }

    fn component(&self, plugin: &WasmPlugin) -> Result<Component, WasmError> {
        self.compile(&Source {
            bytes: plugin.bytes(),
            id: plugin.manifest().id(),
            file: plugin.display_name(),
        })
    }

    /// Compiles a component, or loads it from the cache when an artifact compiled from these
    /// exact bytes is there.
    fn compile(&self, source: &Source<'_>) -> Result<Component, WasmError> {
        let engine = &self.inner.engine;
        // The digest of the bytes being loaded, computed here rather than taken from the
        // caller, is what an artifact must have been compiled from.
        let digest: [u8; 32] = Sha256::digest(source.bytes).into();
        let cache_path = self.inner.cache_dir.as_ref().map(|dir| {
            dir.join(format!(
                "{}-{}.cwasm",
                hex::encode(digest),
                self.inner.compat
            ))
        });
        if let Some(path) = &cache_path
            && let Some(component) = self.load_artifact(path, &digest)
        {
            self.inner.loaded_from_cache.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(path = %path.display(), "loaded compiled component from cache");
            return Ok(component);
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
                Ok(code) => {
                    let mut artifact = code;
                    artifact.reserve_exact(ARTIFACT_TRAILER);
                    artifact.extend_from_slice(&digest);
                    artifact.extend_from_slice(ARTIFACT_MAGIC);
                    if let Err(e) = store_artifact(path, &artifact) {
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

    /// The component cached at `path`, if it is there, is an artifact of this format and was
    /// compiled from the component whose SHA-256 is `digest`.
    fn load_artifact(&self, path: &Path, digest: &[u8; 32]) -> Option<Component> {
        let ignore = |why: &str| {
            tracing::warn!(path = %path.display(), "ignoring cached artifact: {why}");
            None
        };
        // One open: the file checked is the file mapped (no window in which another file could
        // take its name between the check and the load).
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => return ignore(&format!("cannot open it: {e}")),
        };
        let len = match file.metadata() {
            Ok(meta) => meta.len(),
            Err(e) => return ignore(&format!("cannot read its size: {e}")),
        };
        let Some(code_len) = len.checked_sub(ARTIFACT_TRAILER as u64) else {
            return ignore("an unknown format");
        };
        let mut trailer = [0u8; ARTIFACT_TRAILER];
        if let Err(e) = read_exact_at(&file, &mut trailer, code_len) {
            return ignore(&format!("cannot read it: {e}"));
        }
        let (recorded, magic) = trailer.split_at(32);
        if magic != ARTIFACT_MAGIC.as_slice() {
            return ignore("an unknown format");
        }
        if recorded != digest.as_slice() {
            tracing::warn!(
                path = %path.display(),
                compiled_from = %hex::encode(recorded),
                "ignoring cached artifact compiled from other bytes than the component being loaded"
            );
            return None;
        }
        // SAFETY: deserializing runs the artifact's machine code later; wasmtime checks its
        // header and engine compatibility but not the code. The artifact is trusted because of
        // where it lives (see the module's threat model): Cairn's own cache directory, which only
        // the user running Cairn can write and which no guest may be granted
        // (`check_directories`). It was written by `compile` above (temporary file, fsync,
        // rename; never changed in place, as a mapping requires), and it records the SHA-256 of
        // the component it was compiled from, checked above on this open file, so it is this
        // component's code. (wasmtime ignores the trailer after the ELF image it maps.)
        match unsafe { deserialize_open_file(&self.inner.engine, &file, code_len) } {
            Ok(component) => Some(component),
            Err(e) => ignore(&format!("unusable: {e:#}")),
        }
    }
}

/// Reads `buf.len()` bytes of `file` at `offset`, leaving its cursor alone.
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek};
        let mut file = file;
        file.seek(std::io::SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }
}

/// Deserializes the artifact open as `file` (its first `code_len` bytes are the component): on
/// Linux by mapping that very inode, elsewhere by reading it.
///
/// # Safety
/// As [`Component::deserialize_file`]: the file must hold code this engine compiled, and must
/// not change while the component lives.
unsafe fn deserialize_open_file(
    engine: &Engine,
    file: &std::fs::File,
    code_len: u64,
) -> wasmtime::Result<Component> {
    #[cfg(target_os = "linux")]
    {
        let _ = code_len;
        use std::os::fd::AsRawFd;
        let reopened = format!("/proc/self/fd/{}", file.as_raw_fd());
        if Path::new(&reopened).exists() {
            // SAFETY: the caller's contract.
            return unsafe { Component::deserialize_file(engine, &reopened) };
        }
    }
    use std::io::{Read, Seek};
    let mut code = Vec::new();
    let mut file = file;
    file.seek(std::io::SeekFrom::Start(0))?;
    file.read_to_end(&mut code)?;
    code.truncate(usize::try_from(code_len).unwrap_or(usize::MAX));
    // SAFETY: the caller's contract.
    unsafe { Component::deserialize(engine, code) }
}

/// `path` made absolute and canonical as far as it exists (so `a/../b` and symlinks compare
/// equal to what they point to).
fn canonical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    // Canonicalize the longest existing ancestor, then append the rest.
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// A component to compile: its identity for the cache and for messages.
struct Source<'a> {
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
