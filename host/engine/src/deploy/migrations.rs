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
//! Cairn applies migrations that keep every resource under its URN (translating recorded
//! properties and fields); a result that renames, merges or adds resources (`successors`, or
//! URNs of its own) is refused, naming the resources. Refresh and destroy (also with
//! `--run-program`) do not run migrations, as in Pulumi.

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
use super::journal::{BaseIndex, Mutation};
use super::monitor::MonitorError;
use super::program::Alias;

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
        let mut current = Vec::with_capacity(members.len());
        for &i in &members {
            let encoded = encode_resource(self.old_state(i), SecretsMode::Plaintext)
                .map_err(|e| failed(e.to_string()))?;
            current.push(serde_json::to_value(encoded).map_err(|e| failed(e.to_string()))?);
        }
        let original = current.clone();
        for (n, migration) in migrations.iter().enumerate() {
            let which = format!(
                "state migration {} of {} for {urn}",
                n + 1,
                migrations.len()
            );
            let bytes = serde_json::to_vec(&current).map_err(|e| failed(e.to_string()))?;
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
            validate(&current, &next, &answer.successors)
                .map_err(|e| err(format!("{which}: {e}")))?;
            current = next;
        }
        if current == original {
            return Ok(());
        }
        // The URNs are those of the prior subtree (checked): each member takes the state
        // returned under its URN, wherever the migration put it.
        let by_urn: HashMap<&str, &Value> = current
            .iter()
            .filter_map(|r| Some((r.get("urn")?.as_str()?, r)))
            .collect();
        let states = members
            .iter()
            .map(|&i| {
                let urn = self.base().resources[i].urn.as_str();
                let value = by_urn
                    .get(urn)
                    .ok_or_else(|| format!("the result lacks {urn}"))?;
                self.migrated_state(i, value)
            })
            .collect::<Result<Vec<_>, String>>()
            .map_err(failed)?;
        self.commit_migration(urn, &members, states)
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

    /// The migrated state of base entry `index`, checked against what the engine must keep:
    /// its identity, provider and lifecycle flags.
    fn migrated_state(&self, index: BaseIndex, value: &Value) -> Result<ResourceState, String> {
        let old = self.old_state(index);
        let raw: ResourceV3 = serde_json::from_value(value.clone()).map_err(|e| {
            format!(
                "returned state of {} is not a checkpoint resource: {e}",
                old.urn
            )
        })?;
        let new = decode_resource(&raw, None).map_err(|e| format!("{}: {e}", old.urn))?;
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
        same("parent", new.parent == old.parent)?;
        same("external flag", new.external == old.external)?;
        same(
            "pending replacement",
            new.pending_replacement == old.pending_replacement,
        )?;
        same("taint", new.taint == old.taint)?;
        same("deletion mark", new.delete == old.delete)?;
        Ok(new)
    }

    /// The migrated states take the place of the prior ones: read from now on, and recorded
    /// (outside a preview).
    fn commit_migration(
        &self,
        urn: &Urn,
        members: &[BaseIndex],
        states: Vec<ResourceState>,
    ) -> Result<(), MonitorError> {
        let slots = self.migrated.0.get_or_init(|| {
            (0..self.base().resources.len())
                .map(|_| OnceLock::new())
                .collect()
        });
        let mut mutations = Vec::new();
        for (&i, state) in members.iter().zip(states) {
            if slots[i].set(Box::new(state.clone())).is_err() {
                return Err(err(format!(
                    "state migration for {urn}: {} was already migrated in this deployment",
                    self.base().resources[i].urn
                )));
            }
            mutations.push(Mutation::ReplaceBase(i, state));
        }
        if !self.preview() {
            self.apply(mutations)?;
        }
        tracing::info!(%urn, resources = members.len(), "state migration applied");
        Ok(())
    }
}

/// Pulumi's rules for one migration's answer `next` to `current` (both arrays of checkpoint
/// resources): every URN unique and valid, of its URN's type; every old resource either
/// returned under its URN or given a successor that is returned (not both); a resource kept
/// under its URN keeps its kind and (custom) ID; provider states unchanged; and — Cairn's
/// limit — no URN removed, renamed or added.
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
        let is_provider = |r: &Value| {
            r.get("type")
                .and_then(Value::as_str)
                .and_then(|t| crate::urn::TypeToken::parse(t).ok())
                .is_some_and(|t| is_provider_type(&t))
        };
        if is_provider(before) && before != after {
            return Err(format!(
                "changes provider state {urn}; provider states must be returned unchanged"
            ));
        }
    }
    let removed: Vec<&str> = successors.keys().map(String::as_str).collect();
    let added: Vec<&str> = new
        .keys()
        .filter(|u| !old.contains_key(*u))
        .map(String::as_str)
        .collect();
    if !removed.is_empty() || !added.is_empty() {
        let mut named = removed.clone();
        named.extend(&added);
        named.sort_unstable();
        return Err(format!(
            "renames, merges or adds resources ({}), which Cairn does not apply yet: a migration may change what the state records of each resource, under its URN",
            named.join(", ")
        ));
    }
    Ok(())
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
    fn renames_merges_and_additions_are_refused_by_name() {
        let error = check(&[volume("a", "id-a"), volume("c", "id-b")], &[("b", "c")]).unwrap_err();
        assert!(
            error.starts_with(&format!(
                "renames, merges or adds resources ({}, {}), which Cairn does not apply yet",
                urn("b"),
                urn("c")
            )),
            "{error}"
        );
    }
}
