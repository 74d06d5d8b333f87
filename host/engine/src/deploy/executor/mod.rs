//! The step executor: runs steps against providers and the journal, bounded by `--parallel`;
//! a failed step cancels the deployment. Deletions ([`deletes`]) and refresh ([`refresh`])
//! are the executor's too.
//!
//! Chains: each registration's steps (a delete-before-replace's deletes, then its create) run
//! in order in the registration's own task, so each registration is one chain and independent
//! registrations run as parallel chains; the semaphore (`--parallel`) bounds the provider
//! operations running at once, and only them: a step waiting for its journal record to be
//! durable holds no permit, so however many steps finish together share one write (group
//! commit). After the program exits, deletions run as antichains ([`deletes`]).
//!
//! A step that mutates a resource is journaled ([`Engine::journaled`]): its begin record is
//! durable before the provider is called, and its end record carries its effects on the
//! snapshot, so a crash at any point loses no completed operation and shows the interrupted
//! one as pending.

pub(crate) mod deletes;
pub(crate) mod refresh;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::future::join_all;

use crate::state::{OperationKind, ResourceState};
use crate::urn::Urn;
use crate::value::PropertyMap;

use super::StepFailure;
use super::admission::{accept_read, storable_outputs};
use super::engine::{Engine, err, lock};
use super::events::{EngineEvent, StepInfo, StepOp, StepState};
use super::journal::{Mutation, PendingId};
use super::monitor::{MonitorError, Unregistered};
use super::provider::{Provider, ProviderError, ProviderOrigin, ReadRequest, ReadResult};
use super::steps::secure_outputs;

/// Why a step's work ended without a result.
#[derive(Debug)]
pub(crate) enum StepError {
    /// The step failed: the message to report.
    Failed(String),
    /// The deployment stopped (interrupted or cancelled) before the step's provider
    /// operation could start: nothing happened, and nothing is reported as failed.
    Stopped(MonitorError),
}

impl From<String> for StepError {
    fn from(message: String) -> StepError {
        StepError::Failed(message)
    }
}

/// How to record the resource a failed operation left behind (a partial state): on which state
/// to base it (default: the pending one) and what it takes the place of in the base.
#[derive(Default)]
pub(crate) struct PartialRecord<'a> {
    pub state: Option<&'a ResourceState>,
    pub superseding: Vec<Mutation>,
}

impl Engine {
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    pub fn is_interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Refuses new work once the deployment was interrupted or cancelled.
    pub fn ensure_running(&self) -> Result<(), MonitorError> {
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

    /// Waits for a parallelism permit: one per provider operation running.
    pub async fn permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>, MonitorError> {
        self.permits
            .acquire()
            .await
            .map_err(|_| err("the deployment is shutting down"))
    }

    /// Runs `operation` (a provider call) under a parallelism permit, unless the deployment
    /// stopped while it waited for one.
    pub(crate) async fn provider_operation<T>(
        &self,
        operation: impl Future<Output = T>,
    ) -> Result<T, StepError> {
        let _permit = self.permit().await.map_err(StepError::Stopped)?;
        self.ensure_running().map_err(StepError::Stopped)?;
        Ok(operation.await)
    }

    /// Runs one step: announces it, runs `work` (whose provider operations take parallelism
    /// permits), reports the result (`counted`: in the summary's tally). A failure cancels the
    /// deployment.
    pub(crate) async fn run_step<T>(
        &self,
        info: StepInfo,
        counted: bool,
        work: impl Future<Output = Result<T, StepError>>,
    ) -> Result<T, MonitorError> {
        self.run_step_reporting(info, counted, work, |_| None).await
    }

    /// [`Engine::run_step`] for a step that makes a new state (create, update, import, read):
    /// its finished event shows that state (ID, outputs) as the step's `new` one.
    pub(crate) async fn run_step_to(
        &self,
        info: StepInfo,
        counted: bool,
        work: impl Future<Output = Result<ResourceState, StepError>>,
    ) -> Result<ResourceState, MonitorError> {
        self.run_step_reporting(info, counted, work, |done| {
            Some(super::steps::step_state(done))
        })
        .await
    }

    async fn run_step_reporting<T>(
        &self,
        mut info: StepInfo,
        counted: bool,
        work: impl Future<Output = Result<T, StepError>>,
        finished_state: impl FnOnce(&T) -> Option<StepState>,
    ) -> Result<T, MonitorError> {
        self.ensure_running()?;
        let started = Instant::now();
        self.emit(EngineEvent::StepStarted(info.clone()));
        match work.await {
            Ok(value) => {
                if counted {
                    self.count(info.op, &info.urn);
                }
                if let Some(state) = finished_state(&value) {
                    info.new = Some(state);
                }
                self.emit(EngineEvent::StepFinished {
                    step: info,
                    duration: started.elapsed(),
                });
                Ok(value)
            }
            Err(StepError::Stopped(stopped)) => Err(stopped),
            Err(StepError::Failed(message)) => {
                let urn = info.urn.clone();
                self.emit(EngineEvent::StepFailed {
                    step: info.clone(),
                    error: message.clone(),
                    duration: started.elapsed(),
                });
                let failure = self.fail(&urn, info.op, message).await;
                let mut error = err(format!("{} of {urn} failed: {}", info.op, failure.message));
                error.continued = failure.continued;
                error.urn = failure.urn;
                Err(error)
            }
        }
    }

    /// Reports a step that needed no provider operation and no permit (a `same`, a refresh
    /// read, an adopted pending create) as finished at once, and counts it.
    pub fn finish_instantly(&self, info: StepInfo) {
        self.count(info.op, &info.urn);
        self.emit(EngineEvent::StepFinished {
            step: info,
            duration: Duration::ZERO,
        });
    }

    /// Records a failed step and returns the error to report. The deployment is cancelled,
    /// unless `--continue-on-error` lets independent work go on (Pulumi's step executor:
    /// `cancelDueToError`).
    pub async fn fail(&self, urn: &Urn, op: StepOp, message: String) -> MonitorError {
        self.note_failure(urn, op, message.clone());
        let mut error = err(message);
        if self.options.continue_on_error {
            // The program may go on without the resource (Pulumi's `Result.FAIL`).
            error.continued = Some(Unregistered::Failed);
            error.urn = Some(urn.clone());
        } else {
            self.cancel().await;
        }
        error
    }

    /// Records a registration the step generator refuses (invalid inputs, a mandatory policy
    /// violation, a protected replacement) and cancels the deployment: in Pulumi these are
    /// step generator errors, which stop it even under `--continue-on-error`.
    pub async fn reject(&self, urn: &Urn, op: StepOp, message: String) -> MonitorError {
        self.push_failure(urn, op, message.clone());
        self.cancel().await;
        err(message)
    }

    /// Records a failed step for the deployment's result, without cancelling; under
    /// `--continue-on-error` the resource is one the deployment goes on without.
    pub fn note_failure(&self, urn: &Urn, op: StepOp, message: String) {
        if self.options.continue_on_error {
            lock(&self.continued).insert(urn.clone(), Unregistered::Failed);
        }
        self.push_failure(urn, op, message);
    }

    fn push_failure(&self, urn: &Urn, op: StepOp, message: String) {
        lock(&self.failures).push(StepFailure {
            urn: urn.clone(),
            op,
            message,
        });
    }

    pub fn journal_err(e: impl std::fmt::Display) -> String {
        format!("recording the state failed: {e}")
    }

    /// Durably brackets a provider mutation with begin/end journal records; the mutation runs
    /// under a parallelism permit, the journal waits hold none.
    ///
    /// When the operation fails but leaves a real resource behind (a partial state with an ID),
    /// that resource is recorded, with `superseding` (what the recorded state takes the place
    /// of), so it is never lost. A resource whose ID cannot be stored stays a pending operation,
    /// and the error says so. When a result cannot be encoded, the resource is recorded without
    /// its outputs rather than not at all.
    pub(crate) async fn journaled<T>(
        &self,
        kind: OperationKind,
        pending: &ResourceState,
        partial: PartialRecord<'_>,
        work: impl Future<Output = Result<(T, Vec<Mutation>), ProviderError>>,
    ) -> Result<T, StepError> {
        let id = self
            .journal
            .begin_async(kind, pending)
            .await
            .map_err(Self::journal_err)?;
        let outcome = match self.provider_operation(work).await {
            Ok(outcome) => outcome,
            Err(stopped) => {
                // The provider was never called: the operation ends having changed nothing.
                self.end_journaled(id, vec![]).await?;
                return Err(stopped);
            }
        };
        match outcome {
            Ok((value, mutations)) => {
                self.end_journaled(id, mutations).await?;
                Ok(value)
            }
            Err(e) => {
                let message = crate::limits::cap_message(&e.to_string()).into_owned();
                let mutations = partial_mutations(&e, &message, pending, partial)?;
                self.end_journaled(id, mutations).await?;
                Err(StepError::Failed(message))
            }
        }
    }

    /// Ends a journaled operation; if its states cannot be encoded (a secret that cannot be
    /// encrypted, say), ends it with those states stripped of their outputs instead, so the
    /// resources stay tracked, and fails the step saying so.
    async fn end_journaled(&self, id: PendingId, mutations: Vec<Mutation>) -> Result<(), String> {
        let strip = |state: &mut ResourceState| {
            state.outputs = PropertyMap::new();
            state.init_errors.push(
                "the provider's outputs could not be recorded; run `cairn refresh` to read them again"
                    .to_owned(),
            );
        };
        match self.journal.end_or_strip_async(id, mutations, strip).await {
            Ok(None) => Ok(()),
            Ok(Some(first)) => Err(format!(
                "the resource is recorded without its outputs, which could not be stored: {first}"
            )),
            Err(e) => Err(Self::journal_err(e)),
        }
    }

    /// Records effects that needed no provider operation.
    pub fn apply(&self, mutations: Vec<Mutation>) -> Result<(), MonitorError> {
        self.journal
            .apply(mutations)
            .map_err(|e| err(Self::journal_err(e)))
    }

    /// A provider Read under a parallelism permit, its result checked before use; the outer
    /// error is the deployment shutting down.
    pub async fn checked_read(
        &self,
        provider: &dyn Provider,
        request: ReadRequest,
    ) -> Result<Result<ReadResult, ProviderError>, MonitorError> {
        let urn = request.urn.clone();
        let read = self
            .provider_operation(provider.read(request))
            .await
            .map_err(|e| match e {
                StepError::Stopped(stopped) => stopped,
                StepError::Failed(message) => err(message),
            })?;
        Ok(read.and_then(|read| {
            accept_read(provider, &urn, &read)
                .map(|()| read)
                .map_err(ProviderError::failed)
        }))
    }
}

/// What a failed journaled operation records: the resource it left behind (a partial state
/// with an ID), in place of what it supersedes; nothing if it left none. An outcome that is
/// unknown, or an ID that cannot be stored, keeps the begin record (the operation stays
/// pending) and fails with the error to report.
fn partial_mutations(
    e: &ProviderError,
    message: &str,
    pending: &ResourceState,
    partial: PartialRecord<'_>,
) -> Result<Vec<Mutation>, String> {
    if matches!(e, ProviderError::OutcomeUnknown { .. }) {
        // The operation may have happened: its begin record stays, so the state reports it
        // pending until `cairn refresh` resolves it.
        return Err(format!(
            "{message}; it is left recorded as a pending operation: run `cairn refresh` to resolve it"
        ));
    }
    match e.partial() {
        Some(left) if left.id.len() > crate::limits::MAX_ID_BYTES => {
            // Nothing can name the resource in the state: the begin record stays, so every
            // later command reports it until it is resolved.
            Err(format!(
                "{message}; the provider returned an ID of {} bytes (at most {} are allowed), so the resource, which may exist, is left recorded as a pending operation: check the provider's side, then run `cairn stack clear-pending`",
                left.id.len(),
                crate::limits::MAX_ID_BYTES
            ))
        }
        Some(left) if !left.id.is_empty() => {
            let mut state = partial.state.unwrap_or(pending).clone();
            state.id = Some(left.id.clone());
            let (outputs, dropped) = storable_outputs(left.outputs.clone());
            state.outputs =
                secure_outputs(outputs, &state.inputs, &state.additional_secret_outputs);
            // The provider's reasons, as Pulumi records them; else the failure's message.
            state.init_errors = if left.reasons.is_empty() {
                vec![message.to_owned()]
            } else {
                left.reasons.clone()
            };
            if !dropped.is_empty() {
                state
                    .init_errors
                    .push(format!("outputs not recorded: {}", dropped.join("; ")));
            }
            let mut all = vec![Mutation::Append(state)];
            all.extend(partial.superseding);
            Ok(all)
        }
        _ => Ok(vec![]),
    }
}

/// The limit the engine puts on a provider operation whose custom timeout is `seconds`: none
/// for a sandboxed provider, whose host enforces the timeout itself on the guest's own time (a
/// guest that returned in time is not cut off while its result is copied out, and one stopped
/// at its deadline gets an outcome the host knows instead of one abandoned as unknown).
pub(crate) fn engine_limit(origin: ProviderOrigin, seconds: f64) -> f64 {
    if origin == ProviderOrigin::Sandboxed {
        0.0
    } else {
        seconds
    }
}

/// Runs a provider operation under its custom timeout (0: no limit beyond the provider's own).
pub(crate) async fn with_timeout<T>(
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
    use crate::deploy::provider::PartialState;
    use crate::urn::{TypeToken, Urn};

    fn pending() -> ResourceState {
        let urn = Urn::parse("urn:pulumi:s::p::t:m:R::r").unwrap();
        ResourceState::new(urn, TypeToken::parse("t:m:R").unwrap(), true)
    }

    fn recorded(error: &ProviderError) -> ResourceState {
        let message = error.to_string();
        let pending = pending();
        let mut mutations =
            partial_mutations(error, &message, &pending, PartialRecord::default()).unwrap();
        match mutations.remove(0) {
            Mutation::Append(state) => state,
            _ => panic!("the partial state is appended"),
        }
    }

    #[test]
    fn a_partial_state_records_the_providers_reasons_else_the_message() {
        let partial = |reasons: Vec<String>| ProviderError::Failed {
            message: "Resource failed to initialize".into(),
            partial: Some(Box::new(PartialState {
                id: "r-1".into(),
                reasons,
                ..PartialState::default()
            })),
        };
        let with_reasons = recorded(&partial(vec!["state can't be 4".into(), "and 5".into()]));
        assert_eq!(with_reasons.id.as_deref(), Some("r-1"));
        assert_eq!(with_reasons.init_errors, ["state can't be 4", "and 5"]);
        let without = recorded(&partial(vec![]));
        assert_eq!(without.init_errors, ["Resource failed to initialize"]);
    }
}
