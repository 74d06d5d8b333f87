//! Snapshot integrity: the invariants every persisted snapshot must satisfy.
//!
//! Resources are stored in dependency order, so a reference is valid only if it points at a
//! resource that appears *earlier*. All violations are collected, not just the first.
//!
//! # Integrity on every load
//!
//! A snapshot is checked whenever it is read — by every command (`FileBackend::latest`/`recover`),
//! by `stack import` before it writes, and by the engine itself (`Engine::new` refuses to deploy
//! from an inconsistent base) — and at `finish`: parents, providers, dependencies, property
//! dependencies and `deletedWith` targets appear before their dependents; at most one live copy per
//! URN; provider references resolve to a provider with that ID; components have no ID. All
//! violations are reported, with URNs, so a duplicate entry or a missing provider can never make a
//! deployment delete or re-create a live resource. Only `stack export`, listings and `state repair`
//! read a state as stored; `state repair` (`state/repair.rs`) applies the fixes that lose nothing
//! (identical duplicates dropped, dangling parents re-pointed at the stack, dangling dependencies
//! dropped, reordering) and reports the rest. A journal that replays out of order is sorted, never
//! refused, so recovery keeps every completed operation.

use std::collections::{HashMap, HashSet};
use std::fmt;

use foldhash::{HashMapExt, HashSetExt};

use super::{Resource, Snapshot};
use crate::urn::Urn;

/// One broken invariant, with the URNs involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// A reference (parent, dependency, ...) to a URN that appears nowhere in the snapshot.
    MissingReference {
        urn: Urn,
        relation: Relation,
        target: Urn,
    },
    /// A reference to a URN that appears only *after* the referring resource.
    ReferenceOutOfOrder {
        urn: Urn,
        relation: Relation,
        target: Urn,
    },
    /// Two copies of a URN, neither of which is marked for deletion.
    DuplicateUrn { urn: Urn },
    /// A provider reference whose ID matches no copy of the provider resource.
    ProviderIdMismatch {
        urn: Urn,
        provider: Urn,
        id: String,
        actual: Vec<String>,
    },
    /// A provider resource that is not a custom resource.
    ProviderNotCustom { urn: Urn },
    /// A component resource with an ID.
    ComponentWithId { urn: Urn, id: String },
}

/// How one resource refers to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    Parent,
    Provider,
    Dependency,
    PropertyDependency,
    DeletedWith,
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Relation::Parent => "parent",
            Relation::Provider => "provider",
            Relation::Dependency => "dependency",
            Relation::PropertyDependency => "property dependency",
            Relation::DeletedWith => "deletedWith target",
        })
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::MissingReference {
                urn,
                relation,
                target,
            } => write!(
                f,
                "{urn} refers to {relation} {target}, which is not in the state"
            ),
            Violation::ReferenceOutOfOrder {
                urn,
                relation,
                target,
            } => write!(
                f,
                "{urn} refers to {relation} {target}, which appears after it (resources must follow what they depend on)"
            ),
            Violation::DuplicateUrn { urn } => write!(
                f,
                "{urn} appears more than once without being marked for deletion"
            ),
            Violation::ProviderIdMismatch {
                urn,
                provider,
                id,
                actual,
            } => write!(
                f,
                "{urn} refers to provider {provider} with ID {id:?}, but that provider's ID is {}",
                actual
                    .iter()
                    .map(|id| format!("{id:?}"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
            Violation::ProviderNotCustom { urn } => {
                write!(f, "provider {urn} is not marked as a custom resource")
            }
            Violation::ComponentWithId { urn, id } => {
                write!(
                    f,
                    "component {urn} has an ID ({id:?}); only custom resources have IDs"
                )
            }
        }
    }
}

/// The snapshot is inconsistent; every violation found is listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct IntegrityError {
    pub violations: Vec<Violation>,
}

impl fmt::Display for IntegrityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the state fails its integrity check ({} problem{}):",
            self.violations.len(),
            if self.violations.len() == 1 { "" } else { "s" }
        )?;
        for violation in &self.violations {
            write!(f, "\n  - {violation}")?;
        }
        Ok(())
    }
}

/// Checks a snapshot's invariants.
pub fn verify_integrity(snapshot: &Snapshot) -> Result<(), IntegrityError> {
    verify_resources(&snapshot.resources)
}

/// Checks the invariants of resources listed in snapshot order.
pub fn verify_resources<P>(resources: &[Resource<P>]) -> Result<(), IntegrityError> {
    let mut violations = Vec::new();
    // Every URN in the snapshot, to tell "missing" from "late"; the IDs of the copies of every
    // URN referred to as a provider (a few, however large the stack).
    let mut all = foldhash::HashSet::<&Urn>::with_capacity(resources.len());
    let mut provider_ids = foldhash::HashMap::<&Urn, Vec<Option<&str>>>::new();
    for resource in resources {
        all.insert(&resource.urn);
        if let Some(provider) = &resource.provider {
            provider_ids.entry(&provider.urn).or_default();
        }
    }
    for resource in resources {
        if let Some(ids) = provider_ids.get_mut(&resource.urn) {
            ids.push(resource.id.as_deref());
        }
    }
    // URNs seen so far, and whether a live (not-deleted) copy has been seen.
    let mut seen = foldhash::HashMap::<&Urn, bool>::with_capacity(resources.len());

    for resource in resources {
        let urn = &resource.urn;
        let mut check = |relation: Relation, target: &Urn| {
            if seen.contains_key(target) {
                return;
            }
            let violation = if all.contains(target) {
                Violation::ReferenceOutOfOrder {
                    urn: urn.clone(),
                    relation,
                    target: target.clone(),
                }
            } else {
                Violation::MissingReference {
                    urn: urn.clone(),
                    relation,
                    target: target.clone(),
                }
            };
            violations.push(violation);
        };

        if let Some(parent) = &resource.parent {
            check(Relation::Parent, parent);
        }
        if let Some(provider) = &resource.provider {
            check(Relation::Provider, &provider.urn);
        }
        for dependency in &resource.dependencies {
            check(Relation::Dependency, dependency);
        }
        for dependency in resource.property_dependencies.values().flatten() {
            check(Relation::PropertyDependency, dependency);
        }
        if let Some(target) = &resource.deleted_with {
            check(Relation::DeletedWith, target);
        }

        if let Some(provider) = &resource.provider
            && seen.contains_key(&provider.urn)
        {
            let ids = provider_ids.get(&provider.urn).cloned().unwrap_or_default();
            if !ids.contains(&Some(provider.id.as_str())) {
                violations.push(Violation::ProviderIdMismatch {
                    urn: urn.clone(),
                    provider: provider.urn.clone(),
                    id: provider.id.clone(),
                    actual: ids.iter().flatten().map(|id| (*id).to_owned()).collect(),
                });
            }
        }
        if resource.is_provider() && !resource.custom {
            violations.push(Violation::ProviderNotCustom { urn: urn.clone() });
        }
        if let Some(id) = resource.id.as_deref().filter(|id| !id.is_empty())
            && !resource.custom
        {
            violations.push(Violation::ComponentWithId {
                urn: urn.clone(),
                id: id.to_owned(),
            });
        }

        let live = !resource.delete;
        match seen.get_mut(urn) {
            Some(seen_live) => {
                if live && *seen_live {
                    violations.push(Violation::DuplicateUrn { urn: urn.clone() });
                }
                *seen_live |= live;
            }
            None => {
                seen.insert(urn, live);
            }
        }
    }

    if violations.is_empty() {
        Ok(())
    } else {
        Err(IntegrityError { violations })
    }
}

/// Points references at the resources they were renamed to, as Pulumi's
/// `NormalizeURNReferences` does whenever it writes a snapshot, and drops the `aliases` the
/// states carry.
///
/// A resource that took over an old state under a new URN (an alias) records the old URN in
/// its `aliases`, and the old entry leaves the state; entries of the old state that still
/// refer to the old URN (children, dependents not registered yet in this deployment, or not at
/// all) would dangle. Each such reference is pointed at the new URN, and a child whose parent
/// was renamed gets the URN it has under the new parent (so its registration finds it, and its
/// own children follow). To keep a valid list valid, only references to URNs no resource in
/// the list has are rewritten, and a child is renamed only to a URN no resource has: no URN
/// gains a second live copy, and no valid reference moves.
pub fn follow_renames<P>(resources: &mut [Resource<P>]) {
    if resources.iter().all(|r| r.aliases.is_empty()) {
        return;
    }
    let present: HashSet<Urn> = resources.iter().map(|r| r.urn.clone()).collect();
    let mut renamed: HashMap<Urn, Urn> = HashMap::new();
    for resource in resources.iter_mut() {
        for alias in std::mem::take(&mut resource.aliases) {
            if !present.contains(&alias) {
                renamed.entry(alias).or_insert_with(|| resource.urn.clone());
            }
        }
    }
    if renamed.is_empty() {
        return;
    }
    // Children after their parents (the list's order): a renamed child renames its own.
    let mut taken = present;
    for resource in resources.iter() {
        let Some(parent) = resource.parent.as_ref().and_then(|p| resolve(&renamed, p)) else {
            continue;
        };
        let Ok(moved) = Urn::new(
            resource.urn.stack(),
            resource.urn.project(),
            Some(parent.qualified_type()),
            &resource.resource_type,
            resource.urn.name(),
        ) else {
            continue;
        };
        if moved != resource.urn && !taken.contains(&moved) && !renamed.contains_key(&resource.urn)
        {
            taken.insert(moved.clone());
            renamed.insert(resource.urn.clone(), moved);
        }
    }
    let fix = |urn: &mut Urn| {
        if let Some(new) = resolve(&renamed, urn) {
            *urn = new.clone();
        }
    };
    for resource in resources.iter_mut() {
        fix(&mut resource.urn);
        if let Some(parent) = &mut resource.parent {
            fix(parent);
        }
        resource.dependencies.iter_mut().for_each(fix);
        resource
            .property_dependencies
            .values_mut()
            .flatten()
            .for_each(fix);
        if let Some(target) = &mut resource.deleted_with {
            fix(target);
        }
        if let Some(provider) = &mut resource.provider {
            fix(&mut provider.urn);
        }
    }
}

/// Where `urn` was renamed to, following renames of renames (bounded: a cycle, which renames
/// never form, ends the walk).
fn resolve<'m>(renamed: &'m HashMap<Urn, Urn>, urn: &Urn) -> Option<&'m Urn> {
    let mut current = renamed.get(urn)?;
    for _ in 0..renamed.len() {
        match renamed.get(current) {
            Some(next) if next != current => current = next,
            _ => break,
        }
    }
    Some(current)
}

/// Reorders resources so that each follows everything it refers to, keeping the existing order
/// wherever it is already valid (a stable topological sort). References to URNs not in the list
/// are ignored (the integrity check reports them); a cycle, which a valid state never has, keeps
/// its members in their existing order.
pub fn sort_dependencies_first<P>(resources: &mut Vec<Resource<P>>) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    let n = resources.len();
    // Each URN is satisfied by its first copy in the current order.
    let mut first = foldhash::HashMap::<&Urn, usize>::with_capacity(n);
    for (i, r) in resources.iter().enumerate() {
        first.entry(&r.urn).or_insert(i);
    }
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting: Vec<usize> = vec![0; n];
    let mut out_of_order = false;
    for (i, r) in resources.iter().enumerate() {
        let references = r
            .parent
            .iter()
            .chain(r.provider.as_ref().map(|p| &p.urn))
            .chain(&r.dependencies)
            .chain(r.property_dependencies.values().flatten())
            .chain(&r.deleted_with);
        let mut seen: Vec<usize> = Vec::new();
        for target in references {
            if let Some(&j) = first.get(target)
                && j != i
                && !seen.contains(&j)
            {
                seen.push(j);
                dependents[j].push(i);
                waiting[i] += 1;
                out_of_order |= j > i;
            }
        }
    }
    if !out_of_order {
        return;
    }
    // Kahn's algorithm, always taking the earliest ready resource.
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&i| waiting[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        placed[i] = true;
        for &d in &dependents[i] {
            waiting[d] -= 1;
            if waiting[d] == 0 {
                ready.push(Reverse(d));
            }
        }
    }
    order.extend((0..n).filter(|&i| !placed[i]));
    let mut slots: Vec<Option<Resource<P>>> = resources.drain(..).map(Some).collect();
    resources.extend(order.into_iter().filter_map(|i| slots[i].take()));
}
