//! The engine of one deployment: the step generator's plan state, the registration flows the
//! resource monitor drives, and step execution against providers and the journal.
//!
//! Concurrency: every registration runs in the caller's task, so independent registrations
//! proceed in parallel. The plan state (which URNs are registered, which old states are claimed)
//! sits behind one mutex that is never held across an `await`: the generator stays the single
//! owner of its plan while `Check`, `Diff` and provider mutations run concurrently, bounded by
//! the `--parallel` semaphore.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::future::join_all;
use indexmap::IndexMap;
use tokio::sync::{OnceCell, Semaphore};

use crate::path::PropertyPath;
use crate::state::{
    CustomTimeouts, OperationKind, ProviderReference, ResourceState, Snapshot, UNKNOWN_ID,
    is_provider_type,
};
use crate::urn::{ROOT_STACK_TYPE, TypeToken, Urn};
use crate::value::{PropertyMap, PropertyValue};

use super::admission::{
    accept_read, accept_result, check_request, describe_parent, native_refusal, storable_outputs,
};
use super::diff::{Decision, DiffFacts, changes_from_detailed, decide, diff_properties};
use super::events::{EngineEvent, EventSink, Severity, StepInfo, StepOp, StepState};
use super::graph::DependencyGraph;
use super::journal::{BaseIndex, Mutation, SnapshotManager};
use super::monitor::MonitorError;
use super::program::{
    Alias, ProgramCallRequest, ProgramInvokeRequest, ReadResourceRequest, RegisterResourceRequest,
    RegisterResourceResponse, ResourceOptions,
};
use super::provider::{
    CallRequest, CallResult, CheckRequest, CheckResult, ConstructRequest, CreateRequest,
    DeleteRequest, DiffChanges, DiffRequest, InvokeRequest, InvokeResult, NativePlugins, Provider,
    ProviderError, ProviderOrigin, ReadRequest, UpdateRequest, provider_type,
};
use super::providers::{ProviderRegistry, version_input};
use super::scope::{Caller, ComponentScope, ExpectedRoot};
use super::{DeploymentOptions, PendingCreate, StepFailure};

/// Which old states this deployment has accounted for, and what it has registered.
#[derive(Default)]
struct Plan {
    /// The live (not `delete`-marked) copy of each URN in the base snapshot.
    live: HashMap<Urn, BaseIndex>,
    /// URNs registered in this deployment: their parents and the aliases they were registered
    /// under.
    registered: HashMap<Urn, Registration>,
    /// URNs whose registration finished with a state in this deployment's snapshot: what later
    /// registrations may refer to.
    completed: HashSet<Urn>,
    /// Old URNs taken over under a new one (through aliases): old → new.
    renamed: HashMap<Urn, Urn>,
    /// Default provider URNs registered in this deployment.
    default_providers: HashSet<Urn>,
    /// Base entries taken over by a registration.
    claimed: HashSet<BaseIndex>,
    /// Base entries deleted ahead of their replacement (delete-before-replace).
    deleted_early: HashSet<BaseIndex>,
    /// Base entries replaced create-before-delete, to delete once the program has finished.
    pending_deletes: Vec<BaseIndex>,
    /// Base entries kept as they are because `--target` / `--exclude` left them out.
    untargeted: HashSet<BaseIndex>,
    /// The states this deployment has recorded, by URN.
    states: HashMap<Urn, ResourceState>,
}

/// How a URN was registered in this deployment.
struct Registration {
    parent: Option<Urn>,
    aliases: Vec<Urn>,
}

impl Plan {
    /// Whether `urn` is `component` or registered below it in this deployment.
    fn in_subtree(&self, urn: &Urn, component: &Urn) -> bool {
        let mut current = urn;
        // Parents are registered before their children, so the walk ends; the bound guards
        // against a bug turning it into a loop.
        for _ in 0..=self.registered.len() {
            if current == component {
                return true;
            }
            match self.registered.get(current).and_then(|r| r.parent.as_ref()) {
                Some(parent) => current = parent,
                None => return false,
            }
        }
        false
    }

    /// Whether an old URN belonged to `component`'s subtree: it (or what took it over in this
    /// deployment) is registered below the component.
    fn was_in_subtree(&self, old: &Urn, component: &Urn) -> bool {
        let current = self.renamed.get(old).unwrap_or(old);
        self.in_subtree(current, component)
    }
}

/// A default provider's reference (`<urn>::<id>`), or why it could not be registered.
type DefaultSlot = Arc<OnceCell<Result<String, String>>>;

/// Counts of steps, for the summary.
#[derive(Default)]
struct Tally {
    changes: IndexMap<StepOp, usize>,
    unchanged: usize,
}

pub(crate) struct Engine {
    pub options: DeploymentOptions,
    events: Arc<dyn EventSink>,
    pub journal: Arc<SnapshotManager>,
    pub providers: ProviderRegistry,
    permits: Semaphore,
    /// Bounds how many registrations are being processed at once; the rest wait in a small
    /// future, so a program that declares 100,000 resources at once does not hold 100,000
    /// fully grown registration futures.
    gate: Semaphore,
    cancelled: AtomicBool,
    /// Set by an interruption (Ctrl-C): new work is refused, work in flight finishes.
    interrupted: AtomicBool,
    /// Every monitor request runs as a task of its own, tracked here: a caller that goes away
    /// (a program that dies, a connection that drops) cannot abandon a step half-way, and the
    /// deployment waits for all of them before it deletes or saves.
    pub in_flight: tokio_util::task::TaskTracker,
    failures: Mutex<Vec<StepFailure>>,
    plan: Mutex<Plan>,
    tally: Mutex<Tally>,
    /// Default provider references by (package, version), each registered once.
    defaults: Mutex<HashMap<(String, Option<String>), DefaultSlot>>,
    pub root_urn: Urn,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn err(message: impl Into<String>) -> MonitorError {
    MonitorError {
        message: message.into(),
    }
}

/// The secret-ness rules for outputs: what the provider returned from secret inputs stays
/// secret ([`crate::value::restore_secrets`]), and so does every output listed in
/// `additionalSecretOutputs`.
fn secure_outputs(
    mut outputs: PropertyMap,
    inputs: &PropertyMap,
    additional: &[String],
) -> PropertyMap {
    crate::value::restore_secrets(&mut outputs, inputs);
    crate::value::mark_secret_copies(&mut outputs, inputs);
    for key in additional {
        if let Some(value) = outputs.get_mut(key)
            && !value.is_secret()
        {
            *value = PropertyValue::secret(std::mem::take(value));
        }
    }
    outputs
}

fn timeout_of(timeouts: Option<&CustomTimeouts>, pick: fn(&CustomTimeouts) -> f64) -> f64 {
    timeouts.map(pick).unwrap_or(0.0)
}

impl Engine {
    pub fn new(
        options: DeploymentOptions,
        loader: Arc<dyn super::provider::ProviderLoader>,
        events: Arc<dyn EventSink>,
        journal: Arc<SnapshotManager>,
    ) -> Result<Engine, MonitorError> {
        let base = journal.base();
        // A deployment acts on what the state says: one that is inconsistent (two live copies
        // of a resource, a missing provider or parent) could make it delete or re-create a
        // resource that exists. Whoever loaded it should have refused it already.
        crate::state::verify_integrity(base).map_err(|e| {
            err(format!(
                "{e}\nrun `cairn state repair` to fix what can be fixed safely"
            ))
        })?;
        let mut plan = Plan::default();
        for (i, resource) in base.resources.iter().enumerate() {
            if !resource.delete {
                plan.live.insert(resource.urn.clone(), i);
            }
        }
        let root_type = TypeToken::parse(ROOT_STACK_TYPE).map_err(|e| err(e.to_string()))?;
        let root_urn = Urn::new(
            &options.stack,
            &options.project,
            None,
            &root_type,
            &format!("{}-{}", options.project, options.stack),
        )
        .map_err(|e| err(e.to_string()))?;
        let parallel = options.parallel.max(1);
        Ok(Engine {
            options,
            events,
            journal,
            providers: ProviderRegistry::new(loader),
            permits: Semaphore::new(parallel),
            gate: Semaphore::new((4 * parallel).max(64)),
            cancelled: AtomicBool::new(false),
            interrupted: AtomicBool::new(false),
            in_flight: tokio_util::task::TaskTracker::new(),
            failures: Mutex::new(Vec::new()),
            plan: Mutex::new(plan),
            tally: Mutex::new(Tally::default()),
            defaults: Mutex::new(HashMap::new()),
            root_urn,
        })
    }

    pub fn base(&self) -> &Snapshot {
        self.journal.base()
    }

    pub fn emit(&self, event: EngineEvent) {
        self.events.emit(event);
    }

    pub fn warn(&self, urn: Option<&Urn>, message: impl Into<String>) {
        self.emit(EngineEvent::Diagnostic {
            severity: Severity::Warning,
            urn: urn.cloned(),
            message: message.into(),
        });
    }

    pub fn failures(&self) -> Vec<StepFailure> {
        lock(&self.failures).clone()
    }

    pub fn tally(&self) -> (IndexMap<StepOp, usize>, usize) {
        let tally = lock(&self.tally);
        (tally.changes.clone(), tally.unchanged)
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    pub fn is_interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    fn ensure_running(&self) -> Result<(), MonitorError> {
        if self.is_interrupted() {
            return Err(err(
                "the deployment was interrupted; nothing new is started",
            ));
        }
        if self.is_cancelled() {
            return Err(err("the deployment was cancelled after an earlier failure"));
        }
        Ok(())
    }

    /// An interruption (Ctrl-C, SIGTERM): start nothing new and ask providers to wrap up;
    /// operations already running finish and are recorded.
    pub async fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        self.cancel().await;
    }

    /// Stops new work and asks every provider to cancel what it is doing.
    pub async fn cancel(&self) {
        if self.cancelled.swap(true, Ordering::SeqCst) {
            return;
        }
        join_all(self.providers.all().into_iter().map(|p| async move {
            p.cancel().await;
        }))
        .await;
    }

    fn count(&self, op: StepOp) {
        let mut tally = lock(&self.tally);
        if op.is_change() {
            *tally.changes.entry(op).or_default() += 1;
        } else {
            tally.unchanged += 1;
        }
    }

    fn preview(&self) -> bool {
        self.options.preview
    }

    fn is_targeted(&self, urn: &Urn) -> bool {
        if self.options.excludes.contains(urn) {
            return false;
        }
        let restricted =
            !self.options.targets.is_empty() || !self.options.target_replaces.is_empty();
        !restricted
            || self.options.targets.contains(urn)
            || self.options.target_replaces.contains(urn)
    }

    fn forced_replace(&self, urn: &Urn) -> bool {
        self.options.replaces.contains(urn) || self.options.target_replaces.contains(urn)
    }

    /// Runs one step: announces it, runs `work` under a parallelism permit, reports the result.
    /// A failure cancels the deployment.
    async fn step<T>(
        &self,
        info: StepInfo,
        counted: bool,
        work: impl Future<Output = Result<T, String>>,
    ) -> Result<T, MonitorError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| err("the deployment is shutting down"))?;
        self.ensure_running()?;
        let started = Instant::now();
        self.emit(EngineEvent::StepStarted(info.clone()));
        match work.await {
            Ok(value) => {
                if counted {
                    self.count(info.op);
                }
                self.emit(EngineEvent::StepFinished {
                    step: info,
                    duration: started.elapsed(),
                });
                Ok(value)
            }
            Err(message) => {
                let urn = info.urn.clone();
                self.emit(EngineEvent::StepFailed {
                    step: info.clone(),
                    error: message.clone(),
                    duration: started.elapsed(),
                });
                let failure = self.fail(&urn, info.op, message).await;
                Err(err(format!(
                    "{} of {urn} failed: {}",
                    info.op, failure.message
                )))
            }
        }
    }

    /// Records a failed step, cancels the deployment, and returns the error to report.
    async fn fail(&self, urn: &Urn, op: StepOp, message: String) -> MonitorError {
        lock(&self.failures).push(StepFailure {
            urn: urn.clone(),
            op,
            message: message.clone(),
        });
        self.cancel().await;
        err(message)
    }

    fn step_info(&self, op: StepOp, urn: &Urn, resource_type: &str, custom: bool) -> StepInfo {
        StepInfo {
            op,
            urn: urn.clone(),
            resource_type: resource_type.to_owned(),
            custom,
            old: None,
            new: None,
            changes: vec![],
            replace_keys: vec![],
            preview: self.preview(),
        }
    }

    fn journal_err(e: impl std::fmt::Display) -> String {
        format!("recording the state failed: {e}")
    }

    /// Durably brackets a provider mutation with begin/end journal records.
    ///
    /// When the operation fails but leaves a real resource behind (a partial state with an ID),
    /// that resource is recorded, with `superseding` (what the recorded state takes the place
    /// of), so it is never lost. A resource whose ID cannot be stored stays a pending operation,
    /// and the error says so. When a result cannot be encoded, the resource is recorded without
    /// its outputs rather than not at all.
    async fn journaled<T>(
        &self,
        kind: OperationKind,
        pending: &ResourceState,
        partial: PartialRecord<'_>,
        work: impl Future<Output = Result<(T, Vec<Mutation>), ProviderError>>,
    ) -> Result<T, String> {
        let id = self
            .journal
            .begin(kind, pending)
            .map_err(Self::journal_err)?;
        match work.await {
            Ok((value, mutations)) => {
                self.end_journaled(id, mutations)?;
                Ok(value)
            }
            Err(e) => {
                let message = crate::limits::cap_message(&e.to_string()).into_owned();
                if matches!(e, ProviderError::OutcomeUnknown { .. }) {
                    // The operation may have happened: its begin record stays, so the state
                    // reports it pending until `cairn refresh` resolves it.
                    return Err(format!(
                        "{message}; it is left recorded as a pending operation: run `cairn refresh` to resolve it"
                    ));
                }
                let mutations = match e.partial() {
                    Some(left) if left.id.len() > crate::limits::MAX_ID_BYTES => {
                        // Nothing can name the resource in the state: the begin record stays,
                        // so every later command reports it until it is resolved.
                        return Err(format!(
                            "{message}; the provider returned an ID of {} bytes (at most {} are allowed), so the resource, which may exist, is left recorded as a pending operation: check the provider's side, then run `cairn stack clear-pending`",
                            left.id.len(),
                            crate::limits::MAX_ID_BYTES
                        ));
                    }
                    Some(left) if !left.id.is_empty() => {
                        let mut state = partial.state.unwrap_or(pending).clone();
                        state.id = Some(left.id.clone());
                        let (outputs, dropped) = storable_outputs(left.outputs.clone());
                        state.outputs = secure_outputs(
                            outputs,
                            &state.inputs,
                            &state.additional_secret_outputs,
                        );
                        state.init_errors = vec![if dropped.is_empty() {
                            message.clone()
                        } else {
                            format!("{message} (outputs not recorded: {})", dropped.join("; "))
                        }];
                        let mut all = vec![Mutation::Append(state)];
                        all.extend(partial.superseding);
                        all
                    }
                    _ => vec![],
                };
                self.end_journaled(id, mutations)?;
                Err(message)
            }
        }
    }

    /// Ends a journaled operation; if its states cannot be encoded (a secret that cannot be
    /// encrypted, say), ends it with those states stripped of their outputs instead, so the
    /// resources stay tracked, and fails the step saying so.
    fn end_journaled(
        &self,
        id: super::journal::PendingId,
        mutations: Vec<Mutation>,
    ) -> Result<(), String> {
        let strip = |state: &mut ResourceState| {
            state.outputs = PropertyMap::new();
            state.init_errors.push(
                "the provider's outputs could not be recorded; run `cairn refresh` to read them again"
                    .to_owned(),
            );
        };
        match self.journal.end_or_strip(id, mutations, strip) {
            Ok(None) => Ok(()),
            Ok(Some(first)) => Err(format!(
                "the resource is recorded without its outputs, which could not be stored: {first}"
            )),
            Err(e) => Err(Self::journal_err(e)),
        }
    }

    fn apply(&self, mutations: Vec<Mutation>) -> Result<(), MonitorError> {
        self.journal
            .apply(mutations)
            .map_err(|e| err(Self::journal_err(e)))
    }

    /// Remembers a registered state that later requests look up: components (for their
    /// outputs) and providers (for default-provider upgrades). Custom resources are not kept:
    /// the journal holds them, and copying every state would double the engine's memory.
    /// Marks its registration finished: from now on others may refer to it.
    fn record(&self, state: &ResourceState) {
        let mut plan = lock(&self.plan);
        plan.completed.insert(state.urn.clone());
        if state.custom && !state.is_provider() {
            return;
        }
        plan.states.insert(state.urn.clone(), state.clone());
    }

    /// The state this deployment recorded for `urn`, else the old one.
    pub fn state_of(&self, urn: &Urn) -> Option<ResourceState> {
        let plan = lock(&self.plan);
        if let Some(state) = plan.states.get(urn) {
            return Some(state.clone());
        }
        plan.live
            .get(urn)
            .map(|&i| self.base().resources[i].clone())
    }

    // ---------------------------------------------------------------------------------------
    // Registration: URN, old state, aliases.

    fn urn_for(
        &self,
        parent: Option<&Urn>,
        resource_type: &TypeToken,
        name: &str,
    ) -> Result<Urn, MonitorError> {
        Urn::new(
            &self.options.stack,
            &self.options.project,
            parent.map(Urn::qualified_type),
            resource_type,
            name,
        )
        .map_err(|e| err(e.to_string()))
    }

    /// The old URNs a resource may have had, from its aliases and its parent's aliases.
    fn alias_urns(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        resource_type: &TypeToken,
        name: &str,
        aliases: &[Alias],
    ) -> Result<Vec<Urn>, MonitorError> {
        let mut out = Vec::new();
        for alias in aliases {
            let alias_urn = match alias {
                Alias::Urn(u) => u.clone(),
                Alias::Spec {
                    name: alias_name,
                    resource_type: alias_type,
                    parent: alias_parent,
                    stack,
                    project,
                } => {
                    let parent_type = match alias_parent {
                        None => parent.map(|p| p.qualified_type().to_owned()),
                        Some(None) => None,
                        Some(Some(p)) => Some(p.qualified_type().to_owned()),
                    };
                    Urn::new(
                        stack.as_deref().unwrap_or(&self.options.stack),
                        project.as_deref().unwrap_or(&self.options.project),
                        parent_type.as_deref(),
                        alias_type.as_ref().unwrap_or(resource_type),
                        alias_name.as_deref().unwrap_or(name),
                    )
                    .map_err(|e| err(format!("invalid alias for {urn}: {e}")))?
                }
            };
            if &alias_urn != urn && !out.contains(&alias_urn) {
                out.push(alias_urn);
            }
        }
        // A parent's old identities change its children's URNs too.
        if let Some(parent) = parent {
            let parent_aliases = lock(&self.plan)
                .registered
                .get(parent)
                .map(|r| r.aliases.clone())
                .unwrap_or_default();
            for parent_alias in parent_aliases {
                let candidate = Urn::new(
                    &self.options.stack,
                    &self.options.project,
                    Some(parent_alias.qualified_type()),
                    resource_type,
                    name,
                )
                .map_err(|e| err(e.to_string()))?;
                if &candidate != urn && !out.contains(&candidate) {
                    out.push(candidate);
                }
            }
        }
        Ok(out)
    }

    /// Records the registration of `urn` (under `parent`) and claims its old state, if any. A
    /// provider acting for a component may only take over old states that were its
    /// component's: their parents lie in the component's subtree.
    fn claim(
        &self,
        urn: &Urn,
        aliases: Vec<Urn>,
        parent: Option<&Urn>,
        caller: &Caller,
    ) -> Result<Option<BaseIndex>, MonitorError> {
        let mut plan = lock(&self.plan);
        if plan.registered.contains_key(urn) {
            return Err(err(format!(
                "duplicate resource URN {urn}: a resource with this type, name and parent was already registered; give it a unique name"
            )));
        }
        let mut found: Vec<BaseIndex> = Vec::new();
        if let Some(&i) = plan.live.get(urn) {
            found.push(i);
        }
        for alias in &aliases {
            if let Some(&i) = plan.live.get(alias)
                && !found.contains(&i)
            {
                found.push(i);
            }
        }
        if found.len() > 1 {
            let urns: Vec<String> = found
                .iter()
                .map(|&i| self.base().resources[i].urn.to_string())
                .collect();
            return Err(err(format!(
                "resource {urn} matches {} resources in the existing state through its aliases ({}); remove the aliases that no longer apply",
                found.len(),
                urns.join(", ")
            )));
        }
        if let Some(&i) = found.first()
            && plan.claimed.contains(&i)
        {
            return Err(err(format!(
                "resource {urn} aliases {}, which another resource in this deployment already took over",
                self.base().resources[i].urn
            )));
        }
        if let (Some(scope), Some(&i)) = (caller.scope(), found.first()) {
            let old = &self.base().resources[i];
            let is_root = scope.root.is_some() && scope.component.as_ref() == Some(urn);
            let inside = match (&scope.component, &old.parent) {
                (Some(component), Some(old_parent)) => plan.was_in_subtree(old_parent, component),
                _ => false,
            };
            if !is_root && !inside {
                return Err(err(scope.violation(format_args!(
                    "{urn} would take over the state of {}, which is outside the component",
                    old.urn
                ))));
            }
        }
        plan.registered.insert(
            urn.clone(),
            Registration {
                parent: parent.cloned(),
                aliases,
            },
        );
        if let Some(&i) = found.first() {
            plan.claimed.insert(i);
            let old_urn = &self.base().resources[i].urn;
            if old_urn != urn {
                plan.renamed.insert(old_urn.clone(), urn.clone());
            }
        }
        Ok(found.first().copied())
    }

    fn was_deleted_early(&self, index: BaseIndex) -> bool {
        lock(&self.plan).deleted_early.contains(&index)
    }

    // ---------------------------------------------------------------------------------------
    // Providers.

    /// The provider reference and configured instance for a resource of `package`: the
    /// explicit one, else the one `providers` names for the package, else the default. A
    /// provider acting for a component may use only providers it registered itself, those the
    /// program handed to the component, and default providers; and no caller reaches a native
    /// plugin its rule does not allow.
    async fn resolve_provider(
        self: &Arc<Self>,
        explicit: Option<&str>,
        providers: &IndexMap<String, String>,
        package: &str,
        version: Option<&str>,
        caller: &Caller,
    ) -> Result<(ProviderReference, Arc<dyn Provider>), MonitorError> {
        let native = caller.native(self.options.native_plugins);
        let explicit = explicit.or_else(|| providers.get(package).map(String::as_str));
        let reference = match explicit {
            Some(text) => ProviderReference::parse(text).map_err(|e| err(e.to_string()))?,
            None => self.default_provider(package, version, native).await?,
        };
        let expected = provider_type(package).map_err(|e| err(e.to_string()))?;
        if reference.urn.resource_type() != expected.as_str() {
            return Err(err(format!(
                "provider {reference} cannot manage package {package:?}: a resource of {package:?} needs a provider of type {expected}"
            )));
        }
        let provider = self.providers.registered(&reference).ok_or_else(|| {
            err(format!(
                "provider {reference} is not registered in this deployment; register the provider resource before the resources that use it"
            ))
        })?;
        let passed = match caller.scope() {
            Some(scope) => {
                let passed = scope.passed_providers.contains(&reference);
                if !passed && !self.may_use_provider(scope, &reference.urn) {
                    return Err(err(scope.violation(format_args!(
                        "it used provider {reference}, which is neither its own, nor handed to the component, nor a default provider"
                    ))));
                }
                passed
            }
            None => false,
        };
        if !passed && !native.allows(provider.origin()) {
            return Err(err(native_refusal(package, caller)));
        }
        Ok((reference, provider))
    }

    /// Whether a provider acting for a component may use the provider resource `urn`: one it
    /// registered in the component's subtree, or a default provider.
    fn may_use_provider(&self, scope: &ComponentScope, urn: &Urn) -> bool {
        let plan = lock(&self.plan);
        plan.default_providers.contains(urn)
            || scope
                .component
                .as_ref()
                .is_some_and(|component| plan.in_subtree(urn, component))
    }

    /// The default provider for `(package, version)`, registering it on first use (with the
    /// native-plugin rule of the first caller that needs it; later callers check the provider
    /// they get against their own rule).
    async fn default_provider(
        self: &Arc<Self>,
        package: &str,
        version: Option<&str>,
        native: NativePlugins,
    ) -> Result<ProviderReference, MonitorError> {
        let cell = lock(&self.defaults)
            .entry((package.to_owned(), version.map(str::to_owned)))
            .or_default()
            .clone();
        let reference = cell
            .get_or_init(|| async {
                let name = match version {
                    Some(v) => format!("default_{}", v.replace(['.', '-', '+'], "_")),
                    None => "default".to_owned(),
                };
                let mut inputs = PropertyMap::new();
                let prefix = format!("{package}:");
                for (key, value) in &self.options.config {
                    if let Some(name) = key.strip_prefix(&prefix) {
                        inputs.insert(name.to_owned(), value.clone());
                    }
                }
                if let Some(v) = version {
                    inputs.insert("version".into(), PropertyValue::String(v.to_owned()));
                }
                let resource_type = provider_type(package).map_err(|e| e.to_string())?;
                let urn = self
                    .urn_for(None, &resource_type, &name)
                    .map_err(|e| e.message)?;
                lock(&self.plan).default_providers.insert(urn.clone());
                self.register_provider(
                    urn,
                    resource_type,
                    None,
                    inputs,
                    ResourceOptions::default(),
                    native,
                    &Caller::Program,
                )
                .await
                .map(|response| format!("{}::{}", response.urn, response.id.unwrap_or_default()))
                .map_err(|e| e.message)
            })
            .await
            .clone()
            .map_err(err)?;
        ProviderReference::parse(&reference).map_err(|e| err(e.to_string()))
    }

    /// Registers a provider resource (`pulumi:providers:<package>`): `check_config`,
    /// `diff_config`, then `configure`.
    #[allow(clippy::too_many_arguments)]
    async fn register_provider(
        self: &Arc<Self>,
        urn: Urn,
        resource_type: TypeToken,
        parent: Option<Urn>,
        inputs: PropertyMap,
        options: ResourceOptions,
        native: NativePlugins,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        self.ensure_running()?;
        let claimed = self.claim(&urn, vec![], parent.as_ref(), caller)?;
        let old = claimed.map(|i| self.base().resources[i].clone());
        let package = resource_type.name().to_owned();
        let version = version_input(&inputs);
        let loader = self.providers.loader().clone();
        let provider = loader
            .load(&package, version.as_ref(), native)
            .await
            .map_err(|e| err(format!("{urn}: {e}")))?;
        if !native.allows(provider.origin()) {
            // A loader must not start what the rule forbids; this catches one that did.
            return Err(err(format!("{urn}: {}", native_refusal(&package, caller))));
        }

        let olds = old.as_ref().map(|o| o.inputs.clone()).unwrap_or_default();
        let checked = self
            .call_check(
                &urn,
                &inputs,
                provider.check_config(CheckRequest {
                    urn: urn.clone(),
                    olds,
                    news: inputs.clone(),
                    random_seed: vec![],
                }),
            )
            .await?;

        let mut state = ResourceState::new(urn.clone(), resource_type.clone(), true);
        state.parent = parent;
        state.inputs = checked.clone();
        state.outputs = checked.clone();
        state.protect = options.protect;

        let (op, mutations, id) = match (&old, claimed) {
            (Some(old), Some(i)) => {
                let diff = provider
                    .diff_config(DiffRequest {
                        urn: &urn,
                        id: old.id.as_deref().unwrap_or_default(),
                        old_inputs: &old.inputs,
                        old_outputs: &old.outputs,
                        news: &checked,
                        ignore_changes: &[],
                    })
                    .await
                    .map_err(|e| err(format!("{urn}: DiffConfig failed: {e}")))?;
                let decision = decide(&DiffFacts {
                    diff: Some(&diff),
                    old_inputs: Some(&old.inputs),
                    new_inputs: Some(&checked),
                    ..DiffFacts::default()
                });
                match decision {
                    Decision::Same | Decision::Update => {
                        let op = if decision == Decision::Same {
                            StepOp::Same
                        } else {
                            StepOp::Update
                        };
                        (
                            op,
                            vec![Mutation::RemoveBase(i)],
                            old.id.clone().unwrap_or_default(),
                        )
                    }
                    Decision::Replace { .. } => {
                        let mut doomed = old.clone();
                        doomed.delete = true;
                        lock(&self.plan).pending_deletes.push(i);
                        (
                            StepOp::Replace,
                            vec![Mutation::ReplaceBase(i, doomed)],
                            self.new_id(),
                        )
                    }
                }
            }
            _ => (StepOp::Create, vec![], self.new_id()),
        };
        state.id = Some(id.clone());
        let reference = ProviderReference {
            urn: urn.clone(),
            id: id.clone(),
        };
        // A replaced provider follows the custom-resource lifecycle: the replacement is created
        // (configured) first, the logical replace is reported, and the old copy is deleted once
        // the program has finished.
        let replaced = op == StepOp::Replace;
        let configure_op = if replaced {
            StepOp::CreateReplacement
        } else {
            op
        };
        let mut info = self.step_info(configure_op, &urn, resource_type.as_str(), true);
        info.old = old.as_ref().map(step_state);
        info.new = Some(step_state(&state));
        if let Some(old) = &old {
            info.changes = diff_properties(&old.inputs, &checked);
        }
        let replace_info = replaced.then(|| StepInfo {
            op: StepOp::Replace,
            ..info.clone()
        });
        let preview = self.preview();
        let configured = provider.clone();
        let config = checked.clone();
        self.step(info, !replaced, async move {
            configured
                .configure(config, preview)
                .await
                .map_err(|e| format!("configuring the provider failed: {e}"))
        })
        .await?;
        if let Some(replace_info) = replace_info {
            self.step(replace_info, true, async { Ok(()) }).await?;
        }
        // Recorded before it can be used, so no resource refers to a provider the state lacks.
        let mut all = vec![Mutation::Append(state.clone())];
        all.extend(mutations);
        self.apply(all)?;
        self.providers.insert(&reference, provider);
        self.record(&state);
        Ok(RegisterResourceResponse {
            urn,
            id: Some(id),
            outputs: checked,
            property_dependencies: IndexMap::new(),
        })
    }

    /// A fresh ID for a created provider; unknown in a preview.
    fn new_id(&self) -> String {
        if self.preview() {
            UNKNOWN_ID.to_owned()
        } else {
            uuid::Uuid::new_v4().to_string()
        }
    }

    /// Runs a Check; `news` is what the provider was given, whose secrets the checked inputs
    /// keep even if the provider dropped them.
    async fn call_check(
        &self,
        urn: &Urn,
        news: &PropertyMap,
        check: impl Future<Output = Result<CheckResult, ProviderError>>,
    ) -> Result<PropertyMap, MonitorError> {
        let result = {
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|_| err("the deployment is shutting down"))?;
            check.await
        }
        .map_err(|e| err(format!("{urn}: Check failed: {e}")))?;
        if result.failures.is_empty() {
            crate::limits::check_properties(&result.inputs).map_err(|e| {
                err(format!(
                    "{urn}: Check failed: the provider returned inputs that cannot be recorded: {e}"
                ))
            })?;
            let mut inputs = result.inputs;
            crate::value::restore_secrets(&mut inputs, news);
            crate::value::mark_secret_copies(&mut inputs, news);
            return Ok(inputs);
        }
        // A provider may report any number of failures; show the first few.
        const SHOWN: usize = 20;
        let mut reasons: Vec<String> = result
            .failures
            .iter()
            .take(SHOWN)
            .map(|f| {
                let reason = crate::limits::cap_text(&f.reason, 4096);
                if f.property.is_empty() {
                    reason.into_owned()
                } else {
                    format!(
                        "property {}: {reason}",
                        crate::limits::cap_text(&f.property, 256)
                    )
                }
            })
            .collect();
        if result.failures.len() > SHOWN {
            reasons.push(format!(
                "and {} more failures",
                result.failures.len() - SHOWN
            ));
        }
        let message = format!("{urn}: invalid inputs: {}", reasons.join("; "));
        for reason in &reasons {
            self.emit(EngineEvent::Diagnostic {
                severity: Severity::Error,
                urn: Some(urn.clone()),
                message: reason.clone(),
            });
        }
        Err(self.fail(urn, StepOp::Create, message).await)
    }

    /// Runs the configured analyzers on a resource's checked inputs: advisory violations warn,
    /// mandatory ones fail the resource before anything is changed.
    async fn analyze(
        &self,
        urn: &Urn,
        resource_type: &TypeToken,
        inputs: &PropertyMap,
    ) -> Result<(), MonitorError> {
        let mut mandatory = Vec::new();
        for analyzer in &self.options.analyzers.0 {
            let violations = analyzer
                .analyze(urn, resource_type, inputs)
                .await
                .map_err(|e| err(format!("{urn}: analyzer {} failed: {e}", analyzer.name())))?;
            for v in violations {
                let message = format!("{}/{}: {}", analyzer.name(), v.policy, v.message);
                match v.enforcement {
                    super::analyzer::Enforcement::Advisory => self.warn(Some(urn), message),
                    super::analyzer::Enforcement::Mandatory => {
                        self.emit(EngineEvent::Diagnostic {
                            severity: Severity::Error,
                            urn: Some(urn.clone()),
                            message: message.clone(),
                        });
                        mandatory.push(message);
                    }
                }
            }
        }
        if mandatory.is_empty() {
            return Ok(());
        }
        let message = format!("{urn}: policy violation: {}", mandatory.join("; "));
        Err(self.fail(urn, StepOp::Create, message).await)
    }

    // ---------------------------------------------------------------------------------------
    // The root stack resource.

    /// Registers the stack's root resource (a component with no provider).
    pub async fn register_root(self: &Arc<Self>) -> Result<(), MonitorError> {
        let root_type = TypeToken::parse(ROOT_STACK_TYPE).map_err(|e| err(e.to_string()))?;
        let urn = self.root_urn.clone();
        let name = urn.name().to_owned();
        self.register_component(
            urn,
            None,
            RegisterResourceRequest::component(root_type, name),
            &Caller::Program,
        )
        .await
        .map(|_| ())
    }

    /// Sets a component's (or the stack's) outputs. A provider acting for a component may set
    /// only the outputs of components in its subtree.
    pub fn register_outputs(
        &self,
        urn: &Urn,
        outputs: PropertyMap,
        caller: &Caller,
    ) -> Result<(), MonitorError> {
        crate::limits::check_properties(&outputs)
            .map_err(|e| err(format!("registering the outputs of {urn}: {e}")))?;
        let mut plan = lock(&self.plan);
        if let Some(scope) = caller.scope() {
            let inside = scope
                .component
                .as_ref()
                .is_some_and(|component| plan.in_subtree(urn, component));
            if !inside {
                return Err(err(scope.violation(format_args!(
                    "it set the outputs of {urn}, which is outside the component"
                ))));
            }
        }
        let Some(state) = plan.states.get_mut(urn).filter(|s| !s.custom) else {
            return Err(err(format!(
                "cannot register outputs for {urn}: it is not a component registered in this deployment"
            )));
        };
        state.outputs = outputs.clone();
        let updated = state.clone();
        drop(plan);
        self.apply(vec![Mutation::ReplaceAppended(urn.clone(), updated)])?;
        self.emit(EngineEvent::Outputs {
            urn: urn.clone(),
            outputs,
        });
        Ok(())
    }

    // ---------------------------------------------------------------------------------------
    // RegisterResource.

    pub async fn register_resource(
        self: &Arc<Self>,
        mut request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        self.ensure_running()?;
        if request.resource_type.as_str() == ROOT_STACK_TYPE {
            // SDKs register the root themselves; the engine already has.
            return Ok(RegisterResourceResponse {
                urn: self.root_urn.clone(),
                id: None,
                outputs: PropertyMap::new(),
                property_dependencies: IndexMap::new(),
            });
        }
        let is_provider = is_provider_type(&request.resource_type);
        if is_provider {
            // The package a provider resource names is looked up (and may name a file).
            let package = request.resource_type.name();
            provider_type(package)
                .ok()
                .filter(|_| crate::urn::is_package_name(package))
                .ok_or_else(|| {
                    err(format!(
                        "{}: {package:?} is not a package name (a letter, then letters, digits and '-')",
                        request.resource_type
                    ))
                })?;
        }
        let parent = match (&request.parent, caller.scope()) {
            (Some(parent), _) => Some(parent.clone()),
            // What a provider registers for a component belongs to the component; a missing
            // parent is refused by the scope check rather than defaulted to the stack.
            (None, Some(_)) => None,
            (None, None) if is_provider => None,
            (None, None) => Some(self.root_urn.clone()),
        };
        check_request(&request)?;
        self.fill_asset_hashes(&mut request, caller)?;
        let urn = self.urn_for(parent.as_ref(), &request.resource_type, &request.name)?;
        if let Some(scope) = caller.scope() {
            self.check_in_scope(scope, &urn, parent.as_ref(), &request)?;
        }
        self.check_references(&urn, parent.as_ref(), &request)?;
        let dependencies = all_dependencies(&request);
        if request.remote {
            return Box::pin(self.construct(urn, parent, request, caller)).await;
        }
        if is_provider {
            let native = caller.native(self.options.native_plugins);
            return Box::pin(self.register_provider(
                urn,
                request.resource_type,
                parent,
                request.inputs,
                request.options,
                native,
                caller,
            ))
            .await;
        }
        // Providers and remote components are not gated: they register on behalf of (and while)
        // other registrations hold the gate, and Construct registers children through it.
        let _gate = self
            .gate
            .acquire()
            .await
            .map_err(|_| err("the deployment is shutting down"))?;
        if !request.custom {
            let mut request = request;
            if let Some(root) = caller.scope().and_then(|s| s.root.as_ref())
                && caller.scope().and_then(|s| s.component.as_ref()) == Some(&urn)
            {
                // The component a construct registers keeps the identities the program gave
                // it (checked above to include any the provider sent).
                request.options.aliases = root.aliases.iter().cloned().map(Alias::Urn).collect();
            }
            return Box::pin(self.register_component(urn, parent, request, caller)).await;
        }
        Box::pin(self.register_custom(urn, parent, dependencies, request, caller)).await
    }

    /// Refuses a registration that refers to a resource this deployment has not registered
    /// (parent, `dependsOn`, property dependencies, `deletedWith`, providers, alias parents),
    /// before any provider is called: a state referring to a resource the snapshot lacks would
    /// fail its integrity check.
    fn check_references(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        request: &RegisterResourceRequest,
    ) -> Result<(), MonitorError> {
        let options = &request.options;
        let plan = lock(&self.plan);
        let missing = |field: &str, target: &Urn| {
            err(format!(
                "{urn}: {field} refers to {target}, which is not a resource registered in this deployment (a resource must be registered, and its registration finished, before others refer to it)"
            ))
        };
        if let Some(parent) = parent
            && !plan.completed.contains(parent)
        {
            return Err(missing("parent", parent));
        }
        for target in &options.depends_on {
            if !plan.completed.contains(target) {
                return Err(missing("dependsOn", target));
            }
        }
        for (key, targets) in &request.property_dependencies {
            for target in targets {
                if !plan.completed.contains(target) {
                    return Err(missing(
                        &format!("the dependencies of property {key:?}"),
                        target,
                    ));
                }
            }
        }
        if let Some(target) = &options.deleted_with
            && !plan.completed.contains(target)
        {
            return Err(missing("deletedWith", target));
        }
        drop(plan);
        let providers = options
            .provider
            .iter()
            .map(|text| ("provider".to_owned(), text))
            .chain(
                options
                    .providers
                    .iter()
                    .map(|(package, text)| (format!("providers[{package:?}]"), text)),
            );
        for (field, text) in providers {
            let reference =
                ProviderReference::parse(text).map_err(|e| err(format!("{urn}: {field}: {e}")))?;
            if self.providers.registered(&reference).is_none() {
                return Err(err(format!(
                    "{urn}: {field} refers to provider {reference}, which is not registered in this deployment; register the provider resource before the resources that use it"
                )));
            }
        }
        for alias in &options.aliases {
            if let Alias::Spec {
                parent: Some(Some(alias_parent)),
                ..
            } = alias
                && !self.is_known(alias_parent)
            {
                return Err(missing("an alias's parent", alias_parent));
            }
        }
        Ok(())
    }

    /// Whether `urn` names a resource of this deployment or of the state it started from.
    fn is_known(&self, urn: &Urn) -> bool {
        lock(&self.plan).registered.contains_key(urn)
            || self.base().resources.iter().any(|r| &r.urn == urn)
    }

    /// Refuses what a provider acting for a component may not register: anything outside the
    /// component's subtree, a different component than the one asked for, resources of the
    /// built-in `pulumi` package (which read other stacks), imports of resources the stack
    /// already manages elsewhere.
    fn check_in_scope(
        &self,
        scope: &ComponentScope,
        urn: &Urn,
        parent: Option<&Urn>,
        request: &RegisterResourceRequest,
    ) -> Result<(), MonitorError> {
        let violation = |detail: String| Err(err(scope.violation(detail)));
        let Some(component) = &scope.component else {
            return violation(format!(
                "it registered {urn}, but a call that names no component may register nothing"
            ));
        };
        if urn == component
            && let Some(root) = &scope.root
        {
            if request.custom
                || request.remote
                || request.resource_type != root.resource_type
                || request.name != root.name
                || parent != root.parent.as_ref()
            {
                return violation(format!(
                    "it registered {urn} differently from the component the program asked for (a {} with parent {})",
                    root.resource_type,
                    describe_parent(root.parent.as_ref())
                ));
            }
            let aliases = self.alias_urns(
                urn,
                parent,
                &request.resource_type,
                &request.name,
                &request.options.aliases,
            )?;
            if let Some(extra) = aliases.iter().find(|a| !root.aliases.contains(a)) {
                return violation(format!(
                    "it gave the component {urn} the alias {extra}, which the program did not"
                ));
            }
            return Ok(());
        }
        let inside = parent.is_some_and(|p| p != urn && lock(&self.plan).in_subtree(p, component));
        if !inside {
            return violation(format!(
                "it registered {urn} with parent {}, outside the component; what a provider registers for a component must have the component as its parent, directly or through resources it registered",
                describe_parent(parent)
            ));
        }
        if request.resource_type.package() == "pulumi" && !is_provider_type(&request.resource_type)
        {
            return violation(format!(
                "it registered {urn}, a resource of the built-in pulumi package, which only the program may use"
            ));
        }
        // Importing (or reading) by ID a resource the stack manages elsewhere would let the
        // provider act on it (an import is deleted with the component).
        if let Some(id) = &request.options.import_id
            && let Some(owner) =
                self.owner_of_id(request.resource_type.package(), id, urn, component)
        {
            return violation(format!(
                "it named ID {id:?} for {urn}, the ID of {owner}, which the stack manages outside the component"
            ));
        }
        // Provider references it hands on (to a child, or to a nested component as that
        // component's providers) must be ones it may use itself.
        let handed = request
            .options
            .provider
            .iter()
            .chain(request.options.providers.values());
        for text in handed {
            if let Ok(reference) = ProviderReference::parse(text)
                && !scope.passed_providers.contains(&reference)
                && !self.may_use_provider(scope, &reference.urn)
            {
                return violation(format!(
                    "it gave {urn} provider {reference}, which is neither its own, nor handed to the component, nor a default provider"
                ));
            }
        }
        Ok(())
    }

    /// A resource of `package` with ID `id` outside `component`'s subtree, in the old state or
    /// recorded in this deployment, other than `urn`'s own old state. (Scoped imports are rare;
    /// building the current snapshot for one costs less than indexing every ID for all.)
    fn owner_of_id(&self, package: &str, id: &str, urn: &Urn, component: &Urn) -> Option<Urn> {
        let current = self.journal.current();
        let plan = lock(&self.plan);
        let managed = |r: &&ResourceState| {
            r.custom
                && !r.delete
                && &r.urn != urn
                && r.resource_type.package() == package
                && r.id.as_deref() == Some(id)
        };
        let outside = |r: &ResourceState| {
            !plan.in_subtree(&r.urn, component)
                && !r
                    .parent
                    .as_ref()
                    .is_some_and(|p| plan.was_in_subtree(p, component))
        };
        self.base()
            .resources
            .iter()
            .chain(current.resources.iter())
            .filter(managed)
            .find(|r| outside(r))
            .map(|r| r.urn.clone())
    }

    async fn register_component(
        self: &Arc<Self>,
        urn: Urn,
        parent: Option<Urn>,
        request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let RegisterResourceRequest {
            resource_type,
            inputs,
            options,
            property_dependencies,
            ..
        } = request;
        let aliases = self.alias_urns(
            &urn,
            parent.as_ref(),
            &resource_type,
            urn.name(),
            &options.aliases,
        )?;
        let claimed = self.claim(&urn, aliases, parent.as_ref(), caller)?;
        let old = claimed.map(|i| self.base().resources[i].clone());
        let mut state = ResourceState::new(urn.clone(), resource_type.clone(), false);
        state.parent = parent;
        state.inputs = inputs;
        state.outputs = old.as_ref().map(|o| o.outputs.clone()).unwrap_or_default();
        state.protect = options.protect;
        state.dependencies = options.depends_on.clone();
        state.property_dependencies = property_dependencies;
        state.aliases = old
            .as_ref()
            .filter(|o| o.urn != urn)
            .map(|o| vec![o.urn.clone()])
            .unwrap_or_default();
        state.retain_on_delete = options.retain_on_delete;
        state.deleted_with = options.deleted_with.clone();
        state.created = old.as_ref().and_then(|o| o.created.clone());

        let op = match &old {
            None => StepOp::Create,
            Some(o) if o.inputs == state.inputs => StepOp::Same,
            Some(_) => StepOp::Update,
        };
        let mut info = self.step_info(op, &urn, resource_type.as_str(), false);
        info.old = old.as_ref().map(step_state);
        info.new = Some(step_state(&state));
        if let Some(old) = &old {
            info.changes = diff_properties(&old.inputs, &state.inputs);
        }
        let mut mutations = vec![Mutation::Append(state.clone())];
        mutations.extend(claimed.map(Mutation::RemoveBase));
        self.step(info, true, async { Ok(()) }).await?;
        self.apply(mutations)?;
        self.record(&state);
        Ok(RegisterResourceResponse {
            urn,
            id: None,
            outputs: state.outputs,
            property_dependencies: IndexMap::new(),
        })
    }

    /// Builds a remote component through its provider's `construct`, with a monitor scoped to
    /// the component: the provider registers the component itself (as the program asked for
    /// it) and resources below it, and nothing else.
    async fn construct(
        self: &Arc<Self>,
        urn: Urn,
        parent: Option<Urn>,
        request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let options = &request.options;
        let package = request.resource_type.package().to_owned();
        let (_, provider) = self
            .resolve_provider(
                options.provider.as_deref(),
                &options.providers,
                &package,
                options.version.as_deref(),
                caller,
            )
            .await?;
        let aliases = self.alias_urns(
            &urn,
            parent.as_ref(),
            &request.resource_type,
            &request.name,
            &options.aliases,
        )?;
        let config = self
            .options
            .config
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
            .collect();
        let scope = self.component_scope(
            &provider,
            "construct",
            Some(urn.clone()),
            Some(ExpectedRoot {
                resource_type: request.resource_type.clone(),
                name: request.name.clone(),
                parent: parent.clone(),
                aliases: aliases.clone(),
            }),
            options,
            caller,
        );
        let described = scope.provider.clone();
        let caller = Arc::new(Caller::Component(scope));
        let result = provider
            .construct(
                ConstructRequest {
                    project: self.options.project.clone(),
                    stack: self.options.stack.clone(),
                    resource_type: request.resource_type.to_string(),
                    name: request.name.clone(),
                    parent,
                    inputs: request.inputs.clone(),
                    input_dependencies: request.property_dependencies.clone(),
                    dependencies: options.depends_on.clone(),
                    protect: options.protect,
                    providers: options.providers.clone(),
                    aliases,
                    dry_run: self.preview(),
                    config,
                },
                super::monitor::Monitor::for_caller(self.clone(), caller.clone()),
            )
            .await;
        let result = scoped_result(&caller, result, || format!("constructing {urn}"))?;
        let refused =
            |detail: String| err(format!("constructing {urn} failed: {described} {detail}"));
        if let Some(returned) = &result.urn
            && returned != &urn
        {
            return Err(refused(format!(
                "returned {returned}, not the component it was asked to build"
            )));
        }
        if !lock(&self.plan).completed.contains(&urn) {
            return Err(refused(
                "did not register the component it was asked to build".to_owned(),
            ));
        }
        crate::limits::check_properties(&result.state)
            .map_err(|e| refused(format!("returned invalid outputs: {e}")))?;
        self.check_completed(&result.state_dependencies)
            .map_err(|target| refused(format!("returned output dependencies on {target}, which is not a resource registered in this deployment")))?;
        Ok(RegisterResourceResponse {
            urn,
            id: None,
            outputs: result.state,
            property_dependencies: result.state_dependencies,
        })
    }

    /// The scope of a provider acting for `component` in `method`: providers the program handed
    /// over with `options`, and the native-plugin rule (a sandboxed provider's registrations
    /// reach only wasm providers and plugins the project names).
    #[allow(clippy::too_many_arguments)]
    fn component_scope(
        &self,
        provider: &Arc<dyn Provider>,
        method: &'static str,
        component: Option<Urn>,
        root: Option<ExpectedRoot>,
        options: &ResourceOptions,
        caller: &Caller,
    ) -> Box<ComponentScope> {
        let passed_providers = options
            .provider
            .iter()
            .chain(options.providers.values())
            .filter_map(|text| ProviderReference::parse(text).ok())
            .collect();
        let own = match provider.origin() {
            ProviderOrigin::Sandboxed => NativePlugins::ProjectNamed,
            _ => NativePlugins::Any,
        };
        Box::new(ComponentScope {
            provider: provider.describe(),
            method,
            component,
            root,
            passed_providers,
            native: own.and(caller.native(self.options.native_plugins)),
            violations: Default::default(),
        })
    }

    /// The first URN in `dependencies` that has not completed its registration, if any.
    fn check_completed(&self, dependencies: &IndexMap<String, Vec<Urn>>) -> Result<(), Urn> {
        let plan = lock(&self.plan);
        match dependencies
            .values()
            .flatten()
            .find(|u| !plan.completed.contains(*u))
        {
            Some(urn) => Err(urn.clone()),
            None => Ok(()),
        }
    }

    async fn register_custom(
        self: &Arc<Self>,
        urn: Urn,
        parent: Option<Urn>,
        dependencies: Vec<Urn>,
        request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let options = &request.options;
        let aliases = self.alias_urns(
            &urn,
            parent.as_ref(),
            &request.resource_type,
            &request.name,
            &options.aliases,
        )?;
        let claimed = self.claim(&urn, aliases, parent.as_ref(), caller)?;
        let old = claimed.map(|i| self.base().resources[i].clone());
        let package = request.resource_type.package().to_owned();
        let (provider_ref, provider) = self
            .resolve_provider(
                options.provider.as_deref(),
                &options.providers,
                &package,
                options.version.as_deref(),
                caller,
            )
            .await?;

        // The new state, before the provider has had its say.
        let mut state = ResourceState::new(urn.clone(), request.resource_type.clone(), true);
        state.parent = parent;
        state.provider = Some(provider_ref.clone());
        state.protect = options.protect;
        state.dependencies = dependencies;
        state.property_dependencies = request.property_dependencies.clone();
        state.additional_secret_outputs = options.additional_secret_outputs.clone();
        state.custom_timeouts = options.custom_timeouts;
        state.retain_on_delete = options.retain_on_delete;
        state.deleted_with = options.deleted_with.clone();
        state.ignore_changes = options.ignore_changes.clone();
        state.replace_on_changes = options.replace_on_changes.clone();
        state.import_id = options.import_id.clone();
        state.aliases = old
            .as_ref()
            .filter(|o| o.urn != urn)
            .map(|o| vec![o.urn.clone()])
            .unwrap_or_default();

        let ignore_changes = parse_paths(&urn, "ignoreChanges", &options.ignore_changes)?;
        let replace_on_changes =
            parse_paths(&urn, "replaceOnChanges", &options.replace_on_changes)?;
        let mut inputs = request.inputs.clone();
        if let Some(old) = &old {
            let old_root = PropertyValue::Object(old.inputs.clone());
            let mut new_root = PropertyValue::Object(inputs);
            for path in &ignore_changes {
                path.reset(&old_root, &mut new_root);
            }
            inputs = match new_root {
                PropertyValue::Object(map) => map,
                _ => PropertyMap::new(),
            };
        }

        if !self.is_targeted(&urn) {
            return self.untargeted(urn, claimed, old, state, inputs);
        }

        // `import`: adopt an existing resource.
        if let Some(import_id) = &options.import_id {
            let same_resource = old.as_ref().is_some_and(|o| {
                o.id.as_deref() == Some(import_id.as_str())
                    || o.import_id.as_deref() == Some(import_id.as_str())
            });
            if !same_resource {
                return self
                    .import(
                        urn,
                        claimed,
                        old,
                        state,
                        inputs,
                        import_id.clone(),
                        provider,
                    )
                    .await;
            }
        }

        let old_usable = old
            .as_ref()
            .filter(|o| !o.pending_replacement)
            .filter(|_| !claimed.is_some_and(|i| self.was_deleted_early(i)));

        let checked = self
            .call_check(
                &urn,
                &inputs,
                provider.check(CheckRequest {
                    urn: urn.clone(),
                    olds: old_usable.map(|o| o.inputs.clone()).unwrap_or_default(),
                    news: inputs.clone(),
                    random_seed: urn.as_str().as_bytes().to_vec(),
                }),
            )
            .await?;
        state.inputs = checked.clone();
        self.analyze(&urn, &request.resource_type, &checked).await?;

        let Some(old) = old_usable.cloned() else {
            // New, or re-created after a delete-before-replace.
            let op = if old.is_some() {
                StepOp::CreateReplacement
            } else {
                StepOp::Create
            };
            let base = claimed.filter(|_| old.is_some());
            if let Some(old) = &old {
                let mut info =
                    self.step_info(StepOp::Replace, &urn, request.resource_type.as_str(), true);
                info.old = Some(step_state(old));
                info.new = Some(step_state(&state));
                self.step(info, true, async { Ok(()) }).await?;
            }
            return self.create(op, state, provider, base, None, options).await;
        };
        let index = claimed.ok_or_else(|| err("internal error: old state without an index"))?;

        // The resource's provider changed: replace, unless both are default providers and the
        // new one's DiffConfig says it can manage what the old one created.
        let provider_replaced = match &old.provider {
            Some(old_ref) if old_ref != &provider_ref => {
                !self
                    .default_provider_can_adopt(old_ref, &provider_ref, &provider)
                    .await
            }
            _ => false,
        };
        let forced = self.forced_replace(&urn);
        let diff = if provider_replaced {
            None
        } else {
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|_| err("the deployment is shutting down"))?;
            Some(
                provider
                    .diff(DiffRequest {
                        urn: &urn,
                        id: old.id.as_deref().unwrap_or_default(),
                        old_inputs: &old.inputs,
                        old_outputs: &old.outputs,
                        news: &checked,
                        ignore_changes: &ignore_changes,
                    })
                    .await
                    .map_err(|e| err(format!("{urn}: Diff failed: {e}")))?,
            )
        };
        let decision = decide(&DiffFacts {
            forced_replace: forced,
            provider_replaced,
            diff: diff.as_ref(),
            old_inputs: Some(&old.inputs),
            new_inputs: Some(&checked),
            replace_on_changes: &replace_on_changes,
            delete_before_replace: options.delete_before_replace,
        });
        let changes = diff
            .as_ref()
            .and_then(|d| changes_from_detailed(d, &old.inputs, &old.outputs, &checked))
            .unwrap_or_else(|| diff_properties(&old.inputs, &checked));

        // A resource recorded with initialization errors (a partly failed create or update) is
        // updated even without changes, as Pulumi does, so the provider can finish the job.
        let decision = match decision {
            Decision::Same if !old.init_errors.is_empty() => Decision::Update,
            other => other,
        };
        match decision {
            Decision::Same => self.same(state, &old, index),
            Decision::Update => {
                self.update(state, old, index, provider, changes, ignore_changes)
                    .await
            }
            Decision::Replace {
                delete_before_replace,
                keys,
            } => {
                if old.protect {
                    let message = format!(
                        "{urn} is protected and cannot be replaced (it would be because of {}); run `cairn state unprotect {urn}` first",
                        if keys.is_empty() {
                            "a forced replacement".to_owned()
                        } else {
                            keys.join(", ")
                        }
                    );
                    return Err(self.fail(&urn, StepOp::Replace, message).await);
                }
                // Re-check without old inputs so generated defaults are not reused.
                let rechecked = self
                    .call_check(
                        &urn,
                        &inputs,
                        provider.check(CheckRequest {
                            urn: urn.clone(),
                            olds: PropertyMap::new(),
                            news: inputs.clone(),
                            random_seed: urn.as_str().as_bytes().to_vec(),
                        }),
                    )
                    .await?;
                state.inputs = rechecked;
                let mut replace_info =
                    self.step_info(StepOp::Replace, &urn, request.resource_type.as_str(), true);
                replace_info.old = Some(step_state(&old));
                replace_info.new = Some(step_state(&state));
                replace_info.changes = mark_replace(changes, &keys);
                replace_info.replace_keys = keys;
                if delete_before_replace {
                    self.delete_dependents_of(index).await?;
                    self.delete_replaced(&old, index).await?;
                    self.step(replace_info.clone(), true, async { Ok(()) })
                        .await?;
                    self.create(
                        StepOp::CreateReplacement,
                        state,
                        provider,
                        Some(index),
                        None,
                        options,
                    )
                    .await
                } else {
                    self.step(replace_info, true, async { Ok(()) }).await?;
                    self.create(
                        StepOp::CreateReplacement,
                        state,
                        provider,
                        None,
                        Some((index, old)),
                        options,
                    )
                    .await
                }
            }
        }
    }

    /// A resource left out by `--target` / `--exclude`: keep its old state untouched.
    fn untargeted(
        &self,
        urn: Urn,
        claimed: Option<BaseIndex>,
        old: Option<ResourceState>,
        state: ResourceState,
        inputs: PropertyMap,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        match (old, claimed) {
            (Some(old), Some(i)) => {
                lock(&self.plan).untargeted.insert(i);
                self.count(StepOp::Same);
                self.apply(vec![Mutation::Append(old.clone()), Mutation::RemoveBase(i)])?;
                self.record(&old);
                Ok(RegisterResourceResponse {
                    urn,
                    id: old.id,
                    outputs: old.outputs,
                    property_dependencies: IndexMap::new(),
                })
            }
            _ => {
                self.warn(
                    Some(&urn),
                    format!("{urn} is not targeted by this update, so it is not created"),
                );
                let _ = state;
                Ok(RegisterResourceResponse {
                    urn,
                    id: None,
                    outputs: inputs,
                    property_dependencies: IndexMap::new(),
                })
            }
        }
    }

    /// Whether a resource may move from one default provider to another without replacement.
    async fn default_provider_can_adopt(
        &self,
        old_ref: &ProviderReference,
        new_ref: &ProviderReference,
        new_provider: &Arc<dyn Provider>,
    ) -> bool {
        let is_default = |r: &ProviderReference| r.urn.name().starts_with("default");
        if !is_default(old_ref)
            || !is_default(new_ref)
            || old_ref.urn.resource_type() != new_ref.urn.resource_type()
        {
            return false;
        }
        let Some(old_provider) = self.state_of_base(&old_ref.urn) else {
            return false;
        };
        let Some(new_state) = self.state_of(&new_ref.urn) else {
            return false;
        };
        match new_provider
            .diff_config(DiffRequest {
                urn: &new_ref.urn,
                id: &new_ref.id,
                old_inputs: &old_provider.inputs,
                old_outputs: &old_provider.outputs,
                news: &new_state.inputs,
                ignore_changes: &[],
            })
            .await
        {
            Ok(diff) => !decide(&DiffFacts {
                diff: Some(&diff),
                old_inputs: Some(&old_provider.inputs),
                new_inputs: Some(&new_state.inputs),
                ..DiffFacts::default()
            })
            .is_replace(),
            Err(_) => false,
        }
    }

    fn state_of_base(&self, urn: &Urn) -> Option<ResourceState> {
        self.base()
            .resources
            .iter()
            .find(|r| &r.urn == urn && !r.delete)
            .cloned()
    }

    fn same(
        &self,
        mut state: ResourceState,
        old: &ResourceState,
        index: BaseIndex,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        state.id = old.id.clone();
        state.outputs = old.outputs.clone();
        state.created = old.created.clone();
        state.modified = old.modified.clone();
        state.init_errors = vec![];
        // Fields this engine does not manage carry over untouched.
        state.source_position = old.source_position.clone();
        state.extra = old.extra.clone();
        // No states in the event: nothing changed, and copying them costs at scale.
        let info = self.step_info(StepOp::Same, &state.urn, state.resource_type.as_str(), true);
        self.count(StepOp::Same);
        self.emit(EngineEvent::StepFinished {
            step: info,
            duration: Duration::ZERO,
        });
        // An identical state stays where it is in the base: nothing to record or copy. (Moved
        // states are re-ordered dependencies-first when the snapshot is assembled.)
        if &state != old {
            self.apply(vec![
                Mutation::Append(state.clone()),
                Mutation::RemoveBase(index),
            ])?;
        }
        self.record(&state);
        Ok(RegisterResourceResponse {
            urn: state.urn.clone(),
            id: state.id.clone(),
            outputs: state.outputs,
            property_dependencies: IndexMap::new(),
        })
    }

    async fn create(
        &self,
        op: StepOp,
        mut state: ResourceState,
        provider: Arc<dyn Provider>,
        // For a delete-before-replace re-creation: the base entry this state supersedes.
        supersedes: Option<BaseIndex>,
        // For a create-before-replace: the old entry, to mark for deletion.
        replaces: Option<(BaseIndex, ResourceState)>,
        options: &ResourceOptions,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let urn = state.urn.clone();
        let preview = self.preview();
        let timeout = timeout_of(options.custom_timeouts.as_ref(), |t| t.create);
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
        let mut info = self.step_info(op, &urn, state.resource_type.as_str(), true);
        info.old = replaces.as_ref().map(|(_, o)| step_state(o));
        info.new = Some(step_state(&state));
        if replaces.is_none() && supersedes.is_none() {
            info.changes = diff_properties(&PropertyMap::new(), &state.inputs);
        }
        let counted = op == StepOp::Create;
        let request = CreateRequest {
            urn: urn.clone(),
            properties: state.inputs.clone(),
            timeout,
            preview,
        };
        let pending = state.clone();
        // What the new state takes the place of: the old copy deleted ahead of it, or the old
        // copy it replaces (marked for deletion).
        let mut superseding = Vec::new();
        if let Some(i) = supersedes {
            superseding.push(Mutation::RemoveBase(i));
        }
        if let Some((i, old)) = &replaces {
            let mut doomed = old.clone();
            doomed.delete = true;
            superseding.push(Mutation::ReplaceBase(*i, doomed));
        }
        let partial = PartialRecord {
            state: None,
            superseding: superseding.clone(),
        };
        let result = self
            .step(info, counted, async {
                let work = async {
                    let created = with_timeout(timeout, provider.create(request)).await?;
                    let outputs =
                        accept_result(&*provider, &urn, &created.id, created.outputs, !preview)?;
                    let mut done = pending.clone();
                    if !preview {
                        done.id = Some(created.id);
                    }
                    done.outputs =
                        secure_outputs(outputs, &done.inputs, &done.additional_secret_outputs);
                    done.created = Some(now.clone());
                    done.modified = Some(now.clone());
                    let mut mutations = vec![Mutation::Append(done.clone())];
                    mutations.extend(superseding);
                    Ok((done, mutations))
                };
                self.journaled(OperationKind::Creating, &pending, partial, work)
                    .await
            })
            .await?;
        if let Some((i, _)) = replaces {
            lock(&self.plan).pending_deletes.push(i);
        }
        state = result;
        self.record(&state);
        Ok(RegisterResourceResponse {
            urn,
            id: state.id.clone().filter(|id| !id.is_empty()),
            outputs: state.outputs,
            property_dependencies: IndexMap::new(),
        })
    }

    async fn update(
        &self,
        state: ResourceState,
        old: ResourceState,
        index: BaseIndex,
        provider: Arc<dyn Provider>,
        changes: Vec<super::events::PropertyChange>,
        ignore_changes: Vec<PropertyPath>,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let urn = state.urn.clone();
        let preview = self.preview();
        let timeout = timeout_of(state.custom_timeouts.as_ref(), |t| t.update);
        let mut info = self.step_info(StepOp::Update, &urn, state.resource_type.as_str(), true);
        info.old = Some(step_state(&old));
        info.new = Some(step_state(&state));
        info.changes = changes;
        let request = UpdateRequest {
            urn: urn.clone(),
            id: old.id.clone().unwrap_or_default(),
            old_inputs: old.inputs.clone(),
            old_outputs: old.outputs.clone(),
            news: state.inputs.clone(),
            timeout,
            ignore_changes,
            preview,
        };
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
        let mut next = state.clone();
        next.id = old.id.clone();
        next.created = old.created.clone();
        next.source_position = old.source_position.clone();
        next.extra = old.extra.clone();
        next.modified = Some(now);
        // A failed update that reports partial state records the new inputs with what the
        // provider says the resource now is, in place of the old state.
        let partial = PartialRecord {
            state: Some(&next),
            superseding: vec![Mutation::RemoveBase(index)],
        };
        let id = old.id.clone().unwrap_or_default();
        let done = self
            .step(info, true, async {
                let work = async {
                    let updated = with_timeout(timeout, provider.update(request)).await?;
                    let outputs = accept_result(&*provider, &urn, &id, updated.outputs, false)?;
                    let mut done = next.clone();
                    done.outputs =
                        secure_outputs(outputs, &done.inputs, &done.additional_secret_outputs);
                    let mutations =
                        vec![Mutation::Append(done.clone()), Mutation::RemoveBase(index)];
                    Ok((done, mutations))
                };
                self.journaled(OperationKind::Updating, &old, partial, work)
                    .await
            })
            .await?;
        self.record(&done);
        Ok(RegisterResourceResponse {
            urn,
            id: done.id.clone(),
            outputs: done.outputs,
            property_dependencies: IndexMap::new(),
        })
    }

    /// Deletes an old resource ahead of its replacement (delete-before-replace): it stays in the
    /// state marked `pendingReplacement` until the replacement exists.
    async fn delete_replaced(
        &self,
        old: &ResourceState,
        index: BaseIndex,
    ) -> Result<(), MonitorError> {
        let provider = self.provider_for_old(old).await.map_err(err)?;
        let mut info = self.step_info(
            StepOp::DeleteReplaced,
            &old.urn,
            old.resource_type.as_str(),
            old.custom,
        );
        info.old = Some(step_state(old));
        let preview = self.preview();
        let mut marked = old.clone();
        marked.pending_replacement = true;
        let request = delete_request(old);
        // The logical replacement is counted once, by its Replace step.
        self.step(info, false, async {
            if preview {
                return Ok(());
            }
            let work = async {
                if let Some(provider) = &provider {
                    with_timeout(request.timeout, provider.delete(request.clone())).await?;
                }
                Ok(((), vec![Mutation::ReplaceBase(index, marked.clone())]))
            };
            self.journaled(OperationKind::Deleting, old, PartialRecord::default(), work)
                .await
        })
        .await?;
        lock(&self.plan).deleted_early.insert(index);
        Ok(())
    }

    /// Before a delete-before-replace of base[index]: deletes the resources that depend on it and
    /// would themselves be replaced (dependents first), per the spec's dependent-replacement rule.
    async fn delete_dependents_of(&self, index: BaseIndex) -> Result<(), MonitorError> {
        let refs: Vec<&ResourceState> = self.base().resources.iter().collect();
        let graph = DependencyGraph::new(&refs);
        let dependents = graph.transitive_dependents(index);
        let mut replaced: HashSet<Urn> = HashSet::from([self.base().resources[index].urn.clone()]);
        let mut doomed: Vec<BaseIndex> = Vec::new();
        for i in dependents {
            let dependent = &self.base().resources[i];
            {
                let plan = lock(&self.plan);
                if plan.claimed.contains(&i) || plan.deleted_early.contains(&i) || dependent.delete
                {
                    continue;
                }
            }
            if self.replaced_by_dependency(dependent, &replaced).await {
                replaced.insert(dependent.urn.clone());
                doomed.push(i);
            }
        }
        // Dependents of dependents first.
        for &i in doomed.iter().rev() {
            let dependent = self.base().resources[i].clone();
            if dependent.protect {
                return Err(err(format!(
                    "{} is protected and would have to be replaced because a resource it depends on is replaced delete-before-replace; run `cairn state unprotect {}` first",
                    dependent.urn, dependent.urn
                )));
            }
            self.delete_replaced(&dependent, i).await?;
        }
        Ok(())
    }

    /// Whether `dependent` must be replaced when the resources in `replaced` are: its provider
    /// or parent is among them, or its provider's Diff says so once the inputs that flow from
    /// them are unknown.
    async fn replaced_by_dependency(
        &self,
        dependent: &ResourceState,
        replaced: &HashSet<Urn>,
    ) -> bool {
        if dependent
            .provider
            .as_ref()
            .is_some_and(|p| replaced.contains(&p.urn))
        {
            return true;
        }
        if !dependent.custom {
            return false;
        }
        let affected: Vec<&String> = dependent
            .property_dependencies
            .iter()
            .filter(|(_, urns)| urns.iter().any(|u| replaced.contains(u)))
            .map(|(key, _)| key)
            .collect();
        if affected.is_empty() {
            // Only `dependsOn` (or a parent): its inputs do not change.
            return false;
        }
        let mut news = dependent.inputs.clone();
        for key in affected {
            news.insert(key.clone(), PropertyValue::Computed);
        }
        let Ok(Some(provider)) = self.provider_for_old(dependent).await else {
            return true;
        };
        match provider
            .diff(DiffRequest {
                urn: &dependent.urn,
                id: dependent.id.as_deref().unwrap_or_default(),
                old_inputs: &dependent.inputs,
                old_outputs: &dependent.outputs,
                news: &news,
                ignore_changes: &[],
            })
            .await
        {
            Ok(diff) => diff.requires_replacement(),
            // When in doubt, replace: deleting the dependency would break it otherwise.
            Err(_) => true,
        }
    }

    /// The configured provider managing an old resource (None for components and providers).
    async fn provider_for_old(
        &self,
        resource: &ResourceState,
    ) -> Result<Option<Arc<dyn Provider>>, String> {
        if !resource.custom || resource.is_provider() {
            return Ok(None);
        }
        let Some(reference) = &resource.provider else {
            return Err(format!("{} records no provider", resource.urn));
        };
        if let Some(provider) = self.providers.registered(reference) {
            return Ok(Some(provider));
        }
        let provider_state = self
            .base()
            .resources
            .iter()
            .find(|r| r.urn == reference.urn && r.id.as_deref() == Some(reference.id.as_str()));
        self.providers
            .recorded(reference, provider_state, self.options.native_plugins)
            .await
            .map(Some)
    }

    #[allow(clippy::too_many_arguments)]
    async fn import(
        &self,
        urn: Urn,
        claimed: Option<BaseIndex>,
        old: Option<ResourceState>,
        mut state: ResourceState,
        inputs: PropertyMap,
        import_id: String,
        provider: Arc<dyn Provider>,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let op = if old.is_some() {
            StepOp::ImportReplacement
        } else {
            StepOp::Import
        };
        let mut info = self.step_info(op, &urn, state.resource_type.as_str(), true);
        info.old = old.as_ref().map(step_state);
        let preview = self.preview();
        let ignore = parse_paths(&urn, "ignoreChanges", &state.ignore_changes)?;
        let pending = state.clone();
        let engine = self;
        let replacing = op == StepOp::ImportReplacement;
        let done = self
            .step(info, !replacing, async {
                let work = async {
                    let read = provider
                        .read(ReadRequest {
                            urn: urn.clone(),
                            id: import_id.clone(),
                            inputs: PropertyMap::new(),
                            state: PropertyMap::new(),
                        })
                        .await?;
                    accept_read(&*provider, &urn, &read).map_err(ProviderError::failed)?;
                    if read.id.is_empty() {
                        return Err(ProviderError::failed(format!(
                            "there is no resource with ID {import_id:?} to import"
                        )));
                    }
                    // ignoreChanges: keep the actual values of ignored properties.
                    let mut desired = PropertyValue::Object(inputs.clone());
                    let actual = PropertyValue::Object(read.inputs.clone());
                    for path in &ignore {
                        path.reset(&actual, &mut desired);
                    }
                    let desired = match desired {
                        PropertyValue::Object(m) => m,
                        _ => PropertyMap::new(),
                    };
                    let checked = provider
                        .check(CheckRequest {
                            urn: urn.clone(),
                            olds: read.inputs.clone(),
                            news: desired,
                            random_seed: vec![],
                        })
                        .await?;
                    if !checked.failures.is_empty() {
                        let reasons: Vec<String> = checked
                            .failures
                            .iter()
                            .map(|f| format!("{}: {}", f.property, f.reason))
                            .collect();
                        return Err(ProviderError::failed(format!(
                            "the imported resource's inputs are invalid: {}",
                            reasons.join("; ")
                        )));
                    }
                    let diff = provider
                        .diff(DiffRequest {
                            urn: &urn,
                            id: &read.id,
                            old_inputs: &read.inputs,
                            old_outputs: &read.outputs,
                            news: &checked.inputs,
                            ignore_changes: &ignore,
                        })
                        .await?;
                    let differs = match diff.changes {
                        DiffChanges::None => false,
                        DiffChanges::Some => true,
                        DiffChanges::Unknown => read.inputs != checked.inputs,
                    };
                    if differs {
                        let keys = if diff.changed_keys.is_empty() {
                            diff_properties(&read.inputs, &checked.inputs)
                                .iter()
                                .map(|c| c.path.to_string())
                                .collect()
                        } else {
                            diff.changed_keys.clone()
                        };
                        let message = format!(
                            "the program's inputs for the imported resource differ from its actual state ({}); change the program to match",
                            keys.join(", ")
                        );
                        if preview {
                            engine.warn(Some(&urn), message);
                        } else {
                            return Err(ProviderError::failed(message));
                        }
                    }
                    let mut done = pending.clone();
                    done.id = Some(read.id);
                    done.inputs = checked.inputs;
                    crate::value::restore_secrets(&mut done.inputs, &inputs);
                    done.outputs = secure_outputs(read.outputs, &done.inputs, &done.additional_secret_outputs);
                    done.import_id = Some(import_id.clone());
                    let mut mutations = vec![Mutation::Append(done.clone())];
                    if let (Some(i), Some(old)) = (claimed, &old) {
                        let mut doomed = old.clone();
                        doomed.delete = true;
                        mutations.push(Mutation::ReplaceBase(i, doomed));
                    }
                    Ok((done, mutations))
                };
                engine
                    .journaled(OperationKind::Importing, &pending, PartialRecord::default(), work)
                    .await
            })
            .await?;
        if let Some(i) = claimed {
            lock(&self.plan).pending_deletes.push(i);
        }
        if let (true, Some(old)) = (replacing, &old) {
            let mut info = self.step_info(StepOp::Replace, &urn, done.resource_type.as_str(), true);
            info.old = Some(step_state(old));
            info.new = Some(step_state(&done));
            self.step(info, true, async { Ok(()) }).await?;
        }
        state = done;
        self.record(&state);
        Ok(RegisterResourceResponse {
            urn,
            id: state.id.clone(),
            outputs: state.outputs,
            property_dependencies: IndexMap::new(),
        })
    }

    // ---------------------------------------------------------------------------------------
    // ReadResource, Invoke, Call.

    pub async fn read_resource(
        self: &Arc<Self>,
        request: ReadResourceRequest,
        caller: &Caller,
    ) -> Result<super::program::ReadResourceResponse, MonitorError> {
        self.ensure_running()?;
        let parent = match (&request.parent, caller.scope()) {
            (Some(parent), _) => Some(parent.clone()),
            (None, Some(_)) => None,
            (None, None) => Some(self.root_urn.clone()),
        };
        // A read is checked as the registration of an external resource with those references.
        let as_registration = RegisterResourceRequest {
            parent: parent.clone(),
            inputs: request.properties.clone(),
            options: ResourceOptions {
                depends_on: request.dependencies.clone(),
                provider: request.provider.clone(),
                import_id: Some(request.id.clone()),
                ..ResourceOptions::default()
            },
            ..RegisterResourceRequest::custom(
                request.resource_type.clone(),
                request.name.clone(),
                PropertyMap::new(),
            )
        };
        check_request(&as_registration)?;
        let urn = self.urn_for(parent.as_ref(), &request.resource_type, &request.name)?;
        if let Some(scope) = caller.scope() {
            self.check_in_scope(scope, &urn, parent.as_ref(), &as_registration)?;
        }
        self.check_references(&urn, parent.as_ref(), &as_registration)?;
        let claimed = self.claim(&urn, vec![], parent.as_ref(), caller)?;
        let old = claimed.map(|i| self.base().resources[i].clone());
        let package = request.resource_type.package().to_owned();
        let (provider_ref, provider) = self
            .resolve_provider(
                request.provider.as_deref(),
                &IndexMap::new(),
                &package,
                request.version.as_deref(),
                caller,
            )
            .await?;
        let op = match &old {
            Some(o) if !o.external => StepOp::ReadReplacement,
            _ => StepOp::Read,
        };
        let mut state = ResourceState::new(urn.clone(), request.resource_type.clone(), true);
        state.parent = parent;
        state.external = true;
        state.provider = Some(provider_ref);
        state.dependencies = request.dependencies.clone();
        state.additional_secret_outputs = request.additional_secret_outputs.clone();
        state.id = Some(request.id.clone());
        let mut info = self.step_info(op, &urn, request.resource_type.as_str(), true);
        info.old = old.as_ref().map(step_state);
        let pending = state.clone();
        let done = self
            .step(info, true, async {
                let read = provider
                    .read(ReadRequest {
                        urn: urn.clone(),
                        id: request.id.clone(),
                        inputs: request.properties.clone(),
                        state: request.properties.clone(),
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                accept_read(&*provider, &urn, &read)?;
                if read.id.is_empty() {
                    return Err(format!("there is no resource with ID {:?}", request.id));
                }
                let mut done = pending.clone();
                done.id = Some(read.id);
                done.inputs = if read.inputs.is_empty() {
                    request.properties.clone()
                } else {
                    read.inputs
                };
                done.outputs =
                    secure_outputs(read.outputs, &done.inputs, &done.additional_secret_outputs);
                Ok(done)
            })
            .await?;
        let mut mutations = vec![Mutation::Append(done.clone())];
        match (claimed, &old) {
            (Some(i), Some(o)) if !o.external => {
                let mut doomed = o.clone();
                doomed.delete = true;
                mutations.push(Mutation::ReplaceBase(i, doomed));
                lock(&self.plan).pending_deletes.push(i);
            }
            (Some(i), Some(_)) => mutations.push(Mutation::RemoveBase(i)),
            _ => {}
        }
        self.apply(mutations)?;
        self.record(&done);
        Ok(super::program::ReadResourceResponse {
            urn,
            outputs: done.outputs,
        })
    }

    /// The provider of a function token's package (`pkg:module:function`).
    async fn function_provider(
        self: &Arc<Self>,
        token: &str,
        explicit: Option<&str>,
        version: Option<&str>,
        caller: &Caller,
    ) -> Result<Arc<dyn Provider>, MonitorError> {
        self.ensure_running()?;
        let parsed =
            TypeToken::parse(token).map_err(|e| err(format!("invalid function token: {e}")))?;
        let package = parsed.package();
        if let Some(scope) = caller.scope()
            && package == "pulumi"
        {
            return Err(err(scope.violation(format_args!(
                "it called {token}, a function of the built-in pulumi package, which only the program may use"
            ))));
        }
        let (_, provider) = self
            .resolve_provider(explicit, &IndexMap::new(), package, version, caller)
            .await?;
        Ok(provider)
    }

    pub async fn invoke(
        self: &Arc<Self>,
        request: ProgramInvokeRequest,
        caller: &Caller,
    ) -> Result<InvokeResult, MonitorError> {
        let token = crate::text::visible_line(&request.token).into_owned();
        crate::limits::check_properties(&request.args)
            .map_err(|e| err(format!("invoking {token}: invalid arguments: {e}")))?;
        let provider = self
            .function_provider(
                &request.token,
                request.provider.as_deref(),
                request.version.as_deref(),
                caller,
            )
            .await?;
        let result = provider
            .invoke(InvokeRequest {
                token: request.token.clone(),
                args: request.args,
            })
            .await
            .map_err(|e| err(format!("invoking {token} failed: {e}")))?;
        crate::limits::check_properties(&result.outputs).map_err(|e| {
            err(format!(
                "invoking {token} failed: {} returned invalid outputs: {e}",
                provider.describe()
            ))
        })?;
        Ok(result)
    }

    /// Calls a component's method through its provider, with a monitor scoped to the component
    /// named by the `__self__` argument.
    pub async fn call(
        self: &Arc<Self>,
        request: ProgramCallRequest,
        caller: &Caller,
    ) -> Result<CallResult, MonitorError> {
        let token = crate::text::visible_line(&request.token).into_owned();
        crate::limits::check_properties(&request.args)
            .map_err(|e| err(format!("calling {token}: invalid arguments: {e}")))?;
        self.check_completed(&request.arg_dependencies)
            .map_err(|target| {
                err(format!(
                    "calling {token}: the arguments depend on {target}, which is not a resource registered in this deployment"
                ))
            })?;
        let component = match request.args.get("__self__") {
            Some(PropertyValue::ResourceReference(reference)) => Some(reference.urn.clone()),
            _ => None,
        };
        if let Some(scope) = caller.scope() {
            let inside = match (&component, &scope.component) {
                (Some(target), Some(own)) => lock(&self.plan).in_subtree(target, own),
                _ => false,
            };
            if !inside {
                return Err(err(scope.violation(format_args!(
                    "it called {token} on {}, which is outside the component",
                    describe_parent(component.as_ref())
                ))));
            }
        }
        let provider = self
            .function_provider(
                &request.token,
                request.provider.as_deref(),
                request.version.as_deref(),
                caller,
            )
            .await?;
        let scope = self.component_scope(
            &provider,
            "call",
            component,
            None,
            &ResourceOptions::default(),
            caller,
        );
        let described = scope.provider.clone();
        let caller = Arc::new(Caller::Component(scope));
        let result = provider
            .call(
                CallRequest {
                    token: request.token.clone(),
                    args: request.args,
                    arg_dependencies: request.arg_dependencies,
                    project: self.options.project.clone(),
                    stack: self.options.stack.clone(),
                    dry_run: self.preview(),
                },
                super::monitor::Monitor::for_caller(self.clone(), caller.clone()),
            )
            .await;
        let result = scoped_result(&caller, result, || format!("calling {token}"))?;
        crate::limits::check_properties(&result.outputs).map_err(|e| {
            err(format!(
                "calling {token} failed: {described} returned invalid outputs: {e}"
            ))
        })?;
        self.check_completed(&result.output_dependencies)
            .map_err(|target| {
                err(format!(
                    "calling {token} failed: {described} returned output dependencies on {target}, which is not a resource registered in this deployment"
                ))
            })?;
        Ok(result)
    }

    // ---------------------------------------------------------------------------------------
    // Deletes.

    /// Base entries an update must delete once the program has finished: unregistered
    /// resources, copies replaced create-before-delete, and leftovers marked for deletion.
    pub fn update_deletions(&self) -> Vec<BaseIndex> {
        let plan = lock(&self.plan);
        let mut out: Vec<BaseIndex> = (0..self.base().resources.len())
            .filter(|i| !plan.claimed.contains(i) && !plan.deleted_early.contains(i))
            .collect();
        out.extend(plan.pending_deletes.iter().copied());
        out.sort_unstable();
        out.dedup();
        // With --target / --exclude, only the chosen resources go (plus replaced copies).
        out.retain(|&i| {
            plan.pending_deletes.contains(&i) || self.is_targeted(&self.base().resources[i].urn)
        });
        out
    }

    /// Refuses deletions that would leave a remaining resource referring to a deleted one: a
    /// resource that stays untouched (not registered, not deleted) or was kept as it is by
    /// `--target`. Registered resources have new dependencies and cannot refer to these.
    pub fn check_deletable(&self, doomed: &[BaseIndex]) -> Result<(), MonitorError> {
        let plan = lock(&self.plan);
        let doomed_urns: HashMap<&Urn, BaseIndex> = doomed
            .iter()
            .filter(|i| !plan.pending_deletes.contains(i))
            .map(|&i| (&self.base().resources[i].urn, i))
            .collect();
        if doomed_urns.is_empty() {
            return Ok(());
        }
        let doomed_set: HashSet<BaseIndex> = doomed.iter().copied().collect();
        let mut problems = Vec::new();
        for (i, resource) in self.base().resources.iter().enumerate() {
            let stays = !doomed_set.contains(&i)
                && (!plan.claimed.contains(&i) || plan.untargeted.contains(&i));
            if !stays {
                continue;
            }
            for target in crate::deploy::graph::dependencies_of(resource) {
                if doomed_urns.contains_key(target) {
                    problems.push(format!(
                        "cannot delete {target}: {} depends on it and is not part of this update; target it too, or change what it depends on",
                        resource.urn
                    ));
                }
            }
        }
        problems.dedup();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(err(problems.join("; ")))
        }
    }

    /// Deletes the given base entries: protected ones refuse (before anything is deleted), the
    /// rest run as antichains, dependents first, each antichain in parallel.
    pub async fn delete_all(self: &Arc<Self>, indices: Vec<BaseIndex>) -> Result<(), MonitorError> {
        let protected: Vec<String> = indices
            .iter()
            .map(|&i| &self.base().resources[i])
            .filter(|r| r.protect && !r.delete)
            .map(|r| r.urn.to_string())
            .collect();
        if !protected.is_empty() {
            let message = format!(
                "refusing to delete protected resource{} {}; run `cairn state unprotect <urn>` first",
                if protected.len() == 1 { "" } else { "s" },
                protected.join(", ")
            );
            for urn in &protected {
                if let Ok(urn) = Urn::parse(urn) {
                    lock(&self.failures).push(StepFailure {
                        urn,
                        op: StepOp::Delete,
                        message: message.clone(),
                    });
                }
            }
            return Err(err(message));
        }
        let doomed: HashSet<&Urn> = indices
            .iter()
            .map(|&i| &self.base().resources[i].urn)
            .collect();
        let refs: Vec<&ResourceState> =
            indices.iter().map(|&i| &self.base().resources[i]).collect();
        let layers = DependencyGraph::new(&refs).delete_antichains();
        for layer in layers {
            self.ensure_running()?;
            let results = join_all(layer.into_iter().map(|local| {
                let index = indices[local];
                let resource = &self.base().resources[index];
                let deleted_with = resource
                    .deleted_with
                    .as_ref()
                    .is_some_and(|target| doomed.contains(target));
                self.delete_one(index, deleted_with)
            }))
            .await;
            if let Some(error) = results.into_iter().find_map(Result::err) {
                return Err(error);
            }
        }
        Ok(())
    }

    async fn delete_one(&self, index: BaseIndex, deleted_with: bool) -> Result<(), MonitorError> {
        let resource = self.base().resources[index].clone();
        // Already physically gone (an interrupted delete-before-replace), kept only for the
        // state's sake; or its deletion is implied by another's; or the user asked to keep it.
        // External (read) resources are not the stack's to delete.
        let discard = resource.pending_replacement
            || deleted_with
            || resource.retain_on_delete
            || resource.external;
        // A copy replaced create-before-delete in this deployment is marked `delete` only in the
        // journal; its replacement was already counted.
        let replaced_copy = resource.delete || lock(&self.plan).pending_deletes.contains(&index);
        let op = if replaced_copy {
            StepOp::DeleteReplaced
        } else if discard {
            StepOp::Discard
        } else {
            StepOp::Delete
        };
        let mut info = self.step_info(
            op,
            &resource.urn,
            resource.resource_type.as_str(),
            resource.custom,
        );
        info.old = Some(step_state(&resource));
        let preview = self.preview();
        let provider = if discard {
            None
        } else {
            self.provider_for_old(&resource)
                .await
                .map_err(|e| err(format!("cannot delete {}: {e}", resource.urn)))?
        };
        let counted = !replaced_copy;
        self.step(info, counted, async {
            if preview {
                return Ok(());
            }
            match provider {
                Some(provider) => {
                    let request = delete_request(&resource);
                    let work = async {
                        with_timeout(request.timeout, provider.delete(request.clone())).await?;
                        Ok(((), vec![Mutation::RemoveBase(index)]))
                    };
                    self.journaled(
                        OperationKind::Deleting,
                        &resource,
                        PartialRecord::default(),
                        work,
                    )
                    .await
                }
                None => self
                    .journal
                    .apply(vec![Mutation::RemoveBase(index)])
                    .map_err(Self::journal_err),
            }
        })
        .await
    }

    // ---------------------------------------------------------------------------------------
    // Refresh.

    /// Reads every managed resource from its provider, recording drift and dropping resources
    /// deleted out of band.
    pub async fn refresh_all(self: &Arc<Self>) -> Result<(), MonitorError> {
        let targets: Vec<BaseIndex> = (0..self.base().resources.len())
            .filter(|&i| {
                let r = &self.base().resources[i];
                r.custom && !r.is_provider() && !r.pending_replacement && self.is_targeted(&r.urn)
            })
            .collect();
        let results = join_all(
            targets
                .into_iter()
                .map(|i| async move { (i, self.refresh_one(i).await) }),
        )
        .await;
        let mut failures = Vec::new();
        let mut updated: HashMap<BaseIndex, ResourceState> = HashMap::new();
        let mut gone: HashMap<Urn, Option<Urn>> = HashMap::new();
        let mut removed = Vec::new();
        for (index, result) in results {
            match result {
                Ok(Refreshed::Unchanged) => {}
                Ok(Refreshed::Drifted(state)) => {
                    updated.insert(index, *state);
                }
                Ok(Refreshed::Gone) => {
                    let r = &self.base().resources[index];
                    gone.insert(r.urn.clone(), r.parent.clone());
                    removed.push(index);
                }
                // Report every failure, not only the first.
                Err(e) => failures.push(e.message),
            }
        }
        // What remains must not refer to what is gone: drop those dependencies, and give
        // children of a vanished resource its parent.
        if !gone.is_empty() {
            for (index, resource) in self.base().resources.iter().enumerate() {
                if removed.contains(&index) {
                    continue;
                }
                let current = updated.get(&index).unwrap_or(resource);
                if let Some(cleaned) = without_references(current, &gone) {
                    updated.insert(index, cleaned);
                }
            }
        }
        let mut mutations: Vec<Mutation> = updated
            .into_iter()
            .map(|(index, state)| Mutation::ReplaceBase(index, state))
            .collect();
        mutations.extend(removed.into_iter().map(Mutation::RemoveBase));
        self.apply(mutations)?;
        if failures.is_empty() {
            Ok(())
        } else {
            Err(err(failures.join("; ")))
        }
    }

    /// Resolves the pending operations an interrupted deployment left in the base snapshot.
    /// The refresh has re-read every resource that is still in the state, which settles
    /// interrupted updates, deletes and reads. An interrupted create (or import) may have made
    /// a resource the state does not know: it is imported by the ID the user gives, forgotten
    /// if the user says so, and otherwise stays pending (reported on every command).
    pub async fn resolve_pending(&self) -> Result<(), MonitorError> {
        let pending = &self.base().pending_operations;
        let decisions = &self.options.pending_creates;
        for urn in decisions.keys() {
            let known = pending
                .iter()
                .any(|op| op.resource.urn == *urn && op.kind.may_have_created());
            if !known {
                let pending = if pending.is_empty() {
                    "none".to_owned()
                } else {
                    describe_pending(pending)
                };
                return Err(err(format!(
                    "{urn} has no pending create to resolve (pending: {pending})"
                )));
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        let mut kept = Vec::new();
        let mut failures = Vec::new();
        for op in pending {
            let urn = &op.resource.urn;
            match op.kind {
                kind if kind.may_have_created() => match decisions.get(urn) {
                    Some(PendingCreate::Clear) => {
                        self.warn(Some(urn), format!("forgot the interrupted create of {urn}"));
                    }
                    Some(PendingCreate::Import(id)) => {
                        if let Err(e) = self.import_pending(&op.resource, id).await {
                            failures.push(e.message);
                            kept.push(op);
                        }
                    }
                    None => {
                        self.warn(
                                Some(urn),
                                format!(
                                    "the create of {urn} was interrupted and is still pending: if the provider created it, import it with `cairn refresh --import-pending-creates {urn} <ID>`; if not, forget it with `cairn refresh --clear-pending-creates`"
                                ),
                            );
                        kept.push(op);
                    }
                },
                kind => self.warn(
                    Some(urn),
                    format!(
                        "{} {urn} was interrupted; the refresh has recorded its current state",
                        kind.verb()
                    ),
                ),
            }
        }
        let journal_err = |e| err(Self::journal_err(e));
        self.journal.drop_base_pending().map_err(journal_err)?;
        // What stays pending is recorded again, as an operation begun and never ended.
        for op in kept {
            self.journal
                .begin(op.kind, &op.resource)
                .map_err(journal_err)?;
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(err(failures.join("; ")))
        }
    }

    /// Gives every asset and archive in a registration's inputs its SHA-256 `hash`, as Pulumi's
    /// engine does (SDK programs send none), so the state records it. Files are read only for
    /// callers that run native code anyway (Python and Node.js programs), relative to the
    /// program's directory: a sandboxed program or provider must not make the engine read host
    /// files (or block on `/dev/zero`). Values with remote sources are left as they came.
    fn fill_asset_hashes(
        &self,
        request: &mut RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<(), MonitorError> {
        use crate::asset::{ArchiveSource, AssetSource};
        #[derive(Default)]
        struct Found {
            unhashed: bool,
            local: bool,
            remote: bool,
        }
        fn note(found: &mut Found, hash: &Option<String>, local: bool, remote: bool) {
            found.unhashed |= hash.is_none();
            found.local |= local;
            found.remote |= remote;
        }
        fn scan_archive(archive: &crate::asset::Archive, found: &mut Found) {
            note(
                found,
                &archive.hash,
                matches!(archive.source, ArchiveSource::Path(_)),
                matches!(archive.source, ArchiveSource::Uri(_)),
            );
            if let ArchiveSource::Assets(members) = &archive.source {
                for member in members.values() {
                    match member {
                        crate::asset::ArchiveMember::Asset(a) => scan_asset(a, found),
                        crate::asset::ArchiveMember::Archive(a) => scan_archive(a, found),
                    }
                }
            }
        }
        fn scan_asset(asset: &crate::asset::Asset, found: &mut Found) {
            note(
                found,
                &asset.hash,
                matches!(asset.source, AssetSource::Path(_)),
                matches!(asset.source, AssetSource::Uri(_)),
            );
        }
        fn scan(value: &PropertyValue, found: &mut Found) {
            match value {
                PropertyValue::Asset(a) => scan_asset(a, found),
                PropertyValue::Archive(a) => scan_archive(a, found),
                PropertyValue::Array(items) => items.iter().for_each(|v| scan(v, found)),
                PropertyValue::Object(map) => map.values().for_each(|v| scan(v, found)),
                PropertyValue::Secret(inner) => scan(inner, found),
                PropertyValue::Output(o) => {
                    if let Some(v) = &o.value {
                        scan(v, found)
                    }
                }
                _ => {}
            }
        }
        let mut found = Found::default();
        for value in request.inputs.values() {
            scan(value, &mut found);
        }
        let reads_files = caller.native(self.options.native_plugins) == NativePlugins::Any;
        if !found.unhashed || found.remote || (found.local && !reads_files) {
            return Ok(());
        }
        let context = crate::asset::AssetContext {
            base_dir: self.options.program_dir.as_deref(),
            fetcher: None,
        };
        crate::asset::fill_hashes(&mut request.inputs, &context).map_err(|e| {
            err(format!(
                "{} {:?}: {e}",
                request.resource_type,
                crate::text::visible_line(&request.name)
            ))
        })
    }

    /// Before an update or destroy: interrupted creates must be resolved first (doing them
    /// again could duplicate a resource that exists); a preview only warns.
    pub fn check_pending_creates(&self, command: &str) -> Result<(), MonitorError> {
        let Some(message) = super::unresolved_creates(self.base(), command) else {
            return Ok(());
        };
        if self.preview() {
            self.warn(None, message);
            Ok(())
        } else {
            Err(err(message))
        }
    }

    /// After an update that succeeded: interrupted updates and reads are settled (every
    /// resource the program declares was brought to what it declares), and so are
    /// interrupted deletes of resources no longer in the state; an interrupted delete of a
    /// resource the state still holds stays pending until a refresh reads it.
    pub fn settle_pending_after_update(&self) -> Result<(), MonitorError> {
        let pending = &self.base().pending_operations;
        if pending.is_empty() || !self.options.targets.is_empty() || self.preview() {
            return Ok(());
        }
        let live: HashSet<Urn> = self
            .journal
            .current()
            .resources
            .into_iter()
            .filter(|r| !r.delete)
            .map(|r| r.urn)
            .collect();
        let journal_err = |e| err(Self::journal_err(e));
        self.journal.drop_base_pending().map_err(journal_err)?;
        for op in pending {
            let settled = match op.kind {
                OperationKind::Updating | OperationKind::Reading => true,
                OperationKind::Deleting => !live.contains(&op.resource.urn),
                OperationKind::Creating | OperationKind::Importing => false,
            };
            if !settled {
                self.journal
                    .begin(op.kind, &op.resource)
                    .map_err(journal_err)?;
            }
        }
        Ok(())
    }

    /// Adopts the resource an interrupted create may have made, by the ID the user gives: the
    /// provider reads it, and it is recorded with the inputs the create was given.
    async fn import_pending(&self, pending: &ResourceState, id: &str) -> Result<(), MonitorError> {
        let urn = &pending.urn;
        let fail = |message: String| {
            err(format!(
                "cannot import the pending create of {urn} as {id:?}: {message}"
            ))
        };
        crate::limits::check_len("ID", id, crate::limits::MAX_ID_BYTES)
            .map_err(|e| fail(e.to_string()))?;
        let live = |target: &Urn| lock(&self.plan).live.contains_key(target);
        if let Some(parent) = pending.parent.as_ref().filter(|p| !live(p)) {
            return Err(fail(format!("its parent {parent} is not in the state")));
        }
        let provider = self
            .provider_for_old(pending)
            .await
            .map_err(fail)?
            .ok_or_else(|| fail("it is not a custom resource".to_owned()))?;
        let mut info = self.step_info(StepOp::Import, urn, pending.resource_type.as_str(), true);
        // Read as a refresh reads (as Pulumi does once it has set the ID): with what the create
        // was given, which some providers need to read at all (a dynamic provider finds its
        // code there).
        let read = self
            .checked_read(
                &*provider,
                ReadRequest {
                    urn: urn.clone(),
                    id: id.to_owned(),
                    inputs: pending.inputs.clone(),
                    state: pending.outputs.clone(),
                },
            )
            .await?
            .map_err(|e| fail(e.to_string()))?;
        if read.id.is_empty() {
            return Err(fail(format!(
                "{} found no such resource",
                provider.describe()
            )));
        }
        let mut state = pending.clone();
        // What the create was given stays its inputs unless the provider says otherwise.
        if !read.inputs.is_empty() {
            state.inputs = read.inputs;
            crate::value::restore_secrets(&mut state.inputs, &pending.inputs);
        }
        // References to what is no longer in the state are dropped, so the state stays whole.
        state.dependencies.retain(|d| live(d));
        for targets in state.property_dependencies.values_mut() {
            targets.retain(|d| live(d));
        }
        state.deleted_with = state.deleted_with.filter(|d| live(d));
        state.id = Some(read.id);
        state.outputs = secure_outputs(
            read.outputs,
            &state.inputs,
            &state.additional_secret_outputs,
        );
        state.import_id = Some(id.to_owned());
        info.new = Some(step_state(&state));
        self.emit(EngineEvent::StepFinished {
            step: info,
            duration: Duration::ZERO,
        });
        self.count(StepOp::Import);
        self.apply(vec![Mutation::Append(state)])
    }

    /// A provider Read under a parallelism permit, its result checked before use; the outer
    /// error is the deployment shutting down.
    async fn checked_read(
        &self,
        provider: &dyn Provider,
        request: ReadRequest,
    ) -> Result<Result<super::provider::ReadResult, ProviderError>, MonitorError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| err("the deployment is shutting down"))?;
        let urn = request.urn.clone();
        Ok(provider.read(request).await.and_then(|read| {
            accept_read(provider, &urn, &read)
                .map(|()| read)
                .map_err(ProviderError::failed)
        }))
    }

    async fn refresh_one(&self, index: BaseIndex) -> Result<Refreshed, MonitorError> {
        let resource = self.base().resources[index].clone();
        let provider = self
            .provider_for_old(&resource)
            .await
            .map_err(|e| err(format!("cannot refresh {}: {e}", resource.urn)))?;
        let Some(provider) = provider else {
            return Ok(Refreshed::Unchanged);
        };
        let read = self
            .checked_read(
                &*provider,
                ReadRequest {
                    urn: resource.urn.clone(),
                    id: resource.id.clone().unwrap_or_default(),
                    inputs: resource.inputs.clone(),
                    state: resource.outputs.clone(),
                },
            )
            .await?;
        let mut info = self.step_info(
            StepOp::Refresh,
            &resource.urn,
            resource.resource_type.as_str(),
            true,
        );
        info.old = Some(step_state(&resource));
        let read = match read {
            Ok(read) => read,
            Err(e) => {
                let message = format!("refreshing {} failed: {e}", resource.urn);
                self.emit(EngineEvent::StepFailed {
                    step: info,
                    error: e.to_string(),
                    duration: Duration::ZERO,
                });
                lock(&self.failures).push(StepFailure {
                    urn: resource.urn.clone(),
                    op: StepOp::Refresh,
                    message: message.clone(),
                });
                return Err(err(message));
            }
        };
        if read.id.is_empty() {
            info.op = StepOp::Discard;
            self.count(StepOp::Discard);
            self.emit(EngineEvent::Diagnostic {
                severity: Severity::Info,
                urn: Some(resource.urn.clone()),
                message: format!(
                    "{} no longer exists; it is removed from the state",
                    resource.urn
                ),
            });
            self.emit(EngineEvent::StepFinished {
                step: info,
                duration: Duration::ZERO,
            });
            return Ok(Refreshed::Gone);
        }
        let mut refreshed = resource.clone();
        refreshed.id = Some(read.id);
        if !read.inputs.is_empty() {
            refreshed.inputs = read.inputs;
            crate::value::restore_secrets(&mut refreshed.inputs, &resource.inputs);
        }
        refreshed.outputs = secure_outputs(
            read.outputs,
            &refreshed.inputs,
            &refreshed.additional_secret_outputs,
        );
        info.changes = diff_properties(&resource.outputs, &refreshed.outputs);
        info.new = Some(step_state(&refreshed));
        let drifted = !info.changes.is_empty() || refreshed.inputs != resource.inputs;
        if drifted {
            info.op = StepOp::Update;
        }
        self.count(info.op);
        self.emit(EngineEvent::StepFinished {
            step: info,
            duration: Duration::ZERO,
        });
        Ok(if drifted {
            Refreshed::Drifted(Box::new(refreshed))
        } else {
            Refreshed::Unchanged
        })
    }
}

/// What a refresh found for one resource.
enum Refreshed {
    Unchanged,
    Drifted(Box<ResourceState>),
    /// Deleted out of band.
    Gone,
}

/// `resource` without references to vanished resources (`gone`: URN → its parent), or `None`
/// if it has none.
fn without_references(
    resource: &ResourceState,
    gone: &HashMap<Urn, Option<Urn>>,
) -> Option<ResourceState> {
    let refers = crate::deploy::graph::dependencies_of(resource).any(|u| gone.contains_key(u));
    if !refers {
        return None;
    }
    let mut cleaned = resource.clone();
    cleaned.dependencies.retain(|u| !gone.contains_key(u));
    // Entries left empty by the cleanup go; entries that were empty already stay.
    cleaned.property_dependencies.retain(|_, urns| {
        let before = urns.len();
        urns.retain(|u| !gone.contains_key(u));
        before == 0 || !urns.is_empty()
    });
    if cleaned
        .deleted_with
        .as_ref()
        .is_some_and(|u| gone.contains_key(u))
    {
        cleaned.deleted_with = None;
    }
    // Climb past vanished parents to the nearest one that remains.
    while let Some(parent) = cleaned.parent.clone() {
        match gone.get(&parent) {
            Some(grandparent) => cleaned.parent = grandparent.clone(),
            None => break,
        }
    }
    Some(cleaned)
}

impl Decision {
    fn is_replace(&self) -> bool {
        matches!(self, Decision::Replace { .. })
    }
}

/// The request's dependencies: `dependsOn` plus every property dependency, without repeats.
fn all_dependencies(request: &RegisterResourceRequest) -> Vec<Urn> {
    let mut out: Vec<Urn> = Vec::new();
    for urn in request
        .options
        .depends_on
        .iter()
        .chain(request.property_dependencies.values().flatten())
    {
        if !out.contains(urn) {
            out.push(urn.clone());
        }
    }
    out
}

fn parse_paths(
    urn: &Urn,
    option: &str,
    paths: &[String],
) -> Result<Vec<PropertyPath>, MonitorError> {
    paths
        .iter()
        .map(|p| {
            PropertyPath::parse(p).map_err(|e| err(format!("{urn}: invalid {option} path: {e}")))
        })
        .collect()
}

fn mark_replace(
    mut changes: Vec<super::events::PropertyChange>,
    keys: &[String],
) -> Vec<super::events::PropertyChange> {
    for change in &mut changes {
        if let Some(crate::path::PathElement::Key(top)) = change.path.elements().first()
            && keys.contains(top)
        {
            change.replace = true;
        }
    }
    changes
}

fn step_state(resource: &ResourceState) -> StepState {
    StepState {
        id: resource.id.clone(),
        inputs: resource.inputs.clone(),
        outputs: resource.outputs.clone(),
    }
}

fn delete_request(resource: &ResourceState) -> DeleteRequest {
    DeleteRequest {
        urn: resource.urn.clone(),
        id: resource.id.clone().unwrap_or_default(),
        inputs: resource.inputs.clone(),
        outputs: resource.outputs.clone(),
        timeout: timeout_of(resource.custom_timeouts.as_ref(), |t| t.delete),
    }
}

/// How to record the resource a failed operation left behind (a partial state): on which state
/// to base it (default: the pending one) and what it takes the place of in the base.
#[derive(Default)]
struct PartialRecord<'a> {
    state: Option<&'a ResourceState>,
    superseding: Vec<Mutation>,
}

/// The outcome of a provider's `construct` or `call`: its first scope violation if it had one
/// (even if it swallowed the error its callback got), else its own result; `what` says what
/// failed ("constructing <urn>").
fn scoped_result<T>(
    caller: &Caller,
    result: Result<T, ProviderError>,
    what: impl FnOnce() -> String,
) -> Result<T, MonitorError> {
    if let Some(violation) = caller.scope().and_then(ComponentScope::first_violation) {
        return Err(err(format!("{} failed: {violation}", what())));
    }
    result.map_err(|e| err(format!("{} failed: {e}", what())))
}

/// Runs a provider operation under its custom timeout (0: no limit beyond the provider's own).
/// `creating urn:…, deleting urn:…`: pending operations in one line.
pub(crate) fn describe_pending(pending: &[crate::state::Operation<PropertyMap>]) -> String {
    pending
        .iter()
        .map(|op| format!("{} {}", op.kind.verb(), op.resource.urn))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn with_timeout<T>(
    seconds: f64,
    work: impl Future<Output = Result<T, ProviderError>>,
) -> Result<T, ProviderError> {
    // No limit for 0, and none for durations no clock can count (NaN, ±Inf, 1e300 s).
    let limit = match Duration::try_from_secs_f64(seconds) {
        Ok(limit) if seconds > 0.0 => limit,
        _ => return work.await,
    };
    match tokio::time::timeout(limit, work).await {
        Ok(result) => result,
        // The call was abandoned, not answered: the provider may have acted all the same.
        Err(_) => Err(ProviderError::outcome_unknown(format!(
            "the operation did not finish within its custom timeout of {seconds} s and was abandoned"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pending registration must stay small: programs may have 100,000 in flight, so the
    /// large parts of the flow are boxed and allocated only when reached.
    #[tokio::test]
    async fn a_pending_registration_future_is_small() {
        let journal = Arc::new(
            SnapshotManager::new(
                Snapshot::empty(None),
                crate::state::Manifest::new(),
                None,
                Arc::new(NoSecrets),
            )
            .unwrap(),
        );
        let engine = Arc::new(
            Engine::new(
                DeploymentOptions::new("p", "s"),
                Arc::new(NoProviders),
                Arc::new(super::super::events::NullSink),
                journal,
            )
            .unwrap(),
        );
        let request = RegisterResourceRequest::component(TypeToken::parse("a:b:C").unwrap(), "c");
        let future = engine.register_resource(request, &Caller::Program);
        let size = std::mem::size_of_val(&future);
        assert!(size < 2048, "a registration future takes {size} bytes");
    }

    struct NoSecrets;
    impl crate::secrets::Crypter for NoSecrets {
        fn encrypt(&self, p: &str) -> Result<String, crate::secrets::SecretsError> {
            Ok(p.to_owned())
        }
        fn decrypt(&self, c: &str) -> Result<String, crate::secrets::SecretsError> {
            Ok(c.to_owned())
        }
    }

    struct NoProviders;
    #[async_trait::async_trait]
    impl super::super::provider::ProviderLoader for NoProviders {
        async fn load(
            &self,
            package: &str,
            _: Option<&semver::Version>,
            _: NativePlugins,
        ) -> Result<Arc<dyn Provider>, super::super::provider::LoadError> {
            Err(super::super::provider::LoadError::NotFound {
                package: package.to_owned(),
                version: None,
            })
        }
    }

    /// Registration futures must be `Send` so hosts can spawn them.
    #[allow(dead_code)]
    fn registration_is_send(engine: Arc<Engine>, request: RegisterResourceRequest) {
        fn is_send<T: Send>(_: T) {}
        is_send(async move { engine.register_resource(request, &Caller::Program).await });
    }
}
