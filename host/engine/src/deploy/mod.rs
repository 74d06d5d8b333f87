//! The deployment engine: resource monitor, step generator, step executor, and the journaled
//! snapshot they update.
//!
//! A [`Deployment`] runs one operation (update, refresh or destroy, possibly as a preview)
//! against the snapshot held by a [`journal::SnapshotManager`], reporting progress as
//! [`events::EngineEvent`]s.
//!
//! The parts, named as the spec names them:
//!
//! * [`monitor`] — the resource monitor: what programs and component providers call; admits
//!   each request and hands it on;
//! * `generator` — the step generator: URN, aliases, claiming old state, provider resolution,
//!   check, analyzers, diff and the decision, dependent replacements;
//! * `steps` — the steps, one type per kind (same, create, update, replace, delete, read,
//!   import, refresh), each with its journaled apply;
//! * `executor` — the step executor: running steps under `--parallel`, cancellation and
//!   interruption, deletions as antichains, refresh and pending operations;
//! * `plan` — the generator's plan state and its invariants; `engine` — the context the
//!   three share; [`journal`] — the snapshot journal.

mod admission;
pub mod analyzer;
mod engine;
pub mod events;
mod executor;
mod generator;
pub mod graph;
pub mod hooks;
pub mod journal;
pub mod migrations;
pub mod monitor;
mod plan;
pub mod program;
pub mod provider;
mod registry;
mod steps;
pub mod targets;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Instant;

use indexmap::IndexMap;

use crate::state::Snapshot;
use crate::urn::Urn;
use crate::value::{PropertyMap, PropertyValue};

use engine::Engine;
use events::{EngineEvent, EventSink, Operation, StepOp};
use journal::SnapshotManager;
use monitor::Monitor;
use program::Program;
use provider::ProviderLoader;
pub use targets::{TargetError, UrnPattern, UrnTargets};

/// What to deploy, and how.
#[derive(Debug, Clone)]
pub struct DeploymentOptions {
    pub project: String,
    pub stack: String,
    /// Plan only: providers are called with `preview = true` and nothing is persisted.
    pub preview: bool,
    /// Provider operations running at once.
    pub parallel: usize,
    /// Only these resources are changed (none given: all). Each flag takes URNs and globs
    /// ([`UrnTargets`]).
    pub targets: UrnTargets,
    /// These resources are left alone.
    pub excludes: UrnTargets,
    /// These resources are replaced even without changes.
    pub replaces: UrnTargets,
    /// Replace these resources, and change nothing else.
    pub target_replaces: UrnTargets,
    /// With `targets`: also act on resources that depend on them (destroy).
    pub target_dependents: bool,
    /// A failed step does not stop the deployment (Pulumi's `--continue-on-error`): work that
    /// does not depend on it goes on, what depends on it is skipped, and what it depends on is
    /// not deleted; the deployment still fails at the end with every failure. Generator errors
    /// (invalid inputs, mandatory policy violations, a protected replacement) and a failing
    /// program stop it all the same, as in Pulumi.
    pub continue_on_error: bool,
    /// Stack configuration, `namespace:key` → value; `<package>:*` configures default providers.
    pub config: IndexMap<String, PropertyValue>,
    /// Policy checks run on every resource's checked inputs.
    pub analyzers: analyzer::Analyzers,
    /// Which native plugins the program's packages (and the providers recorded in the state)
    /// may resolve to: only those the project names (the default: wasm programs), or any
    /// (Python and Node.js programs, as with Pulumi). What a sandboxed provider registers in
    /// `construct` or `call` always resolves under the stricter rule.
    pub native_plugins: provider::NativePlugins,
    /// The program's directory, against which relative asset paths resolve (SDK programs).
    pub program_dir: Option<std::path::PathBuf>,
    /// Refresh: what to do with each pending create (or import) an interrupted deployment
    /// left; those not named stay pending.
    pub pending_creates: IndexMap<Urn, PendingCreate>,
    /// `cairn import` ([`Deployment::import`]): the registrations that adopt a resource by ID
    /// as Pulumi's `pulumi import` does (its inputs are what the provider reads), by URN.
    pub planned_imports: IndexMap<Urn, PlannedImport>,
}

/// A resource `cairn import` adopts: its inputs are what the provider reads (only
/// `properties`, when some are named), checked but kept whatever Check says (its failures are
/// warnings), and no diff is taken — there is no program to compare with yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlannedImport {
    /// The input properties to keep; empty: every input the provider read.
    pub properties: Vec<String>,
}

/// Why `command` (an update or destroy) must not run on `snapshot`: interrupted creates whose
/// resources may exist untracked, listed with how to resolve them; `None` if there are none.
pub fn unresolved_creates(snapshot: &Snapshot, command: &str) -> Option<String> {
    let creates: Vec<_> = snapshot
        .pending_operations
        .iter()
        .filter(|op| op.kind.may_have_created())
        .collect();
    if creates.is_empty() {
        return None;
    }
    let mut message = format!(
        "{} interrupted create{} may have made resources the state does not record, and {command} would create them again:",
        creates.len(),
        if creates.len() == 1 { "" } else { "s" },
    );
    for op in &creates {
        message.push_str(&format!("\n    {} {}", op.kind.verb(), op.resource.urn));
    }
    message.push_str(
        "\nResolve them first with `cairn refresh`: it asks what to do with each (non-interactively, `--import-pending-creates <URN> <ID>` adopts a resource that was created and `--clear-pending-creates` forgets the others)",
    );
    Some(message)
}

/// How `cairn refresh` resolves an interrupted create, as the user decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingCreate {
    /// The provider did create it: adopt the resource with this ID.
    Import(String),
    /// It was not created (or is handled elsewhere): forget the operation.
    Clear,
}

impl DeploymentOptions {
    pub fn new(project: impl Into<String>, stack: impl Into<String>) -> DeploymentOptions {
        DeploymentOptions {
            project: project.into(),
            stack: stack.into(),
            preview: false,
            parallel: default_parallelism(),
            targets: UrnTargets::default(),
            excludes: UrnTargets::default(),
            replaces: UrnTargets::default(),
            target_replaces: UrnTargets::default(),
            target_dependents: false,
            continue_on_error: false,
            config: IndexMap::new(),
            analyzers: analyzer::Analyzers::default(),
            native_plugins: provider::NativePlugins::ProjectNamed,
            pending_creates: IndexMap::new(),
            program_dir: None,
            planned_imports: IndexMap::new(),
        }
    }
}

/// Four provider operations per core, as a starting point for I/O-bound providers.
pub fn default_parallelism() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A step that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct StepFailure {
    pub urn: Urn,
    pub op: StepOp,
    pub message: String,
}

/// Why a deployment did not complete. The state records everything that did.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeployError {
    #[error("the program failed: {0}")]
    Program(String),
    #[error("{}", describe_failures(.0))]
    Steps(Vec<StepFailure>),
    #[error("{0}")]
    Engine(String),
    /// Policy packs found mandatory violations (each line names the resource or the stack and
    /// the pack/policy); in an update, after what it had done.
    #[error("{}", describe_policy(.0))]
    Policy(Vec<String>),
    /// Interrupted (Ctrl-C, SIGTERM): nothing new was started, and every operation that was
    /// running finished and was recorded.
    #[error(
        "the deployment was interrupted: operations already running finished and were recorded; run the command again to continue"
    )]
    Interrupted,
}

fn describe_policy(failures: &[String]) -> String {
    match failures {
        [one] => one.clone(),
        many => format!(
            "{} mandatory policy violations:\n  {}",
            many.len(),
            many.join("\n  ")
        ),
    }
}

fn describe_failures(failures: &[StepFailure]) -> String {
    let lines: Vec<String> = failures
        .iter()
        .map(|f| format!("{} {}: {}", f.op, f.urn, f.message))
        .collect();
    match lines.len() {
        1 => lines[0].clone(),
        n => format!("{n} steps failed:\n  {}", lines.join("\n  ")),
    }
}

/// What a deployment did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The resulting snapshot (in a preview: the planned one, not persisted).
    pub snapshot: Snapshot,
    /// Changing steps per kind.
    pub changes: IndexMap<StepOp, usize>,
    pub unchanged: usize,
    /// The stack outputs.
    pub outputs: PropertyMap,
}

/// Interrupts a running deployment from outside (a signal handler): see
/// [`Deployment::interrupter`].
#[derive(Clone)]
pub struct Interrupter {
    /// Weak: a deployment that has ended has nothing to interrupt, and its journal must be
    /// free to be consumed by its end ([`SnapshotManager::into_finished`]).
    engine: Weak<Engine>,
}

impl Interrupter {
    /// Starts nothing new (the program's further requests are refused), asks providers to
    /// wrap up, and lets operations already running finish and be recorded; the deployment
    /// then saves and ends with [`DeployError::Interrupted`].
    pub async fn interrupt(&self) {
        if let Some(engine) = self.engine.upgrade() {
            engine.interrupt().await;
        }
    }
}

/// One deployment of a stack.
pub struct Deployment {
    engine: Arc<Engine>,
    journal: Arc<SnapshotManager>,
}

impl Deployment {
    pub fn new(
        options: DeploymentOptions,
        loader: Arc<dyn ProviderLoader>,
        events: Arc<dyn EventSink>,
        journal: Arc<SnapshotManager>,
    ) -> Result<Deployment, DeployError> {
        let engine = Engine::new(options, loader, events, journal.clone())
            .map_err(|e| DeployError::Engine(e.message))?;
        Ok(Deployment {
            engine: Arc::new(engine),
            journal,
        })
    }

    /// A handle that interrupts this deployment gracefully.
    pub fn interrupter(&self) -> Interrupter {
        Interrupter {
            engine: Arc::downgrade(&self.engine),
        }
    }

    /// Waits until every monitor request has finished (a program that died may leave some
    /// running): their steps are recorded before anything is deleted or saved.
    async fn settle(&self) {
        self.engine.in_flight.close();
        self.engine.in_flight.wait().await;
        self.engine.in_flight.reopen();
    }

    /// Fails with [`DeployError::Interrupted`] once interrupted.
    fn check_interrupted(&self) -> Result<(), DeployError> {
        if self.engine.is_interrupted() {
            Err(DeployError::Interrupted)
        } else {
            Ok(())
        }
    }

    /// Runs `program` and brings the stack to the state it declares: creates, updates and
    /// replaces what it registers, then deletes what it no longer does.
    pub async fn update(self, program: Arc<dyn Program>) -> Result<Outcome, DeployError> {
        let started = self.start(Operation::Update);
        if !self.engine.options.analyzers.is_empty() {
            self.engine.emit(EngineEvent::PolicyPacks(
                self.engine.options.analyzers.summaries(),
            ));
        }
        let result = async {
            self.run_program(program, "`cairn up`").await?;
            let deletions = self.engine.update_deletions();
            self.engine
                .check_deletable(&deletions)
                .map_err(|e| DeployError::Engine(e.message))?;
            let deleted = self.engine.delete_all(deletions).await;
            self.check_interrupted()?;
            self.check_failures()?;
            deleted.map_err(|e| DeployError::Engine(e.message))?;
            self.engine
                .settle_pending_after_success()
                .map_err(|e| DeployError::Engine(e.message))?;
            self.analyze_stack().await
        }
        .await;
        // A program kept running for its delete hooks ends now.
        let result = self.end_program(result).await;
        if result.is_err() {
            self.engine.keep_previous_stack_outputs();
        }
        self.finish(Operation::Update, started, result)
    }

    /// What an update and an import share: refuse over interrupted creates (`command` names
    /// the command in the refusal), register the root stack resource, run `program` through a
    /// monitor, and let every step it started finish; then report an interruption, a failed
    /// step, or the program's own error, in that order.
    async fn run_program(
        &self,
        program: Arc<dyn Program>,
        command: &str,
    ) -> Result<(), DeployError> {
        self.engine
            .check_pending_creates(command)
            .map_err(|e| DeployError::Engine(e.message))?;
        self.engine
            .register_root()
            .await
            .map_err(|e| DeployError::Engine(e.message))?;
        let monitor = Monitor::new(self.engine.clone());
        let program_result = self.run_keeping_hooks(program, monitor).await;
        self.settle().await;
        self.check_interrupted()?;
        // Under --continue-on-error a program that finished goes on to its deletions; the
        // failed steps are reported after them.
        if !(self.engine.options.continue_on_error && program_result.is_ok()) {
            self.check_failures()?;
        }
        program_result.map_err(|e| DeployError::Program(e.message))
    }

    /// `cairn import`: runs `program` (which registers the resources to import, and what they
    /// refer to) and records what it registers; unlike an update it deletes nothing, so every
    /// resource of the stack the program does not register stays as it is.
    pub async fn import(self, program: Arc<dyn Program>) -> Result<Outcome, DeployError> {
        let started = self.start(Operation::Import);
        let result = self.run_program(program, "`cairn import`").await;
        let result = self.end_program(result).await;
        // The stack's outputs are the program's, which an import does not run.
        self.engine.keep_previous_stack_outputs();
        self.finish(Operation::Import, started, result)
    }

    /// The policy packs' stack policies, once the program ran and everything it changed is
    /// recorded (as Pulumi runs `AnalyzeStack` after a successful update or preview); fails
    /// with the mandatory violations found (in a preview, also those of its resources).
    async fn analyze_stack(&self) -> Result<(), DeployError> {
        if self.engine.options.analyzers.is_empty() {
            return Ok(());
        }
        let failures = self
            .engine
            .analyze_stack()
            .await
            .map_err(|e| DeployError::Engine(e.message))?;
        if failures.is_empty() {
            Ok(())
        } else {
            Err(DeployError::Policy(failures))
        }
    }

    /// Reads every resource from its provider and records what changed out of band.
    pub async fn refresh(self) -> Result<Outcome, DeployError> {
        self.refresh_after(None).await
    }

    /// `refresh --run-program`: runs `program` first, only to configure providers
    /// ([`Deployment::configure_from`]), then refreshes every resource with them.
    pub async fn refresh_with_program(
        self,
        program: Arc<dyn Program>,
    ) -> Result<Outcome, DeployError> {
        self.refresh_after(Some(program)).await
    }

    async fn refresh_after(
        self,
        program: Option<Arc<dyn Program>>,
    ) -> Result<Outcome, DeployError> {
        let started = self.start(Operation::Refresh);
        let configured = match program {
            Some(program) => self.configure_from(program).await,
            None => Ok(()),
        };
        let result = match configured {
            Ok(()) => self.refresh_configured().await,
            Err(e) => Err(e),
        };
        // `--run-program`: a program kept running for its hooks ends now.
        let result = self.end_program(result).await;
        self.finish(Operation::Refresh, started, result)
    }

    /// Reads every resource with the providers configured, then settles pending operations.
    async fn refresh_configured(&self) -> Result<(), DeployError> {
        async {
            self.engine.refresh_all().await?;
            if self.engine.is_interrupted() {
                return Err(monitor::MonitorError::new(
                    DeployError::Interrupted.to_string(),
                ));
            }
            self.engine.resolve_pending().await
        }
        .await
        .map_err(|e| {
            let failures = self.engine.failures();
            if self.engine.is_interrupted() {
                DeployError::Interrupted
            } else if failures.is_empty() {
                DeployError::Engine(e.message)
            } else {
                DeployError::Steps(failures)
            }
        })
    }

    /// Deletes every resource of the stack (or the targets), dependents first.
    pub async fn destroy(self) -> Result<Outcome, DeployError> {
        self.destroy_after(None).await
    }

    /// `destroy --run-program`: runs `program` first, only to configure providers
    /// ([`Deployment::configure_from`]), then deletes with them.
    pub async fn destroy_with_program(
        self,
        program: Arc<dyn Program>,
    ) -> Result<Outcome, DeployError> {
        self.destroy_after(Some(program)).await
    }

    async fn destroy_after(
        self,
        program: Option<Arc<dyn Program>>,
    ) -> Result<Outcome, DeployError> {
        let started = self.start(Operation::Destroy);
        let result = async {
            self.engine
                .check_pending_creates("`cairn destroy`")
                .map_err(|e| DeployError::Engine(e.message))?;
            if let Some(program) = program {
                self.configure_from(program).await?;
            } else {
                self.refuse_delete_hooks()?;
            }
            let chosen = self
                .engine
                .destroy_deletions()
                .map_err(DeployError::Engine)?;
            let deleted = self.engine.delete_all(chosen).await;
            self.check_interrupted()?;
            self.check_failures()?;
            deleted.map_err(|e| DeployError::Engine(e.message))?;
            // Without this, a destroy that completes one killed mid-delete left the
            // interrupted deletes' records behind.
            self.engine
                .settle_pending_after_success()
                .map_err(|e| DeployError::Engine(e.message))
        }
        .await;
        // `--run-program`: the program, kept running for its delete hooks, ends now.
        let result = self.end_program(result).await;
        self.finish(Operation::Destroy, started, result)
    }

    /// A destroy that does not run the program cannot run the delete hooks the state records
    /// (their functions are the program's): refused, naming each resource and its hooks, as
    /// Pulumi refuses it.
    fn refuse_delete_hooks(&self) -> Result<(), DeployError> {
        let hooked = hooks::delete_hooks(self.engine.base());
        if hooked.is_empty() {
            return Ok(());
        }
        for (urn, names) in &hooked {
            self.engine.report_error(
                urn,
                format!("Resource has delete hooks registered, but the program is not running. Hooks: {names}"),
            );
        }
        Err(DeployError::Engine(
            "You must run with the `--run-program` flag to use delete hooks during destroy."
                .to_owned(),
        ))
    }

    /// Runs `program` as Pulumi's refresh and destroy modes run it: what it registers
    /// configures providers — a provider's recorded state takes the program's configuration,
    /// and resources are then read or deleted through it — while components and custom
    /// resources keep their recorded states and nothing is created, updated or deleted. The
    /// program sees the recorded outputs; a resource the state lacks is not created.
    async fn configure_from(&self, program: Arc<dyn Program>) -> Result<(), DeployError> {
        self.engine.configuring.store(true, Ordering::SeqCst);
        self.engine.record_root();
        let monitor = Monitor::new(self.engine.clone());
        let program_result = self.run_keeping_hooks(program, monitor).await;
        self.settle().await;
        self.engine.configuring.store(false, Ordering::SeqCst);
        self.check_interrupted()?;
        self.check_failures()?;
        program_result.map_err(|e| DeployError::Program(e.message))
    }

    fn start(&self, operation: Operation) -> Instant {
        self.engine.emit(EngineEvent::Started {
            operation,
            preview: self.engine.options.preview,
        });
        Instant::now()
    }

    fn check_failures(&self) -> Result<(), DeployError> {
        let failures = self.engine.failures();
        if failures.is_empty() {
            Ok(())
        } else {
            Err(DeployError::Steps(failures))
        }
    }

    /// Persists what happened (also after a failure) and reports the summary. The engine goes
    /// first, so that the journal is usually left with one owner and finishes without copying
    /// the base.
    fn finish(
        self,
        operation: Operation,
        started: Instant,
        result: Result<(), DeployError>,
    ) -> Result<Outcome, DeployError> {
        let Deployment { engine, journal } = self;
        let (changes, unchanged) = engine.tally();
        let events = engine.events.clone();
        let preview = engine.options.preview;
        let root_urn = engine.root_urn.clone();
        let interrupted = engine.is_interrupted();
        drop(engine);
        let persisted = match Arc::try_unwrap(journal) {
            Ok(journal) => journal.into_finished(),
            // Still shared (a monitor a program kept, say): the base is copied.
            Err(journal) => journal.finish(),
        }
        .map_err(|e| DeployError::Engine(format!("saving the state failed: {e}")));
        let succeeded = result.is_ok() && persisted.is_ok();
        events.emit(EngineEvent::Summary {
            operation,
            preview,
            changes: changes.clone(),
            unchanged,
            duration: started.elapsed(),
            succeeded,
            interrupted: interrupted && !succeeded,
        });
        result?;
        let snapshot = persisted?;
        let outputs = snapshot
            .resources
            .iter()
            .find(|r| r.urn == root_urn)
            .map(|r| r.outputs.clone())
            .unwrap_or_default();
        Ok(Outcome {
            snapshot,
            changes,
            unchanged,
            outputs,
        })
    }
}
