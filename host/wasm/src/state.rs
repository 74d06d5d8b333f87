//! The per-instance store state and every host API a provider can import: `cairn:deploy/host`
//! and `engine`, WASI (filesystem, environment, clocks, random, stdio), `wasi:http` behind an
//! allow-list, and `wasi:sockets` denied.
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
//! * **Sockets**: none. Creating a TCP or UDP socket or resolving a name fails with
//!   `access-denied` and is recorded as a violation.
//! * **HTTP** (`wasi:http/outgoing-handler`): a request's host must match the manifest's
//!   `capabilities.http` *and* the user's grant (exact host or `*.suffix`). Unless the user
//!   granted that exact host, the name is resolved first and the request is refused when any
//!   address is loopback, private, link-local, unique-local, shared (CGNAT), multicast or
//!   unspecified — so a wildcard grant cannot be used to reach the host's own network. (The
//!   connection itself resolves the name again, so a DNS answer that changes between the check
//!   and the connection is not caught; grant exact hosts where that matters.) Refusals are
//!   recorded as violations.
//! * **Clocks and randomness**: the host's.
//! * **Memory**: at most the sandbox's limit across the instance's memories; growing beyond it
//!   traps. Tables are limited to [`TABLE_ELEMENTS_LIMIT`] elements.
//!
//! A recorded violation fails the call even if the guest carried on (see [`crate::provider`]).

use std::collections::VecDeque;
use std::net::IpAddr;
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
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use crate::bindings::ProviderWorld;
use crate::bindings::cairn::deploy::{engine as wit_engine, host as wit_host, types as wit_types};
use crate::convert;
use crate::grants::{HttpDecision, Sandbox};
use crate::log::{LogRecord, LogSink, LogSource};
use crate::program::ProgramSession;
use crate::program_bindings::ProgramWorld;

/// Bytes a guest may write to stdout and to stderr in one call.
pub const OUTPUT_LIMIT: usize = 1024 * 1024;

/// Elements a guest table may hold.
pub const TABLE_ELEMENTS_LIMIT: usize = 1_000_000;

/// How much of the end of stderr a trap error quotes.
const STDERR_TAIL: usize = 2048;

/// A line longer than this is logged in pieces.
const MAX_LINE: usize = 16 * 1024;

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

/// WASI and wasi:http for any guest, with sockets denied.
fn sandboxed_linker(engine: &Engine) -> wasmtime::Result<Linker<InstanceState>> {
    let mut linker = Linker::<InstanceState>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    // Replace socket creation and name lookup with versions that record the attempt.
    linker.allow_shadowing(true);
    tcp_create_socket::add_to_linker::<InstanceState, DenySockets>(&mut linker, |s| Denied(s))?;
    udp_create_socket::add_to_linker::<InstanceState, DenySockets>(&mut linker, |s| Denied(s))?;
    ip_name_lookup::add_to_linker::<InstanceState, DenySockets>(&mut linker, |s| Denied(s))?;
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
    pub call: Mutex<CallInfo>,
}

/// What happened during the current call.
#[derive(Default)]
pub(crate) struct CallInfo {
    pub urn: Option<Urn>,
    pub violations: Vec<String>,
    pub stdout: Capture,
    pub stderr: Capture,
}

/// Output captured from one stream in the current call.
#[derive(Default)]
pub(crate) struct Capture {
    total: usize,
    line: Vec<u8>,
    tail: VecDeque<u8>,
}

impl CallShared {
    pub fn violation(&self, message: String) {
        tracing::warn!(provider = %self.provider, "{message}");
        crate::runtime::lock(&self.call).violations.push(message);
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
                "wrote more than {} MiB to {name} in one call (the output limit)",
                OUTPUT_LIMIT / (1024 * 1024)
            );
            self.violation(message.clone());
            return Err(message);
        }
        Ok(())
    }

    /// Logs unterminated output and resets the call's record; returns it.
    pub fn finish_call(&self) -> CallReport {
        let info = std::mem::take(&mut *crate::runtime::lock(&self.call));
        for (stderr, capture) in [(false, &info.stdout), (true, &info.stderr)] {
            if !capture.line.is_empty() {
                let (severity, source) = stream_kind(stderr);
                self.emit(
                    severity,
                    source,
                    info.urn.clone(),
                    String::from_utf8_lossy(&capture.line).into_owned(),
                );
            }
        }
        let tail: Vec<u8> = info.stderr.tail.iter().copied().collect();
        CallReport {
            violations: info.violations,
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

/// A call's deadline, shared between the store's epoch callback and the host-side watchdog.
/// It is paused while the guest waits for the engine (`register-resource` in `construct`).
pub(crate) struct Deadline {
    inner: Mutex<DeadlineState>,
}

struct DeadlineState {
    limit: Duration,
    at: Instant,
    paused: u32,
    expired: bool,
}

impl Deadline {
    fn new() -> Deadline {
        Deadline {
            inner: Mutex::new(DeadlineState {
                limit: Duration::MAX,
                at: far_future(),
                paused: 0,
                expired: false,
            }),
        }
    }

    pub fn start(&self, limit: Duration) {
        let mut d = crate::runtime::lock(&self.inner);
        d.limit = limit;
        d.at = Instant::now().checked_add(limit).unwrap_or_else(far_future);
        d.paused = 0;
        d.expired = false;
    }

    pub fn limit(&self) -> Duration {
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
}

impl Limits {
    /// Bytes of linear memory in use.
    pub fn memory_used(&self) -> usize {
        self.memory_used
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
    hooks: HttpGuard,
    pub(crate) limits: Limits,
    pub(crate) shared: Arc<CallShared>,
    pub(crate) deadline: Arc<Deadline>,
    /// The monitor of the `construct` / `call` in progress.
    pub(crate) monitor: Option<Monitor>,
    /// A program's requests in flight (program instances only).
    pub(crate) program: Option<ProgramSession>,
}

impl InstanceState {
    /// The state of a new instance of a provider running in `sandbox`.
    pub(crate) fn new(sandbox: &Arc<Sandbox>, log: &LogSink) -> wasmtime::Result<InstanceState> {
        let shared = Arc::new(CallShared {
            provider: sandbox.provider.as_str().into(),
            grant_key: sandbox.grant_key.as_str().into(),
            log: log.clone(),
            call: Mutex::new(CallInfo::default()),
        });
        let mut builder = WasiCtxBuilder::new();
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
            hooks: HttpGuard {
                sandbox: sandbox.clone(),
                shared: shared.clone(),
            },
            limits: Limits {
                memory_limit: usize::try_from(sandbox.memory_bytes).unwrap_or(usize::MAX),
                memory_used: 0,
                memory_exceeded: false,
                table_exceeded: false,
            },
            shared,
            deadline: Arc::new(Deadline::new()),
            monitor: None,
            program: None,
        })
    }

    /// Marks the start of a call.
    pub(crate) fn begin_call(
        &mut self,
        urn: Option<&Urn>,
        limit: Duration,
        monitor: Option<Monitor>,
    ) {
        crate::runtime::lock(&self.shared.call).urn = urn.cloned();
        self.deadline.start(limit);
        self.monitor = monitor;
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
            Some(Err(_)) => (None, format!("[{}] {message}", urn.unwrap_or_default())),
        };
        let urn = urn.or_else(|| crate::runtime::lock(&self.shared.call).urn.clone());
        self.shared.emit(severity, LogSource::Host, urn, message);
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
// Sockets: denied, and the attempt recorded.

struct DenySockets;

impl HasData for DenySockets {
    type Data<'a> = Denied<'a>;
}

struct Denied<'a>(&'a mut InstanceState);

impl Denied<'_> {
    fn deny(&mut self, what: &str) -> SocketError {
        self.0.shared.violation(format!(
            "{what} is not granted (components get no sockets; outbound HTTP goes through wasi:http and {}.http)",
            self.0.shared.grant_key
        ));
        ErrorCode::AccessDenied.into()
    }
}

impl Denied<'_> {
    fn view(&mut self) -> wasmtime_wasi::sockets::WasiSocketsCtxView<'_> {
        wasmtime_wasi::sockets::WasiSocketsView::sockets(self.0)
    }
}

impl network::Host for Denied<'_> {
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

impl network::HostNetwork for Denied<'_> {
    fn drop(&mut self, this: Resource<Network>) -> wasmtime::Result<()> {
        network::HostNetwork::drop(&mut self.view(), this)
    }
}

impl tcp_create_socket::Host for Denied<'_> {
    fn create_tcp_socket(
        &mut self,
        _family: wasmtime_wasi::p2::bindings::sockets::network::IpAddressFamily,
    ) -> Result<Resource<TcpSocket>, SocketError> {
        Err(self.deny("opening a TCP socket"))
    }
}

impl udp_create_socket::Host for Denied<'_> {
    async fn create_udp_socket(
        &mut self,
        _family: wasmtime_wasi::p2::bindings::sockets::network::IpAddressFamily,
    ) -> Result<Resource<UdpSocket>, SocketError> {
        Err(self.deny("opening a UDP socket"))
    }
}

impl ip_name_lookup::Host for Denied<'_> {
    fn resolve_addresses(
        &mut self,
        _network: Resource<Network>,
        name: String,
    ) -> Result<Resource<ip_name_lookup::ResolveAddressStream>, SocketError> {
        Err(self.deny(&format!("resolving {name:?} (wasi:sockets/ip-name-lookup)")))
    }
}

impl ip_name_lookup::HostResolveAddressStream for Denied<'_> {
    fn resolve_next_address(
        &mut self,
        resource: Resource<ip_name_lookup::ResolveAddressStream>,
    ) -> Result<Option<IpAddress>, SocketError> {
        ip_name_lookup::HostResolveAddressStream::resolve_next_address(&mut self.view(), resource)
    }

    fn subscribe(
        &mut self,
        resource: Resource<ip_name_lookup::ResolveAddressStream>,
    ) -> wasmtime::Result<Resource<wasmtime_wasi::p2::DynPollable>> {
        ip_name_lookup::HostResolveAddressStream::subscribe(&mut self.view(), resource)
    }

    fn drop(
        &mut self,
        resource: Resource<ip_name_lookup::ResolveAddressStream>,
    ) -> wasmtime::Result<()> {
        ip_name_lookup::HostResolveAddressStream::drop(&mut self.view(), resource)
    }
}

// ---------------------------------------------------------------------------------------------
// wasi:http: the allow-list.

struct HttpGuard {
    sandbox: Arc<Sandbox>,
    shared: Arc<CallShared>,
}

type SendFuture = Box<
    dyn std::future::Future<
            Output = wasmtime_wasi_http::Result<(
                http::Response<wasmtime_wasi_http::WasiBody>,
                Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
            )>,
        > + Send,
>;

impl WasiHttpHooks for HttpGuard {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        _fut: Box<dyn std::future::Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> SendFuture {
        use wasmtime_wasi_http::Error;

        let grant_key = self.sandbox.grant_key.clone();
        let Some(host) = request
            .uri()
            .host()
            .map(|h| h.trim_matches(['[', ']']).to_owned())
        else {
            self.shared
                .violation("HTTP request without a host is not granted".to_string());
            return Box::new(async { Err(Error::HttpRequestUriInvalid) });
        };
        let port = request.uri().port_u16().unwrap_or(
            if request.uri().scheme() == Some(&http::uri::Scheme::HTTP) {
                80
            } else {
                443
            },
        );
        let explicit = match self.sandbox.http.decide(&host, port) {
            HttpDecision::Allow { explicit } => explicit,
            HttpDecision::NotRequested => {
                self.shared.violation(format!(
                    "HTTP request to {host} is not granted (the provider's manifest does not request it under capabilities.http)"
                ));
                return Box::new(async { Err(Error::HttpRequestDenied) });
            }
            HttpDecision::NotGranted => {
                self.shared.violation(format!(
                    "HTTP request to {host} is not granted (grant it under {grant_key}.http)"
                ));
                return Box::new(async { Err(Error::HttpRequestDenied) });
            }
        };
        let shared = self.shared.clone();
        Box::new(async move {
            if !explicit {
                let addrs = tokio::net::lookup_host((host.as_str(), port))
                    .await
                    .map_err(|_| Error::DestinationNotFound)?;
                for addr in addrs {
                    if !is_public(addr.ip()) {
                        shared.violation(format!(
                            "HTTP request to {host} is not granted: it resolves to {}, a loopback, private or link-local address (grant the exact host under {grant_key}.http to allow it)",
                            addr.ip()
                        ));
                        return Err(Error::DestinationIpProhibited);
                    }
                }
            }
            use http_body_util::BodyExt;
            let (response, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
            Ok((
                response.map(BodyExt::boxed_unsync),
                Box::new(io) as Box<dyn std::future::Future<Output = _> + Send>,
            ))
        })
    }
}

/// Whether an address is on the public internet (not this host or a private network).
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b)))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "ff02::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:2800:220:1::1",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn the_deadline_pauses_while_the_engine_works() {
        let d = Deadline::new();
        d.start(Duration::from_millis(30));
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
