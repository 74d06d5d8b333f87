//! Resource hooks: functions of the program the engine runs before and after a resource is
//! created, updated or deleted (the `hooks` resource option), as Pulumi's engine runs them.
//!
//! A program registers each hook once, by a name unique in the deployment, with a
//! [`ResourceHook`] (the gRPC bridge calls it through the program's `Callbacks` service) and
//! two flags: `on_dry_run` (also run in previews) and `ignore_errors` (a failure is a warning).
//! A registration binds hooks to a resource by name ([`HookBinding`]); the binding is recorded
//! in the resource's state as the checkpoint's `resourceHooks` field, so that a resource the
//! program no longer declares still runs its delete hooks when `up` deletes it — provided the
//! program still registers hooks of those names.
//!
//! The rules ([`Engine::run_hooks`]): hooks of a kind run in the order bound; a hook whose name
//! no hook was registered under fails; in a preview only `on_dry_run` hooks run. A before hook
//! that fails fails its step (the provider is not called); an after hook that fails leaves the
//! step done and recorded, is reported as an error, fails the deployment at its end and, as a
//! failed step does, stops new work unless `--continue-on-error`. A component's after-create and
//! after-update hooks run when it registers its outputs (it is only finished then).
//!
//! Deletes run after the program is done, but their hooks are the program's: a program that
//! registered hooks is kept running, waiting in `SignalAndWaitForShutdown`, until the
//! deployment has run its deletes, as Pulumi keeps it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::{JoinError, JoinHandle};

use crate::state::ResourceState;
use crate::urn::Urn;
use crate::value::PropertyMap;

use super::engine::{Engine, lock};
use super::events::StepOp;
use super::monitor::Monitor;
use super::program::{Program, ProgramError};
use super::{DeployError, Deployment, StepFailure};

/// The state field the binding is recorded in (Pulumi's `resourceHooks`).
pub const RESOURCE_HOOKS_FIELD: &str = "resourceHooks";

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookKind {
    BeforeCreate,
    AfterCreate,
    BeforeUpdate,
    AfterUpdate,
    BeforeDelete,
    AfterDelete,
}

impl HookKind {
    pub const ALL: [HookKind; 6] = [
        HookKind::BeforeCreate,
        HookKind::AfterCreate,
        HookKind::BeforeUpdate,
        HookKind::AfterUpdate,
        HookKind::BeforeDelete,
        HookKind::AfterDelete,
    ];

    /// The name the state records it under (and messages use), as Pulumi's.
    pub fn name(self) -> &'static str {
        match self {
            HookKind::BeforeCreate => "BeforeCreate",
            HookKind::AfterCreate => "AfterCreate",
            HookKind::BeforeUpdate => "BeforeUpdate",
            HookKind::AfterUpdate => "AfterUpdate",
            HookKind::BeforeDelete => "BeforeDelete",
            HookKind::AfterDelete => "AfterDelete",
        }
    }

    pub fn is_before(self) -> bool {
        matches!(
            self,
            HookKind::BeforeCreate | HookKind::BeforeUpdate | HookKind::BeforeDelete
        )
    }
}

/// The hooks bound to a resource, by name, per kind, in the order they run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookBinding {
    pub before_create: Vec<String>,
    pub after_create: Vec<String>,
    pub before_update: Vec<String>,
    pub after_update: Vec<String>,
    pub before_delete: Vec<String>,
    pub after_delete: Vec<String>,
}

impl HookBinding {
    pub fn names(&self, kind: HookKind) -> &[String] {
        match kind {
            HookKind::BeforeCreate => &self.before_create,
            HookKind::AfterCreate => &self.after_create,
            HookKind::BeforeUpdate => &self.before_update,
            HookKind::AfterUpdate => &self.after_update,
            HookKind::BeforeDelete => &self.before_delete,
            HookKind::AfterDelete => &self.after_delete,
        }
    }

    fn names_mut(&mut self, kind: HookKind) -> &mut Vec<String> {
        match kind {
            HookKind::BeforeCreate => &mut self.before_create,
            HookKind::AfterCreate => &mut self.after_create,
            HookKind::BeforeUpdate => &mut self.before_update,
            HookKind::AfterUpdate => &mut self.after_update,
            HookKind::BeforeDelete => &mut self.before_delete,
            HookKind::AfterDelete => &mut self.after_delete,
        }
    }

    pub fn is_empty(&self) -> bool {
        HookKind::ALL.iter().all(|k| self.names(*k).is_empty())
    }

    /// The binding a state records (none: empty). What another engine wrote there in a shape
    /// this one does not know (a kind it does not run, such as `OnError`) is skipped.
    pub fn of(state: &ResourceState) -> HookBinding {
        let mut binding = HookBinding::default();
        let Some(Value::Object(recorded)) = state.extra.get(RESOURCE_HOOKS_FIELD) else {
            return binding;
        };
        for kind in HookKind::ALL {
            if let Some(Value::Array(names)) = recorded.get(kind.name()) {
                *binding.names_mut(kind) = names
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect();
            }
        }
        binding
    }

    /// Records this binding in `state` (an empty one: no field), keeping what the field holds
    /// of kinds this engine does not run.
    pub fn record(&self, state: &mut ResourceState) {
        // Most resources have no hooks: their (unallocated) unknown fields stay untouched.
        if self.is_empty() && !state.extra.contains_key(RESOURCE_HOOKS_FIELD) {
            return;
        }
        let mut recorded = match state.extra.remove(RESOURCE_HOOKS_FIELD) {
            Some(Value::Object(kept)) => kept,
            _ => serde_json::Map::new(),
        };
        for kind in HookKind::ALL {
            recorded.remove(kind.name());
            let names = self.names(kind);
            if !names.is_empty() {
                recorded.insert(
                    kind.name().to_owned(),
                    Value::Array(names.iter().cloned().map(Value::String).collect()),
                );
            }
        }
        if !recorded.is_empty() {
            state
                .extra
                .insert(RESOURCE_HOOKS_FIELD.to_owned(), Value::Object(recorded));
        }
    }
}

/// What a hook is told about the resource: its identity and, as the step has them, its old and
/// new inputs and outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct HookArgs {
    pub urn: Urn,
    /// The provider's ID (none before a create, and for components).
    pub id: Option<String>,
    pub new_inputs: Option<PropertyMap>,
    pub old_inputs: Option<PropertyMap>,
    pub new_outputs: Option<PropertyMap>,
    pub old_outputs: Option<PropertyMap>,
}

/// A hook function of the program. What it answers is a failure message or nothing.
#[async_trait]
pub trait ResourceHook: Send + Sync {
    /// Names the callback in logs (`hook 1b2c… at 127.0.0.1:4000`).
    fn describe(&self) -> String;

    async fn call(&self, kind: HookKind, args: &HookArgs) -> Result<(), String>;
}

/// A hook as the program registered it.
#[derive(Clone)]
pub struct RegisteredHook {
    pub callback: Arc<dyn ResourceHook>,
    /// Also run in previews.
    pub on_dry_run: bool,
    /// A failure is reported as a warning and the step goes on.
    pub ignore_errors: bool,
}

/// A component's after hooks waiting for its outputs: their kind, and the old state's inputs
/// and outputs (none for a create).
type Waiting = (HookKind, Option<(PropertyMap, PropertyMap)>);

/// The hooks the program registered, by name, the component after-hooks waiting for their
/// component's outputs, and the program kept running for the deletes that follow it.
pub struct Hooks {
    registered: Mutex<HashMap<String, RegisteredHook>>,
    /// Components created or updated in this deployment whose after hooks run when they
    /// register their outputs: the kind and the old state's inputs and outputs.
    waiting: Mutex<HashMap<Urn, Waiting>>,
    /// Set when a program that registered hooks has finished and waits for the deployment to
    /// end (`SignalAndWaitForShutdown`): its hooks must stay callable for the deletes that
    /// only start once the program is done, so it is kept running until they have run.
    parked: watch::Sender<bool>,
    /// Set when the deployment no longer needs the program (also, by being dropped, when the
    /// deployment ends however it ends).
    release: watch::Sender<bool>,
    /// The parked program's task.
    program: Mutex<Option<JoinHandle<Result<(), ProgramError>>>>,
}

impl Default for Hooks {
    fn default() -> Hooks {
        Hooks {
            registered: Mutex::default(),
            waiting: Mutex::default(),
            parked: watch::channel(false).0,
            release: watch::channel(false).0,
            program: Mutex::default(),
        }
    }
}

/// Why a hook could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookRegistrationError {
    #[error("resource hook name cannot be empty")]
    EmptyName,
    #[error("resource hook already registered for name {0:?}")]
    Duplicate(String),
}

impl Hooks {
    /// Registers `hook` under `name`, unique in the deployment.
    pub fn register(&self, name: &str, hook: RegisteredHook) -> Result<(), HookRegistrationError> {
        if name.is_empty() {
            return Err(HookRegistrationError::EmptyName);
        }
        let mut registered = lock(&self.registered);
        if registered.contains_key(name) {
            return Err(HookRegistrationError::Duplicate(name.to_owned()));
        }
        registered.insert(name.to_owned(), hook);
        Ok(())
    }

    fn get(&self, name: &str) -> Option<RegisteredHook> {
        lock(&self.registered).get(name).cloned()
    }

    fn any(&self) -> bool {
        !lock(&self.registered).is_empty()
    }

    /// The program is done and waits for the deployment to end (`SignalAndWaitForShutdown`):
    /// a program with hooks waits until the deployment has run its deletes (see
    /// [`Hooks::parked`]); one without returns at once.
    pub(crate) fn park(&self) -> Option<impl Future<Output = ()> + Send + 'static> {
        if !self.any() {
            return None;
        }
        let mut released = self.release.subscribe();
        self.parked.send_replace(true);
        Some(async move {
            // An error: the deployment ended (and dropped the sender); the program may go.
            let _ = released.wait_for(|r| *r).await;
        })
    }
}

/// A program task's end as the program's result.
fn joined(joined: Result<Result<(), ProgramError>, JoinError>) -> Result<(), ProgramError> {
    joined.unwrap_or_else(|e| Err(ProgramError::new(format!("the program's task failed: {e}"))))
}

impl Deployment {
    /// Runs `program` until it ends, or until it is done but waits for the deployment to end
    /// because its hooks may still be called ([`Hooks::parked`]): it is then left running
    /// until [`Deployment::end_program`], and counts as finished without error for now.
    pub(super) async fn run_keeping_hooks(
        &self,
        program: Arc<dyn Program>,
        monitor: Monitor,
    ) -> Result<(), ProgramError> {
        let mut parked = self.engine.hooks.parked.subscribe();
        let mut run = tokio::spawn(async move { program.run(monitor).await });
        tokio::select! {
            result = &mut run => joined(result),
            Ok(_) = parked.wait_for(|p| *p) => {
                *lock(&self.engine.hooks.program) = Some(run);
                Ok(())
            }
        }
    }

    /// Lets a program kept running for its hooks end, and waits for it: `result` is the
    /// deployment's so far, and stands unless it succeeded and the program then failed.
    pub(super) async fn end_program(
        &self,
        result: Result<(), DeployError>,
    ) -> Result<(), DeployError> {
        let Some(run) = lock(&self.engine.hooks.program).take() else {
            return result;
        };
        self.engine.hooks.release.send_replace(true);
        let ended = joined(run.await);
        match (result, ended) {
            (Ok(()), Err(e)) => Err(DeployError::Program(e.message)),
            (result, _) => result,
        }
    }
}

impl Engine {
    /// Runs the `kind` hooks of `binding` on the arguments `args` makes, if there are any: a
    /// failure is the step's (see [`Engine::run_hooks`]). Without hooks nothing is copied, and
    /// the step's future grows by a pointer, not by a hook call.
    pub(crate) async fn before_hooks(
        &self,
        kind: HookKind,
        binding: &HookBinding,
        args: impl FnOnce() -> HookArgs,
    ) -> Result<(), String> {
        let names = binding.names(kind);
        if names.is_empty() {
            return Ok(());
        }
        Box::pin(self.run_hooks(kind, names, &args())).await
    }

    /// [`Engine::run_after_hooks`] for the `kind` hooks of `binding`, if there are any (as
    /// [`Engine::before_hooks`]).
    pub(crate) async fn after_hooks(
        &self,
        kind: HookKind,
        op: StepOp,
        binding: &HookBinding,
        args: impl FnOnce() -> HookArgs,
    ) {
        let names = binding.names(kind);
        if names.is_empty() {
            return;
        }
        Box::pin(self.run_after_hooks(kind, op, names, &args())).await
    }

    /// Runs the hooks `names` of `kind` for a step of `args.urn` (see the module docs for the
    /// rules). An error is the message that fails the step (before hooks) or that the caller
    /// reports as a post-step failure (after hooks).
    pub(crate) async fn run_hooks(
        &self,
        kind: HookKind,
        names: &[String],
        args: &HookArgs,
    ) -> Result<(), String> {
        for name in names {
            let Some(hook) = self.hooks.get(name) else {
                return Err(format!("hook {name:?} was not registered"));
            };
            if self.preview() && !hook.on_dry_run {
                continue;
            }
            tracing::debug!(hook = %name, urn = %args.urn, kind = kind.name(), "running a resource hook");
            let Err(problem) = hook.callback.call(kind, args).await else {
                continue;
            };
            let problem = crate::limits::cap_message(&problem).into_owned();
            if hook.ignore_errors {
                self.warn(
                    Some(&args.urn),
                    format!("{} hook {name:?} failed: {problem}", kind.name()),
                );
                continue;
            }
            let when = if kind.is_before() { "before" } else { "after" };
            return Err(format!("{when} hook {name:?} failed: {problem}"));
        }
        Ok(())
    }

    /// Runs after hooks once their step is done and recorded: a failure is reported as an
    /// error about the resource and fails the deployment at its end, but the step stands; new
    /// work stops unless `--continue-on-error` (Pulumi's post-step error).
    pub(crate) async fn run_after_hooks(
        &self,
        kind: HookKind,
        op: StepOp,
        names: &[String],
        args: &HookArgs,
    ) {
        if names.is_empty() {
            return;
        }
        if let Err(message) = self.run_hooks(kind, names, args).await {
            self.report_error(&args.urn, message.clone());
            lock(&self.failures).push(StepFailure {
                urn: args.urn.clone(),
                op,
                message,
            });
            if !self.options.continue_on_error {
                self.cancel().await;
            }
        }
    }

    /// A component was created or updated: its after hooks wait for its outputs.
    pub(crate) fn await_component_outputs(
        &self,
        state: &ResourceState,
        op: StepOp,
        old: Option<&ResourceState>,
    ) {
        let kind = match op {
            StepOp::Create => HookKind::AfterCreate,
            StepOp::Update => HookKind::AfterUpdate,
            _ => return,
        };
        if HookBinding::of(state).names(kind).is_empty() {
            return;
        }
        let old = old.map(|o| (o.inputs.clone(), o.outputs.clone()));
        lock(&self.hooks.waiting).insert(state.urn.clone(), (kind, old));
    }

    /// A component registered its outputs (`state` is its state with them): the after hooks
    /// its creation or update left waiting run now.
    pub(crate) async fn component_outputs_registered(&self, state: &ResourceState) {
        let Some((kind, old)) = lock(&self.hooks.waiting).remove(&state.urn) else {
            return;
        };
        let (old_inputs, old_outputs) = old.unzip();
        let args = HookArgs {
            urn: state.urn.clone(),
            id: None,
            new_inputs: Some(state.inputs.clone()),
            old_inputs,
            new_outputs: Some(state.outputs.clone()),
            old_outputs,
        };
        let op = match kind {
            HookKind::AfterCreate => StepOp::Create,
            _ => StepOp::Update,
        };
        let names = HookBinding::of(state).names(kind).to_vec();
        self.run_after_hooks(kind, op, &names, &args).await;
    }

    /// The arguments of a create's hooks: no old state; the outputs once it exists.
    pub(crate) fn create_hook_args(state: &ResourceState, done: bool) -> HookArgs {
        HookArgs {
            urn: state.urn.clone(),
            id: state.id.clone(),
            new_inputs: Some(state.inputs.clone()),
            old_inputs: None,
            new_outputs: done.then(|| state.outputs.clone()),
            old_outputs: None,
        }
    }

    /// The arguments of an update's hooks: the old state, and the new outputs once updated.
    pub(crate) fn update_hook_args(
        state: &ResourceState,
        old: &ResourceState,
        done: bool,
    ) -> HookArgs {
        HookArgs {
            urn: state.urn.clone(),
            id: old.id.clone(),
            new_inputs: Some(state.inputs.clone()),
            old_inputs: Some(old.inputs.clone()),
            new_outputs: done.then(|| state.outputs.clone()),
            old_outputs: Some(old.outputs.clone()),
        }
    }

    /// The arguments of a delete's hooks: the recorded state only.
    pub(crate) fn delete_hook_args(old: &ResourceState) -> HookArgs {
        HookArgs {
            urn: old.urn.clone(),
            id: old.id.clone(),
            new_inputs: None,
            old_inputs: Some(old.inputs.clone()),
            new_outputs: None,
            old_outputs: Some(old.outputs.clone()),
        }
    }
}

/// The resources of `snapshot` with delete hooks, and those hooks' names: a destroy that does
/// not run the program cannot run them, and Pulumi refuses it.
pub fn delete_hooks(snapshot: &crate::state::Snapshot) -> Vec<(Urn, String)> {
    snapshot
        .resources
        .iter()
        .filter_map(|r| {
            let binding = HookBinding::of(r);
            let names: Vec<&str> = binding
                .before_delete
                .iter()
                .chain(&binding.after_delete)
                .map(String::as_str)
                .collect();
            (!names.is_empty()).then(|| (r.urn.clone(), names.join(", ")))
        })
        .collect()
}

/// `state` takes over the fields of `old` this engine does not manage, but keeps its own hook
/// binding (the registration's, which the state records from now on).
pub(crate) fn carry_unknown_fields(state: &mut ResourceState, old: &ResourceState) {
    let binding = HookBinding::of(state);
    state.extra = old.extra.clone();
    binding.record(state);
}
