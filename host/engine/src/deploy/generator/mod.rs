//! The step generator: turns one registration of a custom resource into the steps that bring
//! it to its desired state, following the spec's algorithm:
//!
//! 1. compute the URN and the old URNs its aliases give it; claim the old state
//!    ([`identity`]);
//! 2. resolve its provider ([`providers`]);
//! 3. leave it as it is when `--target` / `--exclude` leave it out;
//! 4. import it, if asked to ([`ImportStep`]);
//! 5. check its inputs with the provider, then run the analyzers ([`check`]);
//! 6. create it if there is no old state ([`CreateStep`]);
//! 7. diff it against the old state and decide ([`diff`]): `same`, `update`, or replace —
//!    create-before-delete, or delete-before-replace after the dependents that must be
//!    replaced with it ([`dependents`]).
//!
//! Providers and components have flows of their own ([`providers`], [`component`]). The plan
//! every step consults lives in [`super::plan`]; the steps themselves in [`super::steps`].

pub(crate) mod check;
pub(crate) mod component;
pub(crate) mod dependents;
pub(crate) mod diff;
pub(crate) mod identity;
pub(crate) mod providers;

use std::sync::Arc;

use crate::path::{PathElement, PropertyPath};
use crate::state::{ProviderReference, ResourceState};
use crate::urn::Urn;
use crate::value::{PropertyMap, PropertyValue};

use super::analyzer::AnalyzedResource;
use super::engine::{Engine, err};
use super::events::{PropertyChange, StepOp};
use super::journal::{BaseIndex, Mutation};
use super::monitor::MonitorError;
use super::monitor::scope::Caller;
use super::program::{RegisterResourceRequest, RegisterResourceResponse, ResourceOptions};
use super::provider::{CheckRequest, DiffRequest, Provider};
use super::steps::create::CreateStep;
use super::steps::delete::DeleteBeforeReplaceStep;
use super::steps::import::{ImportStep, is_secret_of};
use super::steps::replace::ReplaceStep;
use super::steps::same::SameStep;
use super::steps::update::UpdateStep;
use diff::{Decision, DiffFacts, changes_from_detailed, decide, diff_properties};
use identity::Claimed;

/// A custom resource's registration once its identity and provider are known: what the steps
/// are made from.
struct CustomRegistration<'r> {
    request: &'r RegisterResourceRequest,
    provider_ref: ProviderReference,
    provider: Arc<dyn Provider>,
    /// The new state before the provider has had its say (no ID, outputs or checked inputs).
    state: ResourceState,
    /// The program's inputs, with ignored properties reset to their old values.
    inputs: PropertyMap,
    ignore_changes: Vec<PropertyPath>,
    replace_on_changes: Vec<PropertyPath>,
}

/// What the diff decided for a resource with a usable old state, and the property changes
/// shown.
struct Planned {
    decision: Decision,
    changes: Vec<PropertyChange>,
}

impl Engine {
    /// Registers the custom resource `urn` (under `parent`, depending on `dependencies`): the
    /// steps of the spec's algorithm (see the module docs), run to completion.
    pub async fn register_custom(
        self: &Arc<Self>,
        urn: Urn,
        parent: Option<Urn>,
        dependencies: Vec<Urn>,
        mut request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        // Moved out, not copied: from here on the inputs live in the registration.
        let requested_inputs = std::mem::take(&mut request.inputs);
        let options = &request.options;
        if !options.state_migrations.is_empty() {
            // Boxed: rare, and a pending registration future must stay small.
            Box::pin(self.apply_state_migrations(
                &urn,
                parent.as_ref(),
                &request.resource_type,
                &request.name,
                &options.aliases,
                &options.state_migrations,
            ))
            .await?;
        }
        let old = self.claim_with_aliases(
            &urn,
            parent.as_ref(),
            &request.resource_type,
            &request.name,
            &options.aliases,
            caller,
        )?;
        let (provider_ref, provider) = self.provider_of(&request, caller).await?;
        let state = custom_state(&urn, parent, &provider_ref, dependencies, &request, &old);
        let ignore_changes = parse_paths(&urn, "ignoreChanges", &options.ignore_changes)?;
        let replace_on_changes =
            parse_paths(&urn, "replaceOnChanges", &options.replace_on_changes)?;
        let inputs = ignoring_changes(requested_inputs, &old, &ignore_changes);
        if !self.is_targeted(&urn) {
            return self.untargeted(urn, old, inputs);
        }
        let registration = CustomRegistration {
            request: &request,
            provider_ref,
            provider,
            state,
            inputs,
            ignore_changes,
            replace_on_changes,
        };
        if let Some(import_id) = import_requested(options, &old) {
            let step = ImportStep {
                state: registration.state,
                inputs: registration.inputs,
                import_id,
                ignore_changes: registration.ignore_changes,
                provider: registration.provider,
                old,
                planned: self.options.planned_imports.get(&urn).cloned(),
            };
            return Ok(registered(step.apply(self).await?));
        }
        self.check_and_diff(registration, old).await
    }

    /// Steps 5–7: check, then create, or diff and decide.
    async fn check_and_diff(
        &self,
        mut registration: CustomRegistration<'_>,
        old: Claimed<'_>,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let usable = old.as_ref().filter(|(i, o)| self.is_usable_old(*i, o));
        let no_olds = PropertyMap::new();
        let olds = usable.map_or(&no_olds, |(_, o)| &o.inputs);
        let checked = self.check_custom(&registration, olds).await?;
        registration.state.inputs = checked;
        if !self.options.analyzers.is_empty() {
            let state = &registration.state;
            let provider = self.state_of(&registration.provider_ref.urn);
            let resource = AnalyzedResource {
                state,
                properties: &state.inputs,
                delete_before_replace: registration.request.options.delete_before_replace,
                provider: provider.as_ref(),
            };
            if let Some(remediated) = self.analyze(&resource).await? {
                registration.state.inputs = remediated;
            }
        }
        let Some((index, usable)) = usable.cloned() else {
            return self.create_new(registration, old).await;
        };
        let planned = self.plan_change(&registration, usable).await?;
        match planned.decision {
            Decision::Same => {
                let step = SameStep {
                    state: registration.state,
                    old: usable,
                    index,
                };
                step.apply(self).map(registered)
            }
            Decision::Update => {
                let step = UpdateStep {
                    state: registration.state,
                    old: usable.clone(),
                    index,
                    provider: registration.provider,
                    changes: planned.changes,
                    ignore_changes: registration.ignore_changes,
                };
                step.apply(self).await.map(registered)
            }
            Decision::Replace {
                delete_before_replace,
                keys,
            } => {
                let replace = Replacement {
                    old: usable.clone(),
                    index,
                    changes: planned.changes,
                    keys,
                    delete_before_replace,
                };
                self.replace(registration, replace).await
            }
        }
    }

    /// Whether the old state at `index` can be diffed against: not the copy of a resource
    /// already deleted ahead of its replacement (in an earlier deployment, or in this one).
    fn is_usable_old(&self, index: BaseIndex, old: &ResourceState) -> bool {
        !old.pending_replacement && !self.plan().deleted_early.contains(&index)
    }

    /// The provider's Check of the registration's inputs against `olds` (empty for a new
    /// resource or a replacement, so generated defaults are not reused).
    async fn check_custom(
        &self,
        registration: &CustomRegistration<'_>,
        olds: &PropertyMap,
    ) -> Result<PropertyMap, MonitorError> {
        let urn = &registration.state.urn;
        let inputs = &registration.inputs;
        self.call_check(
            urn,
            inputs,
            registration.provider.check(CheckRequest {
                urn,
                olds,
                news: inputs,
                random_seed: urn.as_str().as_bytes(),
            }),
        )
        .await
    }

    /// Step 6: a resource with no usable old state is created — new, or re-created after its
    /// old copy was deleted ahead of it (a delete-before-replace whose replacement is reported
    /// now).
    async fn create_new(
        &self,
        registration: CustomRegistration<'_>,
        old: Claimed<'_>,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let op = match &old {
            Some(_) => StepOp::CreateReplacement,
            None => StepOp::Create,
        };
        let replace_step = old
            .as_ref()
            .map(|(_, old)| ReplaceStep::new(self, old, &registration.state, vec![], vec![]));
        let step = CreateStep {
            op,
            state: registration.state,
            provider: registration.provider,
            supersedes: old.map(|(i, _)| i),
            replaces: None,
        };
        let response = step.apply(self).await.map(created)?;
        if let Some(replace_step) = replace_step {
            replace_step.apply(self).await?;
        }
        Ok(response)
    }

    /// Step 7: diffs the checked state against the old one and decides. A resource whose
    /// provider changed is replaced without a diff (unless both are default providers and the
    /// new one can adopt it); one recorded with initialization errors (a partly failed create
    /// or update) is updated even without changes, as Pulumi does, so the provider can finish
    /// the job.
    async fn plan_change(
        &self,
        registration: &CustomRegistration<'_>,
        old: &ResourceState,
    ) -> Result<Planned, MonitorError> {
        let state = &registration.state;
        let urn = &state.urn;
        let provider_replaced = match &old.provider {
            Some(old_ref) if !self.same_provider(old_ref, &registration.provider_ref) => {
                !self
                    .default_provider_can_adopt(
                        old_ref,
                        &registration.provider_ref,
                        &registration.provider,
                    )
                    .await
            }
            _ => false,
        };
        let diff = if provider_replaced {
            None
        } else {
            let _permit = self.permit().await?;
            let request = DiffRequest {
                urn,
                id: old.id.as_deref().unwrap_or_default(),
                old_inputs: &old.inputs,
                old_outputs: &old.outputs,
                news: &state.inputs,
                ignore_changes: &registration.ignore_changes,
            };
            let diff = registration.provider.diff(request).await;
            Some(diff.map_err(|e| err(format!("{urn}: Diff failed: {e}")))?)
        };
        // Deleted with a resource this deployment replaces: the old copy goes with the old
        // target, so it is replaced too, whatever its diff (Pulumi's deletedWith cascade).
        let deleted_with_replaced = state
            .deleted_with
            .as_ref()
            .is_some_and(|target| self.replaced_here(target));
        let decision = decide(&DiffFacts {
            // A tainted resource is replaced, as one named by `--replace` is.
            forced_replace: self.forced_replace(urn) || old.taint || deleted_with_replaced,
            provider_replaced,
            diff: diff.as_ref(),
            old_inputs: Some(&old.inputs),
            new_inputs: Some(&state.inputs),
            replace_on_changes: &registration.replace_on_changes,
            delete_before_replace: registration.request.options.delete_before_replace,
        });
        let decision = match decision {
            Decision::Same if !old.init_errors.is_empty() => Decision::Update,
            Decision::Replace {
                delete_before_replace,
                keys,
            } if keys.is_empty() && deleted_with_replaced => Decision::Replace {
                delete_before_replace,
                keys: vec!["deletedWith".to_owned()],
            },
            other => other,
        };
        // A resource that stays the same shows no changes: none are computed.
        let changes = match decision {
            Decision::Same => Vec::new(),
            _ => diff
                .as_ref()
                .and_then(|d| changes_from_detailed(d, &old.inputs, &old.outputs, &state.inputs))
                .unwrap_or_else(|| diff_properties(&old.inputs, &state.inputs)),
        };
        Ok(Planned { decision, changes })
    }

    /// Replaces a resource: refused if it is protected; otherwise checked again without its
    /// old inputs, then either created before the old copy is deleted (the default: the old
    /// copy goes once the program has finished), or — delete-before-replace — created after
    /// the old copy and the dependents that must be replaced with it were deleted.
    async fn replace(
        &self,
        mut registration: CustomRegistration<'_>,
        replace: Replacement,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let urn = registration.state.urn.clone();
        let Replacement {
            old,
            index,
            changes,
            keys,
            delete_before_replace,
        } = replace;
        if old.protect {
            let message = format!(
                "{urn} is protected and cannot be replaced (it would be because of {}); run `cairn state unprotect {urn}` first",
                if keys.is_empty() {
                    "a forced replacement".to_owned()
                } else {
                    keys.join(", ")
                }
            );
            return Err(self.reject(&urn, StepOp::Replace, message).await);
        }
        // Re-check without old inputs so generated defaults are not reused.
        registration.state.inputs = self
            .check_custom(&registration, &PropertyMap::new())
            .await?;
        let replace_step = ReplaceStep::new(
            self,
            &old,
            &registration.state,
            mark_replace(changes, &keys),
            keys,
        );
        if delete_before_replace {
            self.delete_dependents_of(index).await?;
            DeleteBeforeReplaceStep {
                old: &old,
                index,
                deleted_with: false,
            }
            .apply(self)
            .await?;
        }
        let (supersedes, replaces) = if delete_before_replace {
            (Some(index), None)
        } else {
            (None, Some((index, old)))
        };
        let step = CreateStep {
            op: StepOp::CreateReplacement,
            state: registration.state,
            provider: registration.provider,
            supersedes,
            replaces,
        };
        let response = step.apply(self).await.map(created)?;
        replace_step.apply(self).await?;
        Ok(response)
    }

    /// Step 3: a resource left out by `--target` / `--exclude` keeps its old state untouched;
    /// a new one is not created.
    fn untargeted(
        &self,
        urn: Urn,
        old: Claimed<'_>,
        inputs: PropertyMap,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let Some((i, old)) = old else {
            self.warn(
                Some(&urn),
                format!("{urn} is not targeted by this update, so it is not created"),
            );
            return Ok(RegisterResourceResponse {
                urn,
                id: None,
                outputs: inputs,
                property_dependencies: Default::default(),
            });
        };
        self.plan().untargeted.insert(i);
        self.count(StepOp::Same, &urn);
        self.apply(vec![Mutation::Append(old.clone()), Mutation::RemoveBase(i)])?;
        self.record(old);
        Ok(RegisterResourceResponse {
            urn,
            id: old.id.clone(),
            outputs: old.outputs.clone(),
            property_dependencies: Default::default(),
        })
    }
}

/// A decided replacement of the old copy at base `index`.
struct Replacement {
    old: ResourceState,
    index: BaseIndex,
    changes: Vec<PropertyChange>,
    keys: Vec<String>,
    delete_before_replace: bool,
}

/// The state a custom resource's registration records, before its provider has had its say:
/// the request's options, its provider and dependencies, and its old URN as an alias when it
/// took over a state under another one.
fn custom_state(
    urn: &Urn,
    parent: Option<Urn>,
    provider_ref: &ProviderReference,
    dependencies: Vec<Urn>,
    request: &RegisterResourceRequest,
    old: &Claimed<'_>,
) -> ResourceState {
    let options: &ResourceOptions = &request.options;
    let mut state = ResourceState::new(urn.clone(), request.resource_type.clone(), true);
    state.parent = parent;
    state.provider = Some(provider_ref.clone());
    state.protect = options.protect;
    state.dependencies = dependencies;
    state.property_dependencies = request.property_dependencies.clone();
    state.additional_secret_outputs = options.additional_secret_outputs.clone();
    state.custom_timeouts = options.custom_timeouts.map(Box::new);
    state.retain_on_delete = options.retain_on_delete;
    state.deleted_with = options.deleted_with.clone();
    state.ignore_changes = options.ignore_changes.clone();
    state.replace_on_changes = options.replace_on_changes.clone();
    // An import ID the old state holds as a secret stays unrecorded (see `recorded_import_id`).
    state.import_id = options
        .import_id
        .clone()
        .filter(|id| !old.as_ref().is_some_and(|(_, o)| is_secret_of(o, id)));
    if let Some(hooks) = &options.hooks {
        hooks.record(&mut state);
    }
    state.aliases = old
        .as_ref()
        .filter(|(_, o)| &o.urn != urn)
        .map(|(_, o)| vec![o.urn.clone()])
        .unwrap_or_default();
    state
}

/// `inputs` with the properties `ignore_changes` names reset to their old values (as they
/// are when there is no old state).
fn ignoring_changes(
    inputs: PropertyMap,
    old: &Claimed<'_>,
    ignore_changes: &[PropertyPath],
) -> PropertyMap {
    let Some((_, old)) = old.filter(|_| !ignore_changes.is_empty()) else {
        return inputs;
    };
    let old_root = PropertyValue::Object(Box::new(old.inputs.clone()));
    let mut new_root = PropertyValue::Object(Box::new(inputs));
    for path in ignore_changes {
        path.reset(&old_root, &mut new_root);
    }
    match new_root {
        PropertyValue::Object(map) => *map,
        _ => PropertyMap::new(),
    }
}

/// The ID to import, when the registration asks for an import of a resource other than the
/// one its old state already records (re-registering an imported resource is no import).
fn import_requested(options: &ResourceOptions, old: &Claimed<'_>) -> Option<String> {
    let import_id = options.import_id.as_ref()?;
    let same_resource = old.as_ref().is_some_and(|(_, o)| {
        o.id.as_deref() == Some(import_id.as_str())
            || o.import_id.as_deref() == Some(import_id.as_str())
            || is_secret_of(o, import_id)
    });
    (!same_resource).then(|| import_id.clone())
}

/// Parses the property paths of a resource option (`ignoreChanges`, `replaceOnChanges`).
fn parse_paths(
    urn: &Urn,
    option: &str,
    paths: &[String],
) -> Result<Vec<PropertyPath>, MonitorError> {
    paths
        .iter()
        .map(|p| {
            PropertyPath::parse(p).map_err(|e| err(format!("{urn}: invalid {option} path: {e}")))
        })
        .collect()
}

/// `changes` with those under a replacement's top-level `keys` marked as causing it.
fn mark_replace(mut changes: Vec<PropertyChange>, keys: &[String]) -> Vec<PropertyChange> {
    for change in &mut changes {
        if let Some(PathElement::Key(top)) = change.path.elements().first()
            && keys.contains(top)
        {
            change.replace = true;
        }
    }
    changes
}

/// The monitor's answer for a resource whose step recorded `state`.
fn registered(state: ResourceState) -> RegisterResourceResponse {
    RegisterResourceResponse {
        urn: state.urn,
        id: state.id,
        outputs: state.outputs,
        property_dependencies: Default::default(),
    }
}

/// The monitor's answer for a created resource (no ID in a preview).
fn created(state: ResourceState) -> RegisterResourceResponse {
    RegisterResourceResponse {
        id: state.id.clone().filter(|id| !id.is_empty()),
        ..registered(state)
    }
}
