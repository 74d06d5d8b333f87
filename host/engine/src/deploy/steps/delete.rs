//! The deleting steps: `delete` (the provider deletes a resource the program no longer
//! declares), `delete-replaced` (an old copy of a replaced resource), `discard` (dropped from
//! the state without a provider call), and the delete-replaced that runs ahead of a
//! delete-before-replace re-creation.

use crate::state::{OperationKind, ResourceState};

use super::super::engine::{Engine, err};
use super::super::events::StepOp;
use super::super::executor::{PartialRecord, engine_limit, with_timeout};
use super::super::hooks::{HookBinding, HookKind};
use super::super::journal::{BaseIndex, Mutation};
use super::super::monitor::MonitorError;
use super::{delete_request, step_state};

/// Deletes base entry `index` once the program has finished (or in a destroy).
pub(crate) struct DeleteStep {
    pub index: BaseIndex,
    /// Its `deletedWith` target is deleted too, which implies its deletion.
    pub deleted_with: bool,
}

impl DeleteStep {
    pub async fn apply(self, engine: &Engine) -> Result<(), MonitorError> {
        let DeleteStep {
            index,
            deleted_with,
        } = self;
        let resource = engine.old_state(index).clone();
        if resource.pending_replacement || engine.plan().deleted_early.contains(&index) {
            // Deleted ahead of a replacement that never came (the program no longer declares
            // it): only its record is left to remove, which shows no step (Pulumi's
            // remove-pending-replace).
            return engine.apply(vec![Mutation::RemoveBase(index)]);
        }
        let discard = is_discarded(&resource, deleted_with);
        // A copy replaced create-before-delete in this deployment is marked `delete` only in the
        // journal; its replacement was already counted.
        let replaced_copy = resource.delete || engine.plan().pending_deletes.contains(&index);
        let op = if replaced_copy {
            StepOp::DeleteReplaced
        } else if discard {
            StepOp::Discard
        } else {
            StepOp::Delete
        };
        let mut info = engine.step_info(op, &resource);
        info.old = Some(step_state(&resource));
        let preview = engine.preview();
        let provider = if discard {
            None
        } else {
            engine
                .provider_for_old(&resource)
                .await
                .map_err(|e| err(format!("cannot delete {}: {e}", resource.urn)))?
        };
        let counted = !replaced_copy;
        let hooks = HookBinding::of(&resource);
        engine
            .run_step(info, counted, async {
                engine
                    .before_hooks(HookKind::BeforeDelete, &hooks, || {
                        Engine::delete_hook_args(&resource)
                    })
                    .await?;
                if preview {
                    return Ok(());
                }
                match provider {
                    Some(provider) => {
                        let request = delete_request(&resource);
                        let work = async {
                            with_timeout(
                                engine_limit(provider.origin(), request.timeout),
                                provider.delete(request.clone()),
                            )
                            .await?;
                            Ok(((), vec![Mutation::RemoveBase(index)]))
                        };
                        engine
                            .journaled(
                                OperationKind::Deleting,
                                &resource,
                                PartialRecord::default(),
                                work,
                            )
                            .await
                    }
                    None => engine
                        .journal
                        .apply(vec![Mutation::RemoveBase(index)])
                        .map_err(|e| Engine::journal_err(e).into()),
                }
            })
            .await?;
        engine
            .after_hooks(HookKind::AfterDelete, op, &hooks, || {
                Engine::delete_hook_args(&resource)
            })
            .await;
        Ok(())
    }
}

/// Whether a resource leaves the state without its provider deleting it: its deletion implied
/// by another's, kept on purpose (`retainOnDelete`), or not the stack's to delete (an
/// external, read resource).
fn is_discarded(resource: &ResourceState, deleted_with: bool) -> bool {
    deleted_with || resource.retain_on_delete || resource.external
}

/// Deletes an old resource ahead of its replacement (delete-before-replace): it stays in the
/// state marked `pendingReplacement` until the replacement exists.
///
/// Registrations run concurrently, so two replacements may both find the same dependent to
/// delete first (or one may find a resource whose own registration replaces it): each base
/// entry is deleted early once, and whoever comes second waits for that deletion and shares
/// its outcome.
pub(crate) struct DeleteBeforeReplaceStep<'a> {
    pub old: &'a ResourceState,
    pub index: BaseIndex,
    /// Its `deletedWith` target is deleted too, which deletes it: no provider call.
    pub deleted_with: bool,
}

impl DeleteBeforeReplaceStep<'_> {
    pub async fn apply(self, engine: &Engine) -> Result<(), MonitorError> {
        let once = engine
            .plan()
            .early_deletions
            .entry(self.index)
            .or_default()
            .clone();
        once.get_or_init(|| self.run(engine)).await.clone()
    }

    async fn run(self, engine: &Engine) -> Result<(), MonitorError> {
        let DeleteBeforeReplaceStep {
            old,
            index,
            deleted_with,
        } = self;
        let provider = engine.provider_for_old(old).await.map_err(err)?;
        let mut info = engine.step_info(StepOp::DeleteReplaced, old);
        info.old = Some(step_state(old));
        let preview = engine.preview();
        let mut marked = old.clone();
        marked.pending_replacement = true;
        let request = delete_request(old);
        let hooks = HookBinding::of(old);
        // The logical replacement is counted once, by its Replace step.
        engine
            .run_step(info, false, async {
                engine
                    .before_hooks(HookKind::BeforeDelete, &hooks, || {
                        Engine::delete_hook_args(old)
                    })
                    .await?;
                if preview {
                    return Ok(());
                }
                let work = async {
                    // A copy already deleted ahead of an earlier replacement is not deleted twice.
                    if let Some(provider) = provider
                        .as_ref()
                        .filter(|_| !old.pending_replacement && !deleted_with)
                    {
                        with_timeout(
                            engine_limit(provider.origin(), request.timeout),
                            provider.delete(request.clone()),
                        )
                        .await?;
                    }
                    Ok(((), vec![Mutation::ReplaceBase(index, marked.clone())]))
                };
                engine
                    .journaled(OperationKind::Deleting, old, PartialRecord::default(), work)
                    .await
            })
            .await?;
        engine.plan().deleted_early.insert(index);
        engine
            .after_hooks(
                HookKind::AfterDelete,
                StepOp::DeleteReplaced,
                &hooks,
                || Engine::delete_hook_args(old),
            )
            .await;
        Ok(())
    }
}
