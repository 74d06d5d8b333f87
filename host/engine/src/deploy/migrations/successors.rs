//! What a migration's `successors` mean, as Pulumi's engine applies them: chained mappings
//! composed into one, the identity a successor must keep of what it succeeds, and the rewriting
//! of every reference to a succeeded URN.

use std::collections::{HashMap, HashSet};

use indexmap::IndexMap;
use serde_json::Value;

use crate::state::ResourceState;
use crate::urn::Urn;
use crate::value::{PropertyMap, PropertyValue};

/// Successor mappings composed over a chain of migrations.
#[derive(Debug)]
pub struct Composed {
    /// Every resource of the original subtree absent from the final one → its final successor:
    /// what references outside the subtree follow.
    pub original_to_final: HashMap<String, String>,
    /// Every URN any migration of the chain succeeded → its final successor: what the result's
    /// own references follow (they may name an intermediate resource).
    pub all_to_final: HashMap<String, String>,
}

fn urns_of(set: &[Value]) -> HashSet<&str> {
    set.iter().filter_map(|r| r.get("urn")?.as_str()).collect()
}

/// Composes the mappings `all` the migrations of a chain returned (A → B, then B → C: A → C)
/// and checks them against the `original` and `final` subtrees.
pub fn compose(
    original: &[Value],
    final_state: &[Value],
    all: &IndexMap<String, String>,
) -> Result<Composed, String> {
    let mut all_to_final = HashMap::with_capacity(all.len());
    for source in all.keys() {
        let mut seen = HashSet::new();
        let mut current = source;
        while let Some(next) = all.get(current) {
            if !seen.insert(current) {
                return Err(format!("successor mappings contain a cycle at {current}"));
            }
            current = next;
        }
        all_to_final.insert(source.clone(), current.clone());
    }
    let finals = urns_of(final_state);
    for (source, target) in &all_to_final {
        if finals.contains(source.as_str()) {
            return Err(format!(
                "resource {source} is present in the final state and also has successor {target}"
            ));
        }
        if !finals.contains(target.as_str()) {
            return Err(format!(
                "successor {target} for resource {source} is not present in the final state"
            ));
        }
    }
    let mut original_to_final = HashMap::new();
    for urn in urns_of(original) {
        if finals.contains(urn) {
            continue;
        }
        let target = all_to_final.get(urn).ok_or_else(|| {
            format!(
                "did not account for resource {urn}: it must either be returned in the final state or have a successor"
            )
        })?;
        original_to_final.insert(urn.to_owned(), target.clone());
    }
    Ok(Composed {
        original_to_final,
        all_to_final,
    })
}

fn flag(r: &Value, key: &str) -> bool {
    r.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn text<'v>(r: &'v Value, key: &str) -> &'v str {
    r.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// What a resource of the final subtree inherits from its predecessors (itself, when it kept its
/// URN, and every resource that names it successor).
#[derive(Default)]
struct Inherited {
    custom_predecessor: bool,
    protect: bool,
    retain_on_delete: bool,
    pending_replacement: bool,
    taint: bool,
}

/// Pulumi's managed-identity rules: a migration rewrites the record, never the managed objects.
/// A custom resource's successor (or itself, kept under its URN) is custom, with its ID,
/// provider, ownership and lifecycle flags; no custom resource appears without a custom
/// predecessor (a migration cannot import); protection and retention are inherited (either
/// flag, if any predecessor had it).
pub fn check_managed_identity(
    original: &[Value],
    final_state: &[Value],
    successors: &HashMap<String, String>,
) -> Result<(), String> {
    let finals: HashMap<&str, &Value> = final_state
        .iter()
        .filter_map(|r| Some((r.get("urn")?.as_str()?, r)))
        .collect();
    let mut inherited: HashMap<&str, Inherited> = HashMap::new();
    for old in original {
        let old_urn = text(old, "urn");
        let Some((target_urn, target)) = finals
            .get_key_value(old_urn)
            .or_else(|| finals.get_key_value(successors.get(old_urn)?.as_str()))
        else {
            continue;
        };
        let entry = inherited.entry(target_urn).or_default();
        entry.protect |= flag(old, "protect");
        entry.retain_on_delete |= flag(old, "retainOnDelete");
        if !flag(old, "custom") {
            continue;
        }
        entry.custom_predecessor = true;
        entry.pending_replacement |= flag(old, "pendingReplacement");
        entry.taint |= flag(old, "taint");
        if !flag(target, "custom") {
            return Err(format!(
                "maps managed custom resource {old_urn} to component successor {target_urn}; migrations must preserve managed resource identity"
            ));
        }
        for (key, what) in [
            ("id", "physical ID"),
            ("provider", "provider reference"),
            ("external", "ownership (external)"),
            ("pendingReplacement", "pending replacement"),
            ("taint", "taint"),
        ] {
            let before = old.get(key).unwrap_or(&Value::Null);
            let after = target.get(key).unwrap_or(&Value::Null);
            let unset = |v: &Value| v.is_null() || v == &Value::Bool(false);
            if before != after && !(unset(before) && unset(after)) {
                return Err(format!(
                    "changes the {what} of managed custom resource {old_urn} from {before} to {after} on successor {target_urn}; migrations must preserve managed resource identity"
                ));
            }
        }
    }
    for r in final_state {
        let urn = text(r, "urn");
        let from = inherited.remove(urn).unwrap_or_default();
        let custom = flag(r, "custom");
        if custom && !from.custom_predecessor {
            return Err(format!(
                "introduces custom resource {urn} with ID {:?} without a managed custom predecessor; migrations cannot import resources",
                text(r, "id")
            ));
        }
        if flag(r, "pendingReplacement") && !(custom && from.pending_replacement) {
            return Err(format!(
                "returns resource {urn} with pendingReplacement set without a pending-replacement custom predecessor"
            ));
        }
        if flag(r, "taint") && !(custom && from.taint) {
            return Err(format!(
                "returns resource {urn} with taint set without a tainted custom predecessor"
            ));
        }
        if flag(r, "protect") != from.protect {
            return Err(format!(
                "changes protect of resource {urn} from the inherited {} to {}; migrations must preserve resource protection",
                from.protect,
                flag(r, "protect")
            ));
        }
        if flag(r, "retainOnDelete") != from.retain_on_delete {
            return Err(format!(
                "changes retainOnDelete of resource {urn} from the inherited {} to {}; migrations must preserve resource retention",
                from.retain_on_delete,
                flag(r, "retainOnDelete")
            ));
        }
    }
    Ok(())
}

/// Rewrites `successors` into typed form, with what references to each successor must carry:
/// whether it is custom, and its ID.
pub struct Rewrite {
    pub successors: HashMap<Urn, Urn>,
    pub identities: HashMap<Urn, (bool, Option<String>)>,
}

impl Rewrite {
    /// Old URN → successor, and the identities of `states` (the final subtree).
    pub fn new(
        successors: &HashMap<String, String>,
        states: &[ResourceState],
    ) -> Result<Self, String> {
        let parse = |u: &str| Urn::parse(u).map_err(|e| format!("invalid URN {u:?}: {e}"));
        let successors = successors
            .iter()
            .map(|(k, v)| Ok((parse(k)?, parse(v)?)))
            .collect::<Result<_, String>>()?;
        let identities = states
            .iter()
            .map(|s| (s.urn.clone(), (s.custom, s.id.clone())))
            .collect();
        Ok(Rewrite {
            successors,
            identities,
        })
    }

    fn urn(&self, urn: &mut Urn) -> bool {
        match self.successors.get(urn) {
            Some(next) => {
                *urn = next.clone();
                true
            }
            None => false,
        }
    }

    /// Rewrites a list of URNs, without repeats (a merge can make two entries one).
    fn urns(&self, urns: &mut Vec<Urn>) -> bool {
        if !urns.iter().any(|u| self.successors.contains_key(u)) {
            return false;
        }
        let mut seen = HashSet::new();
        let rewritten: Vec<Urn> = urns
            .drain(..)
            .map(|u| self.successors.get(&u).cloned().unwrap_or(u))
            .filter(|u| seen.insert(u.clone()))
            .collect();
        *urns = rewritten;
        true
    }

    fn value(&self, value: &mut PropertyValue) -> bool {
        match value {
            PropertyValue::Array(items) => items
                .iter_mut()
                .fold(false, |changed, v| self.value(v) | changed),
            PropertyValue::Object(map) => self.map(map),
            PropertyValue::Secret(inner) => self.value(inner),
            PropertyValue::Output(output) => {
                let mut changed = self.urns(&mut output.dependencies);
                if let Some(inner) = output.value.as_mut() {
                    changed |= self.value(inner);
                }
                changed
            }
            PropertyValue::ResourceReference(reference) => {
                let Some(next) = self.successors.get(&reference.urn) else {
                    return false;
                };
                reference.urn = next.clone();
                reference.package_version = None;
                if let Some((custom, id)) = self.identities.get(next) {
                    reference.id = match (custom, id) {
                        (true, Some(id)) => Some(Box::new(PropertyValue::String(id.clone()))),
                        _ => None,
                    };
                }
                true
            }
            _ => false,
        }
    }

    /// Whether `state` refers to a succeeded URN (what [`Rewrite::state`] would change),
    /// without copying it.
    pub fn refers(&self, state: &ResourceState) -> bool {
        fn value(rewrite: &Rewrite, v: &PropertyValue) -> bool {
            match v {
                PropertyValue::Array(items) => items.iter().any(|v| value(rewrite, v)),
                PropertyValue::Object(map) => map.values().any(|v| value(rewrite, v)),
                PropertyValue::Secret(inner) => value(rewrite, inner),
                PropertyValue::Output(output) => {
                    output
                        .dependencies
                        .iter()
                        .any(|u| rewrite.successors.contains_key(u))
                        || output.value.as_deref().is_some_and(|v| value(rewrite, v))
                }
                PropertyValue::ResourceReference(r) => rewrite.successors.contains_key(&r.urn),
                _ => false,
            }
        }
        crate::deploy::graph::dependencies_of(state)
            .chain(&state.aliases)
            .any(|u| self.successors.contains_key(u))
            || state
                .inputs
                .values()
                .chain(state.outputs.values())
                .any(|v| value(self, v))
    }

    fn map(&self, map: &mut PropertyMap) -> bool {
        map.values_mut()
            .fold(false, |changed, v| self.value(v) | changed)
    }

    /// Rewrites every reference `state` makes to a succeeded URN — parent, dependencies,
    /// property dependencies, `deletedWith`, provider reference, aliases, resource references
    /// and output dependencies in its properties; whether anything changed.
    pub fn state(&self, state: &mut ResourceState) -> bool {
        let mut changed = false;
        if let Some(parent) = state.parent.as_mut() {
            changed |= self.urn(parent);
        }
        changed |= self.urns(&mut state.dependencies);
        for deps in state.property_dependencies.values_mut() {
            changed |= self.urns(deps);
        }
        if let Some(target) = state.deleted_with.as_mut() {
            changed |= self.urn(target);
        }
        if let Some(provider) = state.provider.as_mut()
            && self.urn(&mut provider.urn)
        {
            if let Some((_, Some(id))) = self.identities.get(&provider.urn) {
                provider.id.clone_from(id);
            }
            changed = true;
        }
        if self.urns(&mut state.aliases) {
            let own = state.urn.clone();
            state.aliases.retain(|a| a != &own);
            changed = true;
        }
        changed |= self.map(&mut state.inputs);
        changed |= self.map(&mut state.outputs);
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ProviderReference;
    use crate::urn::TypeToken;
    use crate::value::{OutputValue, ResourceReference};
    use serde_json::json;

    fn urn(name: &str) -> String {
        format!("urn:pulumi:dev::p::acme:index:Storage$test:index:Volume::{name}")
    }

    fn volume(name: &str, id: &str) -> Value {
        json!({"urn": urn(name), "custom": true, "id": id, "type": "test:index:Volume"})
    }

    fn map(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
        pairs.iter().map(|(k, v)| (urn(k), urn(v))).collect()
    }

    #[test]
    fn chained_successors_compose() {
        let original = [volume("a", "1"), volume("x", "2")];
        let final_state = [volume("c", "1"), volume("x", "2")];
        let composed = compose(&original, &final_state, &map(&[("a", "b"), ("b", "c")])).unwrap();
        assert_eq!(
            composed.original_to_final,
            HashMap::from([(urn("a"), urn("c"))])
        );
        assert_eq!(composed.all_to_final.get(&urn("b")), Some(&urn("c")));
        let error = compose(&original, &final_state, &map(&[("a", "b"), ("b", "a")])).unwrap_err();
        assert!(error.contains("cycle"), "{error}");
    }

    #[test]
    fn a_custom_successor_keeps_the_physical_identity() {
        let original = [volume("a", "1"), volume("b", "1")];
        let successors = HashMap::from([(urn("a"), urn("c")), (urn("b"), urn("c"))]);
        assert_eq!(
            check_managed_identity(&original, &[volume("c", "1")], &successors),
            Ok(())
        );
        let error =
            check_managed_identity(&original, &[volume("c", "2")], &successors).unwrap_err();
        assert!(error.contains("changes the physical ID"), "{error}");
        let mut provider = volume("c", "1");
        provider["provider"] = json!("urn:pulumi:dev::p::pulumi:providers:test::other::9");
        let error = check_managed_identity(&original, &[provider], &successors).unwrap_err();
        assert!(error.contains("changes the provider reference"), "{error}");
        let mut component = volume("c", "1");
        component["custom"] = json!(false);
        let error = check_managed_identity(&original, &[component], &successors).unwrap_err();
        assert!(error.contains("to component successor"), "{error}");
    }

    #[test]
    fn a_migration_cannot_import_or_drop_protection() {
        let original = [json!({"urn": urn("a"), "type": "test:index:Volume", "protect": true})];
        let successors = HashMap::from([(urn("a"), urn("b"))]);
        let error =
            check_managed_identity(&original, &[volume("b", "1")], &successors).unwrap_err();
        assert!(
            error.contains("migrations cannot import resources"),
            "{error}"
        );
        let component = json!({"urn": urn("b"), "type": "test:index:Volume"});
        let error = check_managed_identity(&original, &[component], &successors).unwrap_err();
        assert!(
            error.contains("must preserve resource protection"),
            "{error}"
        );
    }

    #[test]
    fn references_follow_their_successors() {
        let parse = |u: &str| Urn::parse(u).unwrap();
        let successor = ResourceState {
            id: Some("id-c".into()),
            ..ResourceState::new(
                parse(&urn("c")),
                TypeToken::parse("test:index:Volume").unwrap(),
                true,
            )
        };
        let rewrite = Rewrite::new(
            &HashMap::from([(urn("a"), urn("c")), (urn("b"), urn("c"))]),
            &[successor],
        )
        .unwrap();
        let mut state = ResourceState::new(
            parse(&urn("user")),
            TypeToken::parse("test:index:Volume").unwrap(),
            true,
        );
        state.parent = Some(parse(&urn("a")));
        state.dependencies = vec![parse(&urn("a")), parse(&urn("x")), parse(&urn("b"))];
        state
            .property_dependencies
            .insert("disk".into(), vec![parse(&urn("b"))]);
        state.deleted_with = Some(parse(&urn("b")));
        state.aliases = vec![parse(&urn("a"))];
        state.provider = Some(ProviderReference {
            urn: parse("urn:pulumi:dev::p::pulumi:providers:test::default"),
            id: "p".into(),
        });
        state.inputs.insert(
            "disk".into(),
            PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: parse(&urn("a")),
                id: Some(Box::new(PropertyValue::String("id-a".into()))),
                package_version: Some("1.0.0".into()),
            })),
        );
        state.outputs.insert(
            "out".into(),
            PropertyValue::Output(Box::new(OutputValue {
                value: None,
                secret: false,
                dependencies: vec![parse(&urn("b"))],
            })),
        );
        assert!(rewrite.state(&mut state));
        let c = parse(&urn("c"));
        assert_eq!(state.parent.as_ref(), Some(&c));
        assert_eq!(state.dependencies, [c.clone(), parse(&urn("x"))]);
        assert_eq!(
            state.property_dependencies.get("disk"),
            Some(&vec![c.clone()])
        );
        assert_eq!(state.deleted_with.as_ref(), Some(&c));
        assert_eq!(state.aliases, std::slice::from_ref(&c));
        let Some(PropertyValue::ResourceReference(reference)) = state.inputs.get("disk") else {
            panic!("not a reference: {:?}", state.inputs);
        };
        assert_eq!(reference.urn, c);
        assert_eq!(
            reference.id.as_deref(),
            Some(&PropertyValue::String("id-c".into()))
        );
        let Some(PropertyValue::Output(output)) = state.outputs.get("out") else {
            panic!("not an output: {:?}", state.outputs);
        };
        assert_eq!(output.dependencies, [c]);
        assert!(
            !rewrite.state(&mut state),
            "a second rewrite changes nothing"
        );
    }
}
