//! Direct edits of recorded state (`cairn state …`): removing resources, (un)protecting and
//! (un)tainting them, forgetting pending operations. They change a [`Snapshot`] in memory and
//! call no provider.
//!
//! # Taint is a recorded `--replace`
//!
//! `cairn state taint` sets the state's `taint` (Pulumi's field); the step generator treats a
//! tainted resource as one named by `--replace`, so the next update replaces it and records the
//! replacement untainted, and an update whose `--target` leaves it alone keeps the mark. No second
//! replacement path.

use std::collections::HashSet;
use std::fmt;

use super::integrity::Relation;
use super::{Operation, ResourceState, Snapshot};
use crate::urn::Urn;
use crate::value::PropertyMap;

/// Why an edit was refused. The snapshot is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("no resource {0} is in the state")]
    NotFound(Urn),
    /// Protected resources are deleted only when forced.
    #[error("{}", describe_protected(.0))]
    Protected(Vec<Urn>),
    /// Other resources refer to the one to delete; they would be left dangling.
    #[error("{}", describe_dependents(.urn, .dependents))]
    HasDependents {
        urn: Urn,
        dependents: Vec<Dependent>,
    },
}

/// A resource that refers to another, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependent {
    pub urn: Urn,
    pub relation: Relation,
}

impl fmt::Display for Dependent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (through its {})", self.urn, self.relation)
    }
}

fn describe_protected(urns: &[Urn]) -> String {
    match urns {
        [urn] => format!("cannot delete protected resource {urn}: unprotect it first"),
        _ => format!(
            "cannot delete protected resources {}: unprotect them first",
            urns.iter()
                .map(Urn::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn describe_dependents(urn: &Urn, dependents: &[Dependent]) -> String {
    let mut text = format!(
        "cannot delete {urn}: {} resource{} depend{} on it:",
        dependents.len(),
        if dependents.len() == 1 { "" } else { "s" },
        if dependents.len() == 1 { "s" } else { "" },
    );
    for dependent in dependents {
        text.push_str(&format!("\n  - {dependent}"));
    }
    text
}

/// Every reference a resource makes to another resource.
fn references(resource: &ResourceState) -> impl Iterator<Item = (Relation, &Urn)> {
    let parent = resource.parent.iter().map(|u| (Relation::Parent, u));
    let provider = resource
        .provider
        .iter()
        .map(|p| (Relation::Provider, &p.urn));
    let dependencies = resource
        .dependencies
        .iter()
        .map(|u| (Relation::Dependency, u));
    let property_dependencies = resource
        .property_dependencies
        .values()
        .flatten()
        .map(|u| (Relation::PropertyDependency, u));
    let deleted_with = resource
        .deleted_with
        .iter()
        .map(|u| (Relation::DeletedWith, u));
    parent
        .chain(provider)
        .chain(dependencies)
        .chain(property_dependencies)
        .chain(deleted_with)
}

/// Removes every copy of `urn` from the state and returns the URNs removed, dependents first.
///
/// Refuses a protected resource unless `force`. Refuses if other resources refer to it (as
/// parent, provider, dependency, property dependency or `deletedWith` target), naming them, unless
/// `with_dependents`: then those are removed too, transitively (and must not be protected either,
/// unless `force`).
pub fn delete_resource(
    snapshot: &mut Snapshot,
    urn: &Urn,
    force: bool,
    with_dependents: bool,
) -> Result<Vec<Urn>, EditError> {
    let resources = &snapshot.resources;
    if !resources.iter().any(|r| &r.urn == urn) {
        return Err(EditError::NotFound(urn.clone()));
    }
    if !force && resources.iter().any(|r| &r.urn == urn && r.protect) {
        return Err(EditError::Protected(vec![urn.clone()]));
    }

    let mut doomed: HashSet<&Urn> = HashSet::from([urn]);
    if with_dependents {
        // Until nothing more refers to a doomed resource (one pass suffices for a snapshot in
        // dependency order; more handle one that is not).
        loop {
            let before = doomed.len();
            for resource in resources {
                if !doomed.contains(&resource.urn)
                    && references(resource).any(|(_, target)| doomed.contains(target))
                {
                    doomed.insert(&resource.urn);
                }
            }
            if doomed.len() == before {
                break;
            }
        }
    } else {
        let mut dependents: Vec<Dependent> = Vec::new();
        for resource in resources.iter().filter(|r| &r.urn != urn) {
            for (relation, target) in references(resource) {
                let dependent = Dependent {
                    urn: resource.urn.clone(),
                    relation,
                };
                if target == urn && !dependents.contains(&dependent) {
                    dependents.push(dependent);
                }
            }
        }
        if !dependents.is_empty() {
            return Err(EditError::HasDependents {
                urn: urn.clone(),
                dependents,
            });
        }
    }
    if !force {
        let mut protected: Vec<Urn> = Vec::new();
        for resource in resources {
            if resource.protect
                && doomed.contains(&resource.urn)
                && !protected.contains(&resource.urn)
            {
                protected.push(resource.urn.clone());
            }
        }
        if !protected.is_empty() {
            return Err(EditError::Protected(protected));
        }
    }

    let mut removed: Vec<Urn> = Vec::new();
    for resource in resources.iter().rev() {
        if doomed.contains(&resource.urn) && !removed.contains(&resource.urn) {
            removed.push(resource.urn.clone());
        }
    }
    let doomed: HashSet<Urn> = doomed.into_iter().cloned().collect();
    snapshot.resources.retain(|r| !doomed.contains(&r.urn));
    Ok(removed)
}

/// Sets the `protect` flag of every copy of `urn` (or of every resource, for `None`). Returns
/// how many resources changed.
pub fn set_protect(
    snapshot: &mut Snapshot,
    urn: Option<&Urn>,
    protect: bool,
) -> Result<usize, EditError> {
    if let Some(urn) = urn
        && !snapshot.resources.iter().any(|r| &r.urn == urn)
    {
        return Err(EditError::NotFound(urn.clone()));
    }
    let mut changed = 0;
    for resource in &mut snapshot.resources {
        if urn.is_none_or(|urn| &resource.urn == urn) && resource.protect != protect {
            resource.protect = protect;
            changed += 1;
        }
    }
    Ok(changed)
}

/// Sets or clears `taint` on the resources named (`None`: every resource); resources pending
/// deletion are not eligible. Returns how many resources are now as asked; every URN that
/// names no eligible resource is an error, and then nothing changes.
pub fn set_taint(
    snapshot: &mut Snapshot,
    urns: Option<&[Urn]>,
    taint: bool,
) -> Result<usize, EditError> {
    let eligible = |r: &ResourceState| !r.delete;
    if let Some(urns) = urns
        && let Some(missing) = urns.iter().find(|urn| {
            !snapshot
                .resources
                .iter()
                .any(|r| eligible(r) && &r.urn == *urn)
        })
    {
        return Err(EditError::NotFound(missing.clone()));
    }
    let mut count = 0;
    for resource in &mut snapshot.resources {
        if eligible(resource) && urns.is_none_or(|urns| urns.contains(&resource.urn)) {
            resource.taint = taint;
            count += 1;
        }
    }
    Ok(count)
}

/// Forgets the operations an interrupted deployment left pending; returns them.
pub fn clear_pending(snapshot: &mut Snapshot) -> Vec<Operation<PropertyMap>> {
    std::mem::take(&mut snapshot.pending_operations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{OperationKind, ProviderReference, Resource, verify_integrity};
    use crate::urn::TypeToken;

    fn urn(ty: &str, name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::web::{ty}::{name}")).unwrap()
    }

    fn resource(ty: &str, name: &str) -> ResourceState {
        let custom = ty != "my:index:Component";
        let mut r = Resource::new(urn(ty, name), TypeToken::parse(ty).unwrap(), custom);
        if custom {
            r.id = Some(format!("{name}-id"));
        }
        r
    }

    const PROVIDER: &str = "pulumi:providers:aws";
    const BUCKET: &str = "aws:s3/bucket:Bucket";
    const OBJECT: &str = "aws:s3/bucketObject:BucketObject";
    const COMPONENT: &str = "my:index:Component";

    /// provider, site (component), bucket (child of site), index (depends on bucket),
    /// policy (property dependency on bucket), logs (deletedWith bucket), other.
    fn snapshot() -> Snapshot {
        let provider = resource(PROVIDER, "default");
        let provider_ref = ProviderReference {
            urn: provider.urn.clone(),
            id: "default-id".into(),
        };
        let site = resource(COMPONENT, "site");
        let mut bucket = resource(BUCKET, "bucket");
        bucket.parent = Some(site.urn.clone());
        bucket.provider = Some(provider_ref.clone());
        let mut index = resource(OBJECT, "index");
        index.dependencies = vec![bucket.urn.clone()];
        let mut policy = resource(OBJECT, "policy");
        policy
            .property_dependencies
            .insert("bucket".into(), vec![bucket.urn.clone()]);
        let mut logs = resource(OBJECT, "logs");
        logs.deleted_with = Some(bucket.urn.clone());
        let mut other = resource(BUCKET, "other");
        other.provider = Some(provider_ref);
        let mut snapshot = Snapshot::empty(None);
        snapshot.resources = vec![provider, site, bucket, index, policy, logs, other];
        verify_integrity(&snapshot).unwrap();
        snapshot
    }

    fn names(snapshot: &Snapshot) -> Vec<&str> {
        snapshot.resources.iter().map(|r| r.urn.name()).collect()
    }

    #[test]
    fn taint_marks_the_named_resources_or_none() {
        let mut s = snapshot();
        let names = [urn(OBJECT, "index"), urn(BUCKET, "bucket")];
        assert_eq!(set_taint(&mut s, Some(&names), true), Ok(2));
        let tainted: Vec<&Urn> = s
            .resources
            .iter()
            .filter(|r| r.taint)
            .map(|r| &r.urn)
            .collect();
        assert_eq!(tainted, [&names[1], &names[0]]);

        let before = s.clone();
        let err = set_taint(
            &mut s,
            Some(&[names[0].clone(), urn(BUCKET, "nope")]),
            false,
        );
        assert_eq!(err, Err(EditError::NotFound(urn(BUCKET, "nope"))));
        assert_eq!(s, before, "nothing changes when a URN is unknown");

        s.resources[3].delete = true;
        s.resources[3].taint = true;
        assert_eq!(set_taint(&mut s, None, false), Ok(s.resources.len() - 1));
        assert!(
            s.resources[3].taint,
            "a resource pending deletion is left alone"
        );
        assert!(s.resources.iter().filter(|r| !r.delete).all(|r| !r.taint));
    }

    #[test]
    fn deleting_a_leaf() {
        let mut s = snapshot();
        let removed = delete_resource(&mut s, &urn(OBJECT, "index"), false, false).unwrap();
        assert_eq!(removed, [urn(OBJECT, "index")]);
        assert_eq!(
            names(&s),
            ["default", "site", "bucket", "policy", "logs", "other"]
        );
        verify_integrity(&s).unwrap();
    }

    #[test]
    fn an_unknown_urn_is_named() {
        let mut s = snapshot();
        let err = delete_resource(&mut s, &urn(BUCKET, "nope"), true, true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no resource urn:pulumi:dev::web::aws:s3/bucket:Bucket::nope is in the state"
        );
        assert_eq!(s.resources, snapshot().resources);
    }

    #[test]
    fn dependents_are_listed_with_how_they_depend() {
        let mut s = snapshot();
        let err = delete_resource(&mut s, &urn(BUCKET, "bucket"), false, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot delete urn:pulumi:dev::web::aws:s3/bucket:Bucket::bucket: 3 resources depend on it:\n  \
             - urn:pulumi:dev::web::aws:s3/bucketObject:BucketObject::index (through its dependency)\n  \
             - urn:pulumi:dev::web::aws:s3/bucketObject:BucketObject::policy (through its property dependency)\n  \
             - urn:pulumi:dev::web::aws:s3/bucketObject:BucketObject::logs (through its deletedWith target)"
        );
        assert_eq!(s.resources, snapshot().resources, "nothing changed");
        let err = delete_resource(&mut s, &urn(PROVIDER, "default"), false, false).unwrap_err();
        assert!(
            err.to_string().contains("2 resources depend on it")
                && err
                    .to_string()
                    .contains("Bucket::other (through its provider)"),
            "{err}"
        );
        let err = delete_resource(&mut s, &urn(COMPONENT, "site"), false, false).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("1 resource depends on it:\n  - urn:pulumi:dev::web::aws:s3/bucket:Bucket::bucket (through its parent)"),
            "{err}"
        );
    }

    #[test]
    fn dependents_go_too_when_asked_dependents_first() {
        let mut s = snapshot();
        let removed = delete_resource(&mut s, &urn(COMPONENT, "site"), false, true).unwrap();
        let removed: Vec<&str> = removed.iter().map(Urn::name).collect();
        assert_eq!(removed, ["logs", "policy", "index", "bucket", "site"]);
        assert_eq!(names(&s), ["default", "other"]);
        verify_integrity(&s).unwrap();
    }

    #[test]
    fn protected_resources_need_force() {
        let mut s = snapshot();
        s.resources[3].protect = true;
        let err = delete_resource(&mut s, &urn(OBJECT, "index"), false, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot delete protected resource urn:pulumi:dev::web::aws:s3/bucketObject:BucketObject::index: unprotect it first"
        );
        // A protected dependent blocks the deletion of what it depends on, too.
        let err = delete_resource(&mut s, &urn(BUCKET, "bucket"), false, true).unwrap_err();
        assert_eq!(err, EditError::Protected(vec![urn(OBJECT, "index")]));
        assert_eq!(s.resources.len(), 7);
        let removed = delete_resource(&mut s, &urn(BUCKET, "bucket"), true, true).unwrap();
        assert_eq!(removed.len(), 4);
        verify_integrity(&s).unwrap();
    }

    #[test]
    fn every_copy_of_a_urn_goes() {
        let mut s = snapshot();
        let mut old = s.resources[6].clone();
        old.delete = true;
        old.id = Some("old-id".into());
        s.resources.insert(1, old);
        verify_integrity(&s).unwrap();
        let removed = delete_resource(&mut s, &urn(BUCKET, "other"), false, false).unwrap();
        assert_eq!(removed, [urn(BUCKET, "other")]);
        assert_eq!(s.resources.len(), 6);
    }

    #[test]
    fn protecting_one_or_all() {
        let mut s = snapshot();
        assert_eq!(
            set_protect(&mut s, Some(&urn(BUCKET, "bucket")), true),
            Ok(1)
        );
        assert!(s.resources[2].protect);
        assert_eq!(
            set_protect(&mut s, Some(&urn(BUCKET, "bucket")), true),
            Ok(0),
            "already protected"
        );
        assert_eq!(set_protect(&mut s, None, true), Ok(6));
        assert!(s.resources.iter().all(|r| r.protect));
        assert_eq!(set_protect(&mut s, None, false), Ok(7));
        let err = set_protect(&mut s, Some(&urn(BUCKET, "nope")), true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no resource urn:pulumi:dev::web::aws:s3/bucket:Bucket::nope is in the state"
        );
        assert!(s.resources.iter().all(|r| !r.protect));
    }

    #[test]
    fn clearing_pending_operations_returns_them() {
        let mut s = snapshot();
        s.pending_operations.push(Operation {
            resource: resource(BUCKET, "half"),
            kind: OperationKind::Creating,
        });
        let cleared = clear_pending(&mut s);
        assert_eq!(cleared.len(), 1);
        assert_eq!(cleared[0].resource.urn, urn(BUCKET, "half"));
        assert!(s.pending_operations.is_empty());
        assert!(clear_pending(&mut s).is_empty());
    }
}
