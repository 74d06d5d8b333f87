//! [`WasmProgram`]: the engine's [`Program`] implemented by a program component
//! (`wit/program.wit`).
//!
//! # Non-blocking registration
//!
//! `register-resource`, `read-resource`, `invoke` and `call` start a task on the engine's
//! runtime and return a handle at once; each task sends its outcome to the run's
//! [`ProgramSession`]. The guest collects outcomes with `wait`, which blocks (asynchronously:
//! the store's fiber is suspended, no thread is held) until at least one has arrived. So a
//! program that declares independent resources has them all in the engine before it waits for
//! any, and they deploy in parallel up to `--parallel`.
//!
//! # Limits
//!
//! A program is sandboxed like a provider ([`Sandbox::for_program`]): it gets exactly what the
//! user grants under `cairn:program`. Its deadline (the grant's `timeoutSeconds`, else the
//! default) counts time spent running wasm code, not time spent waiting for the engine. A
//! trap, a limit or a violation fails the deployment with a message naming the program.
//!
//! Requests are checked where they are decoded (see [`crate::convert`]): values the engine
//! could not store, over-long names, IDs and keys, control characters, unusable timeouts and
//! over-long lists fail the request (its completion says why), never the host. At most
//! [`MAX_RUNNING_REQUESTS`] requests, holding at most [`MAX_RUNNING_BYTES`] of inputs, run at
//! once: a request beyond that waits (the program's fiber is suspended, and the wait does not
//! count against its deadline) until earlier ones finish, so a program that issues a million
//! requests without waiting cannot exhaust the host's memory. Requests never depend on later
//! ones, so the wait always ends.
//!
//! # Programs are throttled, not refused
//!
//! A wasm program may have 10,000 requests (holding 1 GiB of inputs) running at once; more wait in
//! `register-resource` & co. (not counted against its deadline), since requests never depend on
//! later ones. 200,000 requests whose completions it never collects stop it with an error.
//!
//! # Programs pull completions
//!
//! DESIGN.md leaves open how a wasm program learns that a registration finished. The host could
//! call an exported callback, but a component instance cannot be re-entered while its `run` is on
//! the stack; so `register-resource` & co. return a handle and the guest pulls finished handles
//! with `monitor.wait`, which returns everything finished so far (one host round trip per batch,
//! not per resource). The SDK owns the event loop and the `Output` graph; the host stays a thin,
//! stateless-per-request bridge to `Monitor`.
//!
//! # A program never blocks the engine
//!
//! Its requests return handles at once and run as engine tasks; `wait` suspends only the program's
//! fiber, and time spent there does not count against its deadline. The SDK reports a failure only
//! after every request it made has finished, so a failing program leaves no registration half-done.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{
    Alias, Program, ProgramCallRequest, ProgramError, ProgramInvokeRequest, ReadResourceRequest,
    RegisterResourceRequest, ResourceOptions,
};
use cairn_engine::limits::{MAX_NAME_BYTES, MAX_TYPE_BYTES};
use cairn_engine::state::CustomTimeouts;
use cairn_engine::urn::Urn;
use indexmap::IndexMap;
use sha2::{Digest, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use wasmtime::Engine;

use crate::bindings::cairn::deploy::types as w;
use crate::convert::{
    MAX_LIST_ENTRIES, MAX_PATH_BYTES, ValueError, check_id, check_keys, check_provider_ref,
    check_text, check_timeout, decode_map, dependencies_from_wit, dependencies_to_wit, encode_map,
    encode_value, field, result_urn, type_token, value_error,
};
use crate::error::WasmError;
use crate::grants::Sandbox;
use crate::log::LogSink;
use crate::program_bindings::ProgramWorldPre;
use crate::program_bindings::cairn::deploy::{context as wc, monitor as wm};
use crate::provider::{Failure, guarded, new_store};
use crate::state::{CallLimit, GuestBudget, InstanceState};

/// A program component read from disk (not yet compiled).
#[derive(Debug, Clone)]
pub struct ProgramFile {
    /// The program's name for messages (the project name).
    pub name: String,
    pub path: PathBuf,
    pub bytes: Arc<[u8]>,
    pub sha256: String,
}

impl ProgramFile {
    pub fn from_file(name: impl Into<String>, path: impl AsRef<Path>) -> Result<Self, WasmError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| WasmError::Io {
            what: "reading program",
            path: path.to_owned(),
            source,
        })?;
        Ok(ProgramFile {
            name: name.into(),
            path: path.to_owned(),
            sha256: hex::encode(Sha256::digest(&bytes)),
            bytes: bytes.into(),
        })
    }
}

/// A compiled, sandboxed program; each [`Program::run`] gets a fresh instance.
pub struct WasmProgram {
    engine: Engine,
    pre: ProgramWorldPre<InstanceState>,
    sandbox: Arc<Sandbox>,
    log: LogSink,
}

/// Requests of one program that may run at once.
pub const MAX_RUNNING_REQUESTS: usize = 10_000;

/// Bytes of request tables (inputs, arguments) that may be held by running requests at once.
pub const MAX_RUNNING_BYTES: usize = 1024 * 1024 * 1024;

/// Requests whose completions the program has not collected with `wait` (running or
/// finished); one more stops the program, since their outcomes would pile up in the host.
pub const MAX_UNCOLLECTED: usize = 200_000;

/// One finished request.
struct Done {
    handle: u32,
    outcome: wm::Outcome,
}

/// The requests a running program has in flight.
pub(crate) struct ProgramSession {
    monitor: Monitor,
    next_handle: u32,
    outstanding: usize,
    done_tx: mpsc::UnboundedSender<Done>,
    done_rx: mpsc::UnboundedReceiver<Done>,
    /// One permit per request that may run.
    running: Arc<Semaphore>,
    /// One permit per KiB of request tables that may be held by running requests.
    running_kib: Arc<Semaphore>,
}

/// What a running request holds until it finishes (released on drop).
struct Running {
    _request: OwnedSemaphorePermit,
    _kib: OwnedSemaphorePermit,
}

impl ProgramSession {
    fn new(monitor: Monitor) -> ProgramSession {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        ProgramSession {
            monitor,
            next_handle: 0,
            outstanding: 0,
            done_tx,
            done_rx,
            running: Arc::new(Semaphore::new(MAX_RUNNING_REQUESTS)),
            running_kib: Arc::new(Semaphore::new(MAX_RUNNING_BYTES / 1024)),
        }
    }

    fn next(&mut self) -> wasmtime::Result<u32> {
        if self.outstanding >= MAX_UNCOLLECTED {
            return Err(wasmtime::Error::msg(format!(
                "the program made more than {MAX_UNCOLLECTED} requests without collecting their completions with monitor.wait (a fixed limit)"
            )));
        }
        let handle = self.next_handle;
        self.next_handle = self.next_handle.wrapping_add(1);
        self.outstanding += 1;
        Ok(handle)
    }

    /// Runs `work` on the engine's runtime and returns the handle its outcome will carry.
    fn start<F>(
        &mut self,
        running: Running,
        work: impl FnOnce(Monitor) -> F,
    ) -> wasmtime::Result<u32>
    where
        F: Future<Output = wm::Outcome> + Send + 'static,
    {
        let handle = self.next()?;
        let future = work(self.monitor.clone());
        let done = self.done_tx.clone();
        tokio::spawn(async move {
            let outcome = future.await;
            drop(running);
            // The run may be over (a failed program); its outcome then has nowhere to go.
            let _ = done.send(Done { handle, outcome });
        });
        Ok(handle)
    }

    /// A request that failed before it started (malformed): its outcome is ready at once.
    fn reject(&mut self, what: &str, error: ValueError) -> wasmtime::Result<u32> {
        let handle = self.next()?;
        let outcome = wm::Outcome::Failed(format!("invalid {what} request: {error}"));
        // The receiver lives in this session, so the send cannot fail.
        let _ = self.done_tx.send(Done { handle, outcome });
        Ok(handle)
    }
}

/// Roughly the bytes a request table takes (its lists), in KiB for the running budget.
fn table_kib(values: &[&w::Value]) -> u32 {
    let bytes: usize = values
        .iter()
        .map(|v| v.nodes.len() * 4 + v.strings.len() + v.extras.len() * 64)
        .sum();
    u32::try_from(bytes / 1024 + 1)
        .unwrap_or(u32::MAX)
        .min(u32::try_from(MAX_RUNNING_BYTES / 1024).unwrap_or(u32::MAX))
}

impl InstanceState {
    /// Waits until a request of `kib` KiB of tables may run; the wait does not count against
    /// the program's deadline.
    async fn admit(&mut self, kib: u32) -> wasmtime::Result<Running> {
        let deadline = self.deadline.clone();
        let session = session(self)?;
        let (count, bytes) = (session.running.clone(), session.running_kib.clone());
        let paused = deadline.pause();
        let permits = async {
            Ok::<_, tokio::sync::AcquireError>(Running {
                _request: count.acquire_owned().await?,
                _kib: bytes.acquire_many_owned(kib).await?,
            })
        }
        .await;
        deadline.resume(paused);
        permits.map_err(|e| wasmtime::Error::msg(format!("the program's request limit: {e}")))
    }
}

impl WasmProgram {
    pub(crate) fn new(
        engine: Engine,
        pre: ProgramWorldPre<InstanceState>,
        sandbox: Arc<Sandbox>,
        log: LogSink,
    ) -> WasmProgram {
        WasmProgram {
            engine,
            pre,
            sandbox,
            log,
        }
    }

    /// What the program may use.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    fn failed(&self, what: impl std::fmt::Display) -> ProgramError {
        ProgramError::new(format!("{}: {what}", self.sandbox.provider))
    }
}

#[async_trait]
impl Program for WasmProgram {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let mut state = InstanceState::new(&self.sandbox, &self.log, &GuestBudget::new())
            .map_err(|e| self.failed(format!("setting up the sandbox: {e:#}")))?;
        state.program = Some(ProgramSession::new(monitor));
        let mut store = new_store(&self.engine, state);
        let pre = self.pre.clone();
        let (world, report) = guarded(
            &mut store,
            None,
            CallLimit::grant(self.sandbox.timeout),
            None,
            &self.sandbox,
            move |s| Box::pin(async move { pre.instantiate_async(s).await }),
        )
        .await
        .map_err(|Failure(why)| self.failed(format!("instantiating: {why}")))?;
        if !report.violations.is_empty() {
            return Err(self.failed(report.violations.join("; ")));
        }
        let (result, report) = guarded(
            &mut store,
            None,
            CallLimit::grant(self.sandbox.timeout),
            None,
            &self.sandbox,
            move |s| Box::pin(async move { world.call_run(s).await }),
        )
        .await
        .map_err(|Failure(why)| self.failed(why))?;
        if !report.violations.is_empty() {
            return Err(self.failed(report.violations.join("; ")));
        }
        result.map_err(|e| ProgramError::new(crate::convert::message(e)))
    }
}

fn session(state: &mut InstanceState) -> wasmtime::Result<&mut ProgramSession> {
    state
        .program
        .as_mut()
        .ok_or_else(|| wasmtime::Error::msg("monitor imports used outside a program run"))
}

impl wm::Host for InstanceState {
    async fn register_resource(
        &mut self,
        request: wm::RegisterResourceRequest,
    ) -> wasmtime::Result<u32> {
        let kib = table_kib(&[&request.inputs]);
        let request = match register_request(request) {
            Ok(r) => r,
            Err(e) => return session(self)?.reject("register-resource", e),
        };
        let running = self.admit(kib).await?;
        session(self)?.start(running, |monitor| async move {
            match monitor.register_resource(request).await {
                Ok(r) => wm::Outcome::State(wm::ResourceState {
                    urn: r.urn.to_string(),
                    id: r.id,
                    outputs: encode_map(&r.outputs),
                    property_dependencies: dependencies_to_wit(&r.property_dependencies),
                }),
                Err(e) => wm::Outcome::Failed(e.to_string()),
            }
        })
    }

    async fn read_resource(&mut self, request: wm::ReadResourceRequest) -> wasmtime::Result<u32> {
        let kib = table_kib(&[&request.properties]);
        let request = match read_request(request) {
            Ok(r) => r,
            Err(e) => return session(self)?.reject("read-resource", e),
        };
        let running = self.admit(kib).await?;
        session(self)?.start(running, |monitor| async move {
            let id = request.id.clone();
            match monitor.read_resource(request).await {
                Ok(r) => wm::Outcome::State(wm::ResourceState {
                    urn: r.urn.to_string(),
                    id: Some(id),
                    outputs: encode_map(&r.outputs),
                    property_dependencies: Vec::new(),
                }),
                Err(e) => wm::Outcome::Failed(e.to_string()),
            }
        })
    }

    async fn invoke(&mut self, request: wm::InvokeRequest) -> wasmtime::Result<u32> {
        let kib = table_kib(&[&request.args]);
        let request = match invoke_request(request) {
            Ok(r) => r,
            Err(e) => return session(self)?.reject("invoke", e),
        };
        let running = self.admit(kib).await?;
        session(self)?.start(running, |monitor| async move {
            let token = request.token.clone();
            match monitor.invoke(request).await {
                Ok(r) if !r.failures.is_empty() => {
                    wm::Outcome::Failed(failures_text(&token, &r.failures))
                }
                Ok(r) => wm::Outcome::Outputs(wm::CallOutputs {
                    outputs: encode_map(&r.outputs),
                    property_dependencies: Vec::new(),
                }),
                Err(e) => wm::Outcome::Failed(e.to_string()),
            }
        })
    }

    async fn call(&mut self, request: wm::CallRequest) -> wasmtime::Result<u32> {
        let kib = table_kib(&[&request.args]);
        let request = match call_request(request) {
            Ok(r) => r,
            Err(e) => return session(self)?.reject("call", e),
        };
        let running = self.admit(kib).await?;
        session(self)?.start(running, |monitor| async move {
            let token = request.token.clone();
            match monitor.call(request).await {
                Ok(r) if !r.failures.is_empty() => {
                    wm::Outcome::Failed(failures_text(&token, &r.failures))
                }
                Ok(r) => wm::Outcome::Outputs(wm::CallOutputs {
                    outputs: encode_map(&r.outputs),
                    property_dependencies: dependencies_to_wit(&r.output_dependencies),
                }),
                Err(e) => wm::Outcome::Failed(e.to_string()),
            }
        })
    }

    async fn wait(&mut self) -> wasmtime::Result<Vec<wm::Completion>> {
        let deadline = self.deadline.clone();
        let session = session(self)?;
        if session.outstanding == 0 {
            return Ok(Vec::new());
        }
        // Waiting for the engine does not count against the program's deadline.
        let paused = deadline.pause();
        let first = session.done_rx.recv().await;
        deadline.resume(paused);
        let mut done: Vec<Done> = first.into_iter().collect();
        while let Ok(more) = session.done_rx.try_recv() {
            done.push(more);
        }
        session.outstanding = session.outstanding.saturating_sub(done.len());
        Ok(done
            .into_iter()
            .map(|d| wm::Completion {
                handle: d.handle,
                outcome: d.outcome,
            })
            .collect())
    }

    async fn register_resource_outputs(
        &mut self,
        urn: String,
        outputs: w::Value,
    ) -> wasmtime::Result<Result<(), String>> {
        let session = session(self)?;
        let urn = match result_urn("urn", &urn) {
            Ok(urn) => urn,
            Err(e) => return Ok(Err(e.to_string())),
        };
        let outputs = match decode_map(outputs) {
            Ok(o) => o,
            Err(e) => return Ok(Err(format!("outputs: {e}"))),
        };
        Ok(session
            .monitor
            .register_resource_outputs(&urn, outputs)
            .map_err(|e| e.to_string()))
    }
}

impl wc::Host for InstanceState {
    async fn deployment(&mut self) -> wasmtime::Result<wc::DeploymentInfo> {
        let monitor = &session(self)?.monitor;
        Ok(wc::DeploymentInfo {
            project: monitor.project().to_owned(),
            stack: monitor.stack().to_owned(),
            organization: "organization".to_owned(),
            dry_run: monitor.is_preview(),
            root_urn: monitor.root_urn().to_string(),
        })
    }

    async fn config(&mut self) -> wasmtime::Result<Vec<(String, w::Value)>> {
        let monitor = &session(self)?.monitor;
        Ok(monitor
            .config()
            .iter()
            .map(|(key, value)| (key.clone(), encode_value(value)))
            .collect())
    }
}

fn failures_text(token: &str, failures: &[cairn_engine::deploy::provider::CheckFailure]) -> String {
    let list: Vec<String> = failures
        .iter()
        .map(|f| {
            if f.property.is_empty() {
                f.reason.clone()
            } else {
                format!("{}: {}", f.property, f.reason)
            }
        })
        .collect();
    format!("{token} rejected its arguments: {}", list.join("; "))
}

fn urns(field_name: &str, urns: &[String]) -> Result<Vec<Urn>, ValueError> {
    if urns.len() > MAX_LIST_ENTRIES {
        return Err(value_error(format!(
            "{field_name}: {} URNs; at most {MAX_LIST_ENTRIES} are accepted",
            urns.len()
        )));
    }
    urns.iter().map(|u| result_urn(field_name, u)).collect()
}

fn optional_urn(field_name: &str, urn: Option<&str>) -> Result<Option<Urn>, ValueError> {
    urn.map(|u| result_urn(field_name, u)).transpose()
}

/// An optional name-like field: at most `max` bytes, printable.
fn optional_text(field_name: &str, text: Option<&str>, max: usize) -> Result<(), ValueError> {
    text.map_or(Ok(()), |t| check_text(field_name, t, max))
}

fn alias(a: wm::Alias) -> Result<Alias, ValueError> {
    if let Some(urn) = &a.urn {
        return Ok(Alias::Urn(result_urn("aliases.urn", urn)?));
    }
    optional_text("alias name", a.name.as_deref(), MAX_NAME_BYTES)?;
    optional_text("alias stack", a.stack.as_deref(), MAX_NAME_BYTES)?;
    optional_text("alias project", a.project.as_deref(), MAX_NAME_BYTES)?;
    let parent = if a.no_parent {
        Some(None)
    } else {
        optional_urn("aliases.parent-urn", a.parent_urn.as_deref())?.map(Some)
    };
    Ok(Alias::Spec {
        name: a.name,
        resource_type: a
            .resource_type
            .as_deref()
            .map(|t| type_token("aliases.resource-type", t))
            .transpose()?,
        parent,
        stack: a.stack,
        project: a.project,
    })
}

fn register_request(r: wm::RegisterResourceRequest) -> Result<RegisterResourceRequest, ValueError> {
    let o = r.options;
    check_text("resource name", &r.name, MAX_NAME_BYTES)?;
    if let Some(provider) = &o.provider {
        check_provider_ref("provider reference", provider)?;
    }
    if o.providers.len() > MAX_LIST_ENTRIES {
        return Err(value_error(format!(
            "providers: {} entries; at most {MAX_LIST_ENTRIES} are accepted",
            o.providers.len()
        )));
    }
    for (package, reference) in &o.providers {
        check_text("package name in providers", package, MAX_NAME_BYTES)?;
        check_provider_ref("provider reference in providers", reference)?;
    }
    if o.aliases.len() > MAX_LIST_ENTRIES {
        return Err(value_error(format!(
            "aliases: {} entries; at most {MAX_LIST_ENTRIES} are accepted",
            o.aliases.len()
        )));
    }
    check_keys("ignore-changes", &o.ignore_changes, MAX_PATH_BYTES)?;
    check_keys("replace-on-changes", &o.replace_on_changes, MAX_PATH_BYTES)?;
    check_keys(
        "additional-secret-outputs",
        &o.additional_secret_outputs,
        MAX_PATH_BYTES,
    )?;
    if let Some(t) = &o.custom_timeouts {
        check_timeout("custom-timeouts.create", t.create)?;
        check_timeout("custom-timeouts.update", t.update)?;
        check_timeout("custom-timeouts.delete", t.delete)?;
    }
    if let Some(id) = &o.import_id {
        check_id("import ID", id, true)?;
    }
    optional_text("version", o.version.as_deref(), MAX_NAME_BYTES)?;
    let options = ResourceOptions {
        protect: o.protect,
        retain_on_delete: o.retain_on_delete,
        deleted_with: optional_urn("deleted-with", o.deleted_with.as_deref())?,
        depends_on: urns("depends-on", &o.depends_on)?,
        provider: o.provider,
        providers: o.providers.into_iter().collect::<IndexMap<_, _>>(),
        aliases: o.aliases.into_iter().map(alias).collect::<Result<_, _>>()?,
        ignore_changes: o.ignore_changes,
        replace_on_changes: o.replace_on_changes,
        delete_before_replace: o.delete_before_replace,
        additional_secret_outputs: o.additional_secret_outputs,
        custom_timeouts: o.custom_timeouts.map(|t| CustomTimeouts {
            create: t.create,
            update: t.update,
            delete: t.delete,
            // The WIT record has no read timeout.
            read: 0.0,
        }),
        import_id: o.import_id,
        version: o.version,
        plugin_download_url: None,
        // A wasm program's SDK runs its transforms itself.
        transforms: Vec::new(),
        // Hooks and state migrations are functions of an SDK program over gRPC; the WIT has
        // none.
        hooks: Default::default(),
        state_migrations: Vec::new(),
    };
    Ok(RegisterResourceRequest {
        resource_type: type_token("resource-type", &r.resource_type)?,
        name: r.name,
        custom: r.custom,
        remote: r.remote,
        parent: optional_urn("parent", o.parent.as_deref())?,
        inputs: field("inputs", decode_map(r.inputs))?,
        property_dependencies: dependencies_from_wit(
            "property-dependencies",
            r.property_dependencies,
        )?,
        options,
    })
}

fn read_request(r: wm::ReadResourceRequest) -> Result<ReadResourceRequest, ValueError> {
    check_text("resource name", &r.name, MAX_NAME_BYTES)?;
    check_id("ID", &r.id, true)?;
    if let Some(provider) = &r.provider {
        check_provider_ref("provider reference", provider)?;
    }
    optional_text("version", r.version.as_deref(), MAX_NAME_BYTES)?;
    check_keys(
        "additional-secret-outputs",
        &r.additional_secret_outputs,
        MAX_PATH_BYTES,
    )?;
    Ok(ReadResourceRequest {
        resource_type: type_token("resource-type", &r.resource_type)?,
        name: r.name,
        id: r.id,
        parent: optional_urn("parent", r.parent.as_deref())?,
        properties: field("properties", decode_map(r.properties))?,
        dependencies: urns("dependencies", &r.dependencies)?,
        provider: r.provider,
        version: r.version,
        additional_secret_outputs: r.additional_secret_outputs,
    })
}

/// A function or method token: as long as a type token may be, printable.
fn function_token(token: &str) -> Result<(), ValueError> {
    check_text("token", token, MAX_TYPE_BYTES)
}

fn invoke_request(r: wm::InvokeRequest) -> Result<ProgramInvokeRequest, ValueError> {
    function_token(&r.token)?;
    if let Some(provider) = &r.provider {
        check_provider_ref("provider reference", provider)?;
    }
    optional_text("version", r.version.as_deref(), MAX_NAME_BYTES)?;
    Ok(ProgramInvokeRequest {
        args: field("args", decode_map(r.args))?,
        token: r.token,
        provider: r.provider,
        version: r.version,
    })
}

fn call_request(r: wm::CallRequest) -> Result<ProgramCallRequest, ValueError> {
    function_token(&r.token)?;
    if let Some(provider) = &r.provider {
        check_provider_ref("provider reference", provider)?;
    }
    optional_text("version", r.version.as_deref(), MAX_NAME_BYTES)?;
    Ok(ProgramCallRequest {
        args: field("args", decode_map(r.args))?,
        arg_dependencies: dependencies_from_wit("arg-dependencies", r.arg_dependencies)?,
        token: r.token,
        provider: r.provider,
        version: r.version,
    })
}
