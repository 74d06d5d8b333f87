//! The steps: the vocabulary the step generator speaks to the step executor, one type per step
//! kind, each with its journaled `apply`.
//!
//! | step (spec)            | type                        | [`StepOp`]s it reports                      |
//! |------------------------|-----------------------------|---------------------------------------------|
//! | same                   | [`same::SameStep`]          | `same`                                      |
//! | create                 | [`create::CreateStep`]      | `create`                                    |
//! | create-replacement     | [`create::CreateStep`]      | `create-replacement`                        |
//! | update                 | [`update::UpdateStep`]      | `update`                                    |
//! | replace (logical)      | [`replace::ReplaceStep`]    | `replace`                                   |
//! | delete, delete-replaced| [`delete::DeleteStep`]      | `delete`, `delete-replaced`, `discard`      |
//! | delete-replaced (DBR)  | [`delete::DeleteBeforeReplaceStep`] | `delete-replaced`                   |
//! | read                   | [`read::ReadStep`]          | `read`, `read-replacement`                  |
//! | import                 | [`import::ImportStep`]      | `import`, `import-replacement`              |
//! | refresh                | [`refresh::RefreshStep`]    | `refresh`, `update` (drift), `discard` (gone)|
//! | remove-pending-replace | [`create::CreateStep`] / [`delete::DeleteStep`] | (none)              |
//!
//! Pulumi's remove-pending-replace has no step of its own here: the re-creation of a resource
//! deleted ahead of its replacement removes the `pendingReplacement` copy in the same journal
//! record that appends the replacement (`supersedes`), and a copy deleted ahead of a
//! replacement that nobody re-registers (`pendingReplacement` from an earlier deployment, or a
//! dependent deleted in this one) leaves the state with the deletions, without a provider call
//! and without a step to show, as in Pulumi.
//!
//! A step with a provider operation runs through [`Engine::run_step`] (a parallelism permit,
//! started/finished/failed events, the tally, cancellation on failure) and
//! [`Engine::journaled`] (begin record durable before the provider is called). A step without
//! one reports itself finished at once ([`Engine::finish_instantly`]).
//!
//! [`Engine::run_step`]: super::engine::Engine::run_step
//! [`Engine::journaled`]: super::engine::Engine::journaled
//! [`Engine::finish_instantly`]: super::engine::Engine::finish_instantly
//!
//! # A resource that exists is tracked
//!
//! When a create or update succeeded but its result cannot be recorded (outputs that cannot be
//! stored, a partial state), the resource is recorded with its ID, the outputs that can be stored
//! and an `initErrors` entry, in place of what it supersedes (never as a second copy), and the step
//! fails; the next update re-runs it. Only an ID that cannot be stored leaves the operation pending
//! (reported on every command), and a state whose secrets cannot be encrypted is recorded without
//! its outputs.
//!
//! # Identical `same` steps record nothing
//!
//! Their state stays in place in the base; only changed states are appended. A no-change update
//! writes just the final checkpoint.

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod import;
pub(crate) mod read;
pub(crate) mod refresh;
pub(crate) mod replace;
pub(crate) mod same;
pub(crate) mod update;

use crate::state::{CustomTimeouts, ResourceState};
use crate::value::{PropertyMap, PropertyValue};

use super::events::{StepOp, StepState};
use super::provider::DeleteRequest;

#[cfg(doc)]
use super::engine::Engine;

/// The secret-ness rules for outputs: what the provider returned from secret inputs stays
/// secret ([`crate::value::restore_secrets`]), copies of secret inputs are secret
/// ([`crate::value::mark_secret_copies`]), and so is every output listed in
/// `additionalSecretOutputs`.
pub(crate) fn secure_outputs(
    mut outputs: PropertyMap,
    inputs: &PropertyMap,
    additional: &[String],
) -> PropertyMap {
    crate::value::restore_secrets(&mut outputs, inputs);
    crate::value::mark_secret_copies(&mut outputs, inputs);
    for key in additional {
        if let Some(value) = outputs.get_mut(key)
            && !value.is_secret()
        {
            *value = PropertyValue::secret(std::mem::take(value));
        }
    }
    outputs
}

/// A custom timeout in seconds (0: none set).
pub(crate) fn timeout_of(
    timeouts: Option<&CustomTimeouts>,
    pick: fn(&CustomTimeouts) -> f64,
) -> f64 {
    timeouts.map(pick).unwrap_or(0.0)
}

/// A resource's state as step events show it.
pub(crate) fn step_state(resource: &ResourceState) -> StepState {
    StepState::new(resource.clone())
}

/// The provider's `Delete` of a recorded resource.
pub(crate) fn delete_request(resource: &ResourceState) -> DeleteRequest {
    DeleteRequest {
        urn: resource.urn.clone(),
        id: resource.id.clone().unwrap_or_default(),
        inputs: resource.inputs.clone(),
        outputs: resource.outputs.clone(),
        timeout: timeout_of(resource.custom_timeouts.as_deref(), |t| t.delete),
    }
}

/// A step kind that replaces a resource when `replacing`.
pub(crate) fn replacement_op(replacing: bool, op: StepOp, replacement: StepOp) -> StepOp {
    if replacing { replacement } else { op }
}

/// The current time as the state records it (`created`, `modified`).
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}
