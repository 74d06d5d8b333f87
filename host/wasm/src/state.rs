//! The per-instance store state and every host API a provider can import: `cairn:deploy/host`
//! and `engine`, WASI (filesystem, environment, clocks, random, stdio), `wasi:http` behind an
//! allow-list, and `wasi:sockets` limited to granted outbound TCP.
//!
//! # What the guest gets
//!
//! * **Filesystem**: only the directories of its [`Sandbox`], read-only unless both the
//!   manifest and the grant say `write`. Paths outside them do not exist for the guest (wasi-libc
//!   resolves paths against the preopens, so the host never sees the attempt).
//! * **Environment**: only the sandbox's variables; no arguments; stdin is empty.
//! * **Stdout / stderr**: captured per call and forwarded line by line to the log sink
//!   (stdout as info, stderr as warning), at most [`OUTPUT_LIMIT`] bytes per call: writing more
//!   traps the guest. The last bytes of stderr (a panic message) are quoted in trap errors.
//! * **Logs** (`host.log`): each message cut to `limits::MAX_MESSAGE_BYTES`; at most
//!   [`LOG_LIMIT`] per call. Everything a provider (all its instances) or a program logs —
//!   `host.log`, stdout and stderr lines — counts against [`DEPLOYMENT_LOG_LIMIT`] per
//!   deployment. Each record costs its length plus [`RECORD_OVERHEAD`], so a flood of empty
//!   messages is bounded too. What is over a limit is dropped, and a note at the end of the
//!   call says how many messages and bytes were dropped and which limit applied.
//! * **Sockets**: outbound TCP to granted destinations only, see [`crate::tcp`]: names are
//!   resolved by the host (and only names a grant could use), every connect is checked on its
//!   address, at most [`crate::tcp::MAX_TCP_SOCKETS`] sockets are open at once; binding,
//!   listening and UDP are refused. Without a `tcp` grant, creating a TCP socket or resolving a
//!   name fails with `access-denied`. Refusals are recorded as violations.
//! * **HTTP** (`wasi:http/outgoing-handler`): see [`crate::http`]: allow-listed hosts only,
//!   resolved once, every address checked (unless the exact host is granted), the connection
//!   made to exactly a checked address; refusals are recorded as violations.
//! * **Clocks and randomness**: the host's.
//! * **Memory**: at most the sandbox's limit across the instance's memories; growing beyond it
//!   traps. Tables are limited to [`TABLE_ELEMENTS_LIMIT`] elements.
//!
//! A recorded violation fails the call even if the guest carried on (see [`crate::provider`]).

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cairn_engine::deploy::events::Severity;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::urn::Urn;
use wasmtime::component::{HasData, HasSelf, Linker, Resource, ResourceTable};
use wasmtime::{Engine, ResourceLimiter};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode, IpAddress, Network};
use wasmtime_wasi::p2::bindings::sockets::{ip_name_lookup, tcp_create_socket, udp_create_socket};
use wasmtime_wasi::p2::{OutputStream, Pollable, SocketError, StreamError, TcpSocket, UdpSocket};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::bindings::ProviderWorld;
use crate::bindings::cairn::deploy::{engine as wit_engine, host as wit_host, types as wit_types};
use crate::convert;
use crate::grants::Sandbox;
use crate::log::{LogRecord, LogSink, LogSource};
use crate::program::ProgramSession;
use crate::program_bindings::ProgramWorld;
use crate::tcp::{MAX_TCP_SOCKETS, TcpGuard};

/// Bytes a guest may write to stdout and to stderr in one call.
pub const OUTPUT_LIMIT: usize = 1024 * 1024;

/// Elements a guest table may hold.
pub const TABLE_ELEMENTS_LIMIT: usize = 1_000_000;

/// How much of the end of stderr a trap error quotes.
const STDERR_TAIL: usize = 2048;

/// Violations recorded (and reported) per call; more are only counted.
pub const MAX_VIOLATIONS: usize = 16;

/// A line longer than this is logged in pieces.
const MAX_LINE: usize = 16 * 1024;

/// Bytes of `host.log` messages a guest may log in one call (each message counts its length
/// plus [`RECORD_OVERHEAD`]); more are dropped and counted.
pub const LOG_LIMIT: usize = 1024 * 1024;

/// Bytes of log records (`host.log`, stdout and stderr lines) one provider — all its
/// instances — or one program run may produce; more are dropped and counted.
pub const DEPLOYMENT_LOG_LIMIT: usize = 16 * 1024 * 1024;

/// What a log record costs beyond its text.
pub const RECORD_OVERHEAD: usize = 64;

/// What one provider (shared by all its instances) or one program run may still use: its log
/// budget and its open HTTP connections; and the linear memory its instances hold.
pub(crate) struct GuestBudget {
    logged: AtomicUsize,
    pub connections: Arc<tokio::sync::Semaphore>,
    /// Bytes of linear memory all live instances hold now, and the most they ever held at once
    /// (what the provider's own data costs the host, beside its compiled code).
    memory_now: AtomicUsize,
    memory_peak: AtomicUsize,
}

impl GuestBudget {
    pub fn new() -> Arc<GuestBudget> {
        Arc::new(GuestBudget {
            logged: AtomicUsize::new(0),
            connections: Arc::new(tokio::sync::Semaphore::new(crate::http::MAX_CONNECTIONS)),
            memory_now: AtomicUsize::new(0),
            memory_peak: AtomicUsize::new(0),
        })
    }

    /// The most linear memory all instances held at once, in bytes.
    pub fn peak_memory(&self) -> usize {
        self.memory_peak.load(Ordering::Relaxed)
    }

    fn memory_grown(&self, by: usize) {
        let now = self.memory_now.fetch_add(by, Ordering::Relaxed) + by;
        self.memory_peak.fetch_max(now, Ordering::Relaxed);
    }

    fn memory_released(&self, bytes: usize) {
        self.memory_now.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Takes `cost` bytes of the deployment's log budget, if they are left.
    fn take_log(&self, cost: usize) -> bool {
        self.logged
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(cost)
                    .filter(|total| *total <= DEPLOYMENT_LOG_LIMIT)
            })
            .is_ok()
    }
}

/// Builds the linker every provider is instantiated with.
pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<InstanceState>> {
    let mut linker = sandboxed_linker(engine)?;
    ProviderWorld::add_to_linker::<InstanceState, HasSelf<InstanceState>>(&mut linker, |s| s)?;
    Ok(linker)
}

/// Builds the linker every program is instantiated with.
pub(crate) fn program_linker(engine: &Engine) -> wasmtime::Result<Linker<InstanceState>> {
    let mut linker = sandboxed_linker(engine)?;
    ProgramWorld::add_to_linker::<InstanceState, HasSelf<InstanceState>>(&mut linker, |s| s)?;
    Ok(linker)
}

/// Builds the linker every policy pack is instantiated with.
pub(crate) fn policy_linker(engine: &Engine) -> wasmtime::Result<Linker<InstanceState>> {
    let mut linker = sandboxed_linker(engine)?;
    crate::policy_bindings::PolicyWorld::add_to_linker::<InstanceState, HasSelf<InstanceState>>(
        &mut linker,
        |s| s,
    )?;
    Ok(linker)
}

/// WASI and wasi:http for any guest, with sockets limited to what [`crate::tcp`] allows.
fn sandboxed_linker(engine: &Engine) -> wasmtime::Result<Linker<InstanceState>> {
    let mut linker = Linker::<InstanceState>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    // Replace socket creation and name lookup with the sandbox's: a cap on TCP sockets, no UDP,
    // and name lookup by the host for granted names only.
    linker.allow_shadowing(true);
    tcp_create_socket::add_to_linker::<InstanceState, GuardedSockets>(&mut linker, |s| Sockets(s))?;
    udp_create_socket::add_to_linker::<InstanceState, GuardedSockets>(&mut linker, |s| Sockets(s))?;
    ip_name_lookup::add_to_linker::<InstanceState, GuardedSockets>(&mut linker, |s| Sockets(s))?;
    linker.allow_shadowing(false);
    Ok(linker)
}

/// Who the instance is and where its messages go; shared with the stdio streams and HTTP hooks.
pub(crate) struct CallShared {
    /// `name@version`.
    pub provider: Arc<str>,
    /// Where the user grants capabilities (`cairn:grants.<package>`, `cairn:program`).
    pub grant_key: Arc<str>,
    pub log: LogSink,
    pub budget: Arc<GuestBudget>,
    pub call: Mutex<CallInfo>,
}

/// What happened during the current call.
#[derive(Default)]
pub(crate) struct CallInfo {
    pub urn: Option<Urn>,
    pub violations: Vec<String>,
    /// Violations beyond [`MAX_VIOLATIONS`], counted only.
    more_violations: usize,
    pub stdout: Capture,
    pub stderr: Capture,
    /// Bytes of `host.log` messages logged in this call (with their overhead).
    logged: usize,
    /// Records dropped over the per-call `host.log` limit, and over the deployment's.
    dropped_in_call: Dropped,
    dropped_in_deployment: Dropped,
}

/// Log records dropped over a limit.
#[derive(Default, Clone, Copy)]
struct Dropped {
    records: usize,
    bytes: usize,
}

impl Dropped {
    fn add(&mut self, bytes: usize) {
        self.records += 1;
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

/// Which limits a log record counts against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Budget {
    /// `host.log`: the call's and the deployment's.
    CallAndDeployment,
    /// Stdout / stderr lines (bounded per call by [`OUTPUT_LIMIT`]): the deployment's.
    Deployment,
}

/// Output captured from one stream in the current call.
#[derive(Default)]
pub(crate) struct Capture {
    total: usize,
    line: Vec<u8>,
    tail: VecDeque<u8>,
}

impl CallShared {
    /// Records a violation. A guest that repeats one in a loop (a socket per iteration, say)
    /// gets the first [`MAX_VIOLATIONS`] recorded and the rest counted.
    pub fn violation(&self, message: String) {
        let mut call = crate::runtime::lock(&self.call);
        if call.violations.len() < MAX_VIOLATIONS {
            tracing::warn!(provider = %self.provider, "{message}");
            call.violations.push(message);
        } else {
            call.more_violations += 1;
        }
    }

    /// Whether a record of `len` bytes fits the call's and the deployment's log limits;
    /// counts it as dropped when not.
    fn admit(&self, call: &mut CallInfo, len: usize, budget: Budget) -> bool {
        let cost = len.saturating_add(RECORD_OVERHEAD);
        if budget == Budget::CallAndDeployment {
            if call.logged.saturating_add(cost) > LOG_LIMIT {
                call.dropped_in_call.add(len);
                return false;
            }
            call.logged += cost;
        }
        if !self.budget.take_log(cost) {
            call.dropped_in_deployment.add(len);
            return false;
        }
        true
    }

    /// A `host.log` message: cut to `MAX_MESSAGE_BYTES`, logged if within the limits.
    fn log(&self, severity: Severity, urn: Option<Urn>, message: String) {
        let message = crate::convert::message(message);
        let urn = {
            let mut call = crate::runtime::lock(&self.call);
            if !self.admit(&mut call, message.len(), Budget::CallAndDeployment) {
                return;
            }
            urn.or_else(|| call.urn.clone())
        };
        self.emit(severity, LogSource::Host, urn, message);
    }

    fn emit(&self, severity: Severity, source: LogSource, urn: Option<Urn>, message: String) {
        (self.log)(LogRecord {
            provider: self.provider.to_string(),
            severity,
            urn,
            message,
            source,
        });
    }

    /// Appends guest output, logging complete lines. Errors when the call's limit is exceeded.
    fn write(&self, stderr: bool, bytes: &[u8]) -> Result<(), String> {
        let mut lines = Vec::new();
        let (urn, over) = {
            let mut call = crate::runtime::lock(&self.call);
            let urn = call.urn.clone();
            let capture = if stderr {
                &mut call.stderr
            } else {
                &mut call.stdout
            };
            capture.total = capture.total.saturating_add(bytes.len());
            let over = capture.total > OUTPUT_LIMIT;
            if !over {
                for &b in bytes {
                    if stderr {
                        if capture.tail.len() == STDERR_TAIL {
                            capture.tail.pop_front();
                        }
                        capture.tail.push_back(b);
                    }
                    if b == b'\n' || capture.line.len() >= MAX_LINE {
                        if b != b'\n' {
                            capture.line.push(b);
                        }
                        lines.push(std::mem::take(&mut capture.line));
                    } else {
                        capture.line.push(b);
                    }
                }
            }
            lines.retain(|line| self.admit(&mut call, line.len(), Budget::Deployment));
            (urn, over)
        };
        let (severity, source) = stream_kind(stderr);
        for line in lines {
            self.emit(
                severity,
                source,
                urn.clone(),
                String::from_utf8_lossy(&line)
                    .trim_end_matches('\r')
                    .to_owned(),
            );
        }
        if over {
            let name = if stderr { "stderr" } else { "stdout" };
            let message = format!(
                "wrote more than {} MiB to {name} in one call (a fixed limit on output per call)",
                OUTPUT_LIMIT / (1024 * 1024)
            );
            self.violation(message.clone());
            return Err(message);
        }
        Ok(())
    }

    /// Logs unterminated output and what was dropped, and resets the call's record; returns it.
    pub fn finish_call(&self) -> CallReport {
        let mut info = std::mem::take(&mut *crate::runtime::lock(&self.call));
        for stderr in [false, true] {
            let line = if stderr {
                std::mem::take(&mut info.stderr.line)
            } else {
                std::mem::take(&mut info.stdout.line)
            };
            if !line.is_empty() && self.admit(&mut info, line.len(), Budget::Deployment) {
                let (severity, source) = stream_kind(stderr);
                self.emit(
                    severity,
                    source,
                    info.urn.clone(),
                    String::from_utf8_lossy(&line).into_owned(),
                );
            }
        }
        for (dropped, limit) in [
            (
                info.dropped_in_call,
                format!(
                    "a call may log at most {} MiB through host.log",
                    LOG_LIMIT >> 20
                ),
            ),
            (
                info.dropped_in_deployment,
                format!(
                    "at most {} MiB of log output is kept per deployment",
                    DEPLOYMENT_LOG_LIMIT >> 20
                ),
            ),
        ] {
            if dropped.records > 0 {
                self.emit(
                    Severity::Warning,
                    LogSource::Sandbox,
                    info.urn.clone(),
                    format!(
                        "{} log messages ({} bytes) were dropped: {limit} (a fixed limit)",
                        dropped.records, dropped.bytes
                    ),
                );
            }
        }
        let tail: Vec<u8> = info.stderr.tail.iter().copied().collect();
        CallReport {
            violations: {
                let mut violations = info.violations;
                if info.more_violations > 0 {
                    violations.push(format!("… and {} more violations", info.more_violations));
                }
                violations
            },
            stderr_tail: String::from_utf8_lossy(&tail).trim().to_owned(),
        }
    }
}

fn stream_kind(stderr: bool) -> (Severity, LogSource) {
    if stderr {
        (Severity::Warning, LogSource::Stderr)
    } else {
        (Severity::Info, LogSource::Stdout)
    }
}

/// What a finished call left behind.
#[derive(Debug, Default)]
pub(crate) struct CallReport {
    pub violations: Vec<String>,
    pub stderr_tail: String,
}

/// A call's time limit and where it comes from, for the message when it is exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallLimit {
    pub limit: Duration,
    pub source: LimitSource,
}

/// Which setting a call's time limit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimitSource {
    /// The grant's `timeoutSeconds` (or its default).
    Grant,
    /// The request's own timeout (the resource's `customTimeouts`).
    Request,
    /// A fixed limit of the host (the advisory `cancel`).
    Fixed,
}

impl CallLimit {
    pub fn grant(limit: Duration) -> CallLimit {
        CallLimit {
            limit,
            source: LimitSource::Grant,
        }
    }
}

/// A call's deadline, shared between the store's epoch callback and the host-side watchdog.
/// It counts the guest's own time only: it is paused while no guest code is running (the host
/// copying the request in and the result out, see [`InstanceState::on_call_hook`]) and while the
/// guest waits for the engine (`register-resource` in `construct`).
pub(crate) struct Deadline {
    inner: Mutex<DeadlineState>,
}

struct DeadlineState {
    limit: CallLimit,
    at: Instant,
    paused: u32,
    expired: bool,
}

impl Deadline {
    fn new() -> Deadline {
        Deadline {
            inner: Mutex::new(DeadlineState {
                limit: CallLimit {
                    limit: Duration::MAX,
                    source: LimitSource::Fixed,
                },
                at: far_future(),
                paused: 0,
                expired: false,
            }),
        }
    }

    pub fn start(&self, limit: CallLimit) {
        let mut d = crate::runtime::lock(&self.inner);
        d.limit = limit;
        d.at = Instant::now()
            .checked_add(limit.limit)
            .unwrap_or_else(far_future);
        d.paused = 0;
        d.expired = false;
    }

    pub fn limit(&self) -> CallLimit {
        crate::runtime::lock(&self.inner).limit
    }

    /// True (and remembered) once the deadline has passed while not paused.
    pub fn check_expired(&self) -> bool {
        let mut d = crate::runtime::lock(&self.inner);
        if d.paused == 0 && Instant::now() >= d.at {
            d.expired = true;
        }
        d.expired
    }

    /// True (and remembered) once `grace` has passed beyond the deadline while not paused.
    pub fn overdue(&self, grace: Duration) -> bool {
        let mut d = crate::runtime::lock(&self.inner);
        if d.paused == 0 && Instant::now() >= d.at + grace {
            d.expired = true;
        }
        d.expired && d.paused == 0 && Instant::now() >= d.at + grace
    }

    pub fn expired(&self) -> bool {
        crate::runtime::lock(&self.inner).expired
    }

    pub(crate) fn pause(&self) -> Instant {
        let mut d = crate::runtime::lock(&self.inner);
        d.paused += 1;
        Instant::now()
    }

    pub(crate) fn resume(&self, paused_at: Instant) {
        let mut d = crate::runtime::lock(&self.inner);
        d.paused = d.paused.saturating_sub(1);
        d.at =
            d.at.checked_add(paused_at.elapsed())
                .unwrap_or_else(far_future);
    }

    /// When the watchdog should look again.
    pub fn next_check(&self) -> Instant {
        let d = crate::runtime::lock(&self.inner);
        if d.paused > 0 {
            Instant::now() + Duration::from_millis(250)
        } else {
            d.at
        }
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(100 * 365 * 86400)
}

/// The error an expired deadline traps with.
#[derive(Debug, thiserror::Error)]
#[error("deadline exceeded")]
pub(crate) struct DeadlineExceeded;

/// The error the limiter traps with.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LimitExceeded {
    #[error("memory limit exceeded")]
    Memory,
    #[error("table limit exceeded")]
    Table,
}

/// Memory and table limits of one instance.
pub(crate) struct Limits {
    memory_limit: usize,
    memory_used: usize,
    pub memory_exceeded: bool,
    pub table_exceeded: bool,
    /// Where the instance's memory is counted with its siblings'.
    budget: Arc<GuestBudget>,
}

impl Drop for Limits {
    fn drop(&mut self) {
        self.budget.memory_released(self.memory_used);
    }
}

impl Limits {
    /// Bytes of linear memory in use.
    pub fn memory_used(&self) -> usize {
        self.memory_used
    }

    /// Bytes of linear memory the instance may use.
    pub fn memory_limit(&self) -> usize {
        self.memory_limit
    }
}

impl ResourceLimiter for Limits {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let used = self
            .memory_used
            .saturating_sub(current)
            .saturating_add(desired);
        if used > self.memory_limit {
            self.memory_exceeded = true;
            return Err(wasmtime::Error::new(LimitExceeded::Memory));
        }
        // Memories only grow; `desired > current`.
        self.budget.memory_grown(desired.saturating_sub(current));
        self.memory_used = used;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > TABLE_ELEMENTS_LIMIT {
            self.table_exceeded = true;
            return Err(wasmtime::Error::new(LimitExceeded::Table));
        }
        Ok(true)
    }
}

/// The data of one instance's store.
pub struct InstanceState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
    hooks: crate::http::HttpGuard,
    tcp: Arc<TcpGuard>,
    /// Table indices of the TCP sockets the guest created (some may have been dropped since).
    tcp_sockets: Vec<u32>,
    pub(crate) limits: Limits,
    pub(crate) shared: Arc<CallShared>,
    pub(crate) deadline: Arc<Deadline>,
    /// The monitor of the `construct` / `call` in progress.
    pub(crate) monitor: Option<Monitor>,
    /// A program's requests in flight (program instances only).
    pub(crate) program: Option<ProgramSession>,
    /// Guest frames on the stack (wasm entered from the host and not yet returned).
    wasm_depth: u32,
    /// When the deadline was paused because no guest code was running.
    host_since: Option<Instant>,
}

impl InstanceState {
    /// The state of a new instance of a provider or program running in `sandbox`, sharing
    /// `budget` with the other instances of the same provider (or program run).
    pub(crate) fn new(
        sandbox: &Arc<Sandbox>,
        log: &LogSink,
        budget: &Arc<GuestBudget>,
    ) -> wasmtime::Result<InstanceState> {
        let shared = Arc::new(CallShared {
            provider: sandbox.provider.as_str().into(),
            grant_key: sandbox.grant_key.as_str().into(),
            log: log.clone(),
            budget: budget.clone(),
            call: Mutex::new(CallInfo::default()),
        });
        let tcp = Arc::new(TcpGuard::new(
            sandbox.tcp.clone(),
            shared.clone(),
            sandbox.is_program(),
        ));
        let mut builder = WasiCtxBuilder::new();
        if tcp.policy.enabled() {
            let check = tcp.clone();
            builder
                .allow_tcp(true)
                .socket_addr_check(move |addr, use_| {
                    let allowed = check.check(addr, use_);
                    Box::pin(async move { allowed })
                });
        }
        builder
            .stdout(GuestOutput {
                shared: shared.clone(),
                stderr: false,
            })
            .stderr(GuestOutput {
                shared: shared.clone(),
                stderr: true,
            });
        for (name, value) in &sandbox.env {
            builder.env(name, value);
        }
        for dir in &sandbox.directories {
            let perms = if dir.write {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            builder
                .preopened_dir(&dir.host, &dir.guest, perms)
                .map_err(|e| {
                    e.context(format!(
                        "opening granted directory {} for {}",
                        dir.host.display(),
                        dir.guest
                    ))
                })?;
        }
        Ok(InstanceState {
            wasi: builder.build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            hooks: crate::http::HttpGuard {
                sandbox: sandbox.clone(),
                shared: shared.clone(),
                budget: budget.clone(),
            },
            tcp,
            tcp_sockets: Vec::new(),
            limits: Limits {
                memory_limit: usize::try_from(sandbox.memory_bytes).unwrap_or(usize::MAX),
                memory_used: 0,
                memory_exceeded: false,
                table_exceeded: false,
                budget: budget.clone(),
            },
            shared,
            deadline: Arc::new(Deadline::new()),
            monitor: None,
            program: None,
            wasm_depth: 0,
            host_since: None,
        })
    }

    /// Marks the start of a call.
    pub(crate) fn begin_call(
        &mut self,
        urn: Option<&Urn>,
        limit: CallLimit,
        monitor: Option<Monitor>,
    ) {
        crate::runtime::lock(&self.shared.call).urn = urn.cloned();
        self.deadline.start(limit);
        // The clock starts when the guest does: lowering the request is the host's work.
        self.wasm_depth = 0;
        self.host_since = Some(self.deadline.pause());
        self.monitor = monitor;
    }

    /// Stops the deadline's clock whenever no guest code is on the stack and restarts it when
    /// the guest is entered again, so that the host's copying of a request into the guest and
    /// of its result out of it (a 250 MB result takes a while) never counts against the
    /// guest's time: a guest that returned in time is not reported as having overrun, and its
    /// result is kept. (What the host copies is bounded by the store's hostcall fuel.)
    pub(crate) fn on_call_hook(&mut self, hook: wasmtime::CallHook) {
        match hook {
            wasmtime::CallHook::CallingWasm => {
                if self.wasm_depth == 0
                    && let Some(since) = self.host_since.take()
                {
                    self.deadline.resume(since);
                }
                self.wasm_depth = self.wasm_depth.saturating_add(1);
            }
            wasmtime::CallHook::ReturningFromWasm => {
                self.wasm_depth = self.wasm_depth.saturating_sub(1);
                if self.wasm_depth == 0 && self.host_since.is_none() {
                    self.host_since = Some(self.deadline.pause());
                }
            }
            // Host functions the guest calls run on its behalf and count.
            wasmtime::CallHook::CallingHost | wasmtime::CallHook::ReturningFromHost => {}
        }
    }

    /// Marks the end of a call and returns what it left behind.
    pub(crate) fn end_call(&mut self) -> CallReport {
        self.monitor = None;
        self.shared.finish_call()
    }
}

impl WasiView for InstanceState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for InstanceState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.hooks,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// cairn:deploy/host and engine.

impl wit_types::Host for InstanceState {}

impl wit_host::Host for InstanceState {
    async fn log(
        &mut self,
        severity: wit_host::Severity,
        urn: Option<String>,
        message: String,
    ) -> wasmtime::Result<()> {
        let severity = match severity {
            wit_host::Severity::Debug => Severity::Debug,
            wit_host::Severity::Info => Severity::Info,
            wit_host::Severity::Warning => Severity::Warning,
            wit_host::Severity::Error => Severity::Error,
        };
        // A URN the guest got wrong is kept in the message rather than dropped.
        let (urn, message) = match urn.as_deref().map(Urn::parse) {
            None => (None, message),
            Some(Ok(urn)) => (Some(urn), message),
            Some(Err(_)) => (
                None,
                format!(
                    "[{}] {message}",
                    crate::convert::quoted(urn.as_deref().unwrap_or_default())
                ),
            ),
        };
        self.shared.log(severity, urn, message);
        Ok(())
    }
}

impl wit_engine::Host for InstanceState {
    async fn register_resource(
        &mut self,
        request: wit_engine::RegisterResourceRequest,
    ) -> wasmtime::Result<Result<wit_engine::RegisterResourceResponse, String>> {
        let Some(monitor) = self.monitor.clone() else {
            return Ok(Err(
                "engine.register-resource is only available during construct and call".into(),
            ));
        };
        let request = match convert::register_resource_request(request) {
            Ok(r) => r,
            Err(e) => return Ok(Err(format!("invalid register-resource request: {e}"))),
        };
        let paused = self.deadline.pause();
        let result = monitor.register_resource(request).await;
        self.deadline.resume(paused);
        Ok(result
            .map(convert::register_resource_response)
            .map_err(|e| e.to_string()))
    }

    async fn register_resource_outputs(
        &mut self,
        urn: String,
        outputs: wit_types::Value,
    ) -> wasmtime::Result<Result<(), String>> {
        let Some(monitor) = self.monitor.clone() else {
            return Ok(Err(
                "engine.register-resource-outputs is only available during construct and call"
                    .into(),
            ));
        };
        let urn = match convert::result_urn("urn", &urn) {
            Ok(urn) => urn,
            Err(e) => return Ok(Err(e.to_string())),
        };
        let outputs = match convert::decode_map(outputs) {
            Ok(o) => o,
            Err(e) => return Ok(Err(format!("outputs: {e}"))),
        };
        Ok(monitor
            .register_resource_outputs(&urn, outputs)
            .map_err(|e| e.to_string()))
    }
}

// ---------------------------------------------------------------------------------------------
// Stdio capture.

struct GuestOutput {
    shared: Arc<CallShared>,
    stderr: bool,
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(GuestOutput {
            shared: self.shared.clone(),
            stderr: self.stderr,
        })
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(GuestOutput {
            shared: self.shared.clone(),
            stderr: self.stderr,
        })
    }
}

impl OutputStream for GuestOutput {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.shared
            .write(self.stderr, &bytes)
            .map_err(|message| StreamError::Trap(wasmtime::Error::msg(message)))
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for GuestOutput {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for GuestOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(
            self.shared
                .write(self.stderr, buf)
                .map(|()| buf.len())
                .map_err(std::io::Error::other),
        )
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

// ---------------------------------------------------------------------------------------------
// Sockets: outbound TCP as granted (crate::tcp), name lookup by the host, no UDP.

struct GuardedSockets;

impl HasData for GuardedSockets {
    type Data<'a> = Sockets<'a>;
}

struct Sockets<'a>(&'a mut InstanceState);

impl Sockets<'_> {
    /// Records the refusal of `what` when TCP is not granted at all.
    fn deny(&mut self, what: &str) -> SocketError {
        let grant_key = &self.0.shared.grant_key;
        let how = if self.0.tcp.program || !self.0.tcp.policy.requested.is_empty() {
            format!("grant destinations under {grant_key}.tcp")
        } else {
            "the provider's manifest requests no TCP destinations under capabilities.tcp".into()
        };
        self.0.shared.violation(format!(
            "{what} is not granted ({how}; outbound HTTP goes through wasi:http and {grant_key}.http)"
        ));
        ErrorCode::AccessDenied.into()
    }

    fn view(&mut self) -> wasmtime_wasi::sockets::WasiSocketsCtxView<'_> {
        wasmtime_wasi::sockets::WasiSocketsView::sockets(self.0)
    }
}

impl network::Host for Sockets<'_> {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        network::Host::convert_error_code(&mut self.view(), error)
    }

    fn network_error_code(
        &mut self,
        err: Resource<wasmtime_wasi::p2::bindings::io::error::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        network::Host::network_error_code(&mut self.view(), err)
    }
}

impl network::HostNetwork for Sockets<'_> {
    fn drop(&mut self, this: Resource<Network>) -> wasmtime::Result<()> {
        network::HostNetwork::drop(&mut self.view(), this)
    }
}

impl tcp_create_socket::Host for Sockets<'_> {
    fn create_tcp_socket(
        &mut self,
        family: wasmtime_wasi::p2::bindings::sockets::network::IpAddressFamily,
    ) -> Result<Resource<TcpSocket>, SocketError> {
        if !self.0.tcp.policy.enabled() {
            return Err(self.deny("opening a TCP socket"));
        }
        // Forget sockets the guest has dropped: a slot that now holds anything but a TCP
        // socket was freed (one reused by a new TCP socket is a live socket, counted once).
        let table = &self.0.table;
        self.0
            .tcp_sockets
            .retain(|rep| table.get(&Resource::<TcpSocket>::new_borrow(*rep)).is_ok());
        if self.0.tcp_sockets.len() >= MAX_TCP_SOCKETS {
            self.0.shared.violation(format!(
                "opening more than {MAX_TCP_SOCKETS} TCP sockets at once is refused (a fixed limit per instance)"
            ));
            return Err(ErrorCode::NewSocketLimit.into());
        }
        let socket = tcp_create_socket::Host::create_tcp_socket(&mut self.view(), family)?;
        if !self.0.tcp_sockets.contains(&socket.rep()) {
            self.0.tcp_sockets.push(socket.rep());
        }
        Ok(socket)
    }
}

impl udp_create_socket::Host for Sockets<'_> {
    async fn create_udp_socket(
        &mut self,
        _family: wasmtime_wasi::p2::bindings::sockets::network::IpAddressFamily,
    ) -> Result<Resource<UdpSocket>, SocketError> {
        let grant_key = &self.0.shared.grant_key;
        self.0.shared.violation(format!(
            "opening a UDP socket is not granted (guests get outbound TCP only, under {grant_key}.tcp)"
        ));
        Err(ErrorCode::AccessDenied.into())
    }
}

/// A name lookup in progress or done: the host's own resource behind the guest's
/// `resolve-address-stream` handles (this module implements every function of that interface,
/// so wasmtime's type of the same name is never in the table for it).
struct Lookup(LookupState);

enum LookupState {
    Pending(wasmtime_wasi::runtime::AbortOnDropJoinHandle<Result<Vec<IpAddr>, ErrorCode>>),
    Done(Result<std::vec::IntoIter<IpAddr>, ErrorCode>),
}

impl Lookup {
    fn poll(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if let LookupState::Pending(task) = &mut self.0 {
            let result = std::task::ready!(std::pin::Pin::new(task).poll(cx));
            self.0 = LookupState::Done(result.map(Vec::into_iter));
        }
        std::task::Poll::Ready(())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Lookup {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.poll(cx)).await;
    }
}

fn lookup_handle(lookup: &Resource<Lookup>) -> Resource<ip_name_lookup::ResolveAddressStream> {
    Resource::new_own(lookup.rep())
}

fn lookup_of(
    stream: &Resource<ip_name_lookup::ResolveAddressStream>,
    own: bool,
) -> Resource<Lookup> {
    if own {
        Resource::new_own(stream.rep())
    } else {
        Resource::new_borrow(stream.rep())
    }
}

impl ip_name_lookup::Host for Sockets<'_> {
    fn resolve_addresses(
        &mut self,
        network: Resource<Network>,
        name: String,
    ) -> Result<Resource<ip_name_lookup::ResolveAddressStream>, SocketError> {
        // The network handle is the capability to look names up; it must be a real one.
        self.0.table.get(&network)?;
        if !self.0.tcp.policy.enabled() {
            return Err(self.deny(&format!(
                "resolving {} (wasi:sockets/ip-name-lookup)",
                crate::convert::quoted(&name)
            )));
        }
        // An address literal resolves to itself; the connect check decides about it.
        let literal = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(&name)
            .parse::<IpAddr>();
        let state = match literal {
            Ok(ip) => LookupState::Done(Ok(vec![ip.to_canonical()].into_iter())),
            Err(_) => {
                let Some(name) = self.0.tcp.lookup_allowed(&name) else {
                    return Err(ErrorCode::AccessDenied.into());
                };
                let Some(slot) = self.0.tcp.lookup_slot(&name) else {
                    return Err(ErrorCode::AccessDenied.into());
                };
                let guard = self.0.tcp.clone();
                LookupState::Pending(wasmtime_wasi::runtime::spawn(async move {
                    let _slot = slot;
                    let addrs = tokio::net::lookup_host((name.as_str(), 0))
                        .await
                        .map_err(|_| ErrorCode::NameUnresolvable)?;
                    let mut ips: Vec<IpAddr> = Vec::new();
                    for ip in addrs.map(|a| a.ip().to_canonical()) {
                        if !ips.contains(&ip) {
                            ips.push(ip);
                        }
                    }
                    if guard.record(&name, &ips) {
                        Ok(ips)
                    } else {
                        Err(ErrorCode::AccessDenied)
                    }
                }))
            }
        };
        let lookup = self.0.table.push(Lookup(state))?;
        Ok(lookup_handle(&lookup))
    }
}

impl ip_name_lookup::HostResolveAddressStream for Sockets<'_> {
    fn resolve_next_address(
        &mut self,
        resource: Resource<ip_name_lookup::ResolveAddressStream>,
    ) -> Result<Option<IpAddress>, SocketError> {
        let lookup = self.0.table.get_mut(&lookup_of(&resource, false))?;
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if lookup.poll(&mut cx).is_pending() {
            return Err(ErrorCode::WouldBlock.into());
        }
        match &mut lookup.0 {
            LookupState::Done(Ok(ips)) => Ok(ips.next().map(IpAddress::from)),
            LookupState::Done(Err(code)) => Err((*code).into()),
            LookupState::Pending(_) => Err(ErrorCode::WouldBlock.into()),
        }
    }

    fn subscribe(
        &mut self,
        resource: Resource<ip_name_lookup::ResolveAddressStream>,
    ) -> wasmtime::Result<Resource<wasmtime_wasi::p2::DynPollable>> {
        wasmtime_wasi::p2::subscribe(&mut self.0.table, lookup_of(&resource, false))
    }

    fn drop(
        &mut self,
        resource: Resource<ip_name_lookup::ResolveAddressStream>,
    ) -> wasmtime::Result<()> {
        self.0.table.delete(lookup_of(&resource, true))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_pauses_while_the_engine_works() {
        let d = Deadline::new();
        d.start(CallLimit::grant(Duration::from_millis(30)));
        assert!(!d.check_expired());
        let paused = d.pause();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!d.check_expired(), "paused deadlines do not expire");
        d.resume(paused);
        assert!(!d.check_expired(), "the pause extended the deadline");
        std::thread::sleep(Duration::from_millis(40));
        assert!(d.check_expired());
        assert!(d.expired());
    }
}
