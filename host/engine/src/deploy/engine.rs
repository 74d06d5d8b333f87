//! The engine of one deployment: the context the resource monitor, the step generator and the
//! step executor share — options, journal, providers, the plan, parallelism, failures and the
//! step tally — and the small helpers all three use. The work itself lives in
//! [`super::monitor`], [`super::generator`], [`super::steps`] and [`super::executor`], each an
//! `impl Engine` of its own.
//!
//! Concurrency: every registration runs in the caller's task, so independent registrations
//! proceed in parallel. The plan ([`Plan`]) sits behind one mutex that is never held across an
//! `await`: the generator stays the single owner of its plan while `Check`, `Diff` and provider
//! mutations run concurrently, bounded by the `--parallel` semaphore.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use indexmap::IndexMap;
use tokio::sync::{OnceCell, Semaphore};

use crate::state::{ProviderReference, ResourceState, Snapshot};
use crate::urn::{ROOT_STACK_TYPE, TypeToken, Urn};

use super::events::{EngineEvent, EventSink, Severity, StepInfo, StepOp};
use super::journal::SnapshotManager;
use super::monitor::{MonitorError, Unregistered};
use super::plan::Plan;
use super::provider::ProviderLoader;
use super::registry::ProviderRegistry;
use super::{DeploymentOptions, StepFailure};

/// A default provider's reference (`<urn>::<id>`), or why it could not be registered.
pub(crate) type DefaultSlot = Arc<OnceCell<Result<ProviderReference, String>>>;
/// A default provider's identity: package, version, download URL.
pub type DefaultKey = (String, Option<String>, Option<String>);

/// Counts of steps, for the summary.
#[derive(Default)]
struct Tally {
    changes: IndexMap<StepOp, usize>,
    unchanged: usize,
}

pub(crate) struct Engine {
    /// Shared with the deployment's monitors, which hold the engine itself only weakly.
    pub options: Arc<DeploymentOptions>,
    pub events: Arc<dyn EventSink>,
    pub journal: Arc<SnapshotManager>,
    pub providers: ProviderRegistry,
    /// Provider operations running at once (`--parallel`).
    pub permits: Semaphore,
    /// Bounds how many registrations are being processed at once; the rest wait in their
    /// caller before they become tasks ([`super::monitor::Monitor::register_resource`]), so a
    /// program that declares 100,000 resources at once does not hold 100,000 tasks and fully
    /// grown registration futures. Deletions run as many at once ([`Engine::window`]).
    pub gate: Arc<Semaphore>,
    window: usize,
    /// Set by the first failed step: nothing new starts.
    pub cancelled: AtomicBool,
    /// Set by an interruption (Ctrl-C): new work is refused, work in flight finishes.
    pub interrupted: AtomicBool,
    /// Set while `refresh --run-program` or `destroy --run-program` runs the program: its
    /// registrations configure providers (and their old states take the new configuration)
    /// but create, update or record nothing else, as Pulumi's refresh and destroy modes.
    pub configuring: AtomicBool,
    /// Every monitor request runs as a task of its own, tracked here: a caller that goes away
    /// (a program that dies, a connection that drops) cannot abandon a step half-way, and the
    /// deployment waits for all of them before it deletes or saves.
    pub in_flight: tokio_util::task::TaskTracker,
    pub failures: Mutex<Vec<StepFailure>>,
    /// `--continue-on-error`: the resources the deployment went on without (their step failed,
    /// or they depend on one that did), as Pulumi's `skipped` set. What depends on them is
    /// skipped, and what they depend on is not deleted.
    pub continued: Mutex<HashMap<Urn, Unregistered>>,
    /// Mandatory policy violations a preview found (an update fails the resource instead).
    pub policy_failures: Mutex<Vec<String>>,
    plan: Mutex<Plan>,
    tally: Mutex<Tally>,
    /// Default provider references by (package, version, download URL), each registered once.
    pub defaults: Mutex<HashMap<DefaultKey, DefaultSlot>>,
    /// The program's transforms (stack, invoke, and those registrations brought).
    pub transforms: super::monitor::transforms::Transforms,
    /// The program's resource hooks ([`super::hooks`]).
    pub hooks: super::hooks::Hooks,
    /// Old states as state migrations rewrote them ([`super::migrations`]).
    pub migrated: super::migrations::MigratedStates,
    pub root_urn: Urn,
}

/// Locks a mutex, recovering it from a panicked holder (the data stays usable: every writer
/// leaves it consistent between statements).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A monitor error with `message`.
pub(crate) fn err(message: impl Into<String>) -> MonitorError {
    MonitorError::new(message)
}

impl Engine {
    pub fn new(
        options: DeploymentOptions,
        loader: Arc<dyn ProviderLoader>,
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
        let plan = Plan::new(base);
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
            options: Arc::new(options),
            events,
            journal,
            providers: ProviderRegistry::new(loader),
            permits: Semaphore::new(parallel),
            gate: Arc::new(Semaphore::new((16 * parallel).max(256))),
            window: (16 * parallel).max(256),
            cancelled: AtomicBool::new(false),
            interrupted: AtomicBool::new(false),
            configuring: AtomicBool::new(false),
            in_flight: tokio_util::task::TaskTracker::new(),
            failures: Mutex::new(Vec::new()),
            continued: Mutex::new(HashMap::new()),
            policy_failures: Mutex::new(Vec::new()),
            plan: Mutex::new(plan),
            tally: Mutex::new(Tally::default()),
            defaults: Mutex::new(HashMap::new()),
            transforms: Default::default(),
            hooks: Default::default(),
            migrated: Default::default(),
            root_urn,
        })
    }

    /// The snapshot the deployment started from.
    pub fn base(&self) -> &Snapshot {
        self.journal.base()
    }

    /// The plan, locked. Never hold the guard across an `await`.
    pub fn plan(&self) -> MutexGuard<'_, Plan> {
        lock(&self.plan)
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

    /// Reports an error diagnostic about `urn`.
    pub fn report_error(&self, urn: &Urn, message: impl Into<String>) {
        self.emit(EngineEvent::Diagnostic {
            severity: Severity::Error,
            urn: Some(urn.clone()),
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

    /// Counts a step of `urn` for the summary: a change of its kind, or one more unchanged
    /// resource. Default providers are left out, as Pulumi leaves them out of its summary.
    pub fn count(&self, op: StepOp, urn: &Urn) {
        let default_provider = urn.resource_type().starts_with("pulumi:providers:")
            && urn.name().starts_with("default");
        if default_provider {
            return;
        }
        let mut tally = lock(&self.tally);
        if op.is_change() {
            *tally.changes.entry(op).or_default() += 1;
        } else {
            tally.unchanged += 1;
        }
    }

    /// How many registrations (or deletions) are processed at once.
    pub fn window(&self) -> usize {
        self.window
    }

    pub fn preview(&self) -> bool {
        self.options.preview
    }

    /// Whether the program runs only to configure providers (see the `configuring` field).
    pub fn configuring(&self) -> bool {
        self.configuring.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether `--target` / `--exclude` let this deployment act on `urn`.
    pub fn is_targeted(&self, urn: &Urn) -> bool {
        if self.options.excludes.contains(urn) {
            return false;
        }
        let restricted =
            self.options.targets.is_constrained() || self.options.target_replaces.is_constrained();
        !restricted
            || self.options.targets.contains(urn)
            || self.options.target_replaces.contains(urn)
    }

    /// Whether the user asked for `urn` to be replaced (`--replace`, `--target-replace`).
    pub fn forced_replace(&self, urn: &Urn) -> bool {
        self.options.replaces.contains(urn) || self.options.target_replaces.contains(urn)
    }

    /// The event description of a step, without states or changes.
    pub fn step_info(&self, op: StepOp, resource: &ResourceState) -> StepInfo {
        StepInfo {
            op,
            urn: resource.urn.clone(),
            resource_type: resource.resource_type.as_str().to_owned(),
            custom: resource.custom,
            parent: resource.parent.clone(),
            old: None,
            new: None,
            changes: vec![],
            replace_keys: vec![],
            preview: self.preview(),
        }
    }

    /// Marks a registration finished: from now on others may refer to it (see
    /// [`Plan::record`]).
    pub fn record(&self, state: &ResourceState) {
        self.plan().record(state);
    }

    /// The state this deployment recorded for `urn` (a component or provider), else the old
    /// one.
    pub fn state_of(&self, urn: &Urn) -> Option<ResourceState> {
        let plan = self.plan();
        if let Some(state) = plan.states.get(urn) {
            return Some(state.clone());
        }
        plan.live.get(urn).map(|&i| self.old_state(i).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::monitor::scope::Caller;
    use crate::deploy::program::RegisterResourceRequest;
    use crate::deploy::provider::{NativePlugins, Provider};

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
                Arc::new(crate::deploy::events::NullSink),
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
    impl crate::deploy::provider::ProviderLoader for NoProviders {
        async fn load(
            &self,
            package: &str,
            _: Option<&semver::Version>,
            _: NativePlugins,
        ) -> Result<Arc<dyn Provider>, crate::deploy::provider::LoadError> {
            Err(crate::deploy::provider::LoadError::NotFound {
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
