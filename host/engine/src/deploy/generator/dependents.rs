//! Dependent replacements: before a resource is deleted ahead of its replacement
//! (delete-before-replace), the resources that depend on it and would themselves be replaced
//! are deleted first, dependents of dependents before them (the spec's dependent-replacement
//! rule).

use std::collections::HashSet;

use crate::state::ResourceState;
use crate::urn::Urn;
use crate::value::PropertyValue;

use super::super::engine::{Engine, err};
use super::super::graph::DependencyGraph;
use super::super::journal::BaseIndex;
use super::super::monitor::MonitorError;
use super::super::provider::DiffRequest;
use super::super::steps::delete::DeleteBeforeReplaceStep;

impl Engine {
    /// Whether the resource at `urn` in the old state is replaced in this deployment (its old
    /// copy deleted ahead of its replacement, or to be deleted after it).
    pub(crate) fn replaced_here(&self, urn: &Urn) -> bool {
        let plan = self.plan();
        plan.live
            .get(urn)
            .is_some_and(|i| plan.pending_deletes.contains(i) || plan.deleted_early.contains(i))
    }

    /// Before a delete-before-replace of base[index]: deletes the resources that depend on it
    /// and would themselves be replaced (dependents first).
    pub async fn delete_dependents_of(&self, index: BaseIndex) -> Result<(), MonitorError> {
        let doomed = self.dependents_replaced_with(index).await;
        let condemned: HashSet<&Urn> = doomed
            .iter()
            .chain([&index])
            .map(|&i| &self.old_state(i).urn)
            .collect();
        // Dependents of dependents first.
        for &i in doomed.iter().rev() {
            let dependent = self.old_state(i).clone();
            if dependent.protect {
                return Err(err(format!(
                    "{} is protected and would have to be replaced because a resource it depends on is replaced delete-before-replace; run `cairn state unprotect {}` first",
                    dependent.urn, dependent.urn
                )));
            }
            // Deleted with a resource deleted here too: that deletion takes it along.
            let deleted_with = dependent
                .deleted_with
                .as_ref()
                .is_some_and(|target| condemned.contains(target));
            DeleteBeforeReplaceStep {
                old: &dependent,
                index: i,
                deleted_with,
            }
            .apply(self)
            .await?;
        }
        Ok(())
    }

    /// The base entries that depend on base[index], directly or not, and must be replaced
    /// with it, in dependency order (dependencies before dependents). Entries this deployment
    /// already registered or deleted are left to their own registrations.
    async fn dependents_replaced_with(&self, index: BaseIndex) -> Vec<BaseIndex> {
        let refs: Vec<&ResourceState> = self.old_states();
        let graph = DependencyGraph::new(&refs);
        let dependents = graph.transitive_dependents(index);
        let mut replaced: HashSet<Urn> = HashSet::from([self.old_state(index).urn.clone()]);
        let mut doomed: Vec<BaseIndex> = Vec::new();
        for i in dependents {
            let dependent = self.old_state(i);
            {
                let plan = self.plan();
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
        doomed
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
        // Deleted with a replaced resource: the old copy goes with it.
        if dependent
            .deleted_with
            .as_ref()
            .is_some_and(|target| replaced.contains(target))
        {
            return true;
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
}
