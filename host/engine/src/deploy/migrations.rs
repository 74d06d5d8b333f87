//! State migrations (the `stateMigrations` resource option): functions of the program that
//! rewrite the prior state of a resource and its descendants before the resource is diffed,
//! as Pulumi's engine applies them.
//!
//! When a registration that brings migrations has prior state (under its URN or an alias) in
//! an update or its preview, the engine hands the first migration the prior subtree — the
//! resource, then every live resource parented to it, transitively, in state order — as a
//! JSON array of checkpoint resources with secrets in plaintext, each later migration what the
//! one before answered. A migration answers nothing (the state stays) or the whole subtree that
//! replaces it. Pulumi's rules are checked on each answer and on the result ([`validate`]);
//! a migration that breaks one fails the registration and changes nothing. A result equal to
//! the prior subtree changes nothing. Otherwise the migrated states take the place of the prior
//! ones, for the diffs that follow and in the recorded state (at once, outside a preview).
//!
//! A result may rename, merge and add resources: every resource it no longer holds names a
//! successor it does ([`successors`]). Every reference to a succeeded URN — in the result and
//! in the rest of the state — then names the successor, and the registrations that follow find
//! their old states under the new URNs. Each returned state takes the place of a prior one in
//! the base: its own, the last one it succeeds (for a custom resource, the last custom one,
//! whose physical identity it keeps), or, for one the migration adds, a component merged away;
//! the entries merged away leave the state. Refresh and destroy (also with `--run-program`) do
//! not run migrations, as in Pulumi.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use indexmap::IndexMap;
use serde_json::Value;

use crate::state::{
    ResourceState, ResourceV3, SecretsMode, codec::decode_resource, encode_resource,
    is_provider_type,
};
use crate::urn::Urn;

use super::engine::{Engine, err};
use super::graph;
use super::journal::{BaseIndex, Mutation};
use super::monitor::MonitorError;
use super::program::Alias;

mod successors;

use successors::Rewrite;

/// A migration's answer: the JSON array that replaces the subtree, and the successor of every
/// resource it no longer holds (old URN → new URN).
pub struct Migrated {
    pub new_state: Vec<u8>,
    pub successors: IndexMap<String, String>,
}

/// A state migration function of the program.
#[async_trait]
pub trait StateMigration: Send + Sync {
    /// Names the callback in errors (`state migration 1b2c… at 127.0.0.1:4000`).
    fn describe(&self) -> String;

    /// Migrates `old_state` (a JSON array of checkpoint resources) of the registration `urn`;
    /// `None`: the state stays as it is.
    async fn migrate(&self, urn: &Urn, old_state: Vec<u8>) -> Result<Option<Migrated>, String>;
}

/// A state migration handed to the monitor; equal only to itself.
#[derive(Clone)]
pub struct Migration(pub Arc<dyn StateMigration>);

impl PartialEq for Migration {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for Migration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.describe())
    }
}

/// The migrated states of the base, by base index: set once each, and read in place of the
/// base entry from then on. Allocated by the first migration that changes anything.
#[derive(Default)]
pub struct MigratedStates(OnceLock<Vec<OnceLock<Box<ResourceState>>>>);

impl Engine {
    /// The old state at base `index`, as migrated in this deployment if it was.
    pub(crate) fn old_state(&self, index: BaseIndex) -> &ResourceState {
        self.migrated
            .0
            .get()
            .and_then(|slots| slots.get(index))
            .and_then(|slot| slot.get())
            .map_or(&self.base().resources[index], |state| state)
    }

    /// The old states of the base, as migrated in this deployment: what the deletions of an
    /// update read.
    pub(crate) fn old_states(&self) -> Vec<&ResourceState> {
        (0..self.base().resources.len())
            .map(|i| self.old_state(i))
            .collect()
    }

    /// Runs `migrations` on the prior subtree of the registration `urn` (see the module docs),
    /// before its old state is claimed.
    pub(crate) async fn apply_state_migrations(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        resource_type: &crate::urn::TypeToken,
        name: &str,
        aliases: &[Alias],
        migrations: &[Migration],
    ) -> Result<(), MonitorError> {
        if migrations.is_empty() || self.configuring() {
            return Ok(());
        }
        let mut candidates = vec![urn.clone()];
        candidates.extend(self.alias_urns(urn, parent, resource_type, name, aliases)?);
        let Some(root) = self.prior_root(&candidates) else {
            return Ok(());
        };
        let members = self.prior_subtree(root)?;
        let failed = |problem: String| err(format!("state migration for {urn}: {problem}"));
        let mut original = Vec::with_capacity(members.len());
        for &i in &members {
            let encoded = encode_resource(self.old_state(i), SecretsMode::Plaintext)
                .map_err(|e| failed(e.to_string()))?;
            original.push(serde_json::to_value(encoded).map_err(|e| failed(e.to_string()))?);
        }
        let (result, successors) = run_chain(urn, migrations, &original).await?;
        if result == original {
            return Ok(());
        }
        let prepared = self
            .prepare_migration(urn, root, &members, &original, &result, &successors)
            .map_err(failed)?;
        self.commit_migration(urn, &members, prepared)
    }

    /// Checks the final `result` of the migrations of `urn` against the prior subtree
    /// (`members`, encoded as `original`) and the rest of the state, and prepares what replaces
    /// it: each returned state in its place in the base, the base entries that only refer to a
    /// resource given a successor (rewritten), and the entries merged away.
    fn prepare_migration(
        &self,
        urn: &Urn,
        root: BaseIndex,
        members: &[BaseIndex],
        original: &[Value],
        result: &[Value],
        all_successors: &IndexMap<String, String>,
    ) -> Result<Prepared, String> {
        let composed = successors::compose(original, result, all_successors)?;
        let options = &self.options;
        if !composed.original_to_final.is_empty()
            && (options.targets.is_constrained()
                || options.excludes.is_constrained()
                || options.replaces.is_constrained())
        {
            return Err("cannot rename or merge resources during a targeted or excluded update; run a full update without --target, --exclude or --replace".into());
        }
        successors::check_managed_identity(original, result, &composed.original_to_final)?;
        let mut states = Vec::with_capacity(result.len());
        for value in result {
            let raw: ResourceV3 = serde_json::from_value(value.clone()).map_err(|e| {
                format!(
                    "returned state {} is not a checkpoint resource: {e}",
                    value.get("urn").unwrap_or(&Value::Null)
                )
            })?;
            states.push(decode_resource(&raw, None).map_err(|e| format!("{}: {e}", raw.urn))?);
        }
        // The result's own references may name a resource an earlier migration of the chain
        // succeeded; the rest of the state only names the original ones.
        let within = Rewrite::new(&composed.all_to_final, &states)?;
        for state in &mut states {
            within.state(state);
        }
        let slots = self.place_results(members, &states, &composed.original_to_final)?;
        for (state, &slot) in states.iter().zip(&slots) {
            if self.old_state(slot).urn == state.urn {
                self.check_kept(slot, state)?;
            }
        }
        self.check_result(urn, root, members, &states)?;
        let outside = self.rewrite_outside(members, &composed.original_to_final, &states)?;
        // A state in a place of its own keeps the order the base had.
        if states
            .iter()
            .zip(&slots)
            .any(|(state, &slot)| self.old_state(slot).urn != state.urn)
        {
            self.check_order(&states, &slots, &outside)?;
        }
        let freed = members
            .iter()
            .copied()
            .filter(|i| !slots.contains(i))
            .collect();
        Ok(Prepared {
            results: slots.into_iter().zip(states).collect(),
            outside,
            freed,
        })
    }

    /// The live base entry of the first of `candidates` that has one (not claimed yet).
    fn prior_root(&self, candidates: &[Urn]) -> Option<BaseIndex> {
        let plan = self.plan();
        candidates
            .iter()
            .find_map(|u| plan.live.get(u).copied())
            .filter(|i| !plan.claimed.contains(i))
    }

    /// `root` and every live base entry parented to it, transitively, in base order; refused
    /// if one was already claimed in this deployment, or is pending deletion.
    fn prior_subtree(&self, root: BaseIndex) -> Result<Vec<BaseIndex>, MonitorError> {
        let base = &self.base().resources;
        let mut inside: HashSet<&Urn> = HashSet::from([&base[root].urn]);
        let mut members = vec![root];
        for (i, r) in base.iter().enumerate().skip(root + 1) {
            if r.parent.as_ref().is_some_and(|p| inside.contains(p)) {
                if r.delete || r.pending_replacement {
                    return Err(err(format!(
                        "state migration for {}: the prior state contains {}, which is pending deletion from a previous update; resolve it (for example with an update in which this migration makes no changes) first",
                        base[root].urn, r.urn
                    )));
                }
                inside.insert(&r.urn);
                members.push(i);
            }
        }
        let plan = self.plan();
        if let Some(&i) = members[1..].iter().find(|i| plan.claimed.contains(i)) {
            return Err(err(format!(
                "state migration for {}: the prior state of {} was already registered earlier in this deployment",
                base[root].urn, base[i].urn
            )));
        }
        Ok(members)
    }

    /// Checks a state returned under the URN of base entry `index` against what the engine
    /// must keep of it: its identity, provider and lifecycle flags.
    fn check_kept(&self, index: BaseIndex, new: &ResourceState) -> Result<(), String> {
        let old = self.old_state(index);
        let same = |what: &str, kept: bool| {
            if kept {
                Ok(())
            } else {
                Err(format!(
                    "changes the {what} of {}; migrations must preserve managed resource identity",
                    old.urn
                ))
            }
        };
        same("type", new.resource_type == old.resource_type)?;
        same("custom flag", new.custom == old.custom)?;
        same("ID", !old.custom || new.id == old.id)?;
        same("provider", new.provider == old.provider)?;
        same("external flag", new.external == old.external)?;
        same(
            "pending replacement",
            new.pending_replacement == old.pending_replacement,
        )?;
        same("taint", new.taint == old.taint)?;
        same("deletion mark", new.delete == old.delete)
    }

    /// The base entry each of `states` takes: its own, if it kept its URN; else that of a
    /// resource it succeeds (the last in state order; for a custom resource, the last custom
    /// one, whose physical identity it keeps); else (a resource the migration adds) one left
    /// by a component the migration gave a successor.
    fn place_results(
        &self,
        members: &[BaseIndex],
        states: &[ResourceState],
        successors: &HashMap<String, String>,
    ) -> Result<Vec<BaseIndex>, String> {
        let mut slots: Vec<Option<BaseIndex>> = vec![None; states.len()];
        for (slot, state) in slots.iter_mut().zip(states) {
            let own = members
                .iter()
                .copied()
                .find(|&i| self.old_state(i).urn == state.urn);
            let takes_place_of = |i: BaseIndex| {
                let old = self.old_state(i);
                successors.get(old.urn.as_str()).map(String::as_str) == Some(state.urn.as_str())
                    && (!state.custom || old.custom)
            };
            *slot = own.or_else(|| members.iter().copied().rfind(|&i| takes_place_of(i)));
        }
        let mut free = members
            .iter()
            .copied()
            .filter(|i| !slots.contains(&Some(*i)) && !self.old_state(*i).custom)
            .collect::<Vec<_>>()
            .into_iter();
        slots
            .into_iter()
            .zip(states)
            .map(|(slot, state)| {
                slot.or_else(|| free.next()).ok_or_else(|| {
                    format!(
                        "adds resource {}, which Cairn cannot record: a resource a migration adds takes the place of a component resource the migration gives a successor, and none is left",
                        state.urn
                    )
                })
            })
            .collect()
    }

    /// Pulumi's rules for the shape of the result: it holds the registered resource (under
    /// its URN or its prior one) with its prior parent, everything else is parented within it,
    /// URNs are new to the deployment unless they were the subtree's, states are live and
    /// complete, and every reference resolves.
    fn check_result(
        &self,
        urn: &Urn,
        root: BaseIndex,
        members: &[BaseIndex],
        states: &[ResourceState],
    ) -> Result<(), String> {
        let prior_root = self.old_state(root);
        let by_urn: HashMap<&Urn, &ResourceState> = states.iter().map(|s| (&s.urn, s)).collect();
        let roots: HashSet<&Urn> = [urn, &prior_root.urn]
            .into_iter()
            .filter(|u| by_urn.contains_key(u))
            .collect();
        let root_urn = match roots.into_iter().collect::<Vec<_>>()[..] {
            [one] => one,
            [] => {
                return Err(format!(
                    "the result must include the state of {urn} (the resource being registered), under its URN or its prior URN {}",
                    prior_root.urn
                ));
            }
            _ => {
                return Err(format!(
                    "the result includes both {urn} and its prior URN {}; it must include exactly one",
                    prior_root.urn
                ));
            }
        };
        let prior: HashSet<&Urn> = members.iter().map(|&i| &self.old_state(i).urn).collect();
        let plan = self.plan();
        let resolvable =
            |u: &Urn| by_urn.contains_key(u) || (!prior.contains(u) && plan.live.contains_key(u));
        for state in states {
            let name = &state.urn;
            if name.stack() != urn.stack() || name.project() != urn.project() {
                return Err(format!(
                    "returned resource {name} belongs to another stack or project"
                ));
            }
            if !prior.contains(name) && name != urn {
                if plan.registered.contains_key(name) {
                    return Err(format!(
                        "returned resource {name} was already registered earlier in this deployment"
                    ));
                }
                if plan.live.contains_key(name) {
                    return Err(format!(
                        "returned resource {name} is already in the state, outside the migrated resources"
                    ));
                }
            }
            if state.delete {
                return Err(format!(
                    "returned resource {name} is marked for pending deletion; migrations may not return pending-delete resources"
                ));
            }
            if state.custom && state.id.is_none() {
                return Err(format!("returned custom resource {name} has no ID"));
            }
            let expected = match state.parent.as_ref() {
                Some(p) if p.qualified_type() != crate::urn::ROOT_STACK_TYPE => {
                    format!("{}${}", p.qualified_type(), state.resource_type.as_str())
                }
                _ => state.resource_type.as_str().to_owned(),
            };
            if name.qualified_type() != expected {
                return Err(format!(
                    "resource {name} has parent {} but qualified type {}; expected {expected}",
                    state.parent.as_ref().map_or("(none)", Urn::as_str),
                    name.qualified_type()
                ));
            }
            if name == root_urn {
                if state.parent != prior_root.parent {
                    return Err(format!(
                        "the parent of {name} may not be changed by a migration"
                    ));
                }
            } else {
                let mut parent = state.parent.as_ref();
                for _ in 0..=states.len() {
                    match parent {
                        Some(p) if p == root_urn => break,
                        Some(p) if by_urn.contains_key(p) => parent = by_urn[p].parent.as_ref(),
                        _ => {
                            return Err(format!(
                                "resource {name} is not parented within the migration result (to {root_urn})"
                            ));
                        }
                    }
                }
                if parent != Some(root_urn) {
                    return Err(format!("resource {name} has a cyclic parent chain"));
                }
            }
            if let Some(unknown) = graph::dependencies_of(state)
                .filter(|d| Some(*d) != state.parent.as_ref())
                .find(|d| !resolvable(d))
            {
                return Err(format!(
                    "resource {name} refers to unknown resource {unknown}"
                ));
            }
        }
        Ok(())
    }

    /// The base entries outside the subtree (not yet claimed by a registration) that refer to
    /// a resource given a successor, rewritten to refer to the successor.
    fn rewrite_outside(
        &self,
        members: &[BaseIndex],
        successors: &HashMap<String, String>,
        states: &[ResourceState],
    ) -> Result<Vec<(BaseIndex, ResourceState)>, String> {
        if successors.is_empty() {
            return Ok(Vec::new());
        }
        let rewrite = Rewrite::new(successors, states)?;
        let plan = self.plan();
        let mut rewritten = Vec::new();
        for i in 0..self.base().resources.len() {
            if members.contains(&i) || plan.claimed.contains(&i) {
                continue;
            }
            let old = self.old_state(i);
            if !rewrite.refers(old) {
                continue;
            }
            if old.is_provider() {
                return Err(format!(
                    "would rewrite references in provider state {}; provider states must remain unchanged",
                    old.urn
                ));
            }
            let mut state = old.clone();
            rewrite.state(&mut state);
            rewritten.push((i, state));
        }
        Ok(rewritten)
    }

    /// Refuses a result the state could not record in order: every state after what it
    /// refers to (the state stays in the order Pulumi requires).
    fn check_order(
        &self,
        states: &[ResourceState],
        slots: &[BaseIndex],
        outside: &[(BaseIndex, ResourceState)],
    ) -> Result<(), String> {
        let placed: HashMap<&Urn, BaseIndex> = states
            .iter()
            .map(|s| &s.urn)
            .zip(slots.iter().copied())
            .collect();
        let plan = self.plan();
        let changed = states
            .iter()
            .zip(slots.iter().copied())
            .chain(outside.iter().map(|(i, s)| (s, *i)));
        for (state, slot) in changed {
            for target in graph::dependencies_of(state) {
                let at = placed
                    .get(target)
                    .or_else(|| plan.live.get(target))
                    .copied();
                if at.is_some_and(|at| at >= slot) {
                    return Err(format!(
                        "{} would be recorded before {target}, which it refers to: Cairn records a resource a migration renames or merges in the place of the last resource it succeeds; reorder the result or its references",
                        state.urn
                    ));
                }
            }
        }
        Ok(())
    }

    /// The migrated states take the place of the prior ones: recorded first (outside a
    /// preview; one journal record), then read from now on.
    fn commit_migration(
        &self,
        urn: &Urn,
        members: &[BaseIndex],
        prepared: Prepared,
    ) -> Result<(), MonitorError> {
        let slots = self.migrated.0.get_or_init(|| {
            (0..self.base().resources.len())
                .map(|_| OnceLock::new())
                .collect()
        });
        let mut plan = self.plan();
        if let Some(&i) = members.iter().find(|i| plan.claimed.contains(i)) {
            return Err(err(format!(
                "state migration for {urn}: the prior state of {} was registered while the migration ran",
                self.old_state(i).urn
            )));
        }
        let changed = prepared.results.iter().chain(&prepared.outside);
        if let Some((i, _)) = changed.clone().find(|(i, _)| slots[*i].get().is_some()) {
            return Err(err(format!(
                "state migration for {urn}: {} was already migrated in this deployment",
                self.old_state(*i).urn
            )));
        }
        let mut mutations: Vec<Mutation> = changed
            .map(|(i, state)| Mutation::ReplaceBase(*i, state.clone()))
            .collect();
        mutations.extend(prepared.freed.iter().map(|&i| Mutation::RemoveBase(i)));
        if !self.preview() {
            self.apply(mutations)?;
        }
        for &i in members {
            plan.live.remove(&self.old_state(i).urn);
        }
        for &i in &prepared.freed {
            plan.claimed.insert(i);
        }
        // Checked above, under the plan's lock: no slot is set yet.
        for (i, state) in prepared.results {
            plan.live.insert(state.urn.clone(), i);
            let _ = slots[i].set(Box::new(state));
        }
        for (i, state) in prepared.outside {
            let _ = slots[i].set(Box::new(state));
        }
        tracing::info!(%urn, resources = members.len(), freed = prepared.freed.len(), "state migration applied");
        Ok(())
    }
}

/// What a migration's result replaces, prepared before anything changes.
struct Prepared {
    /// The returned states, each with the base entry whose place it takes.
    results: Vec<(BaseIndex, ResourceState)>,
    /// Base entries outside the subtree whose references were rewritten.
    outside: Vec<(BaseIndex, ResourceState)>,
    /// Base entries of the subtree no returned state takes the place of (merged away).
    freed: Vec<BaseIndex>,
}

/// Runs `migrations` in order on the prior subtree `original` of `urn`, each checked
/// ([`validate`]): the final subtree and every successor mapping returned along the way.
async fn run_chain(
    urn: &Urn,
    migrations: &[Migration],
    original: &[Value],
) -> Result<(Vec<Value>, IndexMap<String, String>), MonitorError> {
    let mut current = original.to_vec();
    let mut all_successors = IndexMap::new();
    for (n, migration) in migrations.iter().enumerate() {
        let which = format!(
            "state migration {} of {} for {urn}",
            n + 1,
            migrations.len()
        );
        let bytes = serde_json::to_vec(&current).map_err(|e| err(format!("{which}: {e}")))?;
        let answer = migration
            .0
            .migrate(urn, bytes)
            .await
            .map_err(|e| err(format!("{which}: {e}")))?;
        let Some(answer) = answer else { continue };
        if answer.new_state.is_empty() {
            if !answer.successors.is_empty() {
                return Err(err(format!(
                    "{which}: returned successors without returning a new state"
                )));
            }
            continue;
        }
        let next: Vec<Value> = serde_json::from_slice(&answer.new_state)
            .map_err(|e| err(format!("{which}: unmarshaling returned state: {e}")))?;
        validate(&current, &next, &answer.successors).map_err(|e| err(format!("{which}: {e}")))?;
        all_successors.extend(answer.successors);
        current = next;
    }
    Ok((current, all_successors))
}

/// Pulumi's rules for one migration's answer `next` to `current` (both arrays of checkpoint
/// resources): every URN unique and valid, of its URN's type; every old resource either
/// returned under its URN or given a successor that is returned (not both); a resource kept
/// under its URN keeps its kind and (custom) ID; no aliases added (renames are successors);
/// provider states returned unchanged, none removed, renamed or added.
pub fn validate(
    current: &[Value],
    next: &[Value],
    successors: &IndexMap<String, String>,
) -> Result<(), String> {
    let index = |set: &[Value], verb: &str| -> Result<HashMap<String, Value>, String> {
        let mut by_urn = HashMap::new();
        for r in set {
            let urn = r.get("urn").and_then(Value::as_str).unwrap_or_default();
            let parsed = Urn::parse(urn)
                .map_err(|_| format!("{verb} a resource with invalid URN {urn:?}"))?;
            if let Some(t) = r.get("type").and_then(Value::as_str)
                && t != parsed.resource_type()
            {
                return Err(format!(
                    "{verb} resource {urn} with type {t}, which does not match its URN type {}",
                    parsed.resource_type()
                ));
            }
            if by_urn.insert(urn.to_owned(), r.clone()).is_some() {
                return Err(format!("{verb} duplicate resource {urn}"));
            }
        }
        Ok(by_urn)
    };
    let old = index(current, "received")?;
    let new = index(next, "returned")?;
    let aliases = |r: &Value| {
        r.get("aliases")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for (urn, after) in &new {
        let before = old.get(urn).map(aliases).unwrap_or_default();
        if aliases(after).iter().any(|a| !before.contains(a)) {
            return Err(format!(
                "returned resource {urn} with aliases; state migrations express renames with successors instead"
            ));
        }
    }
    for (source, target) in successors {
        if source.is_empty() || target.is_empty() {
            return Err(format!(
                "returned an empty successor mapping {source:?} -> {target:?}"
            ));
        }
        if !old.contains_key(source) {
            return Err(format!(
                "returned successor for resource {source}, which is not part of the migrated state"
            ));
        }
        if new.contains_key(source) {
            return Err(format!(
                "resource {source} is both returned and assigned successor {target}"
            ));
        }
        if !new.contains_key(target) {
            return Err(format!(
                "successor {target} for resource {source} is not present in the returned state"
            ));
        }
    }
    for (urn, before) in &old {
        let Some(after) = new.get(urn) else {
            if is_provider(before) {
                return Err(format!(
                    "removes or renames provider state {urn}; provider states must be returned unchanged"
                ));
            }
            if successors.contains_key(urn) {
                continue;
            }
            return Err(format!(
                "did not account for resource {urn}: it must either be returned in the new state or have a successor"
            ));
        };
        let custom = |r: &Value| r.get("custom").and_then(Value::as_bool).unwrap_or(false);
        if custom(before) != custom(after) {
            return Err(format!(
                "resource {urn} changed between custom and component state without changing URN"
            ));
        }
        if custom(before) && before.get("id") != after.get("id") {
            return Err(format!(
                "resource {urn} changed ID from {} to {} without changing URN",
                before.get("id").unwrap_or(&Value::Null),
                after.get("id").unwrap_or(&Value::Null)
            ));
        }
        if is_provider(before) && before != after {
            return Err(format!(
                "changes provider state {urn}; provider states must be returned unchanged"
            ));
        }
    }
    for (urn, after) in &new {
        if !old.contains_key(urn) && is_provider(after) {
            return Err(format!(
                "introduces provider state {urn}; provider states cannot be created by a state migration"
            ));
        }
    }
    Ok(())
}

fn is_provider(r: &Value) -> bool {
    r.get("type")
        .and_then(Value::as_str)
        .and_then(|t| crate::urn::TypeToken::parse(t).ok())
        .is_some_and(|t| is_provider_type(&t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn urn(name: &str) -> String {
        format!("urn:pulumi:dev::p::acme:index:Storage$test:index:Volume::{name}")
    }

    fn volume(name: &str, id: &str) -> Value {
        json!({"urn": urn(name), "custom": true, "id": id, "type": "test:index:Volume",
               "inputs": {"size": 1}})
    }

    fn check(next: &[Value], successors: &[(&str, &str)]) -> Result<(), String> {
        let current = [volume("a", "id-a"), volume("b", "id-b")];
        let successors = successors.iter().map(|(k, v)| (urn(k), urn(v))).collect();
        validate(&current, next, &successors)
    }

    #[test]
    fn a_migration_may_change_what_each_resource_records() {
        let mut a = volume("a", "id-a");
        a["inputs"] = json!({"capacity": 1});
        assert_eq!(check(&[a, volume("b", "id-b")], &[]), Ok(()));
    }

    #[test]
    fn every_old_resource_must_be_accounted_for() {
        let error = check(&[volume("a", "id-a")], &[]).unwrap_err();
        assert_eq!(
            error,
            format!(
                "did not account for resource {}: it must either be returned in the new state or have a successor",
                urn("b")
            )
        );
    }

    #[test]
    fn successors_must_be_returned_and_replace_what_they_succeed() {
        let error = check(&[volume("a", "id-a")], &[("b", "c")]).unwrap_err();
        assert!(
            error.contains("is not present in the returned state"),
            "{error}"
        );
        let error = check(&[volume("a", "id-a"), volume("b", "id-b")], &[("b", "a")]).unwrap_err();
        assert!(
            error.contains("is both returned and assigned successor"),
            "{error}"
        );
    }

    #[test]
    fn a_managed_resource_keeps_its_id_and_kind_under_its_urn() {
        let error = check(&[volume("a", "other"), volume("b", "id-b")], &[]).unwrap_err();
        assert!(
            error.contains("changed ID from \"id-a\" to \"other\""),
            "{error}"
        );
        let mut b = volume("b", "id-b");
        b["custom"] = json!(false);
        let error = check(&[volume("a", "id-a"), b], &[]).unwrap_err();
        assert!(
            error.contains("changed between custom and component"),
            "{error}"
        );
    }

    #[test]
    fn urns_are_unique_and_match_their_type() {
        let error = check(
            &[
                volume("a", "id-a"),
                volume("a", "id-a"),
                volume("b", "id-b"),
            ],
            &[],
        )
        .unwrap_err();
        assert!(error.starts_with("returned duplicate resource"), "{error}");
        let mut b = volume("b", "id-b");
        b["type"] = json!("test:index:Disk");
        let error = check(&[volume("a", "id-a"), b], &[]).unwrap_err();
        assert!(
            error.contains("which does not match its URN type"),
            "{error}"
        );
    }

    #[test]
    fn provider_states_stay_as_they_were() {
        let provider = |version: &str| {
            json!({"urn": "urn:pulumi:dev::p::pulumi:providers:test::p", "custom": true,
                   "id": "1", "type": "pulumi:providers:test", "inputs": {"version": version}})
        };
        let error = validate(&[provider("1")], &[provider("2")], &IndexMap::new()).unwrap_err();
        assert!(
            error.contains("provider states must be returned unchanged"),
            "{error}"
        );
    }

    #[test]
    fn a_migration_may_rename_and_merge_through_successors() {
        assert_eq!(
            check(&[volume("a", "id-a"), volume("c", "id-b")], &[("b", "c")]),
            Ok(())
        );
        let mut aliased = volume("c", "id-b");
        aliased["aliases"] = json!([urn("b")]);
        let error = check(&[volume("a", "id-a"), aliased], &[("b", "c")]).unwrap_err();
        assert!(error.contains("express renames with successors"), "{error}");
    }

    /// Engine-level tests: a base state, a migration answering a fixed result, and what the
    /// deployment reads and records afterwards.
    mod applied {
        use super::*;
        use crate::deploy::DeploymentOptions;
        use crate::deploy::journal::SnapshotManager;
        use crate::deploy::provider::{LoadError, NativePlugins, Provider, ProviderLoader};
        use crate::state::{ProviderReference, Snapshot};
        use crate::urn::TypeToken;
        use crate::value::{PropertyValue, ResourceReference};

        const STACK: &str = "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev";
        const PROVIDER: &str = "urn:pulumi:dev::p::pulumi:providers:test::default";

        fn parse(u: &str) -> Urn {
            Urn::parse(u).unwrap()
        }

        fn storage() -> Urn {
            parse("urn:pulumi:dev::p::acme:index:Storage::s")
        }

        fn child(kind: &str, name: &str) -> Urn {
            parse(&format!(
                "urn:pulumi:dev::p::acme:index:Storage$test:index:{kind}::{name}"
            ))
        }

        fn state(urn: &Urn, custom: bool, parent: Option<&Urn>) -> ResourceState {
            let mut s = ResourceState::new(
                urn.clone(),
                TypeToken::parse(urn.resource_type()).unwrap(),
                custom,
            );
            s.parent = parent.cloned();
            if custom {
                s.id = Some(format!("id-{}", urn.name()));
                s.provider = Some(ProviderReference {
                    urn: parse(PROVIDER),
                    id: "p1".into(),
                });
            }
            s
        }

        /// The stack, its default provider, component `s` with `children`, then `user`
        /// (outside the component) depending on every child.
        fn base(children: &[ResourceState]) -> Snapshot {
            let mut snapshot = Snapshot::empty(None);
            let stack = state(&parse(STACK), false, None);
            let mut provider = state(&parse(PROVIDER), true, Some(&parse(STACK)));
            provider.provider = None;
            provider.id = Some("p1".into());
            snapshot.resources.push(stack);
            snapshot.resources.push(provider);
            snapshot
                .resources
                .push(state(&storage(), false, Some(&parse(STACK))));
            snapshot.resources.extend(children.iter().cloned());
            let mut user = state(
                &parse("urn:pulumi:dev::p::test:index:User::u"),
                true,
                Some(&parse(STACK)),
            );
            user.dependencies = children.iter().map(|c| c.urn.clone()).collect();
            user.property_dependencies
                .insert("volume".into(), user.dependencies.clone());
            if let Some(first) = children.first() {
                user.inputs.insert(
                    "volume".into(),
                    PropertyValue::ResourceReference(Box::new(ResourceReference {
                        urn: first.urn.clone(),
                        id: first.id.clone().map(|i| Box::new(PropertyValue::String(i))),
                        package_version: None,
                    })),
                );
            }
            snapshot.resources.push(user);
            snapshot
        }

        struct Fixed(Vec<ResourceState>, Vec<(Urn, Urn)>);

        #[async_trait]
        impl StateMigration for Fixed {
            fn describe(&self) -> String {
                "fixed".into()
            }
            async fn migrate(&self, _: &Urn, _: Vec<u8>) -> Result<Option<Migrated>, String> {
                let states: Vec<ResourceV3> = self
                    .0
                    .iter()
                    .map(|s| encode_resource(s, SecretsMode::Plaintext).unwrap())
                    .collect();
                Ok(Some(Migrated {
                    new_state: serde_json::to_vec(&states).unwrap(),
                    successors: self
                        .1
                        .iter()
                        .map(|(a, b)| (a.to_string(), b.to_string()))
                        .collect(),
                }))
            }
        }

        struct NoSecrets;
        impl crate::secrets::Crypter for NoSecrets {
            fn encrypt(&self, p: &str) -> Result<String, crate::secrets::SecretsError> {
                Ok(p.to_owned())
            }
            fn decrypt(&self, c: &str) -> Result<String, crate::secrets::SecretsError> {
                Ok(c.to_owned())
            }
        }

        struct NoProviders;
        #[async_trait]
        impl ProviderLoader for NoProviders {
            async fn load(
                &self,
                package: &str,
                _: Option<&semver::Version>,
                _: NativePlugins,
            ) -> Result<Arc<dyn Provider>, LoadError> {
                Err(LoadError::NotFound {
                    package: package.to_owned(),
                    version: None,
                })
            }
        }

        fn engine(base: Snapshot, preview: bool) -> Engine {
            let journal = Arc::new(
                SnapshotManager::new(
                    base,
                    crate::state::Manifest::new(),
                    None,
                    Arc::new(NoSecrets),
                )
                .unwrap(),
            );
            let mut options = DeploymentOptions::new("p", "dev");
            options.preview = preview;
            Engine::new(
                options,
                Arc::new(NoProviders),
                Arc::new(crate::deploy::events::NullSink),
                journal,
            )
            .unwrap()
        }

        async fn migrate(
            engine: &Engine,
            result: Vec<ResourceState>,
            successors: &[(&Urn, &Urn)],
        ) -> Result<(), String> {
            let successors = successors
                .iter()
                .map(|(a, b)| ((*a).clone(), (*b).clone()))
                .collect();
            let migration = Migration(Arc::new(Fixed(result, successors)));
            engine
                .apply_state_migrations(
                    &storage(),
                    Some(&parse(STACK)),
                    &TypeToken::parse("acme:index:Storage").unwrap(),
                    "s",
                    &[],
                    &[migration],
                )
                .await
                .map_err(|e| e.to_string())
        }

        fn recorded(engine: &Engine) -> Vec<Urn> {
            engine
                .journal
                .current()
                .resources
                .into_iter()
                .map(|r| r.urn)
                .collect()
        }

        #[tokio::test]
        async fn a_rename_moves_the_state_and_every_reference_to_the_new_urn() {
            let (a, b) = (child("Volume", "a"), child("Volume", "b"));
            let engine = engine(base(&[state(&a, true, Some(&storage()))]), false);
            let mut renamed = state(&b, true, Some(&storage()));
            renamed.id = Some("id-a".into());
            let result = vec![state(&storage(), false, Some(&parse(STACK))), renamed];
            migrate(&engine, result, &[(&a, &b)]).await.unwrap();
            {
                let plan = engine.plan();
                assert_eq!(plan.live.get(&b), Some(&3));
                assert!(!plan.live.contains_key(&a));
            }
            assert_eq!(engine.old_state(3).urn, b);
            let user = engine.old_state(4);
            assert_eq!(user.dependencies, std::slice::from_ref(&b));
            assert_eq!(
                user.property_dependencies.get("volume"),
                Some(&vec![b.clone()])
            );
            let Some(PropertyValue::ResourceReference(reference)) = user.inputs.get("volume")
            else {
                panic!("{:?}", user.inputs);
            };
            assert_eq!(reference.urn, b);
            let urns = recorded(&engine);
            assert!(urns.contains(&b) && !urns.contains(&a), "{urns:?}");
            let current = engine.journal.current();
            assert_eq!(current.resources[4].dependencies, [b]);
        }

        #[tokio::test]
        async fn a_preview_migrates_in_memory_only() {
            let (a, b) = (child("Volume", "a"), child("Volume", "b"));
            let engine = engine(base(&[state(&a, true, Some(&storage()))]), true);
            let mut renamed = state(&b, true, Some(&storage()));
            renamed.id = Some("id-a".into());
            let result = vec![state(&storage(), false, Some(&parse(STACK))), renamed];
            migrate(&engine, result, &[(&a, &b)]).await.unwrap();
            assert_eq!(engine.old_state(3).urn, b);
            assert!(recorded(&engine).contains(&a));
        }

        #[tokio::test]
        async fn a_merge_leaves_one_state_and_one_reference() {
            let (x, y, z) = (child("Disk", "x"), child("Disk", "y"), child("Disk", "z"));
            let engine = engine(
                base(&[
                    state(&x, false, Some(&storage())),
                    state(&y, false, Some(&storage())),
                ]),
                false,
            );
            let result = vec![
                state(&storage(), false, Some(&parse(STACK))),
                state(&z, false, Some(&storage())),
            ];
            migrate(&engine, result, &[(&x, &z), (&y, &z)])
                .await
                .unwrap();
            {
                let plan = engine.plan();
                assert_eq!(plan.live.get(&z), Some(&4), "the last one it succeeds");
                assert!(plan.claimed.contains(&3), "merged away");
            }
            assert_eq!(engine.old_state(5).dependencies, std::slice::from_ref(&z));
            let urns = recorded(&engine);
            assert_eq!(urns.iter().filter(|u| **u == z).count(), 1, "{urns:?}");
            assert!(!urns.contains(&x) && !urns.contains(&y), "{urns:?}");
            assert!(!engine.update_deletions().contains(&3));
        }

        #[tokio::test]
        async fn a_successor_keeps_the_physical_identity_it_succeeds() {
            let (a, b) = (child("Volume", "a"), child("Volume", "b"));
            let engine = engine(base(&[state(&a, true, Some(&storage()))]), false);
            let result = vec![
                state(&storage(), false, Some(&parse(STACK))),
                state(&b, true, Some(&storage())),
            ];
            let error = migrate(&engine, result, &[(&a, &b)]).await.unwrap_err();
            assert!(error.contains("changes the physical ID"), "{error}");
            assert_eq!(engine.old_state(3).urn, a, "nothing changed");
            assert_eq!(recorded(&engine)[3], a);
        }

        #[tokio::test]
        async fn a_successor_may_not_take_a_urn_the_state_already_has() {
            let (a, b) = (child("Volume", "a"), child("Volume", "b"));
            let mut snapshot = base(&[state(&a, true, Some(&storage()))]);
            let other = parse("urn:pulumi:dev::p::acme:index:Storage::other");
            snapshot
                .resources
                .push(state(&other, false, Some(&parse(STACK))));
            snapshot.resources.push(state(&b, true, Some(&other)));
            let engine = engine(snapshot, false);
            let mut taken = state(&b, true, Some(&storage()));
            taken.id = Some("id-a".into());
            let result = vec![state(&storage(), false, Some(&parse(STACK))), taken];
            let error = migrate(&engine, result, &[(&a, &b)]).await.unwrap_err();
            assert!(error.contains("is already in the state"), "{error}");
        }

        #[tokio::test]
        async fn an_addition_needs_a_component_place() {
            let a = child("Volume", "a");
            let engine = engine(base(&[state(&a, true, Some(&storage()))]), false);
            let result = vec![
                state(&storage(), false, Some(&parse(STACK))),
                state(&a, true, Some(&storage())),
                state(&child("Disk", "new"), false, Some(&storage())),
            ];
            let error = migrate(&engine, result, &[]).await.unwrap_err();
            assert!(error.contains("which Cairn cannot record"), "{error}");
        }

        #[tokio::test]
        async fn a_component_split_adds_in_the_place_of_a_merged_one() {
            let (x, y) = (child("Disk", "x"), child("Disk", "y"));
            let (q, r) = (child("Disk", "q"), child("Disk", "r"));
            let engine = engine(
                base(&[
                    state(&x, false, Some(&storage())),
                    state(&y, false, Some(&storage())),
                ]),
                false,
            );
            let result = vec![
                state(&storage(), false, Some(&parse(STACK))),
                state(&r, false, Some(&storage())),
                state(&q, false, Some(&storage())),
            ];
            migrate(&engine, result, &[(&x, &q), (&y, &q)])
                .await
                .unwrap();
            let plan = engine.plan();
            assert_eq!(plan.live.get(&q), Some(&4));
            assert_eq!(plan.live.get(&r), Some(&3));
        }
    }
}
