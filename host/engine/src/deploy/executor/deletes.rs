//! Deletions: what an update deletes once the program has exited (and what a destroy
//! deletes), checked so that nothing that stays refers to anything deleted, then run as
//! antichains of the dependency graph — dependents first, each antichain in parallel.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use crate::state::ResourceState;
use crate::urn::Urn;

use super::super::engine::{Engine, err, lock};
use super::super::events::{EngineEvent, StepOp};
use super::super::graph::{self, DependencyGraph};
use super::super::journal::BaseIndex;
use super::super::monitor::MonitorError;
use super::super::steps::delete::DeleteStep;
use super::super::steps::step_state;

impl Engine {
    /// Base entries an update must delete once the program has finished: unregistered
    /// resources, copies replaced create-before-delete, and leftovers marked for deletion.
    pub fn update_deletions(&self) -> Vec<BaseIndex> {
        let mut deletions = self
            .plan()
            .deletions(self.base(), |urn| self.is_targeted(urn));
        let held = self.held_by_continued();
        deletions.retain(|&i| !held.contains(&self.old_state(i).urn));
        deletions
    }

    /// `--continue-on-error`: what the resources the deployment went on without depend on,
    /// transitively, in the base snapshot — their recorded states stay, so none of it may be
    /// deleted (Pulumi's `erroredDeps`; also for skipped resources, whose old states stay too).
    fn held_by_continued(&self) -> HashSet<Urn> {
        let continued = lock(&self.continued);
        if continued.is_empty() {
            return HashSet::new();
        }
        let base = self.old_states();
        let plan = self.plan();
        // A resource renamed through an alias left its old state under the old URN.
        let roots = base.iter().filter(|r| {
            continued.contains_key(&r.urn)
                || plan
                    .renamed
                    .get(&r.urn)
                    .is_some_and(|new| continued.contains_key(new))
        });
        graph::transitive_dependencies(base.iter().copied(), roots.copied())
            .into_iter()
            .cloned()
            .collect()
    }

    /// Base entries a destroy deletes: all, or the targets (and, with `--target-dependents`,
    /// what depends on them), less the excluded ones. A target's dependent that is not
    /// chosen is an error: it would be left referring to a deleted resource.
    pub fn destroy_deletions(&self) -> Result<Vec<BaseIndex>, String> {
        let base = self.base();
        let options = &self.options;
        let mut chosen: Vec<BaseIndex> = (0..base.resources.len()).collect();
        if options.targets.is_constrained() {
            let refs: Vec<&ResourceState> = base.resources.iter().collect();
            let graph = DependencyGraph::new(&refs);
            let targeted: Vec<BaseIndex> = chosen
                .iter()
                .copied()
                .filter(|&i| options.targets.contains(&base.resources[i].urn))
                .collect();
            let mut selected: Vec<BaseIndex> = targeted.clone();
            let mut unlisted = 0;
            for &t in &targeted {
                for d in graph.transitive_dependents(t) {
                    if selected.contains(&d) {
                        continue;
                    }
                    selected.push(d);
                    if !options.target_dependents {
                        // Every dependent is named, each on its own resource, as Pulumi does:
                        // one at a time would take a destroy per dependent to learn them all.
                        unlisted += 1;
                        let urn = &base.resources[d].urn;
                        self.report_error(
                            urn,
                            format!(
                                "Resource '{urn}' will be destroyed but was not specified in --target list.\n\
                                 Either include resource in --target list or pass --target-dependents to proceed."
                            ),
                        );
                    }
                }
            }
            if unlisted > 0 {
                return Err(format!(
                    "{unlisted} resource{} would be destroyed but {} not specified in --target list; \
                     target {} too, or pass --target-dependents",
                    if unlisted == 1 { "" } else { "s" },
                    if unlisted == 1 { "was" } else { "were" },
                    if unlisted == 1 { "it" } else { "them" },
                ));
            }
            chosen = selected;
        }
        chosen.retain(|&i| !options.excludes.contains(&base.resources[i].urn));
        // What a targeted or excluding destroy leaves is counted as unchanged, as Pulumi's
        // summary counts it (`- 1 deleted, 8 unchanged`).
        let kept: HashSet<BaseIndex> = chosen.iter().copied().collect();
        for (i, resource) in base.resources.iter().enumerate() {
            if !kept.contains(&i) {
                self.count(StepOp::Same, &resource.urn);
            }
        }
        Ok(chosen)
    }

    /// Refuses deletions that would leave a remaining resource referring to a deleted one: a
    /// resource that stays untouched (not registered, not deleted) or was kept as it is by
    /// `--target`. Registered resources have new dependencies and cannot refer to these.
    pub fn check_deletable(&self, doomed: &[BaseIndex]) -> Result<(), MonitorError> {
        let plan = self.plan();
        let doomed_urns: HashMap<&Urn, BaseIndex> = doomed
            .iter()
            .filter(|i| !plan.pending_deletes.contains(i))
            .map(|&i| (&self.old_state(i).urn, i))
            .collect();
        if doomed_urns.is_empty() {
            return Ok(());
        }
        let doomed_set: HashSet<BaseIndex> = doomed.iter().copied().collect();
        let mut problems = Vec::new();
        for (i, resource) in self.old_states().into_iter().enumerate() {
            if !plan.stays(i, &doomed_set) {
                continue;
            }
            for target in graph::dependencies_of(resource) {
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

    /// Deletes the given base entries as antichains, dependents first, each antichain in
    /// parallel. As in Pulumi, a protected resource's delete fails without stopping the others
    /// (every protected resource is reported in one run): it stays, with everything it
    /// depends on, and the rest is deleted; the deletion then fails.
    pub async fn delete_all(self: &Arc<Self>, indices: Vec<BaseIndex>) -> Result<(), MonitorError> {
        let protected: HashSet<BaseIndex> = indices
            .iter()
            .copied()
            .filter(|&i| self.refuses_deletion(i))
            .collect();
        let held_by_protected: HashSet<Urn> = graph::transitive_dependencies(
            self.old_states(),
            protected.iter().map(|&i| self.old_state(i)),
        )
        .into_iter()
        .cloned()
        .collect();
        let doomed: HashSet<&Urn> = indices.iter().map(|&i| &self.old_state(i).urn).collect();
        let refs: Vec<&ResourceState> = indices.iter().map(|&i| self.old_state(i)).collect();
        let layers = DependencyGraph::new(&refs).delete_antichains();
        let mut first_error = None;
        let mut refused = None;
        for mut layer in layers {
            self.ensure_running()?;
            if self.options.continue_on_error {
                // What a failed deletion (or a resource the update went on without) depends
                // on stays.
                let held = self.held_by_continued();
                layer.retain(|&local| !held.contains(&self.old_state(indices[local]).urn));
            }
            layer.retain(|&local| !held_by_protected.contains(&self.old_state(indices[local]).urn));
            layer.retain(|&local| {
                let index = indices[local];
                if !protected.contains(&index) {
                    return true;
                }
                let error = self.refuse_protected(index);
                refused.get_or_insert(error);
                false
            });
            // As many at once as registrations may be (the gate's size): enough to fill every
            // parallelism permit and to share journal writes, few enough that a destroy of
            // 100,000 resources does not hold 100,000 steps' state at once.
            let steps = layer.into_iter().map(|local| {
                let index = indices[local];
                let resource = self.old_state(index);
                let deleted_with = resource
                    .deleted_with
                    .as_ref()
                    .is_some_and(|target| doomed.contains(target));
                DeleteStep {
                    index,
                    deleted_with,
                }
                .apply(self)
            });
            let results: Vec<_> = futures::stream::iter(steps)
                .buffered(self.window())
                .collect()
                .await;
            if let Some(error) = results.into_iter().find_map(Result::err) {
                if !self.options.continue_on_error {
                    return Err(error);
                }
                first_error.get_or_insert(error);
            }
        }
        first_error.or(refused).map_or(Ok(()), Err)
    }

    /// Whether deleting base entry `i` is refused: it is protected, and not an old copy of a
    /// resource replaced in this deployment (a replacement checks protection when planned)
    /// nor one already deleted ahead of its replacement.
    fn refuses_deletion(&self, i: BaseIndex) -> bool {
        let resource = self.old_state(i);
        let plan = self.plan();
        resource.protect
            && !resource.delete
            && !resource.pending_replacement
            && !plan.pending_deletes.contains(&i)
            && !plan.deleted_early.contains(&i)
    }

    /// Reports the refused delete of protected base entry `index` as a failed step (Pulumi's
    /// wording, with Cairn's commands), without cancelling the deployment.
    fn refuse_protected(&self, index: BaseIndex) -> MonitorError {
        let resource = self.old_state(index);
        let urn = &resource.urn;
        let message = format!(
            "resource \"{urn}\" cannot be deleted\n\
             because it is protected. To unprotect the resource, either remove the `protect` \
             flag from the resource in your program and run `cairn up`, or use the command:\n\
             `cairn state unprotect '{}'`",
            urn.as_str().replace('\'', "'\\''")
        );
        let mut info = self.step_info(StepOp::Delete, resource);
        info.old = Some(step_state(resource));
        self.emit(EngineEvent::StepStarted(info.clone()));
        self.emit(EngineEvent::StepFailed {
            step: info,
            error: message.clone(),
            duration: Duration::ZERO,
        });
        self.note_failure(urn, StepOp::Delete, message.clone());
        err(format!("delete of {urn} failed: {message}"))
    }
}
