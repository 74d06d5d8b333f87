//! The resource monitor: the handle programs (and component providers in `Construct`/`Call`)
//! register resources with. There is one per deployment; a provider building a component gets
//! a monitor scoped to that component ([`scope`]), which refuses what would reach outside it.
//!
//! Every request is admitted where it enters ([`super::admission`], [`references`],
//! [`scope`]) and then handed on: `RegisterResource` ([`register`]) to the step generator, or
//! to `construct` for a remote component ([`construct`]); `ReadResource` ([`read`]) to a read
//! step; `Invoke` and `Call` ([`functions`]) to the package's provider, except the built-in
//! `pulumi:pulumi:getResource`, which the monitor answers from the deployment's states. The
//! program's transforms ([`transforms`]) run on registrations and invokes before they are
//! admitted. The monitor also resolves default providers, through the generator's provider
//! resolution.
//!
//! # Nothing in flight is abandoned
//!
//! Every monitor request runs as a task the deployment tracks (`Monitor::detached`), so a program
//! that dies or a connection that drops cannot cancel a step half-way; the deployment waits for
//! them all before it deletes or saves. An interruption (`Interrupter`, Ctrl-C) starts nothing new
//! and refuses the program's further requests, lets what runs finish and be recorded, saves, and
//! ends with `DeployError::Interrupted`.
//!
//! # Registrations stay small while they wait
//!
//! An entry gate bounds how many are processed at once (max(16 × `--parallel`, 256); a destroy's
//! deletions likewise). A registration waits for its place in its caller, before it becomes a task,
//! counted as in flight so that the deletions and the save after the program wait for it; the large
//! parts of one being processed are boxed.

pub(crate) mod construct;
pub(crate) mod functions;
pub(crate) mod read;
pub(crate) mod references;
pub(crate) mod register;
pub(crate) mod scope;
pub(crate) mod transforms;

pub use functions::GET_RESOURCE;

use std::sync::{Arc, Weak};

use crate::urn::Urn;
use crate::value::PropertyMap;

use super::DeploymentOptions;
use super::engine::Engine;
use super::program::{
    InvokeTransform, ProgramCallRequest, ProgramInvokeRequest, ReadResourceRequest,
    ReadResourceResponse, RegisterResourceRequest, RegisterResourceResponse, ResourceTransform,
};
use super::provider::{CallResult, InvokeResult};
use scope::Caller;

/// A handle to the deployment's resource monitor.
///
/// It holds the engine weakly: a program's transport (the gRPC server of a Python or Node.js
/// program, a component provider's callback) may outlive the deployment for a moment, and must
/// not keep the engine, and so the journal, alive past its end (the deployment's last owner
/// then moves the recorded base into the final snapshot instead of copying it). A request that
/// arrives after the end is refused.
#[derive(Clone)]
pub struct Monitor {
    engine: Weak<Engine>,
    options: Arc<DeploymentOptions>,
    root_urn: Urn,
    caller: Arc<Caller>,
}

/// Why a monitor request failed; the message names the resource at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct MonitorError {
    pub message: String,
    /// Set when `--continue-on-error` lets the deployment go on without this registration
    /// (Pulumi's `Result` of `RegisterResource`): a program that can tell (as SDKs that report
    /// results do) carries on without the resource rather than failing.
    pub continued: Option<Unregistered>,
    /// With `continued`: the URN of the registration gone on without, which a program that
    /// carries on still refers to.
    pub urn: Option<Urn>,
}

impl MonitorError {
    pub fn new(message: impl Into<String>) -> MonitorError {
        MonitorError {
            message: message.into(),
            continued: None,
            urn: None,
        }
    }
}

/// How a registration ended when `--continue-on-error` let the deployment go on without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unregistered {
    /// Its step failed (Pulumi's `Result.FAIL`).
    Failed,
    /// It was not acted on: something it depends on failed or was skipped (`Result.SKIP`).
    Skipped,
}

impl Monitor {
    /// The program's monitor.
    pub(crate) fn new(engine: Arc<Engine>) -> Monitor {
        Monitor::for_caller(engine, Arc::new(Caller::Program))
    }

    pub(crate) fn for_caller(engine: Arc<Engine>, caller: Arc<Caller>) -> Monitor {
        Monitor {
            engine: Arc::downgrade(&engine),
            options: engine.options.clone(),
            root_urn: engine.root_urn.clone(),
            caller,
        }
    }

    pub fn project(&self) -> &str {
        &self.options.project
    }

    pub fn stack(&self) -> &str {
        &self.options.stack
    }

    /// True in a preview: outputs of resources not yet created are unknown.
    pub fn is_preview(&self) -> bool {
        self.options.preview
    }

    /// The URN of the stack's root resource, the default parent.
    pub fn root_urn(&self) -> &Urn {
        &self.root_urn
    }

    /// The stack's configuration (`namespace:key` → value).
    pub fn config(&self) -> &indexmap::IndexMap<String, crate::value::PropertyValue> {
        &self.options.config
    }

    /// The deployment's engine, while the deployment lasts.
    fn engine(&self) -> Result<Arc<Engine>, MonitorError> {
        self.engine
            .upgrade()
            .ok_or_else(|| MonitorError::new("the deployment has ended"))
    }

    /// Runs a request as a task the deployment tracks, so that it finishes (and its steps are
    /// recorded) even if the caller stops waiting for it: a program that dies, a connection
    /// that drops. The deployment waits for every such task before it deletes or saves.
    async fn detached<T, F>(
        &self,
        work: impl FnOnce(Arc<Engine>, Arc<Caller>) -> F,
    ) -> Result<T, MonitorError>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T, MonitorError>> + Send + 'static,
    {
        let engine = self.engine()?;
        let in_flight = engine.in_flight.clone();
        let task = work(engine, self.caller.clone());
        match in_flight.spawn(task).await {
            Ok(result) => result,
            Err(e) => Err(MonitorError::new(format!(
                "the engine failed while handling the request: {e}"
            ))),
        }
    }

    /// Declares a resource; completes when its steps have run.
    ///
    /// A registration the gate bounds waits for its place here, in the caller, before it
    /// becomes a task: until then it has done nothing, and a caller that goes away leaves
    /// nothing half-done. The deployment counts it as in flight while it waits, so it is not
    /// overtaken by the deletions and the save that follow the program.
    ///
    /// The request is boxed before the future is made: a program that declares 100,000
    /// resources at once holds 100,000 of these futures, and each would otherwise be as large
    /// as the request and every later state of the registration together (about 1.8 KB, not
    /// 0.1 KB).
    pub fn register_resource(
        &self,
        request: RegisterResourceRequest,
    ) -> impl std::future::Future<Output = Result<RegisterResourceResponse, MonitorError>> + Send + '_
    {
        let request = Box::new(request);
        async move {
            let place = if register::waits_at_gate(&request) {
                // Not held while it waits: the gate and the tracker are enough.
                let (gate, waiting) = {
                    let engine = self.engine()?;
                    (engine.gate.clone(), engine.in_flight.token())
                };
                let place = gate
                    .acquire_owned()
                    .await
                    .map_err(|_| MonitorError::new("the deployment is shutting down"))?;
                Some((place, waiting))
            } else {
                None
            };
            self.detached(|engine, caller| async move {
                let _place = place;
                engine.register_resource(*request, &caller).await
            })
            .await
        }
    }

    /// Sets the outputs of a component (or of the root stack: the stack outputs).
    pub fn register_resource_outputs(
        &self,
        urn: &Urn,
        outputs: PropertyMap,
    ) -> Result<(), MonitorError> {
        self.engine()?.register_outputs(urn, outputs, &self.caller)
    }

    /// Reads an external resource.
    pub async fn read_resource(
        &self,
        request: ReadResourceRequest,
    ) -> Result<ReadResourceResponse, MonitorError> {
        self.detached(|engine, caller| async move { engine.read_resource(request, &caller).await })
            .await
    }

    /// Calls a provider function.
    pub async fn invoke(
        &self,
        request: ProgramInvokeRequest,
    ) -> Result<InvokeResult, MonitorError> {
        self.detached(|engine, caller| async move { engine.invoke(request, &caller).await })
            .await
    }

    /// Adds a transform run on every resource registered from now on (the program only).
    pub fn register_stack_transform(
        &self,
        transform: Arc<dyn ResourceTransform>,
    ) -> Result<(), MonitorError> {
        self.engine()?
            .register_stack_transform(transform, &self.caller)
    }

    /// Adds a transform run on every invoke from now on (the program only).
    pub fn register_invoke_transform(
        &self,
        transform: Arc<dyn InvokeTransform>,
    ) -> Result<(), MonitorError> {
        self.engine()?
            .register_invoke_transform(transform, &self.caller)
    }

    /// Registers a resource hook of the program under `name` (`RegisterResourceHook`); a
    /// registration binds it by that name.
    pub fn register_resource_hook(
        &self,
        name: &str,
        hook: super::hooks::RegisteredHook,
    ) -> Result<(), MonitorError> {
        self.engine()?
            .hooks
            .register(name, hook)
            .map_err(|e| MonitorError::new(e.to_string()))
    }

    /// The program is done (`SignalAndWaitForShutdown`): returns once the deployment no longer
    /// needs it — at once, unless it registered hooks, which the deletes that follow it may
    /// call ([`super::hooks`]).
    pub async fn signal_and_wait_for_shutdown(&self) {
        let parked = match self.engine() {
            Ok(engine) => engine.hooks.park(),
            Err(_) => None,
        };
        if let Some(parked) = parked {
            parked.await;
        }
    }

    /// Runs the after hooks that the creation or update of the component `urn` left waiting
    /// for its outputs; call it once [`Monitor::register_resource_outputs`] succeeded. A hook's
    /// failure is the deployment's (reported, and failing it at its end), not the caller's.
    pub async fn run_component_hooks(&self, urn: &Urn) -> Result<(), MonitorError> {
        let urn = urn.clone();
        self.detached(|engine, _| async move {
            let state = engine.plan().states.get(&urn).cloned();
            if let Some(state) = state {
                engine.component_outputs_registered(&state).await;
            }
            Ok(())
        })
        .await
    }

    /// Calls a component method.
    pub async fn call(&self, request: ProgramCallRequest) -> Result<CallResult, MonitorError> {
        self.detached(|engine, caller| async move { engine.call(request, &caller).await })
            .await
    }
}
