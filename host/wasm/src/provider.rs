//! [`WasmProvider`]: the engine's [`Provider`] implemented by a pool of component instances.
//!
//! # The pool
//!
//! Each call takes an idle instance (or instantiates a new one from the `InstancePre`), runs,
//! and puts the instance back, so concurrent calls run on distinct instances in parallel. The
//! last successful `configure` is recorded and replayed on every instance created afterwards;
//! a new `configure` retires the instances configured before it. An instance whose call trapped,
//! overran its deadline or was abandoned (the caller's future dropped) is discarded, never
//! reused. At most the runtime's pool size of idle instances are kept.
//!
//! Linear memory never shrinks, so an instance whose memory grew well past what it held when
//! it was made ([`recycles`]: a guest runtime that leaks, or one large request) is retired when
//! it comes back and a fresh one takes its place on demand: a long-lived provider's memory stays
//! bounded whatever its language's runtime does.
//!
//! # Limits and errors
//!
//! A call's deadline is the request's `timeout` when positive (create, update, delete), else
//! the grant's `timeoutSeconds`, else [`DEFAULT_TIMEOUT`](crate::grants::DEFAULT_TIMEOUT).
//! Wasm code is interrupted by epoch interruption within one [`EPOCH_TICK`] of the deadline; a
//! guest blocked in a host call is abandoned by a watchdog shortly after. Only the guest's own
//! time counts: not the host's copying of the request in and of the result out (the clock
//! stops when the guest returns, so a large result lifted after it returned in time is kept),
//! nor time spent in the engine on the guest's behalf (`register-resource` during `construct`).
//!
//! Every trap, limit and sandbox violation becomes an error with a message that names the
//! provider (`name@version`), the method, the resource URN when there is one, and the
//! capability or limit, e.g.
//! `random@1.0.0 create urn:…: exceeded its 256 MiB memory limit (raise it under cairn:grants.random.memoryMiB)`.
//! An instance that dies (traps, overruns its deadline or memory, or is abandoned) during a
//! `create`, `update` or `delete` that is not a preview may have acted before it died, so that
//! error is `ProviderError::OutcomeUnknown` and the engine leaves the operation pending —
//! unless its sandbox grants nothing that reaches outside it ([`Sandbox::reaches_out`]: no
//! HTTP, no TCP, no writable directory), when it cannot have changed anything and the error is
//! a plain failure. Every other failure, and every error the guest returns, is
//! `ProviderError::Failed`.
//! A violation (an ungranted HTTP host, a socket) fails the call even when the guest handled
//! the refusal and returned normally — with partial state when the call was a `create` or
//! `update` that says it succeeded, so the resource is recorded. Errors the provider itself
//! returns pass through (cut to `limits::MAX_MESSAGE_BYTES`); a timeout it reports that is not
//! a duration (NaN, negative, absurd) becomes a failure saying so. What it returns is checked
//! by [`crate::convert`].
//!
//! [`EPOCH_TICK`]: crate::runtime::EPOCH_TICK

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::deploy::events::Severity;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::provider::{
    CallRequest, CallResult, CheckRequest, CheckResult, ConstructRequest, ConstructResult,
    CreateRequest, CreateResult, DeleteRequest, DiffRequest, DiffResult, InvokeRequest,
    InvokeResult, PartialState, Provider, ProviderError, ProviderOrigin, ReadRequest, ReadResult,
    UpdateRequest, UpdateResult,
};
use cairn_engine::limits;
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyMap;
use futures::future::BoxFuture;
use wasmtime::{Engine, Store, UpdateDeadline};

use crate::bindings::ProviderWorldPre;
use crate::bindings::cairn::deploy::types as w;
use crate::bindings::exports::cairn::deploy::provider::Guest;
use crate::convert::{self, ValueError};
use crate::grants::Sandbox;
use crate::log::{LogRecord, LogSink, LogSource};
use crate::manifest::Manifest;
use crate::runtime::lock;
use crate::state::{
    CallLimit, CallReport, Deadline, DeadlineExceeded, GuestBudget, InstanceState, LimitExceeded,
    LimitSource,
};

/// How long after its deadline a call blocked in a host call is abandoned.
const WATCHDOG_GRACE: Duration = Duration::from_millis(250);

/// Deadline of the advisory `cancel` call.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(1);

/// The longest deadline a request may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 86400);

/// A provider method, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    GetSchema,
    CheckConfig,
    DiffConfig,
    Configure,
    Check,
    Diff,
    Create,
    Read,
    Update,
    Delete,
    Construct,
    Invoke,
    Call,
    Cancel,
}

impl Method {
    /// The WIT name (`check-config`), used in error messages.
    pub fn wit_name(self) -> &'static str {
        match self {
            Method::GetSchema => "get-schema",
            Method::CheckConfig => "check-config",
            Method::DiffConfig => "diff-config",
            Method::Configure => "configure",
            Method::Check => "check",
            Method::Diff => "diff",
            Method::Create => "create",
            Method::Read => "read",
            Method::Update => "update",
            Method::Delete => "delete",
            Method::Construct => "construct",
            Method::Invoke => "invoke",
            Method::Call => "call",
            Method::Cancel => "cancel",
        }
    }

    /// The engine's name (`CheckConfig`), for `ProviderError::Unimplemented`.
    fn engine_name(self) -> &'static str {
        match self {
            Method::GetSchema => "GetSchema",
            Method::CheckConfig => "CheckConfig",
            Method::DiffConfig => "DiffConfig",
            Method::Configure => "Configure",
            Method::Check => "Check",
            Method::Diff => "Diff",
            Method::Create => "Create",
            Method::Read => "Read",
            Method::Update => "Update",
            Method::Delete => "Delete",
            Method::Construct => "Construct",
            Method::Invoke => "Invoke",
            Method::Call => "Call",
            Method::Cancel => "Cancel",
        }
    }
}

/// Counters of a provider's instance pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Instances created.
    pub created: u64,
    /// Times a recorded `configure` was replayed on a new instance.
    pub configure_replays: u64,
    /// Instances thrown away after a trap, a deadline or an abandoned call.
    pub discarded: u64,
    /// Instances retired because their linear memory grew too far ([`recycles`]).
    pub recycled: u64,
    /// Instances idle in the pool now.
    pub idle: usize,
    /// The most calls that were running at once.
    pub peak_busy: usize,
    /// Linear memory of the idle instances, in bytes.
    pub idle_memory_bytes: u64,
    /// The most linear memory all its instances held at once, in bytes: the provider's data.
    pub peak_memory_bytes: u64,
    /// Bytes of compiled machine code and data (shared by every instance): the provider's code.
    pub code_bytes: u64,
}

/// A provider backed by a wasm component. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct WasmProvider {
    inner: Arc<Shared>,
}

struct Shared {
    engine: Engine,
    pre: ProviderWorldPre<InstanceState>,
    manifest: Arc<Manifest>,
    sandbox: Arc<Sandbox>,
    log: LogSink,
    /// The log budget and HTTP connections all instances share.
    budget: Arc<GuestBudget>,
    pool_size: usize,
    pool: Mutex<Pool>,
    created: AtomicU64,
    replays: AtomicU64,
    discarded: AtomicU64,
    recycled: AtomicU64,
    busy: AtomicUsize,
    peak_busy: AtomicUsize,
}

impl Shared {
    fn code_bytes(&self) -> u64 {
        let image = self.pre.instance_pre().component().image_range();
        (image.end as usize).saturating_sub(image.start as usize) as u64
    }
}

/// What the provider cost, for whoever diagnoses memory (`CAIRN_LOG=cairn_wasm=info`; the
/// PostgreSQL bench reads it).
impl Drop for Shared {
    fn drop(&mut self) {
        const MIB: f64 = 1024.0 * 1024.0;
        tracing::info!(
            provider = %self.sandbox.provider,
            instances = self.created.load(Ordering::Relaxed),
            peak_busy = self.peak_busy.load(Ordering::Relaxed),
            peak_linear_memory_mib = format!("{:.1}", self.budget.peak_memory() as f64 / MIB),
            code_mib = format!("{:.1}", self.code_bytes() as f64 / MIB),
            "provider unloaded"
        );
    }
}

struct Pool {
    idle: Vec<Instance>,
    /// Bumped by every successful `configure`; instances of older generations are retired.
    generation: u64,
    config: Option<Arc<Configuration>>,
}

/// A recorded `configure` call.
struct Configuration {
    inputs: w::Value,
    preview: bool,
}

struct Instance {
    generation: u64,
    store: Store<InstanceState>,
    guest: Guest,
    /// Linear memory once instantiated and configured: what [`recycles`] measures growth from.
    baseline_memory: usize,
}

/// Growth of linear memory past `baseline` that retires an instance: as much again as it
/// started with, and at least 16 MiB (a Rust guest starts near 1 MiB, a Python one near 13).
const fn recycle_allowance(baseline: usize) -> usize {
    const FLOOR: usize = 16 << 20;
    if baseline > FLOOR { baseline } else { FLOOR }
}

/// Whether an instance holding `used` bytes of linear memory, having started with `baseline`,
/// is retired rather than pooled.
const fn recycles(baseline: usize, used: usize) -> bool {
    used > baseline.saturating_add(recycle_allowance(baseline))
}

/// Why a call did not produce a guest result; the instance is unusable afterwards.
pub(crate) struct Failure(pub(crate) String);

/// A store for one instance, with its memory limiter and epoch-deadline handling.
pub(crate) fn new_store(engine: &Engine, state: InstanceState) -> Store<InstanceState> {
    // What one call may pass to the host (strings and lists wasmtime copies out of the guest)
    // is bounded by the instance's memory limit: a guest cannot hold more than that, so more
    // would be the same bytes counted many times over (many list entries pointing at one
    // string), which would make the host allocate without bound.
    let fuel = state.limits.memory_limit();
    let mut store = Store::new(engine, state);
    store.set_hostcall_fuel(fuel);
    store.limiter(|s| &mut s.limits);
    store.call_hook(|mut ctx, hook| {
        ctx.data_mut().on_call_hook(hook);
        Ok(())
    });
    store.epoch_deadline_callback(|ctx| {
        if ctx.data().deadline.check_expired() {
            Err(wasmtime::Error::new(DeadlineExceeded))
        } else {
            Ok(UpdateDeadline::Yield(1))
        }
    });
    store
}

impl WasmProvider {
    pub(crate) fn new(
        engine: Engine,
        pre: ProviderWorldPre<InstanceState>,
        manifest: Arc<Manifest>,
        sandbox: Arc<Sandbox>,
        log: LogSink,
        pool_size: usize,
    ) -> WasmProvider {
        for missing in &sandbox.not_granted {
            log(LogRecord {
                provider: sandbox.provider.clone(),
                severity: Severity::Debug,
                urn: None,
                message: format!(
                    "requests {missing}, which {} does not grant; it is denied",
                    sandbox.grant_key
                ),
                source: LogSource::Sandbox,
            });
        }
        WasmProvider {
            inner: Arc::new(Shared {
                engine,
                pre,
                manifest,
                sandbox,
                log,
                budget: GuestBudget::new(),
                pool_size,
                pool: Mutex::new(Pool {
                    idle: Vec::new(),
                    generation: 0,
                    config: None,
                }),
                created: AtomicU64::new(0),
                replays: AtomicU64::new(0),
                discarded: AtomicU64::new(0),
                recycled: AtomicU64::new(0),
                busy: AtomicUsize::new(0),
                peak_busy: AtomicUsize::new(0),
            }),
        }
    }

    pub fn manifest(&self) -> &Manifest {
        &self.inner.manifest
    }

    /// What this provider may use.
    pub fn sandbox(&self) -> &Sandbox {
        &self.inner.sandbox
    }

    pub fn stats(&self) -> PoolStats {
        let pool = lock(&self.inner.pool);
        PoolStats {
            created: self.inner.created.load(Ordering::Relaxed),
            configure_replays: self.inner.replays.load(Ordering::Relaxed),
            discarded: self.inner.discarded.load(Ordering::Relaxed),
            recycled: self.inner.recycled.load(Ordering::Relaxed),
            idle: pool.idle.len(),
            peak_busy: self.inner.peak_busy.load(Ordering::Relaxed),
            idle_memory_bytes: pool
                .idle
                .iter()
                .map(|i| i.store.data().limits.memory_used() as u64)
                .sum(),
            peak_memory_bytes: self.inner.budget.peak_memory() as u64,
            code_bytes: self.inner.code_bytes(),
        }
    }

    /// Instantiates instances until `count` are idle (e.g. to warm the pool before a deployment).
    pub async fn prewarm(&self, count: usize) -> Result<(), ProviderError> {
        let mut fresh = Vec::new();
        while lock(&self.inner.pool).idle.len() + fresh.len() < count.min(self.inner.pool_size) {
            let (generation, config) = {
                let pool = lock(&self.inner.pool);
                (pool.generation, pool.config.clone())
            };
            fresh.push(
                self.create_instance(Method::Configure, None, generation, config)
                    .await?,
            );
        }
        for instance in fresh {
            self.release(instance);
        }
        Ok(())
    }

    fn context(&self, method: Method, urn: Option<&Urn>) -> String {
        match urn {
            Some(urn) => format!(
                "{} {} {urn}",
                self.inner.sandbox.provider,
                method.wit_name()
            ),
            None => format!("{} {}", self.inner.sandbox.provider, method.wit_name()),
        }
    }

    fn failed(&self, method: Method, urn: Option<&Urn>, what: &str) -> ProviderError {
        ProviderError::failed(format!("{}: {what}", self.context(method, urn)))
    }

    /// Takes an idle instance of the current generation, or creates one.
    async fn acquire(&self, method: Method, urn: Option<&Urn>) -> Result<Instance, ProviderError> {
        let (found, stale, generation, config) = {
            let mut pool = lock(&self.inner.pool);
            let mut stale = Vec::new();
            let mut found = None;
            while let Some(instance) = pool.idle.pop() {
                if instance.generation == pool.generation {
                    found = Some(instance);
                    break;
                }
                stale.push(instance);
            }
            (found, stale, pool.generation, pool.config.clone())
        };
        drop(stale);
        match found {
            Some(instance) => Ok(instance),
            None => self.create_instance(method, urn, generation, config).await,
        }
    }

    /// Instantiates a new instance and replays the recorded `configure`, if any.
    async fn create_instance(
        &self,
        method: Method,
        urn: Option<&Urn>,
        generation: u64,
        config: Option<Arc<Configuration>>,
    ) -> Result<Instance, ProviderError> {
        let shared = &self.inner;
        let state = InstanceState::new(&shared.sandbox, &shared.log, &shared.budget)
            .map_err(|e| self.failed(method, urn, &format!("setting up the sandbox: {e:#}")))?;
        let mut store = new_store(&shared.engine, state);
        let pre = shared.pre.clone();
        let world = guarded(
            &mut store,
            None,
            CallLimit::grant(shared.sandbox.timeout),
            None,
            &shared.sandbox,
            move |s| Box::pin(async move { pre.instantiate_async(s).await }),
        )
        .await
        .map_err(|Failure(why)| {
            self.failed(method, urn, &format!("instantiating the provider: {why}"))
        })?
        .0;
        shared.created.fetch_add(1, Ordering::Relaxed);
        let mut instance = Instance {
            generation,
            store,
            guest: world.cairn_deploy_provider().clone(),
            baseline_memory: 0,
        };
        if let Some(config) = config {
            shared.replays.fetch_add(1, Ordering::Relaxed);
            let guest = instance.guest.clone();
            let (result, report) = guarded(
                &mut instance.store,
                None,
                CallLimit::grant(shared.sandbox.timeout),
                None,
                &shared.sandbox,
                move |s| {
                    Box::pin(async move {
                        guest
                            .call_configure(s, &config.inputs, config.preview)
                            .await
                    })
                },
            )
            .await
            .map_err(|Failure(why)| {
                shared.discarded.fetch_add(1, Ordering::Relaxed);
                self.failed(
                    method,
                    urn,
                    &format!("replaying configure on a new instance: {why}"),
                )
            })?;
            if !report.violations.is_empty() {
                return Err(self.failed(
                    method,
                    urn,
                    &format!(
                        "replaying configure on a new instance: {}",
                        report.violations.join("; ")
                    ),
                ));
            }
            if let Err(e) = result {
                return Err(self.failed(
                    method,
                    urn,
                    &format!(
                        "replaying configure on a new instance: {}",
                        guest_error_text(&e)
                    ),
                ));
            }
        }
        instance.baseline_memory = instance.store.data().limits.memory_used();
        Ok(instance)
    }

    /// Returns an instance to the pool (if it is current, has not grown too far, and there is
    /// room).
    fn release(&self, instance: Instance) {
        let used = instance.store.data().limits.memory_used();
        if recycles(instance.baseline_memory, used) {
            self.inner.recycled.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                provider = %self.inner.sandbox.provider,
                baseline = instance.baseline_memory,
                used,
                "retiring an instance whose linear memory grew"
            );
            drop(instance);
            return;
        }
        let mut pool = lock(&self.inner.pool);
        if instance.generation == pool.generation && pool.idle.len() < self.inner.pool_size {
            pool.idle.push(instance);
            return;
        }
        drop(pool);
        drop(instance);
    }

    /// Runs one guest call on a pooled instance. `acts`: the call may change the world (a
    /// `create`, `update` or `delete` outside a preview), so an instance that dies during it
    /// leaves the outcome unknown.
    async fn run<R, F>(
        &self,
        method: Method,
        urn: Option<&Urn>,
        timeout: Option<Duration>,
        monitor: Option<Monitor>,
        acts: bool,
        f: F,
    ) -> Result<(R, Vec<String>), ProviderError>
    where
        R: Send,
        F: for<'a> FnOnce(
                Guest,
                &'a mut Store<InstanceState>,
            ) -> BoxFuture<'a, wasmtime::Result<R>>
            + Send,
    {
        let mut instance = self.acquire(method, urn).await?;
        let _busy = BusyGuard::new(&self.inner);
        let limit = match timeout {
            Some(limit) => CallLimit {
                limit,
                source: LimitSource::Request,
            },
            None => CallLimit::grant(self.inner.sandbox.timeout),
        };
        let guest = instance.guest.clone();
        let outcome = guarded(
            &mut instance.store,
            urn,
            limit,
            monitor,
            &self.inner.sandbox,
            move |s| f(guest, s),
        )
        .await;
        match outcome {
            Ok((result, report)) => {
                self.release(instance);
                Ok((result, report.violations))
            }
            Err(Failure(why)) if acts && self.inner.sandbox.reaches_out() => {
                self.inner.discarded.fetch_add(1, Ordering::Relaxed);
                drop(instance);
                // It may have acted before it died: the engine leaves the operation pending.
                Err(ProviderError::outcome_unknown(format!(
                    "{}: {why}",
                    self.context(method, urn)
                )))
            }
            Err(Failure(why)) if acts => {
                self.inner.discarded.fetch_add(1, Ordering::Relaxed);
                drop(instance);
                // Granted nothing that reaches outside its sandbox, it changed nothing before
                // it died: the operation failed, and nothing is left to resolve.
                Err(self.failed(
                    method,
                    urn,
                    &format!(
                        "{why} (it is granted nothing that reaches outside its sandbox, so it changed nothing)"
                    ),
                ))
            }
            Err(Failure(why)) => {
                self.inner.discarded.fetch_add(1, Ordering::Relaxed);
                drop(instance);
                Err(self.failed(method, urn, &why))
            }
        }
    }

    /// Turns a guest result into the engine's, applying violations and decoding values.
    fn finish<T, U>(
        &self,
        method: Method,
        urn: Option<&Urn>,
        (result, violations): (Result<T, w::ProviderError>, Vec<String>),
        convert: impl FnOnce(T) -> Result<U, ValueError>,
    ) -> Result<U, ProviderError> {
        self.finish_write(
            method,
            urn,
            (result, violations),
            |value| {
                convert(value).map_err(|error| convert::Unrecorded {
                    error,
                    partial: None,
                })
            },
            |_| None,
        )
    }

    /// [`Self::finish`] for operations that leave a resource behind (`create`, `update`): when
    /// the guest succeeded but the call fails anyway (a violation, a result that cannot be
    /// stored), the error carries the partial state the engine records, so the resource is
    /// tracked rather than lost.
    fn finish_write<T, U>(
        &self,
        method: Method,
        urn: Option<&Urn>,
        (result, violations): (Result<T, w::ProviderError>, Vec<String>),
        convert: impl FnOnce(T) -> Result<U, convert::Unrecorded>,
        partial_of: impl FnOnce(&U) -> Option<PartialState>,
    ) -> Result<U, ProviderError> {
        let mut what = violations.join("; ");
        let value = match result {
            Err(e) => {
                let error = self.guest_error(method, urn, e);
                if violations.is_empty() {
                    return Err(error);
                }
                what.push_str(&format!(" (the provider reported: {error})"));
                let partial = error.partial().cloned().map(Box::new);
                return Err(ProviderError::Failed {
                    message: format!("{}: {what}", self.context(method, urn)),
                    partial,
                });
            }
            Ok(value) => value,
        };
        let partial = match convert(value) {
            Ok(converted) if violations.is_empty() => return Ok(converted),
            Ok(converted) => partial_of(&converted).map(Box::new),
            Err(convert::Unrecorded { error, partial }) => {
                if !what.is_empty() {
                    what.push_str("; ");
                }
                what.push_str(&format!("rejected the provider's result: {error}"));
                partial
            }
        };
        if let Some(p) = &partial {
            what.push_str(&format!(
                " (the resource exists: it is recorded with ID {} and the outputs that could be kept)",
                convert::quoted(&p.id)
            ));
        }
        Err(ProviderError::Failed {
            message: format!("{}: {what}", self.context(method, urn)),
            partial,
        })
    }

    /// `check` or `check-config`.
    async fn checked(
        &self,
        m: Method,
        request: CheckRequest<'_>,
    ) -> Result<CheckResult, ProviderError> {
        let urn = Some(request.urn);
        let wire = convert::check_request(request);
        // The request comes back with the result, to recognise news returned unchanged.
        let ((result, wire), violations) = self
            .run(m, urn, None, None, false, move |g: Guest, s| {
                Box::pin(async move {
                    let result = match m {
                        Method::CheckConfig => g.call_check_config(s, &wire).await?,
                        _ => g.call_check(s, &wire).await?,
                    };
                    Ok((result, wire))
                })
            })
            .await?;
        let news = request.news;
        self.finish(m, urn, (result, violations), |r| {
            convert::check_result(r, &wire.news, news)
        })
    }

    fn guest_error(
        &self,
        method: Method,
        urn: Option<&Urn>,
        error: w::ProviderError,
    ) -> ProviderError {
        match error {
            w::ProviderError::Failed(f) => {
                let mut message = convert::message(f.message);
                let partial = match f.partial.map(convert::partial_state) {
                    None => None,
                    Some((partial, problem)) => {
                        if let Some(problem) = problem {
                            message.push_str(&format!(
                                " ({}: its partial state: {problem})",
                                self.context(method, urn)
                            ));
                        }
                        partial.map(Box::new)
                    }
                };
                ProviderError::Failed { message, partial }
            }
            w::ProviderError::Unimplemented(_) => ProviderError::Unimplemented {
                method: method.engine_name(),
            },
            w::ProviderError::Cancelled => ProviderError::Cancelled,
            w::ProviderError::Timeout(seconds) if valid_seconds(seconds) => {
                ProviderError::Timeout { seconds }
            }
            w::ProviderError::Timeout(seconds) => self.failed(
                method,
                urn,
                &format!(
                    "the provider reported a timeout of {seconds:?} s, which is not a duration (it timed out, or failed)"
                ),
            ),
        }
    }
}

/// Whether a duration a guest reports is one worth printing: positive, finite, at most
/// [`MAX_TIMEOUT`].
fn valid_seconds(seconds: f64) -> bool {
    seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT.as_secs_f64()
}

fn guest_error_text(e: &w::ProviderError) -> String {
    match e {
        w::ProviderError::Failed(f) => limits::cap_message(&f.message).into_owned(),
        w::ProviderError::Unimplemented(m) => {
            format!("{} is not implemented", convert::quoted(m))
        }
        w::ProviderError::Cancelled => "cancelled".into(),
        w::ProviderError::Timeout(s) if valid_seconds(*s) => format!("timed out after {s} s"),
        w::ProviderError::Timeout(s) => format!("timed out (reporting {s:?} s)"),
    }
}

/// A request's own deadline: positive and finite seconds, at most [`MAX_TIMEOUT`] (clamped
/// before converting: `Duration::from_secs_f64` panics on values too large for a `Duration`).
fn request_timeout(seconds: f64) -> Option<Duration> {
    (seconds > 0.0 && seconds.is_finite())
        .then(|| Duration::from_secs_f64(seconds.min(MAX_TIMEOUT.as_secs_f64())))
}

/// Counts running calls (and the peak), also when a call's future is dropped.
struct BusyGuard<'a>(&'a Shared);

impl<'a> BusyGuard<'a> {
    fn new(shared: &'a Shared) -> BusyGuard<'a> {
        let now = shared.busy.fetch_add(1, Ordering::SeqCst) + 1;
        shared.peak_busy.fetch_max(now, Ordering::SeqCst);
        BusyGuard(shared)
    }
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs `f` on `store` under the call's deadline and watchdog, returning its result and what
/// the call left behind, or a description of why it failed.
pub(crate) async fn guarded<R, F>(
    store: &mut Store<InstanceState>,
    urn: Option<&Urn>,
    limit: CallLimit,
    monitor: Option<Monitor>,
    sandbox: &Sandbox,
    f: F,
) -> Result<(R, CallReport), Failure>
where
    F: for<'a> FnOnce(&'a mut Store<InstanceState>) -> BoxFuture<'a, wasmtime::Result<R>>,
{
    store.data_mut().begin_call(urn, limit, monitor);
    let deadline = store.data().deadline.clone();
    // The epoch callback runs at most one tick after the current epoch.
    store.set_epoch_deadline(1);
    let outcome = {
        let call = f(store);
        tokio::select! {
            biased;
            result = call => Some(result),
            () = watchdog(&deadline) => None,
        }
    };
    let report = store.data_mut().end_call();
    match outcome {
        Some(Ok(result)) => Ok((result, report)),
        Some(Err(error)) => Err(Failure(describe_trap(
            &error,
            store.data(),
            &report,
            sandbox,
        ))),
        None => {
            let mut parts = report.violations.clone();
            parts.push(deadline_text(
                deadline.limit(),
                " while waiting in a host call",
                sandbox,
            ));
            Err(Failure(parts.join("; ")))
        }
    }
}

/// Resolves once the deadline has passed (plus grace) while not paused.
async fn watchdog(deadline: &Deadline) {
    loop {
        let next = deadline.next_check() + WATCHDOG_GRACE;
        tokio::time::sleep_until(next.into()).await;
        if deadline.overdue(WATCHDOG_GRACE) {
            return;
        }
    }
}

/// What wasmtime says when a guest passes more data to the host in one call than the store's
/// hostcall fuel allows (its error type is private, so it is recognised by its text).
const HOSTCALL_FUEL_EXHAUSTED: &str = "fuel allocated for hostcalls has been exhausted";

/// Describes why a call trapped, naming the limit or capability when the host knows it, and
/// the guest as what it is ("provider" or "program").
fn describe_trap(
    error: &wasmtime::Error,
    state: &InstanceState,
    report: &CallReport,
    sandbox: &Sandbox,
) -> String {
    let mut parts = report.violations.clone();
    let limit = state.deadline.limit();
    let guest = sandbox.kind();
    let full = format!("{error:#}");
    let cause = if state.limits.memory_exceeded
        || matches!(
            error.downcast_ref::<LimitExceeded>(),
            Some(LimitExceeded::Memory)
        ) {
        Some(format!(
            "exceeded its {} MiB memory limit (raise it under {}.memoryMiB)",
            sandbox.memory_mib(),
            sandbox.grant_key
        ))
    } else if state.limits.table_exceeded {
        Some(format!(
            "exceeded its table limit of {} elements (a fixed limit)",
            crate::state::TABLE_ELEMENTS_LIMIT
        ))
    } else if state.deadline.expired() || error.is::<DeadlineExceeded>() {
        Some(format!(
            "wasm trap: interrupted ({})",
            deadline_text(limit, "", sandbox)
        ))
    } else if full.contains(HOSTCALL_FUEL_EXHAUSTED) {
        Some(format!(
            "passed more than {} MiB to the host in one call (a {guest} may pass at most its memory limit in one call; raise it under {}.memoryMiB)",
            sandbox.memory_mib(),
            sandbox.grant_key
        ))
    } else if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        Some(format!("the {guest} exited with status {}", exit.0))
    } else if let Some(trap) = error.downcast_ref::<wasmtime::Trap>() {
        let text = match trap {
            wasmtime::Trap::StackOverflow => {
                "wasm trap: call stack exhausted (too deep recursion)".to_string()
            }
            wasmtime::Trap::UnreachableCodeReached => {
                format!(
                    "wasm trap: unreachable instruction executed (the {guest} panicked or aborted)"
                )
            }
            // Rust guests keep their stack in linear memory with no guard: overflowing it
            // runs below address 0.
            wasmtime::Trap::MemoryOutOfBounds => format!(
                "wasm trap: out of bounds memory access (the {guest}'s stack overflowed — too deep recursion — or it has a memory bug)"
            ),
            other => other.to_string(),
        };
        Some(text)
    } else {
        // Errors raised by host code on the guest's behalf (e.g. the output limit, which is
        // already a violation) or a lifting failure; the wasm backtrace wasmtime adds as
        // context names only function indices, so the cause is what is shown.
        let text = if error.downcast_ref::<wasmtime::WasmBacktrace>().is_some() {
            error.root_cause().to_string()
        } else {
            full
        };
        let text = limits::cap_message(&text).into_owned();
        (!parts.iter().any(|p| text.contains(p.as_str()))).then_some(text)
    };
    parts.extend(cause);
    let mut message = parts.join("; ");
    if !report.stderr_tail.is_empty() {
        let tail = last_chars(&report.stderr_tail, 600);
        message.push_str(&format!(" (stderr: {tail})"));
    }
    message
}

/// `deadline of 5 s exceeded{how}`, and the setting that raises it.
fn deadline_text(limit: CallLimit, how: &str, sandbox: &Sandbox) -> String {
    let what = format!("deadline of {} exceeded{how}", seconds(limit.limit));
    match limit.source {
        LimitSource::Grant => format!(
            "{what}; raise it under {}.timeoutSeconds",
            sandbox.grant_key
        ),
        LimitSource::Request => format!("{what}; it is set by the resource's customTimeouts"),
        LimitSource::Fixed => what,
    }
}

fn last_chars(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.replace('\n', " | ");
    }
    let tail: String = s.chars().skip(count - n).collect();
    format!("…{}", tail.replace('\n', " | "))
}

/// `5 s`, `0.5 s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{} s", s as u64)
    } else {
        format!("{s} s")
    }
}

macro_rules! guest_call {
    ($method:ident, $req:expr) => {{
        let req = $req;
        move |g: Guest, s: &mut Store<InstanceState>| -> BoxFuture<'_, wasmtime::Result<_>> {
            Box::pin(async move { g.$method(s, &req).await })
        }
    }};
}

#[async_trait]
impl Provider for WasmProvider {
    fn package(&self) -> &str {
        &self.inner.manifest.name
    }

    fn origin(&self) -> ProviderOrigin {
        ProviderOrigin::Sandboxed
    }

    fn version(&self) -> Option<semver::Version> {
        Some(self.inner.manifest.version.clone())
    }

    async fn get_schema(&self) -> Result<String, ProviderError> {
        let m = Method::GetSchema;
        let r = self
            .run(
                m,
                None,
                None,
                None,
                false,
                |g: Guest, s: &mut Store<InstanceState>| -> BoxFuture<'_, wasmtime::Result<_>> {
                    Box::pin(async move { g.call_get_schema(s).await })
                },
            )
            .await?;
        match self.finish(m, None, r, Ok) {
            Err(ProviderError::Unimplemented { .. }) if !self.inner.manifest.schema.is_null() => {
                Ok(self.inner.manifest.schema.to_string())
            }
            other => other,
        }
    }

    async fn check_config(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        self.checked(Method::CheckConfig, request).await
    }

    async fn diff_config(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        let (m, urn) = (Method::DiffConfig, Some(request.urn));
        let r = self
            .run(
                m,
                urn,
                None,
                None,
                false,
                guest_call!(call_diff_config, convert::diff_request(request)),
            )
            .await?;
        self.finish(m, urn, r, convert::diff_result)
    }

    async fn configure(&self, inputs: PropertyMap, preview: bool) -> Result<(), ProviderError> {
        let m = Method::Configure;
        let config = Arc::new(Configuration {
            inputs: convert::encode_map(&inputs),
            preview,
        });
        let mut instance = self.acquire(m, None).await?;
        let _busy = BusyGuard::new(&self.inner);
        let guest = instance.guest.clone();
        let recorded = config.clone();
        let outcome = guarded(
            &mut instance.store,
            None,
            CallLimit::grant(self.inner.sandbox.timeout),
            None,
            &self.inner.sandbox,
            move |s| {
                Box::pin(async move {
                    guest
                        .call_configure(s, &recorded.inputs, recorded.preview)
                        .await
                })
            },
        )
        .await;
        let (result, report) = match outcome {
            Ok(r) => r,
            Err(Failure(why)) => {
                self.inner.discarded.fetch_add(1, Ordering::Relaxed);
                return Err(self.failed(m, None, &why));
            }
        };
        let ok = result.is_ok() && report.violations.is_empty();
        if ok {
            // Record the configuration; instances configured before are retired.
            let stale = {
                let mut pool = lock(&self.inner.pool);
                pool.generation += 1;
                pool.config = Some(config);
                instance.generation = pool.generation;
                let stale = std::mem::take(&mut pool.idle);
                pool.idle.push(instance);
                stale
            };
            drop(stale);
        } else {
            self.release(instance);
        }
        self.finish(m, None, (result, report.violations), Ok)
    }

    async fn check(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        self.checked(Method::Check, request).await
    }

    async fn diff(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        let (m, urn) = (Method::Diff, Some(request.urn));
        let r = self
            .run(
                m,
                urn,
                None,
                None,
                false,
                guest_call!(call_diff, convert::diff_request(request)),
            )
            .await?;
        self.finish(m, urn, r, convert::diff_result)
    }

    async fn create(&self, request: CreateRequest) -> Result<CreateResult, ProviderError> {
        let (m, urn) = (Method::Create, Some(&request.urn));
        let timeout = request_timeout(request.timeout);
        let r = self
            .run(
                m,
                urn,
                timeout,
                None,
                !request.preview,
                guest_call!(call_create, convert::create_request(&request)),
            )
            .await?;
        let preview = request.preview;
        self.finish_write(
            m,
            urn,
            r,
            |r| convert::create_result(r, preview),
            |created| {
                (!preview).then(|| PartialState {
                    id: created.id.clone(),
                    outputs: created.outputs.clone(),
                    ..PartialState::default()
                })
            },
        )
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResult, ProviderError> {
        let m = Method::Read;
        let wire = convert::read_request(&request);
        // The request comes back with the result, to recognise tables returned unchanged.
        let ((result, wire), violations) = self
            .run(
                m,
                Some(&request.urn),
                None,
                None,
                false,
                move |g: Guest, s| {
                    Box::pin(async move { Ok((g.call_read(s, &wire).await?, wire)) })
                },
            )
            .await?;
        let urn = request.urn.clone();
        self.finish(m, Some(&urn), (result, violations), |r| {
            convert::read_result(r, &wire, request)
        })
    }

    async fn update(&self, request: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        let (m, urn) = (Method::Update, Some(&request.urn));
        let timeout = request_timeout(request.timeout);
        let r = self
            .run(
                m,
                urn,
                timeout,
                None,
                !request.preview,
                guest_call!(call_update, convert::update_request(&request)),
            )
            .await?;
        let (id, preview) = (request.id.as_str(), request.preview);
        self.finish_write(
            m,
            urn,
            r,
            |r| convert::update_result(r, id, preview),
            |updated| {
                (!preview).then(|| PartialState {
                    id: id.to_owned(),
                    outputs: updated.outputs.clone(),
                    ..PartialState::default()
                })
            },
        )
    }

    async fn delete(&self, request: DeleteRequest) -> Result<(), ProviderError> {
        let (m, urn) = (Method::Delete, Some(&request.urn));
        let timeout = request_timeout(request.timeout);
        let r = self
            .run(
                m,
                urn,
                timeout,
                None,
                true,
                guest_call!(call_delete, convert::delete_request(&request)),
            )
            .await?;
        self.finish(m, urn, r, Ok)
    }

    async fn construct(
        &self,
        request: ConstructRequest,
        monitor: Monitor,
    ) -> Result<ConstructResult, ProviderError> {
        let m = Method::Construct;
        let r = self
            .run(
                m,
                None,
                None,
                Some(monitor),
                false,
                guest_call!(call_construct, convert::construct_request(&request)),
            )
            .await
            .map_err(|e| with_subject(e, &request))?;
        self.finish(m, None, r, convert::construct_result)
            .map_err(|e| with_subject(e, &request))
    }

    async fn invoke(&self, request: InvokeRequest) -> Result<InvokeResult, ProviderError> {
        let m = Method::Invoke;
        let r = self
            .run(
                m,
                None,
                None,
                None,
                false,
                guest_call!(call_invoke, convert::invoke_request(&request)),
            )
            .await?;
        self.finish(m, None, r, convert::invoke_result)
    }

    async fn call(
        &self,
        request: CallRequest,
        monitor: Monitor,
    ) -> Result<CallResult, ProviderError> {
        let m = Method::Call;
        let r = self
            .run(
                m,
                None,
                None,
                Some(monitor),
                false,
                guest_call!(call_call, convert::call_request(&request)),
            )
            .await?;
        self.finish(m, None, r, convert::call_result)
    }

    /// Advisory: asks every idle instance to cancel (instances share no memory, so a call in
    /// progress on another instance is not reached; it is bounded by its deadline).
    async fn cancel(&self) {
        let idle = std::mem::take(&mut lock(&self.inner.pool).idle);
        for mut instance in idle {
            let guest = instance.guest.clone();
            let outcome = guarded(
                &mut instance.store,
                None,
                CallLimit {
                    limit: CANCEL_TIMEOUT,
                    source: LimitSource::Fixed,
                },
                None,
                &self.inner.sandbox,
                move |s| Box::pin(async move { guest.call_cancel(s).await }),
            )
            .await;
            match outcome {
                Ok(_) => self.release(instance),
                Err(Failure(why)) => {
                    self.inner.discarded.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(provider = %self.inner.sandbox.provider, "cancel failed: {why}");
                }
            }
        }
    }
}

/// Names the component being constructed in a construct error.
fn with_subject(e: ProviderError, request: &ConstructRequest) -> ProviderError {
    match e {
        ProviderError::Failed { message, partial } if message.contains(" construct: ") => {
            ProviderError::Failed {
                message: message.replacen(
                    " construct: ",
                    &format!(" construct {} {:?}: ", request.resource_type, request.name),
                    1,
                ),
                partial,
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeouts_never_panic() {
        for (seconds, expected) in [
            (0.0, None),
            (-1.0, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
            (0.5, Some(Duration::from_millis(500))),
            (1e300, Some(MAX_TIMEOUT)),
            (f64::MAX, Some(MAX_TIMEOUT)),
        ] {
            assert_eq!(request_timeout(seconds), expected, "{seconds}");
        }
    }
}
