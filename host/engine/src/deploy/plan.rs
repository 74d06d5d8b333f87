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
//! * `pending_deletes` and `untargeted` hold claimed base indices only; `deleted_early` holds
//!   the resources deleted ahead of a replacement: the replaced one (claimed) and the
//!   dependents deleted with it (claimed once the program registers them again). A base entry
//!   is deleted after the program exits iff it is unclaimed (and targeted) or in
//!   `pending_deletes`; an unclaimed one in `deleted_early` is already gone and only leaves the
//!   state (Pulumi's remove-pending-replace).
//! * `states` holds the recorded states of components and providers only (custom resources
//!   live in the journal; copying them would double the engine's memory).
//!
//! # The engine is laid out as the spec describes it
//!
//! `deploy/` has one module per part of the spec's engine — `monitor/` (the resource monitor's
//! entry points and admission), `generator/` (the step generator: identity, providers, check, diff,
//! decision, dependent replacements), `steps/` (one type per step kind, each applying itself
//! through the journal) and `executor/` (running steps, cancellation, deletions, refresh) — around
//! `plan.rs` (the plan state and its invariants) and `engine.rs` (the shared context). Each part is
//! an `impl Engine` block of its own rather than a separate object: the parts share one plan, one
//! journal and one permit pool, and passing them between three objects would add indirection
//! without separating anything. Pulumi's generator emits steps to a separate executor over a
//! channel and runs serially; Cairn's registration runs its own steps in its own task (one chain
//! per registration), which is what lets independent registrations proceed in parallel without a
//! serial generator on the critical path (see "The plan has one owner").
//!
//! # Concurrency by registration, not by event queue
//!
//! Pulumi funnels registrations through one step-generator goroutine. Cairn runs each
//! registration's flow in its caller's task with the plan state under a short mutex: the same
//! single-owner plan, without a serial Check/Diff path.
//!
//! # The plan has one owner
//!
//! The step generator's plan state sits behind a mutex never held across an `await`; Check, Diff
//! and provider operations run concurrently outside it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

// URN-keyed maps are looked up several times per registration: a fast hasher (seeded per
// process, so a program cannot pick colliding URNs in advance).
use foldhash::{HashMap as UrnMap, HashMapExt, HashSet as UrnSet, HashSetExt};

use crate::state::{ResourceState, Snapshot};
use crate::urn::Urn;

use super::journal::BaseIndex;
use super::monitor::MonitorError;
use super::monitor::scope::Caller;

/// Which old states this deployment has accounted for, and what it has registered.
#[derive(Default)]
pub(crate) struct Plan {
    /// The live (not `delete`-marked) copy of each URN in the base snapshot.
    pub live: UrnMap<Urn, BaseIndex>,
    /// URNs registered in this deployment: their parents and the aliases they were registered
    /// under.
    pub registered: UrnMap<Urn, Registration>,
    /// URNs whose registration finished with a state in this deployment's snapshot: what later
    /// registrations may refer to.
    pub completed: UrnSet<Urn>,
    /// Old URNs taken over under a new one (through aliases): old → new.
    pub renamed: UrnMap<Urn, Urn>,
    /// Default provider URNs registered in this deployment.
    pub default_providers: UrnSet<Urn>,
    /// Base entries taken over by a registration.
    pub claimed: HashSet<BaseIndex>,
    /// Base entries deleted ahead of their replacement (delete-before-replace).
    pub deleted_early: HashSet<BaseIndex>,
    /// Early deletions started, by base entry: each runs once, and a registration that needs
    /// one already running waits for its outcome.
    pub early_deletions: HashMap<BaseIndex, EarlyDeletion>,
    /// Base entries replaced create-before-delete, to delete once the program has finished.
    pub pending_deletes: Vec<BaseIndex>,
    /// Base entries kept as they are because `--target` / `--exclude` left them out.
    pub untargeted: HashSet<BaseIndex>,
    /// The states this deployment has recorded, by URN (components and providers).
    pub states: UrnMap<Urn, ResourceState>,
}

/// The outcome of one early deletion, shared by every registration that needs it.
pub(crate) type EarlyDeletion = Arc<tokio::sync::OnceCell<Result<(), MonitorError>>>;

/// How a URN was registered in this deployment.
pub(crate) struct Registration {
    pub parent: Option<Urn>,
    /// The old URN whose state it took over through an alias, if it did: what its children's
    /// URNs were under it.
    pub renamed_from: Option<Urn>,
}

impl Plan {
    /// The plan of a deployment starting from `base`: nothing registered, every live entry
    /// claimable.
    pub fn new(base: &Snapshot) -> Plan {
        // Sized for a deployment that registers what the base holds (an update, a preview), so
        // the maps that grow with every registration are allocated once, not rehashed as they
        // grow: a tenth of the engine's time per registration went to rehashing them.
        let n = base.resources.len();
        let kept = base
            .resources
            .iter()
            .filter(|r| !r.custom || r.is_provider())
            .count();
        let mut plan = Plan {
            live: UrnMap::with_capacity(n),
            registered: UrnMap::with_capacity(n),
            completed: UrnSet::with_capacity(n),
            claimed: HashSet::with_capacity(n),
            states: UrnMap::with_capacity(kept),
            ..Plan::default()
        };
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

    /// `urn`, sharing the base's copy of its text when the base has the resource: what a
    /// registration keeps of its URN is then one more reference, not a second copy (for a
    /// 100,000-resource update, 7 MB).
    pub fn shared_urn(&self, urn: Urn) -> Urn {
        self.live
            .get_key_value(&urn)
            .map_or(urn, |(shared, _)| shared.clone())
    }

    /// Records the registration of `urn` (under `parent`) and claims its old state in `base`
    /// (found by its URN or one of its aliases), if any. A provider acting for a component may
    /// only take over old states that were its component's: their parents lie in the
    /// component's subtree.
    #[cfg(test)]
    pub fn claim(
        &mut self,
        base: &Snapshot,
        urn: &Urn,
        aliases: Vec<Urn>,
        parent: Option<&Urn>,
        caller: &Caller,
    ) -> Result<Option<BaseIndex>, MonitorError> {
        self.claim_in(&|i| &base.resources[i], urn, aliases, parent, caller)
    }

    /// [`Plan::claim`], reading the old state of each base entry from `old` (the base as
    /// state migrations rewrote it).
    pub fn claim_in<'s>(
        &mut self,
        old: &dyn Fn(BaseIndex) -> &'s ResourceState,
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
            let urns: Vec<String> = found.iter().map(|&i| old(i).urn.to_string()).collect();
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
                    old(i).urn
                )));
            }
            self.check_claim_in_scope(old(i), urn, caller)?;
        }
        let renamed_from = found
            .map(|i| &old(i).urn)
            .filter(|old| *old != urn)
            .cloned();
        self.registered.insert(
            urn.clone(),
            Registration {
                parent: parent.cloned(),
                renamed_from: renamed_from.clone(),
            },
        );
        if let Some(i) = found {
            self.claimed.insert(i);
        }
        if let Some(old_urn) = renamed_from {
            self.renamed.insert(old_urn, urn.clone());
        }
        Ok(found)
    }

    /// The live base entry of `urn` itself; else those its aliases name, without repeats. As
    /// in Pulumi, the URN comes first: after a failed update both a resource's new URN and the
    /// old one its alias names can be in the state, and the old one is then deleted.
    fn old_states_of(&self, urn: &Urn, aliases: &[Urn]) -> Vec<BaseIndex> {
        if let Some(&i) = self.live.get(urn) {
            return vec![i];
        }
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
    /// (those `targeted` says the update may touch) — among them dependents deleted ahead of a
    /// replacement that the program did not register again, which only leave the state —
    /// copies replaced create-before-delete, and leftovers marked for deletion.
    pub fn deletions(&self, base: &Snapshot, targeted: impl Fn(&Urn) -> bool) -> Vec<BaseIndex> {
        let mut out: Vec<BaseIndex> = (0..base.resources.len())
            .filter(|i| !self.claimed.contains(i))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::monitor::scope::{Caller, ComponentScope};
    use crate::deploy::provider::NativePlugins;
    use crate::urn::TypeToken;

    fn urn(name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:s::p::t:m:R::{name}")).unwrap()
    }

    /// A base snapshot of resources `names` (`-name` marks a copy pending deletion), each
    /// under `parent` where given as `name<parent`.
    fn base(names: &[&str]) -> Snapshot {
        let mut snapshot = Snapshot::empty(None);
        for spec in names {
            let (name, delete) = match spec.strip_prefix('-') {
                Some(name) => (name, true),
                None => (*spec, false),
            };
            let (name, parent) = match name.split_once('<') {
                Some((name, parent)) => (name, Some(urn(parent))),
                None => (name, None),
            };
            let mut state = ResourceState::new(urn(name), TypeToken::parse("t:m:R").unwrap(), true);
            state.delete = delete;
            state.parent = parent;
            snapshot.resources.push(state);
        }
        snapshot
    }

    fn component_caller(component: &str) -> Caller {
        Caller::Component(Box::new(ComponentScope {
            provider: "pkg@1.0.0".into(),
            method: "construct",
            component: Some(urn(component)),
            root: None,
            passed_providers: vec![],
            native: NativePlugins::ProjectNamed,
            readable: Default::default(),
            violations: Default::default(),
        }))
    }

    #[test]
    fn claims_by_urn_or_alias_and_only_live_copies() {
        let base = base(&["a", "-b", "b", "c"]);
        let mut plan = Plan::new(&base);
        assert_eq!(
            plan.claim(&base, &urn("a"), vec![], None, &Caller::Program)
                .unwrap(),
            Some(0)
        );
        // The live copy of b, not the one pending deletion.
        assert_eq!(
            plan.claim(&base, &urn("b"), vec![], None, &Caller::Program)
                .unwrap(),
            Some(2)
        );
        // Renamed from c.
        let claimed = plan.claim(&base, &urn("d"), vec![urn("c")], None, &Caller::Program);
        assert_eq!(claimed.unwrap(), Some(3));
        assert_eq!(plan.renamed.get(&urn("c")), Some(&urn("d")));
        assert_eq!(
            plan.claim(&base, &urn("new"), vec![], None, &Caller::Program)
                .unwrap(),
            None
        );
        assert_eq!(plan.claimed, HashSet::from([0, 2, 3]));
    }

    #[test]
    fn refuses_duplicates_ambiguous_aliases_and_double_claims() {
        let base = base(&["a", "b"]);
        let mut plan = Plan::new(&base);
        let program = &Caller::Program;
        plan.claim(&base, &urn("a"), vec![], None, program).unwrap();
        let again = plan
            .claim(&base, &urn("a"), vec![], None, program)
            .unwrap_err();
        assert!(again.message.contains("duplicate resource URN"), "{again}");
        let two = plan.claim(&base, &urn("x"), vec![urn("a"), urn("b")], None, program);
        assert!(two.unwrap_err().message.contains("matches 2 resources"));
        // Its own URN wins over an alias that matches too.
        assert_eq!(
            plan.claim(&base, &urn("b"), vec![urn("a")], None, program)
                .unwrap(),
            Some(1)
        );
        let taken = plan.claim(&base, &urn("y"), vec![urn("b")], None, program);
        assert!(taken.unwrap_err().message.contains("already took over"));
        // A refused claim registers nothing.
        assert!(!plan.registered.contains_key(&urn("x")));
        assert!(!plan.registered.contains_key(&urn("y")));
    }

    #[test]
    fn a_component_provider_claims_only_inside_its_component() {
        let base = base(&["comp", "inside<comp", "outside"]);
        let mut plan = Plan::new(&base);
        plan.claim(&base, &urn("comp"), vec![], None, &Caller::Program)
            .unwrap();
        let caller = component_caller("comp");
        let inside = plan.claim(&base, &urn("inside"), vec![], Some(&urn("comp")), &caller);
        assert_eq!(inside.unwrap(), Some(1));
        let outside = plan
            .claim(&base, &urn("outside"), vec![], Some(&urn("comp")), &caller)
            .unwrap_err();
        assert!(
            outside.message.contains("outside the component"),
            "{outside}"
        );
        assert!(plan.in_subtree(&urn("inside"), &urn("comp")));
        assert!(!plan.in_subtree(&urn("comp"), &urn("inside")));
    }

    #[test]
    fn deletions_are_the_unclaimed_and_the_replaced() {
        let base = base(&[
            "kept",
            "gone",
            "replaced",
            "early",
            "untargeted",
            "dependent",
        ]);
        let mut plan = Plan::new(&base);
        for name in ["kept", "replaced", "early"] {
            plan.claim(&base, &urn(name), vec![], None, &Caller::Program)
                .unwrap();
        }
        plan.pending_deletes.push(2);
        // Deleted ahead of its replacement, and re-created by its registration.
        plan.deleted_early.insert(3);
        // Deleted ahead of another's replacement, and not registered again: it leaves.
        plan.deleted_early.insert(5);
        assert_eq!(plan.deletions(&base, |_| true), [1, 2, 4, 5]);
        // Left out by --target: only the replaced copy still goes.
        assert_eq!(
            plan.deletions(&base, |u| {
                u != &urn("untargeted") && u != &urn("gone") && u != &urn("dependent")
            }),
            [2]
        );
        let doomed = HashSet::from([1]);
        assert!(plan.stays(4, &doomed), "unregistered and not deleted");
        assert!(!plan.stays(0, &doomed), "registered anew");
        assert!(!plan.stays(1, &doomed), "deleted");
    }
}
