//! `cairn state repair`: fixes the integrity problems of a state that can be fixed without
//! losing track of a resource, and says which remain.
//!
//! Safe fixes, in order: exact duplicate entries are dropped (the first copy stays); a parent
//! that is not in the state becomes the stack's root resource (or none, if the state has no
//! root); dependencies, property dependencies and `deletedWith` targets that are not in the
//! state are dropped; resources are reordered so each follows what it refers to. Nothing else
//! is touched: a missing provider, a provider ID that matches no provider, a component with an
//! ID and two *different* live entries for one URN need a person's decision and are reported.

use std::collections::HashSet;
use std::fmt;

use super::integrity::{IntegrityError, Relation, verify_resources};
use super::{Resource, sort_dependencies_first};
use crate::urn::{ROOT_STACK_TYPE, Urn};

/// One change the repair makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// A second, identical entry for a URN was dropped.
    DroppedDuplicate { urn: Urn },
    /// A parent not in the state was replaced by the stack's root (or removed).
    Reparented {
        urn: Urn,
        missing: Urn,
        parent: Option<Urn>,
    },
    /// A reference to a resource not in the state was dropped.
    DroppedReference {
        urn: Urn,
        relation: Relation,
        target: Urn,
    },
    /// Resources were put in dependency order (`moved` of them changed place).
    Reordered { moved: usize },
}

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Repair::DroppedDuplicate { urn } => {
                write!(f, "drop a second, identical entry for {urn}")
            }
            Repair::Reparented {
                urn,
                missing,
                parent: Some(parent),
            } => write!(
                f,
                "{urn}: its parent {missing} is not in the state; make {parent} its parent"
            ),
            Repair::Reparented {
                urn,
                missing,
                parent: None,
            } => write!(
                f,
                "{urn}: its parent {missing} is not in the state; remove the parent"
            ),
            Repair::DroppedReference {
                urn,
                relation,
                target,
            } => write!(
                f,
                "{urn}: drop its {relation} {target}, which is not in the state"
            ),
            Repair::Reordered { moved } => write!(
                f,
                "reorder the resources so each follows what it refers to ({moved} move{})",
                if *moved == 1 { "" } else { "s" }
            ),
        }
    }
}

/// What [`repair`] did, and what it could not fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairReport {
    pub repairs: Vec<Repair>,
    /// The problems left after the repairs (`None`: the state is now consistent).
    pub remaining: Option<IntegrityError>,
}

/// Applies the safe fixes to `resources` (in snapshot order) and reports them.
pub fn repair<P: Clone + PartialEq>(resources: &mut Vec<Resource<P>>) -> RepairReport {
    let mut repairs = Vec::new();

    // Exact duplicates: the same entry twice is one resource recorded twice.
    let mut kept: Vec<Resource<P>> = Vec::with_capacity(resources.len());
    for resource in resources.drain(..) {
        if kept.iter().any(|k| k.urn == resource.urn && *k == resource) {
            repairs.push(Repair::DroppedDuplicate {
                urn: resource.urn.clone(),
            });
        } else {
            kept.push(resource);
        }
    }
    *resources = kept;

    let present: HashSet<Urn> = resources.iter().map(|r| r.urn.clone()).collect();
    let root = resources
        .iter()
        .find(|r| r.resource_type.as_str() == ROOT_STACK_TYPE && !r.delete)
        .map(|r| r.urn.clone());
    for resource in resources.iter_mut() {
        let urn = resource.urn.clone();
        if let Some(parent) = resource.parent.clone()
            && !present.contains(&parent)
        {
            let new_parent = root.clone().filter(|root| *root != urn);
            resource.parent = new_parent.clone();
            repairs.push(Repair::Reparented {
                urn: urn.clone(),
                missing: parent,
                parent: new_parent,
            });
        }
        let mut dropped = |relation: Relation, target: &Urn| {
            let missing = !present.contains(target);
            if missing {
                repairs.push(Repair::DroppedReference {
                    urn: urn.clone(),
                    relation,
                    target: target.clone(),
                });
            }
            !missing
        };
        resource
            .dependencies
            .retain(|d| dropped(Relation::Dependency, d));
        for targets in resource.property_dependencies.values_mut() {
            targets.retain(|d| dropped(Relation::PropertyDependency, d));
        }
        if let Some(target) = resource.deleted_with.clone()
            && !dropped(Relation::DeletedWith, &target)
        {
            resource.deleted_with = None;
        }
    }

    let before: Vec<Urn> = resources.iter().map(|r| r.urn.clone()).collect();
    sort_dependencies_first(resources);
    let moved = before
        .iter()
        .zip(resources.iter())
        .filter(|(urn, r)| **urn != r.urn)
        .count();
    if moved > 0 {
        repairs.push(Repair::Reordered { moved });
    }

    RepairReport {
        repairs,
        remaining: verify_resources(resources).err(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::integrity::Violation;
    use crate::state::{ProviderReference, ResourceV3};
    use crate::urn::TypeToken;

    fn urn(name: &str, ty: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::proj::{ty}::{name}")).unwrap()
    }

    fn resource(name: &str) -> ResourceV3 {
        let ty = TypeToken::parse("test:index:Resource").unwrap();
        let mut r = ResourceV3::new(urn(name, "test:index:Resource"), ty, true);
        r.id = Some(format!("{name}-1"));
        r
    }

    fn root() -> ResourceV3 {
        let ty = TypeToken::parse(ROOT_STACK_TYPE).unwrap();
        ResourceV3::new(urn("proj-dev", ROOT_STACK_TYPE), ty, false)
    }

    #[test]
    fn safe_problems_are_fixed_and_the_rest_reported() {
        let root_urn = root().urn.clone();
        let mut a = resource("a");
        a.parent = Some(urn("gone", "test:index:Component"));
        a.dependencies = vec![urn("gone", "test:index:Component")];
        a.deleted_with = Some(urn("vanished", "test:index:Resource"));
        let mut b = resource("b");
        b.parent = Some(root_urn.clone());
        b.dependencies = vec![urn("c", "test:index:Resource")];
        let c = resource("c");
        let mut orphan = resource("orphan");
        orphan.provider = Some(ProviderReference {
            urn: urn("default", "pulumi:providers:test"),
            id: "p".into(),
        });
        let mut resources = vec![root(), a.clone(), b, c.clone(), c.clone(), orphan];

        let report = repair(&mut resources);

        let repairs: Vec<String> = report.repairs.iter().map(ToString::to_string).collect();
        assert_eq!(
            repairs,
            [
                "drop a second, identical entry for urn:pulumi:dev::proj::test:index:Resource::c",
                "urn:pulumi:dev::proj::test:index:Resource::a: its parent urn:pulumi:dev::proj::test:index:Component::gone is not in the state; make urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev its parent",
                "urn:pulumi:dev::proj::test:index:Resource::a: drop its dependency urn:pulumi:dev::proj::test:index:Component::gone, which is not in the state",
                "urn:pulumi:dev::proj::test:index:Resource::a: drop its deletedWith target urn:pulumi:dev::proj::test:index:Resource::vanished, which is not in the state",
                "reorder the resources so each follows what it refers to (2 moves)",
            ]
        );
        let names: Vec<&str> = resources.iter().map(|r| r.urn.name()).collect();
        assert_eq!(names, ["proj-dev", "a", "c", "b", "orphan"]);
        assert_eq!(resources[1].parent.as_ref(), Some(&root_urn));
        assert!(resources[1].dependencies.is_empty());
        assert_eq!(resources[1].deleted_with, None);
        // A missing provider cannot be invented: it is left for a person to decide.
        let remaining = report
            .remaining
            .expect("the orphan's provider is still missing");
        assert!(matches!(
            remaining.violations.as_slice(),
            [Violation::MissingReference {
                relation: Relation::Provider,
                ..
            }]
        ));
    }

    #[test]
    fn different_entries_for_one_urn_are_not_merged() {
        let a = resource("a");
        let mut other = resource("a");
        other.id = Some("a-2".into());
        let mut resources = vec![a, other];
        let report = repair(&mut resources);
        assert!(report.repairs.is_empty());
        assert_eq!(resources.len(), 2);
        assert!(matches!(
            report.remaining.unwrap().violations.as_slice(),
            [Violation::DuplicateUrn { .. }]
        ));
    }

    #[test]
    fn a_consistent_state_is_left_alone() {
        let mut b = resource("b");
        b.dependencies = vec![urn("a", "test:index:Resource")];
        let mut resources = vec![root(), resource("a"), b];
        let expected = resources.clone();
        let report = repair(&mut resources);
        assert_eq!(
            report,
            RepairReport {
                repairs: vec![],
                remaining: None
            }
        );
        assert_eq!(resources, expected);
    }
}
