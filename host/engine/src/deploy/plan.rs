//! The step generator's plan: which old states this deployment has accounted for and what it
//! has registered. Every rule about claiming, subtrees and what remains to delete reads or
//! writes this one structure.
//!
//! # Invariants
//!
//! * The plan has one owner: it sits behind the engine's mutex, which is never held across an
//!   `await` (Check, Diff and provider operations run outside it).
//! * A URN is `registered` at most once per deployment, and every base index is `claimed` by
//!   at most one registration; `renamed` maps the old URN of every claim made through an alias
//!   to the URN that took it over.
//! * `completed ⊆ registered ∪ default providers`: a URN is completed once its state is in the
//!   snapshot, and only completed URNs may be referred to (parent, dependencies, `deletedWith`).
//! * `deleted_early`, `pending_deletes` and `untargeted` hold claimed base indices only; a base
//!   entry is deleted after the program exits iff it is unclaimed (and targeted) or in
//!   `pending_deletes`, and never if it is in `deleted_early`.
//! * `states` holds the recorded states of components and providers only (custom resources
//!   live in the journal; copying them would double the engine's memory).

use std::collections::{HashMap, HashSet};

use crate::state::{ResourceState, Snapshot};
use crate::urn::Urn;

use super::journal::BaseIndex;
use super::monitor::MonitorError;
use super::monitor::scope::Caller;

/// Which old states this deployment has accounted for, and what it has registered.
#[derive(Default)]
pub(crate) struct Plan {
    /// The live (not `delete`-marked) copy of each URN in the base snapshot.
    pub live: HashMap<Urn, BaseIndex>,
    /// URNs registered in this deployment: their parents and the aliases they were registered
    /// under.
    pub registered: HashMap<Urn, Registration>,
    /// URNs whose registration finished with a state in this deployment's snapshot: what later
    /// registrations may refer to.
    pub completed: HashSet<Urn>,
    /// Old URNs taken over under a new one (through aliases): old → new.
    pub renamed: HashMap<Urn, Urn>,
    /// Default provider URNs registered in this deployment.
    pub default_providers: HashSet<Urn>,
    /// Base entries taken over by a registration.
    pub claimed: HashSet<BaseIndex>,
    /// Base entries deleted ahead of their replacement (delete-before-replace).
    pub deleted_early: HashSet<BaseIndex>,
    /// Base entries replaced create-before-delete, to delete once the program has finished.
    pub pending_deletes: Vec<BaseIndex>,
    /// Base entries kept as they are because `--target` / `--exclude` left them out.
    pub untargeted: HashSet<BaseIndex>,
    /// The states this deployment has recorded, by URN (components and providers).
    pub states: HashMap<Urn, ResourceState>,
}

/// How a URN was registered in this deployment.
pub(crate) struct Registration {
    pub parent: Option<Urn>,
    pub aliases: Vec<Urn>,
}

impl Plan {
    /// The plan of a deployment starting from `base`: nothing registered, every live entry
    /// claimable.
    pub fn new(base: &Snapshot) -> Plan {
        let mut plan = Plan::default();
        for (i, resource) in base.resources.iter().enumerate() {
            if !resource.delete {
                plan.live.insert(resource.urn.clone(), i);
            }
        }
        plan
    }

    /// Whether `urn` is `component` or registered below it in this deployment.
    pub fn in_subtree(&self, urn: &Urn, component: &Urn) -> bool {
        let mut current = urn;
        // Parents are registered before their children, so the walk ends; the bound guards
        // against a bug turning it into a loop.
        for _ in 0..=self.registered.len() {
            if current == component {
                return true;
            }
            match self.registered.get(current).and_then(|r| r.parent.as_ref()) {
                Some(parent) => current = parent,
                None => return false,
            }
        }
        false
    }

    /// Whether an old URN belonged to `component`'s subtree: it (or what took it over in this
    /// deployment) is registered below the component.
    pub fn was_in_subtree(&self, old: &Urn, component: &Urn) -> bool {
        let current = self.renamed.get(old).unwrap_or(old);
        self.in_subtree(current, component)
    }

    /// Records the registration of `urn` (under `parent`) and claims its old state in `base`
    /// (found by its URN or one of its aliases), if any. A provider acting for a component may
    /// only take over old states that were its component's: their parents lie in the
    /// component's subtree.
    pub fn claim(
        &mut self,
        base: &Snapshot,
        urn: &Urn,
        aliases: Vec<Urn>,
        parent: Option<&Urn>,
        caller: &Caller,
    ) -> Result<Option<BaseIndex>, MonitorError> {
        if self.registered.contains_key(urn) {
            return Err(MonitorError::new(format!(
                "duplicate resource URN {urn}: a resource with this type, name and parent was already registered; give it a unique name"
            )));
        }
        let found = self.old_states_of(urn, &aliases);
        if found.len() > 1 {
            let urns: Vec<String> = found
                .iter()
                .map(|&i| base.resources[i].urn.to_string())
                .collect();
            return Err(MonitorError::new(format!(
                "resource {urn} matches {} resources in the existing state through its aliases ({}); remove the aliases that no longer apply",
                found.len(),
                urns.join(", ")
            )));
        }
        let found = found.first().copied();
        if let Some(i) = found {
            if self.claimed.contains(&i) {
                return Err(MonitorError::new(format!(
                    "resource {urn} aliases {}, which another resource in this deployment already took over",
                    base.resources[i].urn
                )));
            }
            self.check_claim_in_scope(&base.resources[i], urn, caller)?;
        }
        self.registered.insert(
            urn.clone(),
            Registration {
                parent: parent.cloned(),
                aliases,
            },
        );
        if let Some(i) = found {
            self.claimed.insert(i);
            let old_urn = &base.resources[i].urn;
            if old_urn != urn {
                self.renamed.insert(old_urn.clone(), urn.clone());
            }
        }
        Ok(found)
    }

    /// The live base entries `urn` or one of its aliases names, without repeats.
    fn old_states_of(&self, urn: &Urn, aliases: &[Urn]) -> Vec<BaseIndex> {
        let mut found: Vec<BaseIndex> = Vec::new();
        for candidate in std::iter::once(urn).chain(aliases) {
            if let Some(&i) = self.live.get(candidate)
                && !found.contains(&i)
            {
                found.push(i);
            }
        }
        found
    }

    /// Refuses a provider acting for a component the old state of a resource outside it (the
    /// component itself, as the program asked for it, may take over its own).
    fn check_claim_in_scope(
        &self,
        old: &ResourceState,
        urn: &Urn,
        caller: &Caller,
    ) -> Result<(), MonitorError> {
        let Some(scope) = caller.scope() else {
            return Ok(());
        };
        let is_root = scope.root.is_some() && scope.component.as_ref() == Some(urn);
        let inside = match (&scope.component, &old.parent) {
            (Some(component), Some(old_parent)) => self.was_in_subtree(old_parent, component),
            _ => false,
        };
        if is_root || inside {
            return Ok(());
        }
        Err(MonitorError::new(scope.violation(format_args!(
            "{urn} would take over the state of {}, which is outside the component",
            old.urn
        ))))
    }

    /// Marks a registration finished (others may refer to it from now on) and keeps the
    /// states later requests look up: components (for their outputs) and providers (for
    /// default-provider upgrades).
    pub fn record(&mut self, state: &ResourceState) {
        self.completed.insert(state.urn.clone());
        if state.custom && !state.is_provider() {
            return;
        }
        self.states.insert(state.urn.clone(), state.clone());
    }

    /// The first URN in `dependencies` that has not completed its registration, if any.
    pub fn first_incomplete<'u>(
        &self,
        mut dependencies: impl Iterator<Item = &'u Urn>,
    ) -> Option<&'u Urn> {
        dependencies.find(|u| !self.completed.contains(*u))
    }

    /// Base entries an update deletes once the program has finished: unregistered resources
    /// (those `targeted` says the update may touch), copies replaced create-before-delete, and
    /// leftovers marked for deletion; never what was deleted ahead of its replacement.
    pub fn deletions(&self, base: &Snapshot, targeted: impl Fn(&Urn) -> bool) -> Vec<BaseIndex> {
        let mut out: Vec<BaseIndex> = (0..base.resources.len())
            .filter(|i| !self.claimed.contains(i) && !self.deleted_early.contains(i))
            .collect();
        out.extend(self.pending_deletes.iter().copied());
        out.sort_unstable();
        out.dedup();
        // With --target / --exclude, only the chosen resources go (plus replaced copies).
        out.retain(|&i| self.pending_deletes.contains(&i) || targeted(&base.resources[i].urn));
        out
    }

    /// Whether base entry `index` stays in the snapshot untouched by this update, given the
    /// entries about to be deleted: not registered, or kept as it is by `--target`.
    pub fn stays(&self, index: BaseIndex, doomed: &HashSet<BaseIndex>) -> bool {
        !doomed.contains(&index)
            && (!self.claimed.contains(&index) || self.untargeted.contains(&index))
    }
}
