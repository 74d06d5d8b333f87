//! The `import` and `import-replacement` steps — adopting an existing resource by ID: the
//! provider reads it, checks the program's inputs against what it read, and the diff must be
//! empty; or, for `cairn import` (a planned import), what it read becomes the inputs — and the
//! import of a resource an interrupted create may have made.

use std::sync::Arc;

use crate::path::PropertyPath;
use crate::state::{OperationKind, ResourceState};
use crate::urn::Urn;
use crate::value::{PropertyMap, PropertyValue};

use super::super::PlannedImport;
use super::super::admission::accept_read;
use super::super::engine::{Engine, err};
use super::super::events::StepOp;
use super::super::executor::PartialRecord;
use super::super::generator::diff::diff_properties;
use super::super::journal::{BaseIndex, Mutation};
use super::super::monitor::MonitorError;
use super::super::provider::{
    CheckRequest, DiffChanges, DiffRequest, Provider, ProviderError, ReadRequest, ReadResult,
};
use super::replace::ReplaceStep;
use super::{replacement_op, secure_outputs, step_state};

/// Imports the resource with `import_id` as `state` (the program's registration, whose
/// `inputs` are the program's inputs), replacing `old` (claimed at base index) if any.
pub(crate) struct ImportStep<'a> {
    pub state: ResourceState,
    pub inputs: PropertyMap,
    pub import_id: String,
    pub ignore_changes: Vec<PropertyPath>,
    pub provider: Arc<dyn Provider>,
    pub old: Option<(BaseIndex, &'a ResourceState)>,
    /// `cairn import`: the inputs are what the provider reads, not the program's.
    pub planned: Option<PlannedImport>,
}

impl ImportStep<'_> {
    pub async fn apply(mut self, engine: &Engine) -> Result<ResourceState, MonitorError> {
        // The begin record is written before the read tells whether the ID is a secret, so it
        // never carries the ID (`adopted` records it when it may be).
        self.state.import_id = None;
        let replacing = self.old.is_some();
        let op = replacement_op(replacing, StepOp::Import, StepOp::ImportReplacement);
        let urn = self.state.urn.clone();
        let mut info = engine.step_info(op, &self.state);
        info.old = self.old.as_ref().map(|(_, o)| step_state(o));
        let preview = engine.preview();
        let done = engine
            .run_step_to(info, !replacing, async {
                let work = async {
                    let read = self.read().await?;
                    if let Some(planned) = &self.planned {
                        let inputs = self.planned_inputs(engine, planned, &read).await?;
                        return Ok(self.adopted_as_read(read, inputs));
                    }
                    let checked = self.check(&read).await?;
                    if let Some(message) = self.mismatch(&read, &checked).await? {
                        if !preview {
                            return Err(ProviderError::failed(message));
                        }
                        engine.warn(Some(&urn), message);
                    }
                    Ok(self.adopted(read, checked))
                };
                engine
                    .journaled(
                        OperationKind::Importing,
                        &self.state,
                        PartialRecord::default(),
                        work,
                    )
                    .await
            })
            .await?;
        if let Some((i, old)) = &self.old {
            engine.plan().pending_deletes.push(*i);
            ReplaceStep::new(engine, old, &done, vec![], vec![])
                .apply(engine)
                .await?;
        }
        engine.record(&done);
        Ok(done)
    }

    /// Reads the resource by its import ID; it must exist.
    async fn read(&self) -> Result<ReadResult, ProviderError> {
        let urn = &self.state.urn;
        let read = self
            .provider
            .read(ReadRequest {
                urn: urn.clone(),
                id: self.import_id.clone(),
                inputs: PropertyMap::new(),
                state: PropertyMap::new(),
            })
            .await?;
        accept_read(&*self.provider, urn, &read).map_err(ProviderError::failed)?;
        if read.id.is_empty() {
            // Pulumi's wording.
            return Err(ProviderError::failed(format!(
                "resource '{}' does not exist",
                self.import_id
            )));
        }
        Ok(read)
    }

    /// A planned import's inputs: those read (only the named properties, if any), checked
    /// with the provider; Check's failures are warnings (as in Pulumi: the import goes on, and
    /// the generated code needs editing), and its answer is not kept.
    async fn planned_inputs(
        &self,
        engine: &Engine,
        planned: &PlannedImport,
        read: &ReadResult,
    ) -> Result<PropertyMap, ProviderError> {
        let inputs: PropertyMap = if planned.properties.is_empty() {
            read.inputs.clone()
        } else {
            read.inputs
                .iter()
                .filter(|(key, _)| planned.properties.contains(key))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        };
        let checked = self
            .provider
            .check(CheckRequest {
                urn: &self.state.urn,
                olds: &read.inputs,
                news: &inputs,
                random_seed: &[],
            })
            .await?;
        if !checked.failures.is_empty() {
            let advice = if planned.properties.is_empty() {
                format!(
                    "This is almost certainly a bug in the `{}` provider.",
                    self.state.resource_type.package()
                )
            } else {
                "Try specifying a different set of properties to import with in the future."
                    .to_owned()
            };
            let urn = &self.state.urn;
            engine.warn(
                Some(urn),
                format!(
                    "One or more imported inputs failed to validate. {advice} The import will still proceed, but you will need to edit the generated code after copying it into your program."
                ),
            );
            for failure in &checked.failures {
                engine.warn(
                    Some(urn),
                    format!("{}: {}", failure.property, failure.reason),
                );
            }
        }
        Ok(inputs)
    }

    /// A planned import's adopted state: `inputs` as read and the outputs read, recorded
    /// without an import ID (as Pulumi records what `pulumi import` adopted: the program
    /// written from it needs no `import` option).
    fn adopted_as_read(
        &self,
        read: ReadResult,
        inputs: PropertyMap,
    ) -> (ResourceState, Vec<Mutation>) {
        let mut done = self.state.clone();
        done.id = Some(read.id);
        done.outputs = secure_outputs(read.outputs, &inputs, &done.additional_secret_outputs);
        done.inputs = inputs;
        done.import_id = None;
        (done.clone(), vec![Mutation::Append(done)])
    }

    /// Checks the program's inputs against what was read (ignored properties keep their
    /// actual values); failures fail the import.
    async fn check(&self, read: &ReadResult) -> Result<PropertyMap, ProviderError> {
        let mut desired = PropertyValue::Object(Box::new(self.inputs.clone()));
        let actual = PropertyValue::Object(Box::new(read.inputs.clone()));
        for path in &self.ignore_changes {
            path.reset(&actual, &mut desired);
        }
        let desired = match desired {
            PropertyValue::Object(m) => m,
            _ => Box::default(),
        };
        let checked = self
            .provider
            .check(CheckRequest {
                urn: &self.state.urn,
                olds: &read.inputs,
                news: &desired,
                random_seed: &[],
            })
            .await?;
        if !checked.failures.is_empty() {
            let reasons: Vec<String> = checked
                .failures
                .iter()
                .map(|f| format!("{}: {}", f.property, f.reason))
                .collect();
            return Err(ProviderError::failed(format!(
                "the imported resource's inputs are invalid: {}",
                reasons.join("; ")
            )));
        }
        Ok(checked.inputs)
    }

    /// Why the program's checked inputs differ from the imported resource's actual state, per
    /// the provider's Diff; `None` when they match.
    async fn mismatch(
        &self,
        read: &ReadResult,
        checked: &PropertyMap,
    ) -> Result<Option<String>, ProviderError> {
        let diff = self
            .provider
            .diff(DiffRequest {
                urn: &self.state.urn,
                id: &read.id,
                old_inputs: &read.inputs,
                old_outputs: &read.outputs,
                news: checked,
                ignore_changes: &self.ignore_changes,
            })
            .await?;
        let differs = match diff.changes {
            DiffChanges::None => false,
            DiffChanges::Some => true,
            DiffChanges::Unknown => &read.inputs != checked,
        };
        if !differs {
            return Ok(None);
        }
        let keys = if diff.changed_keys.is_empty() {
            diff_properties(&read.inputs, checked)
                .iter()
                .map(|c| c.path.to_string())
                .collect()
        } else {
            diff.changed_keys
        };
        Ok(Some(format!(
            "the program's inputs for the imported resource differ from its actual state ({}); change the program to match",
            keys.join(", ")
        )))
    }

    /// The adopted state and its journal effects (the replaced copy marked for deletion).
    fn adopted(&self, read: ReadResult, checked: PropertyMap) -> (ResourceState, Vec<Mutation>) {
        let mut done = self.state.clone();
        done.id = Some(read.id);
        done.inputs = checked;
        crate::value::restore_secrets(&mut done.inputs, &self.inputs);
        done.outputs = secure_outputs(read.outputs, &done.inputs, &done.additional_secret_outputs);
        done.import_id = recorded_import_id(&done, &self.import_id);
        let mut mutations = vec![Mutation::Append(done.clone())];
        if let Some((i, old)) = &self.old {
            let mut doomed = ResourceState::clone(old);
            doomed.delete = true;
            mutations.push(Mutation::ReplaceBase(*i, doomed));
        }
        (done, mutations)
    }
}

/// Adopts the resource an interrupted create may have made, by the ID the user gives: the
/// provider reads it, and it is recorded with the inputs the create was given.
pub(crate) struct PendingCreateImport<'a> {
    pub pending: &'a ResourceState,
    pub id: &'a str,
}

impl PendingCreateImport<'_> {
    pub async fn apply(self, engine: &Engine) -> Result<(), MonitorError> {
        let PendingCreateImport { pending, id } = self;
        let urn = &pending.urn;
        let fail = |message: String| {
            err(format!(
                "cannot import the pending create of {urn} as {id:?}: {message}"
            ))
        };
        crate::limits::check_len("ID", id, crate::limits::MAX_ID_BYTES)
            .map_err(|e| fail(e.to_string()))?;
        let live = |target: &Urn| engine.plan().live.contains_key(target);
        if let Some(parent) = pending.parent.as_ref().filter(|p| !live(p)) {
            return Err(fail(format!("its parent {parent} is not in the state")));
        }
        let provider = engine
            .provider_for_old(pending)
            .await
            .map_err(fail)?
            .ok_or_else(|| fail("it is not a custom resource".to_owned()))?;
        let mut info = engine.step_info(StepOp::Import, pending);
        // Read as a refresh reads (as Pulumi does once it has set the ID): with what the create
        // was given, which some providers need to read at all (a dynamic provider finds its
        // code there).
        let read = engine
            .checked_read(
                &*provider,
                ReadRequest {
                    urn: urn.clone(),
                    id: id.to_owned(),
                    inputs: pending.inputs.clone(),
                    state: pending.outputs.clone(),
                },
            )
            .await?
            .map_err(|e| fail(e.to_string()))?;
        if read.id.is_empty() {
            return Err(fail(format!(
                "{} found no such resource",
                provider.describe()
            )));
        }
        let mut state = pending.clone();
        // What the create was given stays its inputs unless the provider says otherwise.
        if !read.inputs.is_empty() {
            state.inputs = read.inputs;
            crate::value::restore_secrets(&mut state.inputs, &pending.inputs);
        }
        // References to what is no longer in the state are dropped, so the state stays whole.
        state.dependencies.retain(|d| live(d));
        for targets in state.property_dependencies.values_mut() {
            targets.retain(|d| live(d));
        }
        state.deleted_with = state.deleted_with.filter(|d| live(d));
        state.id = Some(read.id);
        state.outputs = secure_outputs(
            read.outputs,
            &state.inputs,
            &state.additional_secret_outputs,
        );
        state.import_id = recorded_import_id(&state, id);
        info.new = Some(step_state(&state));
        engine.finish_instantly(info);
        engine.apply(vec![Mutation::Append(state)])
    }
}

/// The import ID `state` records: `id`, unless it is a secret — the plaintext of a secret the
/// resource holds (a `RandomPassword` imported by its value) — which is never stored in plain
/// text: then none, and a later registration with the same `import` option recognises the
/// resource by that secret ([`is_secret_of`]) instead.
pub(crate) fn recorded_import_id(state: &ResourceState, id: &str) -> Option<String> {
    (!is_secret_of(state, id)).then(|| id.to_owned())
}

/// Whether `id` is the plaintext of a secret in `state`'s inputs or outputs.
pub(crate) fn is_secret_of(state: &ResourceState, id: &str) -> bool {
    fn holds(value: &PropertyValue, id: &str, secret: bool) -> bool {
        match value {
            PropertyValue::String(s) => secret && s == id,
            PropertyValue::Secret(inner) => holds(inner, id, true),
            PropertyValue::Output(o) => o
                .value
                .as_deref()
                .is_some_and(|v| holds(v, id, secret || o.secret)),
            PropertyValue::Array(items) => items.iter().any(|v| holds(v, id, secret)),
            PropertyValue::Object(map) => map.iter().any(|(_, v)| holds(v, id, secret)),
            _ => false,
        }
    }
    !id.is_empty()
        && [&state.inputs, &state.outputs]
            .iter()
            .any(|map| map.iter().any(|(_, v)| holds(v, id, false)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::urn::TypeToken;

    #[test]
    fn a_secret_import_id_is_not_recorded() {
        let urn =
            Urn::parse("urn:pulumi:s::p::random:index/randomPassword:RandomPassword::pw").unwrap();
        let mut state = ResourceState::new(
            urn,
            TypeToken::parse("random:index/randomPassword:RandomPassword").unwrap(),
            true,
        );
        state.outputs.insert(
            "result".into(),
            PropertyValue::Secret(Box::new(PropertyValue::String("hunter2!".into()))),
        );
        state
            .outputs
            .insert("length".into(), PropertyValue::String("8".into()));
        assert_eq!(recorded_import_id(&state, "hunter2!"), None);
        // A plain value equal to the ID is no secret; neither is an ID the state lacks.
        assert_eq!(recorded_import_id(&state, "8").as_deref(), Some("8"));
        assert_eq!(
            recorded_import_id(&state, "other").as_deref(),
            Some("other")
        );
    }
}
