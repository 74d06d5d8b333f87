//! Refresh and the resolution of pending operations: every managed resource is read from its
//! provider (drift recorded, resources deleted out of band dropped, references to them
//! cleaned), and operations an interrupted deployment left pending are settled — by the
//! refresh, by the user's decision, or by an update that succeeded.
//!
//! # Pending operations are resolved, never duplicated
//!
//! `up` and `destroy` refuse while an interrupted create is pending (`deploy::unresolved_creates`:
//! the CLI checks before building the program, the engine again); `refresh` resolves each as the
//! user decides (`DeploymentOptions::pending_creates`: import by ID, read through the resource's
//! provider and recorded with the inputs the create was given; or clear) and records the undecided
//! ones again as pending; interrupted updates and reads are settled by a refresh or a successful
//! untargeted `up`, interrupted deletes by a refresh (which reads them) or an `up` that no longer
//! holds the resource.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::future::join_all;

use crate::state::{Operation, OperationKind, ResourceState};
use crate::urn::Urn;
use crate::value::PropertyMap;

use super::super::PendingCreate;
use super::super::engine::{Engine, err};
use super::super::events::StepOp;
use super::super::graph;
use super::super::journal::{BaseIndex, Mutation};
use super::super::monitor::MonitorError;
use super::super::steps::import::PendingCreateImport;
use super::super::steps::refresh::{RefreshStep, Refreshed};
use super::super::steps::step_state;

impl Engine {
    /// Reads every managed resource from its provider, recording drift and dropping resources
    /// deleted out of band.
    pub async fn refresh_all(self: &Arc<Self>) -> Result<(), MonitorError> {
        let mut targets: Vec<BaseIndex> = Vec::new();
        for (index, r) in self.base().resources.iter().enumerate() {
            if !self.is_targeted(&r.urn) {
                continue;
            }
            if r.custom && !r.is_provider() && !r.pending_replacement {
                targets.push(index);
            } else {
                // Nothing to read, but refreshed all the same: the stack, components and
                // providers show as unchanged in the summary, as in Pulumi's refresh.
                let mut info = self.step_info(StepOp::Refresh, r);
                info.old = Some(step_state(r));
                info.new = info.old.clone();
                self.finish_instantly(info);
            }
        }
        let results = join_all(
            targets
                .into_iter()
                .map(|index| async move { (index, RefreshStep { index }.apply(self).await) }),
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
        if !gone.is_empty() {
            self.clean_references(&gone, &removed, &mut updated);
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

    /// What remains must not refer to what is gone: drops those dependencies, and gives
    /// children of a vanished resource its parent (in `updated`, over any drift found).
    fn clean_references(
        &self,
        gone: &HashMap<Urn, Option<Urn>>,
        removed: &[BaseIndex],
        updated: &mut HashMap<BaseIndex, ResourceState>,
    ) {
        for (index, resource) in self.base().resources.iter().enumerate() {
            if removed.contains(&index) {
                continue;
            }
            let current = updated.get(&index).unwrap_or(resource);
            if let Some(cleaned) = without_references(current, gone) {
                updated.insert(index, cleaned);
            }
        }
    }

    /// Resolves the pending operations an interrupted deployment left in the base snapshot.
    /// The refresh has re-read every resource that is still in the state, which settles
    /// interrupted updates, deletes and reads. An interrupted create (or import) may have made
    /// a resource the state does not know: it is imported by the ID the user gives, forgotten
    /// if the user says so, and otherwise stays pending (reported on every command).
    pub async fn resolve_pending(&self) -> Result<(), MonitorError> {
        let pending = &self.base().pending_operations;
        self.check_pending_decisions(pending)?;
        if pending.is_empty() {
            return Ok(());
        }
        let decisions = &self.options.pending_creates;
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
                        let import = PendingCreateImport {
                            pending: &op.resource,
                            id,
                        };
                        if let Err(e) = import.apply(self).await {
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
        self.record_pending_again(kept)?;
        if failures.is_empty() {
            Ok(())
        } else {
            Err(err(failures.join("; ")))
        }
    }

    /// Refuses a decision (`--import-pending-creates`, …) about a URN with no pending create.
    fn check_pending_decisions(
        &self,
        pending: &[Operation<PropertyMap>],
    ) -> Result<(), MonitorError> {
        for urn in self.options.pending_creates.keys() {
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
        Ok(())
    }

    /// Replaces the base's pending operations by `kept`, recorded again as operations begun
    /// and never ended.
    fn record_pending_again<'o>(
        &self,
        kept: impl IntoIterator<Item = &'o Operation<PropertyMap>>,
    ) -> Result<(), MonitorError> {
        let journal_err = |e| err(Self::journal_err(e));
        self.journal.drop_base_pending().map_err(journal_err)?;
        for op in kept {
            self.journal
                .begin(op.kind, &op.resource)
                .map_err(journal_err)?;
        }
        Ok(())
    }

    /// Before an update or destroy: interrupted creates must be resolved first (doing them
    /// again could duplicate a resource that exists); a preview only warns.
    pub fn check_pending_creates(&self, command: &str) -> Result<(), MonitorError> {
        let Some(message) = super::super::unresolved_creates(self.base(), command) else {
            return Ok(());
        };
        if self.preview() {
            self.warn(None, message);
            Ok(())
        } else {
            Err(err(message))
        }
    }

    /// After an update or a destroy that succeeded (untargeted, not a preview): interrupted
    /// updates, reads and deletes are settled, as Pulumi's engine drops them at its next
    /// deployment; only interrupted creates stay (an update or destroy refuses to run over
    /// them anyway). An update brought every resource the program declares to what it
    /// declares, and a destroy deleted every resource. A delete is matched to its resource by
    /// URN and ID: the old copy of a replacement deleted since is settled although a new copy
    /// holds the URN. An interrupted delete of a resource the state still records (the program
    /// declares it again) is settled with a warning, since the delete may have taken effect.
    pub fn settle_pending_after_success(&self) -> Result<(), MonitorError> {
        let pending = &self.base().pending_operations;
        if pending.is_empty() || self.options.targets.is_constrained() || self.preview() {
            return Ok(());
        }
        let recorded: HashSet<(Urn, Option<String>)> = self
            .journal
            .current()
            .resources
            .into_iter()
            .map(|r| (r.urn, r.id))
            .collect();
        for op in pending {
            let resource = &op.resource;
            if op.kind == OperationKind::Deleting
                && recorded.contains(&(resource.urn.clone(), resource.id.clone()))
            {
                self.warn(
                    Some(&resource.urn),
                    format!(
                        "the interrupted delete of {} is settled, and the resource is still recorded as it was: if the delete took effect, `cairn refresh` will find it gone",
                        resource.urn
                    ),
                );
            }
        }
        self.record_pending_again(pending.iter().filter(|op| op.kind.may_have_created()))
    }
}

/// `resource` without references to vanished resources (`gone`: URN → its parent), or `None`
/// if it has none.
fn without_references(
    resource: &ResourceState,
    gone: &HashMap<Urn, Option<Urn>>,
) -> Option<ResourceState> {
    let refers = graph::dependencies_of(resource).any(|u| gone.contains_key(u));
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

/// `creating urn:…, deleting urn:…`: pending operations in one line.
fn describe_pending(pending: &[Operation<PropertyMap>]) -> String {
    pending
        .iter()
        .map(|op| format!("{} {}", op.kind.verb(), op.resource.urn))
        .collect::<Vec<_>>()
        .join(", ")
}
