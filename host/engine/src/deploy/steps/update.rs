//! The `update` step: the provider changes a resource in place; the new state replaces the
//! recorded one.

use std::sync::Arc;

use crate::path::PropertyPath;
use crate::state::{OperationKind, ResourceState};

use super::super::admission::accept_result;
use super::super::engine::Engine;
use super::super::events::{PropertyChange, StepOp};
use super::super::executor::{PartialRecord, engine_limit, with_timeout};
use super::super::hooks::{HookBinding, HookKind};
use super::super::journal::{BaseIndex, Mutation};
use super::super::monitor::MonitorError;
use super::super::provider::{Provider, UpdateRequest};
use super::{now, secure_outputs, step_state, timeout_of};

/// Updates the resource recorded as `old` (base `index`) to `state`'s checked inputs.
pub(crate) struct UpdateStep {
    pub state: ResourceState,
    pub old: ResourceState,
    pub index: BaseIndex,
    pub provider: Arc<dyn Provider>,
    /// The property changes shown.
    pub changes: Vec<PropertyChange>,
    pub ignore_changes: Vec<PropertyPath>,
}

impl UpdateStep {
    pub async fn apply(self, engine: &Engine) -> Result<ResourceState, MonitorError> {
        let UpdateStep {
            state,
            old,
            index,
            provider,
            changes,
            ignore_changes,
        } = self;
        let urn = state.urn.clone();
        let preview = engine.preview();
        let timeout = timeout_of(state.custom_timeouts.as_deref(), |t| t.update);
        let mut info = engine.step_info(StepOp::Update, &state);
        info.old = Some(step_state(&old));
        info.new = Some(step_state(&state));
        info.changes = changes;
        let id = old.id.clone().unwrap_or_default();
        let request = UpdateRequest {
            urn: urn.clone(),
            id: id.clone(),
            old_inputs: old.inputs.clone(),
            old_outputs: old.outputs.clone(),
            news: state.inputs.clone(),
            timeout,
            ignore_changes,
            preview,
        };
        let next = updated_state(state, &old);
        // A failed update that reports partial state records the new inputs with what the
        // provider says the resource now is, in place of the old state.
        let partial = PartialRecord {
            state: Some(&next),
            superseding: vec![Mutation::RemoveBase(index)],
        };
        let hooks = HookBinding::of(&next);
        let done = engine
            .run_step_to(info, true, async {
                engine
                    .before_hooks(HookKind::BeforeUpdate, &hooks, || {
                        Engine::update_hook_args(&next, &old, false)
                    })
                    .await?;
                let work = async {
                    let updated = with_timeout(
                        engine_limit(provider.origin(), timeout),
                        provider.update(request),
                    )
                    .await?;
                    let outputs = accept_result(&*provider, &urn, &id, updated.outputs, false)?;
                    let mut done = next.clone();
                    done.outputs =
                        secure_outputs(outputs, &done.inputs, &done.additional_secret_outputs);
                    let mutations =
                        vec![Mutation::Append(done.clone()), Mutation::RemoveBase(index)];
                    Ok((done, mutations))
                };
                engine
                    .journaled(OperationKind::Updating, &old, partial, work)
                    .await
            })
            .await?;
        engine
            .after_hooks(HookKind::AfterUpdate, StepOp::Update, &hooks, || {
                Engine::update_hook_args(&done, &old, true)
            })
            .await;
        engine.record(&done);
        Ok(done)
    }
}

/// The state an update of `old` records (before the provider's outputs): the new
/// registration, with the identity and bookkeeping of the recorded resource.
fn updated_state(state: ResourceState, old: &ResourceState) -> ResourceState {
    let mut next = state;
    next.id = old.id.clone();
    next.created = old.created.clone();
    next.source_position = old.source_position.clone();
    super::super::hooks::carry_unknown_fields(&mut next, old);
    next.modified = Some(now());
    next
}
