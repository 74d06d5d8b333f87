//! Deletions: what an update deletes once the program has exited (and what a destroy
//! deletes), checked so that nothing that stays refers to anything deleted, then run as
//! antichains of the dependency graph — dependents first, each antichain in parallel.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::StreamExt;

use crate::state::ResourceState;
use crate::urn::Urn;

use super::super::engine::{Engine, err, lock};
use super::super::events::StepOp;
use super::super::graph::{self, DependencyGraph};
use super::super::journal::BaseIndex;
use super::super::monitor::MonitorError;
use super::super::steps::delete::DeleteStep;

impl Engine {
    /// Base entries an update must delete once the program has finished: unregistered
    /// resources, copies replaced create-before-delete, and leftovers marked for deletion.
    pub fn update_deletions(&self) -> Vec<BaseIndex> {
        let mut deletions = self
            .plan()
            .deletions(self.base(), |urn| self.is_targeted(urn));
        let held = self.held_by_continued();
        deletions.retain(|&i| !held.contains(&self.base().resources[i].urn));
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
        let base = &self.base().resources;
        let plan = self.plan();
        // A resource renamed through an alias left its old state under the old URN.
        let roots = base.iter().filter(|r| {
            continued.contains_key(&r.urn)
                || plan
                    .renamed
                    .get(&r.urn)
                    .is_some_and(|new| continued.contains_key(new))
        });
        graph::transitive_dependencies(base, roots)
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
            for &t in &targeted {
                for d in graph.transitive_dependents(t) {
                    if selected.contains(&d) {
                        continue;
                    }
                    if !options.target_dependents {
                        return Err(format!(
                            "{} depends on targeted resource {}; target it too, or pass --target-dependents",
                            base.resources[d].urn, base.resources[t].urn
                        ));
                    }
                    selected.push(d);
                }
            }
            chosen = selected;
        }
        chosen.retain(|&i| !options.excludes.contains(&base.resources[i].urn));
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
            .map(|&i| (&self.base().resources[i].urn, i))
            .collect();
        if doomed_urns.is_empty() {
            return Ok(());
        }
        let doomed_set: HashSet<BaseIndex> = doomed.iter().copied().collect();
        let mut problems = Vec::new();
        for (i, resource) in self.base().resources.iter().enumerate() {
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

    /// Deletes the given base entries: protected ones refuse (before anything is deleted), the
    /// rest run as antichains, dependents first, each antichain in parallel.
    pub async fn delete_all(self: &Arc<Self>, indices: Vec<BaseIndex>) -> Result<(), MonitorError> {
        self.refuse_protected(&indices)?;
        let doomed: HashSet<&Urn> = indices
            .iter()
            .map(|&i| &self.base().resources[i].urn)
            .collect();
        let refs: Vec<&ResourceState> =
            indices.iter().map(|&i| &self.base().resources[i]).collect();
        let layers = DependencyGraph::new(&refs).delete_antichains();
        let mut first_error = None;
        for mut layer in layers {
            self.ensure_running()?;
            if self.options.continue_on_error {
                // What a failed deletion (or a resource the update went on without) depends
                // on stays.
                let held = self.held_by_continued();
                layer.retain(|&local| !held.contains(&self.base().resources[indices[local]].urn));
            }
            // As many at once as registrations may be (the gate's size): enough to fill every
            // parallelism permit and to share journal writes, few enough that a destroy of
            // 100,000 resources does not hold 100,000 steps' state at once.
            let steps = layer.into_iter().map(|local| {
                let index = indices[local];
                let resource = &self.base().resources[index];
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
        first_error.map_or(Ok(()), Err)
    }

    /// Refuses to delete anything when a protected resource is among `indices` (each one is
    /// recorded as a failed delete).
    fn refuse_protected(&self, indices: &[BaseIndex]) -> Result<(), MonitorError> {
        let protected: Vec<String> = indices
            .iter()
            .map(|&i| &self.base().resources[i])
            .filter(|r| r.protect && !r.delete)
            .map(|r| r.urn.to_string())
            .collect();
        if protected.is_empty() {
            return Ok(());
        }
        let message = format!(
            "refusing to delete protected resource{} {}; run `cairn state unprotect <urn>` first",
            if protected.len() == 1 { "" } else { "s" },
            protected.join(", ")
        );
        for urn in &protected {
            if let Ok(urn) = Urn::parse(urn) {
                self.note_failure(&urn, StepOp::Delete, message.clone());
            }
        }
        Err(err(message))
    }
}
