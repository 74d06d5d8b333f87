//! The `create` and `create-replacement` steps: the provider makes a resource, and its state
//! is recorded in place of what it supersedes.

use std::sync::Arc;

use crate::state::{OperationKind, ResourceState};
use crate::value::PropertyMap;

use super::super::admission::accept_result;
use super::super::engine::Engine;
use super::super::events::StepOp;
use super::super::executor::{PartialRecord, engine_limit, with_timeout};
use super::super::generator::diff::diff_properties;
use super::super::hooks::{HookBinding, HookKind};
use super::super::journal::{BaseIndex, Mutation};
use super::super::monitor::MonitorError;
use super::super::provider::{CreateRequest, Provider};
use super::{now, secure_outputs, step_state, timeout_of};

/// Creates `state` (its inputs checked) through `provider`.
pub(crate) struct CreateStep {
    /// `create`, or `create-replacement` for a replacement.
    pub op: StepOp,
    pub state: ResourceState,
    pub provider: Arc<dyn Provider>,
    /// For a delete-before-replace re-creation: the base entry (the `pendingReplacement` copy)
    /// this state supersedes.
    pub supersedes: Option<BaseIndex>,
    /// For a create-before-replace: the old entry, marked for deletion once this exists.
    pub replaces: Option<(BaseIndex, ResourceState)>,
}

impl CreateStep {
    pub async fn apply(self, engine: &Engine) -> Result<ResourceState, MonitorError> {
        let CreateStep {
            op,
            state,
            provider,
            supersedes,
            replaces,
        } = self;
        let urn = state.urn.clone();
        let preview = engine.preview();
        let timeout = timeout_of(state.custom_timeouts.as_deref(), |t| t.create);
        let now = now();
        let mut info = engine.step_info(op, &state);
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
        let superseding = superseded_by(supersedes, replaces.as_ref());
        let partial = PartialRecord {
            state: None,
            superseding: superseding.clone(),
        };
        let pending = state;
        let hooks = HookBinding::of(&pending);
        let done = engine
            .run_step_to(info, counted, async {
                engine
                    .before_hooks(HookKind::BeforeCreate, &hooks, || {
                        Engine::create_hook_args(&pending, false)
                    })
                    .await?;
                let work = async {
                    let created = with_timeout(
                        engine_limit(provider.origin(), timeout),
                        provider.create(request),
                    )
                    .await?;
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
                engine
                    .journaled(OperationKind::Creating, &pending, partial, work)
                    .await
            })
            .await?;
        if let Some((i, _)) = replaces {
            engine.plan().pending_deletes.push(i);
        }
        engine
            .after_hooks(HookKind::AfterCreate, op, &hooks, || {
                Engine::create_hook_args(&done, true)
            })
            .await;
        engine.record(&done);
        Ok(done)
    }
}

/// What a new state takes the place of: the old copy deleted ahead of it, or the old copy it
/// replaces (marked for deletion).
fn superseded_by(
    supersedes: Option<BaseIndex>,
    replaces: Option<&(BaseIndex, ResourceState)>,
) -> Vec<Mutation> {
    let mut superseding = Vec::new();
    if let Some(i) = supersedes {
        superseding.push(Mutation::RemoveBase(i));
    }
    if let Some((i, old)) = replaces {
        let mut doomed = old.clone();
        doomed.delete = true;
        superseding.push(Mutation::ReplaceBase(*i, doomed));
    }
    superseding
}
