//! Whole-stack edits of recorded state: renaming the stack a snapshot belongs to (`cairn stack
//! rename`), moving resources from one stack's snapshot to another's (`cairn state move`), and
//! the rules for stack tags (`cairn stack tag`). Pure functions on [`Snapshot`]s; the CLI loads,
//! confirms and saves.
//!
//! The behaviour follows Pulumi's `pulumi stack rename` (pkg/resource/edit/operations.go
//! `RenameStack`), `pulumi state move` (pkg/cmd/pulumi/state/state_move.go) and its stack tag
//! validation (pkg/util/validation/stack.go).

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::Value;

use super::codec::{OUTPUT_VALUE_SIG, RESOURCE_REFERENCE_SIG, SECRET_SIG, SIG_KEY};
use super::integrity::{IntegrityError, verify_integrity};
use super::{JsonMap, ProviderReference, Resource, ResourceState, Snapshot};
use crate::urn::{ROOT_STACK_TYPE, TypeToken, Urn, UrnError};
use crate::value::{PropertyMap, PropertyValue};

/// The unmodelled state field (kept in `extra`) naming the resources whose replacement replaces
/// this one; Pulumi rewrites and breaks it like a dependency.
const REPLACE_WITH: &str = "replaceWith";
/// The unmodelled state field naming the resource this one is a view of.
const VIEW_OF: &str = "viewOf";
/// The unmodelled state field holding a serialized value whose change forces a replacement.
const REPLACEMENT_TRIGGER: &str = "replacementTrigger";

/// A stack as URNs name it: its project and its (unqualified) stack name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackId<'a> {
    pub project: &'a str,
    pub stack: &'a str,
}

/// `urn` with another stack, project and name, and its own type under `parent_type`.
fn rebuild(
    urn: &Urn,
    stack: &str,
    project: &str,
    parent_type: Option<&str>,
    name: &str,
) -> Result<Urn, UrnError> {
    let token = TypeToken::parse(urn.resource_type()).map_err(|source| UrnError::BadType {
        urn: urn.to_string(),
        source,
    })?;
    Urn::new(stack, project, parent_type, &token, name)
}

/// The root stack resource's name: `<project>-<stack>`.
pub fn root_stack_name(id: StackId<'_>) -> String {
    format!("{}-{}", id.project, id.stack)
}

/// A stack's root resource (a `pulumi:pulumi:Stack` component named `<project>-<stack>`), as a
/// deployment first registers it: no inputs, outputs or parent.
pub fn root_stack_resource(id: StackId<'_>) -> Result<ResourceState, UrnError> {
    let token = TypeToken::parse(ROOT_STACK_TYPE).map_err(|source| UrnError::BadType {
        urn: ROOT_STACK_TYPE.to_owned(),
        source,
    })?;
    let urn = Urn::new(id.stack, id.project, None, &token, &root_stack_name(id))?;
    Ok(Resource::new(urn, token, false))
}

fn is_root_stack(resource: &ResourceState) -> bool {
    resource.resource_type.as_str() == ROOT_STACK_TYPE && resource.parent.is_none()
}

// ---------------------------------------------------------------------------------------------
// Renaming a stack

/// Why a stack rename was refused. The snapshot is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot rename {urn} for the new stack name: {source}")]
pub struct RenameError {
    pub urn: Urn,
    #[source]
    pub source: UrnError,
}

/// Rewrites one URN if it belongs to the old stack.
struct Renamer<'a> {
    old: StackId<'a>,
    new_stack: &'a str,
    new_project: Option<&'a str>,
}

impl Renamer<'_> {
    fn rename(&self, urn: &Urn) -> Result<Urn, RenameError> {
        if urn.stack() != self.old.stack || urn.project() != self.old.project {
            return Ok(urn.clone());
        }
        let project = self.new_project.unwrap_or(urn.project());
        let name = if urn.qualified_type() == ROOT_STACK_TYPE {
            root_stack_name(StackId {
                project,
                stack: self.new_stack,
            })
        } else {
            urn.name().to_owned()
        };
        rebuild(urn, self.new_stack, project, urn.parent_type(), &name).map_err(|source| {
            RenameError {
                urn: urn.clone(),
                source,
            }
        })
    }

    fn rename_in_place(&self, urn: &mut Urn) -> Result<(), RenameError> {
        *urn = self.rename(urn)?;
        Ok(())
    }

    fn resource(&self, resource: &mut ResourceState) -> Result<(), RenameError> {
        self.rename_in_place(&mut resource.urn)?;
        if let Some(parent) = &mut resource.parent {
            self.rename_in_place(parent)?;
        }
        for urn in resource
            .dependencies
            .iter_mut()
            .chain(resource.property_dependencies.values_mut().flatten())
            .chain(resource.deleted_with.iter_mut())
            .chain(resource.aliases.iter_mut())
        {
            self.rename_in_place(urn)?;
        }
        if let Some(provider) = &mut resource.provider {
            self.rename_in_place(&mut provider.urn)?;
        }
        self.map(&mut resource.inputs)?;
        self.map(&mut resource.outputs)?;
        self.extra(&mut resource.extra)
    }

    fn map(&self, map: &mut PropertyMap) -> Result<(), RenameError> {
        map.values_mut().try_for_each(|value| self.value(value))
    }

    /// Resource references (also inside secrets and outputs) and output dependencies; plain
    /// strings that happen to hold URNs are left alone, as Pulumi does.
    fn value(&self, value: &mut PropertyValue) -> Result<(), RenameError> {
        match value {
            PropertyValue::Array(items) => items.iter_mut().try_for_each(|v| self.value(v)),
            PropertyValue::Object(map) => self.map(map),
            PropertyValue::ResourceReference(reference) => {
                self.rename_in_place(&mut reference.urn)?;
                match &mut reference.id {
                    Some(id) => self.value(id),
                    None => Ok(()),
                }
            }
            PropertyValue::Secret(inner) => self.value(inner),
            PropertyValue::Output(output) => {
                for dependency in &mut output.dependencies {
                    self.rename_in_place(dependency)?;
                }
                match &mut output.value {
                    Some(inner) => self.value(inner),
                    None => Ok(()),
                }
            }
            PropertyValue::Null
            | PropertyValue::Bool(_)
            | PropertyValue::Number(_)
            | PropertyValue::String(_)
            | PropertyValue::Asset(_)
            | PropertyValue::Archive(_)
            | PropertyValue::Computed => Ok(()),
        }
    }

    /// The state fields Cairn keeps verbatim but Pulumi renames: `replaceWith`, `viewOf` and
    /// resource references in `replacementTrigger`.
    fn extra(&self, extra: &mut JsonMap) -> Result<(), RenameError> {
        if let Some(Value::Array(urns)) = extra.get_mut(REPLACE_WITH) {
            for urn in urns {
                self.json_urn(urn)?;
            }
        }
        if let Some(urn) = extra.get_mut(VIEW_OF) {
            self.json_urn(urn)?;
        }
        if let Some(trigger) = extra.get_mut(REPLACEMENT_TRIGGER) {
            self.json_value(trigger)?;
        }
        Ok(())
    }

    /// Renames a JSON string holding a URN; anything else is left as it is.
    fn json_urn(&self, value: &mut Value) -> Result<(), RenameError> {
        if let Value::String(text) = value
            && let Ok(urn) = Urn::parse(text)
        {
            *text = self.rename(&urn)?.to_string();
        }
        Ok(())
    }

    /// Resource references in a serialized (state JSON) value, including plaintext secrets and
    /// output values; ciphertext cannot be read and is left as it is.
    fn json_value(&self, value: &mut Value) -> Result<(), RenameError> {
        match value {
            Value::Array(items) => items.iter_mut().try_for_each(|v| self.json_value(v)),
            Value::Object(object) => {
                let sig = object
                    .get(SIG_KEY)
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                match sig.as_deref() {
                    Some(RESOURCE_REFERENCE_SIG) => match object.get_mut("urn") {
                        Some(urn) => self.json_urn(urn),
                        None => Ok(()),
                    },
                    Some(SECRET_SIG) => {
                        if let Some(Value::String(plaintext)) = object.get_mut("plaintext")
                            && let Ok(mut inner) = serde_json::from_str::<Value>(plaintext)
                        {
                            self.json_value(&mut inner)?;
                            *plaintext = inner.to_string();
                        }
                        Ok(())
                    }
                    Some(OUTPUT_VALUE_SIG) => {
                        if let Some(Value::Array(dependencies)) = object.get_mut("dependencies") {
                            dependencies
                                .iter_mut()
                                .try_for_each(|urn| self.json_urn(urn))?;
                        }
                        match object.get_mut("value") {
                            Some(inner) => self.json_value(inner),
                            None => Ok(()),
                        }
                    }
                    _ => object.values_mut().try_for_each(|v| self.json_value(v)),
                }
            }
            _ => Ok(()),
        }
    }
}

/// Rewrites every URN of stack `old` in the snapshot for the stack `new_stack` (and project
/// `new_project`, when given), as `stack rename` does: resources' URNs, parents, dependencies,
/// property dependencies, `deletedWith` targets, aliases, provider references, resource
/// references (and output dependencies) in inputs and outputs, the resources of pending
/// operations, and the unmodelled `replaceWith`, `viewOf` and `replacementTrigger` fields. The
/// root stack resource (`pulumi:pulumi:Stack`) is renamed `<project>-<new stack>`. URNs of other
/// stacks or projects (references to them) are left alone. Returns how many resource states
/// (pending operations included) changed URN.
pub fn rename_stack(
    snapshot: &mut Snapshot,
    old: StackId<'_>,
    new_stack: &str,
    new_project: Option<&str>,
) -> Result<usize, RenameError> {
    let renamer = Renamer {
        old,
        new_stack,
        new_project,
    };
    let mut resources = snapshot.resources.clone();
    let mut pending = snapshot.pending_operations.clone();
    let mut renamed = 0;
    for resource in resources
        .iter_mut()
        .chain(pending.iter_mut().map(|op| &mut op.resource))
    {
        let before = resource.urn.clone();
        renamer.resource(resource)?;
        if resource.urn != before {
            renamed += 1;
        }
    }
    snapshot.resources = resources;
    snapshot.pending_operations = pending;
    Ok(renamed)
}

// ---------------------------------------------------------------------------------------------
// Moving resources between stacks

/// How a resource's reference to another was cut by a move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokenKind {
    Dependency,
    /// A property dependency, under the property named.
    PropertyDependency(String),
    DeletedWith,
    ReplaceWith,
}

/// A reference a move cut because the two resources end up in different stacks. Both URNs are
/// the resources' URNs in the source stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenDependency {
    pub urn: Urn,
    pub kind: BrokenKind,
    pub target: Urn,
}

impl fmt::Display for BrokenDependency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (urn, target) = (&self.urn, &self.target);
        match &self.kind {
            BrokenKind::Dependency => write!(f, "{urn} depends on {target}"),
            BrokenKind::PropertyDependency(key) => {
                write!(f, "{urn} (property {key:?}) depends on {target}")
            }
            BrokenKind::DeletedWith => write!(f, "{urn} is deleted with {target}"),
            BrokenKind::ReplaceWith => write!(f, "{urn} is replaced with {target}"),
        }
    }
}

/// A resource that moves: its URN in the source stack and in the destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedResource {
    pub from: Urn,
    pub to: Urn,
}

/// What became of a provider a moved resource uses. The provider itself stays in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderCopy {
    pub from: ProviderReference,
    /// The provider the moved resources use in the destination.
    pub to: ProviderReference,
    pub outcome: ProviderOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderOutcome {
    /// Copied into the destination.
    Copied,
    /// The destination already has it under the same URN and ID (copied by an earlier move).
    AlreadyThere,
    /// The destination has a provider of the same URN and the same inputs (but another ID); the
    /// moved resources use that one.
    SameInputs,
}

/// What a move did (or, on copies of the snapshots, would do): for the CLI to show before it
/// asks for confirmation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MoveReport {
    /// The resources moved, in state order: the ones named, with `include_parents` their
    /// ancestors, and all their descendants except providers.
    pub moved: Vec<MovedResource>,
    /// The providers the moved resources use.
    pub providers: Vec<ProviderCopy>,
    /// URNs given that name no resource of the source (a warning; the others still move).
    pub not_found: Vec<Urn>,
    /// References of resources staying in the source to moved resources; dropped.
    pub broken_in_source: Vec<BrokenDependency>,
    /// References of moved resources (and copied providers) to resources staying in the
    /// source; dropped.
    pub broken_in_dest: Vec<BrokenDependency>,
    /// The root stack resource created in the destination, which had none.
    pub created_root: Option<Urn>,
}

/// Why a move was refused. Neither snapshot is changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("the source stack's state is inconsistent: {0}")]
    SourceIntegrity(#[source] IntegrityError),
    #[error("the destination stack's state is inconsistent: {0}")]
    DestIntegrity(#[source] IntegrityError),
    #[error("the source stack has no resources")]
    SourceEmpty,
    #[error("no resources to move: none of the URNs given is in the source stack")]
    NothingToMove { not_found: Vec<Urn> },
    #[error(
        "cannot move provider {0}: providers do not move; the providers of the resources moved are copied to the destination"
    )]
    ProviderNamed(Urn),
    #[error(
        "cannot move {parent}: its child {provider} is a provider, and providers stay in the source stack"
    )]
    ProviderChild { parent: Urn, provider: Urn },
    #[error(
        "provider {0} already exists in the destination stack, with another ID and other inputs"
    )]
    ProviderConflict(Urn),
    #[error("resource {0} already exists in the destination stack")]
    ResourceExists(Urn),
    #[error("the destination stack's name cannot be used in URNs: {0}")]
    DestName(#[source] UrnError),
    #[error("cannot name {urn} in the destination stack: {source}")]
    Urn {
        urn: Urn,
        #[source]
        source: UrnError,
    },
    /// The move would leave a snapshot inconsistent: a bug in this module.
    #[error("moving would leave the {stack} stack's state inconsistent (a bug): {source}")]
    Inconsistent {
        stack: &'static str,
        #[source]
        source: IntegrityError,
    },
}

/// The `replaceWith` URNs kept in a resource's unmodelled fields.
fn replace_with(resource: &ResourceState) -> Vec<Urn> {
    match resource.extra.get(REPLACE_WITH) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| item.as_str().and_then(|s| Urn::parse(s).ok()))
            .collect(),
        _ => Vec::new(),
    }
}

fn set_replace_with(resource: &mut ResourceState, urns: Vec<Urn>) {
    if resource.extra.contains_key(REPLACE_WITH) {
        let urns = urns.into_iter().map(|u| Value::String(u.to_string()));
        resource
            .extra
            .insert(REPLACE_WITH.into(), Value::Array(urns.collect()));
    }
}

/// Drops `resource`'s dependencies, property dependencies, `deletedWith` and `replaceWith`
/// references to `cut`, returning them (parents and providers are dealt with separately).
fn break_dependencies(resource: &mut ResourceState, cut: &HashSet<Urn>) -> Vec<BrokenDependency> {
    let mut broken = Vec::new();
    let mut breaks = |kind: BrokenKind, target: &Urn| {
        let cuts = cut.contains(target);
        if cuts {
            broken.push(BrokenDependency {
                urn: resource.urn.clone(),
                kind,
                target: target.clone(),
            });
        }
        cuts
    };
    resource
        .dependencies
        .retain(|target| !breaks(BrokenKind::Dependency, target));
    for (key, targets) in &mut resource.property_dependencies {
        targets.retain(|target| !breaks(BrokenKind::PropertyDependency(key.clone()), target));
    }
    resource.property_dependencies.retain(|_, t| !t.is_empty());
    if resource
        .deleted_with
        .as_ref()
        .is_some_and(|target| breaks(BrokenKind::DeletedWith, target))
    {
        resource.deleted_with = None;
    }
    let mut replace = replace_with(resource);
    let before = replace.len();
    replace.retain(|target| !breaks(BrokenKind::ReplaceWith, target));
    if replace.len() != before {
        set_replace_with(resource, replace);
    }
    broken
}

/// Rewrites URNs for the destination: moved resources to their new URNs, anything else to the
/// same qualified type and name under the destination's stack and project.
struct Rewriter<'a> {
    dest: StackId<'a>,
    renamed: HashMap<Urn, Urn>,
}

impl Rewriter<'_> {
    fn urn(&self, urn: &Urn) -> Result<Urn, MoveError> {
        if let Some(new) = self.renamed.get(urn) {
            return Ok(new.clone());
        }
        rebuild(
            urn,
            self.dest.stack,
            self.dest.project,
            urn.parent_type(),
            urn.name(),
        )
        .map_err(|source| MoveError::Urn {
            urn: urn.clone(),
            source,
        })
    }

    /// The URN `resource` gets in the destination under `parent` (its new parent's URN).
    fn placed(&self, resource: &ResourceState, parent: Option<&Urn>) -> Result<Urn, MoveError> {
        let urn = &resource.urn;
        rebuild(
            urn,
            self.dest.stack,
            self.dest.project,
            parent.map(Urn::qualified_type),
            urn.name(),
        )
        .map_err(|source| MoveError::Urn {
            urn: urn.clone(),
            source,
        })
    }

    /// Points the references `break_dependencies` left at their destination URNs.
    fn references(
        &self,
        resource: &mut ResourceState,
        providers: &HashMap<ProviderReference, ProviderReference>,
    ) -> Result<(), MoveError> {
        if let Some(provider) = &mut resource.provider {
            *provider = match providers.get(provider) {
                Some(new) => new.clone(),
                None => ProviderReference {
                    urn: self.urn(&provider.urn)?,
                    id: provider.id.clone(),
                },
            };
        }
        for urn in resource
            .dependencies
            .iter_mut()
            .chain(resource.property_dependencies.values_mut().flatten())
            .chain(resource.deleted_with.iter_mut())
        {
            *urn = self.urn(urn)?;
        }
        let replace = replace_with(resource);
        if !replace.is_empty() {
            let replace = replace
                .iter()
                .map(|urn| self.urn(urn))
                .collect::<Result<Vec<_>, _>>()?;
            set_replace_with(resource, replace);
        }
        Ok(())
    }
}

/// Moves resources from `source` to `dest` (the snapshot of the stack `dest_id`), as
/// `state move` does.
///
/// Moved are the resources named, with `include_parents` their ancestors (but not the root
/// stack resource or providers), and every descendant of those that is not a provider. Naming
/// the root stack resource moves all its descendants but not itself. Naming a provider is
/// refused: providers never move; each provider a moved resource uses is copied to the
/// destination (and stays in the source), unless the destination already has it under the
/// same URN with the same ID or the same inputs, which is then used. A provider the
/// destination has under that URN with another ID and other inputs is refused, as is a moved
/// resource whose URN the destination already has.
///
/// In the destination, moved resources (and copied providers) whose parent stays behind are
/// parented to the destination's root stack resource, which is created when the destination
/// has none; URNs take the destination's stack and project and the qualified type of the new
/// parent. Dependencies, property dependencies, `deletedWith` and `replaceWith` references
/// across the two stacks are dropped, and listed in the report. Aliases, resource references
/// in property values and pending operations are left as they are, as Pulumi does.
///
/// URNs given that name nothing are reported; when none names anything the move is refused.
/// Both snapshots are checked for consistency before and after; on any error neither changes.
pub fn move_resources(
    source: &mut Snapshot,
    dest: &mut Snapshot,
    dest_id: StackId<'_>,
    urns: &[Urn],
    include_parents: bool,
) -> Result<MoveReport, MoveError> {
    verify_integrity(source).map_err(MoveError::SourceIntegrity)?;
    verify_integrity(dest).map_err(MoveError::DestIntegrity)?;
    if source.resources.is_empty() {
        return Err(MoveError::SourceEmpty);
    }
    let mut report = MoveReport::default();
    let moving = moving_set(source, urns, include_parents, &mut report)?;
    let (remaining, providers_to_copy) = split_source(source, &moving, &mut report);
    let staying: HashSet<Urn> = remaining.iter().map(|r| r.urn.clone()).collect();

    let mut dest_resources = dest.resources.clone();
    let dest_root = dest_root(&mut dest_resources, dest_id, &mut report)?;
    let existing: HashMap<Urn, ResourceState> = dest_resources
        .iter()
        .map(|r| (r.urn.clone(), r.clone()))
        .collect();
    let mut placing = Placing {
        rewriter: Rewriter {
            dest: dest_id,
            renamed: HashMap::new(),
        },
        providers: HashMap::new(),
        dest_root,
        existing,
        staying,
    };
    for provider in providers_to_copy {
        if let Some(copy) = placing.copy_provider(provider, &mut report)? {
            dest_resources.push(copy);
        }
    }
    for resource in source.resources.iter().filter(|r| moving.contains(&r.urn)) {
        dest_resources.push(placing.move_resource(resource, &moving, &mut report)?);
    }

    let mut new_source = source.clone();
    new_source.resources = remaining;
    let mut new_dest = dest.clone();
    new_dest.resources = dest_resources;
    verify_integrity(&new_dest).map_err(|source| MoveError::Inconsistent {
        stack: "destination",
        source,
    })?;
    verify_integrity(&new_source).map_err(|source| MoveError::Inconsistent {
        stack: "source",
        source,
    })?;
    *source = new_source;
    *dest = new_dest;
    Ok(report)
}

/// The URNs of the resources that move: the ones named (URNs naming nothing go to the
/// report), with `include_parents` their ancestors, and their descendants that are not
/// providers; never the root stack resource. Refused when a provider is named or would lose
/// its moving parent.
fn moving_set(
    source: &Snapshot,
    urns: &[Urn],
    include_parents: bool,
    report: &mut MoveReport,
) -> Result<HashSet<Urn>, MoveError> {
    let mut moving: HashSet<Urn> = HashSet::new();
    let mut root: Option<Urn> = None;
    for resource in &source.resources {
        if !urns.contains(&resource.urn) {
            continue;
        }
        if resource.is_provider() {
            return Err(MoveError::ProviderNamed(resource.urn.clone()));
        }
        if is_root_stack(resource) {
            root = Some(resource.urn.clone());
        }
        moving.insert(resource.urn.clone());
    }
    for urn in urns {
        if !source.resources.iter().any(|r| &r.urn == urn) && !report.not_found.contains(urn) {
            report.not_found.push(urn.clone());
        }
    }
    if moving.is_empty() {
        return Err(MoveError::NothingToMove {
            not_found: report.not_found.clone(),
        });
    }

    let by_urn: HashMap<&Urn, &ResourceState> =
        source.resources.iter().map(|r| (&r.urn, r)).collect();
    let ancestors = |resource: &ResourceState| {
        let mut chain: Vec<&ResourceState> = Vec::new();
        let mut next = resource.parent.as_ref();
        while let Some(parent) = next.and_then(|urn| by_urn.get(urn)) {
            if chain.iter().any(|r| r.urn == parent.urn) {
                break;
            }
            chain.push(parent);
            next = parent.parent.as_ref();
        }
        chain
    };
    if include_parents {
        let mut parents = Vec::new();
        for resource in source.resources.iter().filter(|r| moving.contains(&r.urn)) {
            for parent in ancestors(resource) {
                if !is_root_stack(parent) && !parent.is_provider() {
                    parents.push(parent.urn.clone());
                }
            }
        }
        moving.extend(parents);
    }
    let descendants: Vec<Urn> = source
        .resources
        .iter()
        .filter(|r| !r.is_provider() && ancestors(r).iter().any(|a| moving.contains(&a.urn)))
        .map(|r| r.urn.clone())
        .collect();
    moving.extend(descendants);
    if let Some(root) = &root {
        moving.remove(root);
    }
    // Providers do not move, so one whose parent moves would be left without it.
    for resource in &source.resources {
        if let Some(parent) = &resource.parent
            && !moving.contains(&resource.urn)
            && moving.contains(parent)
        {
            return Err(MoveError::ProviderChild {
                parent: parent.clone(),
                provider: resource.urn.clone(),
            });
        }
    }
    Ok(moving)
}

/// What stays in the source, its references to what moves cut (reported), and the providers
/// among it that moving resources use (to copy to the destination).
fn split_source(
    source: &Snapshot,
    moving: &HashSet<Urn>,
    report: &mut MoveReport,
) -> (Vec<ResourceState>, Vec<ResourceState>) {
    let used_providers: HashSet<&ProviderReference> = source
        .resources
        .iter()
        .filter(|r| moving.contains(&r.urn))
        .filter_map(|r| r.provider.as_ref())
        .collect();
    let mut remaining: Vec<ResourceState> = Vec::new();
    let mut providers_to_copy: Vec<ResourceState> = Vec::new();
    for resource in source.resources.iter().filter(|r| !moving.contains(&r.urn)) {
        let mut kept = resource.clone();
        report
            .broken_in_source
            .extend(break_dependencies(&mut kept, moving));
        if let Some(id) = &resource.id
            && used_providers.contains(&ProviderReference {
                urn: resource.urn.clone(),
                id: id.clone(),
            })
        {
            providers_to_copy.push(kept.clone());
        }
        remaining.push(kept);
    }
    (remaining, providers_to_copy)
}

/// The URN of the destination's root stack resource, created (first, and reported) when the
/// destination has none.
fn dest_root(
    dest_resources: &mut Vec<ResourceState>,
    dest_id: StackId<'_>,
    report: &mut MoveReport,
) -> Result<Urn, MoveError> {
    if let Some(root) = dest_resources.iter().find(|r| is_root_stack(r)) {
        return Ok(root.urn.clone());
    }
    let root = root_stack_resource(dest_id).map_err(MoveError::DestName)?;
    let urn = root.urn.clone();
    dest_resources.insert(0, root);
    report.created_root = Some(urn.clone());
    Ok(urn)
}

/// How resources are placed in the destination, as the move goes: the URNs given so far, and
/// the providers the moved resources use there.
struct Placing<'a> {
    rewriter: Rewriter<'a>,
    /// Source provider → the one the destination's resources use.
    providers: HashMap<ProviderReference, ProviderReference>,
    dest_root: Urn,
    /// The destination's resources before the move, by URN.
    existing: HashMap<Urn, ResourceState>,
    /// The URNs of the resources staying in the source.
    staying: HashSet<Urn>,
}

impl Placing<'_> {
    /// Places `provider` under the destination's root: returns the copy to add, or `None`
    /// when the destination already has it (same ID, or same inputs); refused when the
    /// destination has another provider under its URN.
    fn copy_provider(
        &mut self,
        provider: ResourceState,
        report: &mut MoveReport,
    ) -> Result<Option<ResourceState>, MoveError> {
        let from = ProviderReference {
            urn: provider.urn.clone(),
            id: provider.id.clone().unwrap_or_default(),
        };
        let mut copy = provider;
        report
            .broken_in_dest
            .extend(break_dependencies(&mut copy, &self.staying));
        copy.parent = Some(self.dest_root.clone());
        copy.urn = self.rewriter.placed(&copy, Some(&self.dest_root))?;
        self.rewriter.references(&mut copy, &self.providers)?;
        let (to, outcome) = match self.existing.get(&copy.urn) {
            Some(there) if there.id == copy.id => (there, ProviderOutcome::AlreadyThere),
            Some(there) if there.inputs == copy.inputs => (there, ProviderOutcome::SameInputs),
            Some(_) => return Err(MoveError::ProviderConflict(copy.urn)),
            None => (&copy, ProviderOutcome::Copied),
        };
        let to = ProviderReference {
            urn: to.urn.clone(),
            id: to.id.clone().unwrap_or_default(),
        };
        self.providers.insert(from.clone(), to.clone());
        report.providers.push(ProviderCopy { from, to, outcome });
        Ok((outcome == ProviderOutcome::Copied).then_some(copy))
    }

    /// `resource` as it is in the destination: under its moved parent, or the destination's
    /// root when its parent stays; refused when the destination already has its URN.
    fn move_resource(
        &mut self,
        resource: &ResourceState,
        moving: &HashSet<Urn>,
        report: &mut MoveReport,
    ) -> Result<ResourceState, MoveError> {
        let mut moved = resource.clone();
        report
            .broken_in_dest
            .extend(break_dependencies(&mut moved, &self.staying));
        let parent = match &moved.parent {
            Some(parent) if moving.contains(parent) => self.rewriter.urn(parent)?,
            _ => self.dest_root.clone(),
        };
        moved.urn = self.rewriter.placed(&moved, Some(&parent))?;
        moved.parent = Some(parent);
        self.rewriter.references(&mut moved, &self.providers)?;
        if self.existing.contains_key(&moved.urn) {
            return Err(MoveError::ResourceExists(moved.urn));
        }
        self.rewriter
            .renamed
            .insert(resource.urn.clone(), moved.urn.clone());
        if !report.moved.iter().any(|m| m.from == resource.urn) {
            report.moved.push(MovedResource {
                from: resource.urn.clone(),
                to: moved.urn.clone(),
            });
        }
        Ok(moved)
    }
}

// ---------------------------------------------------------------------------------------------
// Stack tags

/// The longest stack tag name, in bytes.
pub const MAX_TAG_NAME_BYTES: usize = 40;
/// The longest stack tag value, in bytes.
pub const MAX_TAG_VALUE_BYTES: usize = 256;

/// The tags Pulumi sets by itself, with what each holds.
///
/// The Pulumi Cloud backend merges them into a stack's tags before each update (from the
/// project file and the Git checkout of the project: `GetEnvironmentTagsForCurrentStack` in
/// pkg/backend/stack.go), along with the `pulumi:tags` config object; `pulumi new` adds
/// `pulumi:template`. The DIY backends set none of them by themselves. `cairn stack tag ls`
/// uses the list to tell these from the user's.
pub const AUTOMATIC_TAGS: &[(&str, &str)] = &[
    (
        "pulumi:project",
        "the project's name (`name` in Pulumi.yaml)",
    ),
    (
        "pulumi:runtime",
        "the project's runtime (`runtime` in Pulumi.yaml)",
    ),
    (
        "pulumi:description",
        "the project's description, when it has one",
    ),
    (
        "pulumi:template",
        "the template the project was created from",
    ),
    ("vcs:owner", "the owner of the Git remote `origin`"),
    ("vcs:repo", "the repository of the Git remote `origin`"),
    ("vcs:kind", "the host of the Git remote (github.com, ...)"),
    ("vcs:root", "the project's directory within the repository"),
];

/// Why a stack tag was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagError {
    #[error("a stack tag name cannot be empty")]
    EmptyName,
    #[error(
        "stack tag name {name:?} is {len} bytes long; names may be at most {MAX_TAG_NAME_BYTES}"
    )]
    NameTooLong { name: String, len: usize },
    #[error(
        "stack tag name {name:?} is invalid: names may contain only ASCII letters, digits, '-', '_', '.' and ':'"
    )]
    NameCharacters { name: String },
    #[error(
        "the value of stack tag {name:?} is {len} bytes long; values may be at most {MAX_TAG_VALUE_BYTES}"
    )]
    ValueTooLong { name: String, len: usize },
}

/// Checks a stack tag against the Pulumi Cloud's rules (which its CLI checks before sending
/// tags): a name of 1 to 40 bytes of `[A-Za-z0-9-_.:]`, a value of at most 256 bytes.
pub fn check_stack_tag(name: &str, value: &str) -> Result<(), TagError> {
    if name.is_empty() {
        return Err(TagError::EmptyName);
    }
    if name.len() > MAX_TAG_NAME_BYTES {
        return Err(TagError::NameTooLong {
            name: name.to_owned(),
            len: name.len(),
        });
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
    {
        return Err(TagError::NameCharacters {
            name: name.to_owned(),
        });
    }
    if value.len() > MAX_TAG_VALUE_BYTES {
        return Err(TagError::ValueTooLong {
            name: name.to_owned(),
            len: value.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
