//! The `refresh` step: the provider reads a recorded resource; drift becomes an `update` of
//! the state, a resource deleted out of band a `discard`.

use crate::state::ResourceState;

use super::super::engine::{Engine, err};
use super::super::events::{EngineEvent, Severity, StepOp};
use super::super::generator::diff::diff_properties;
use super::super::journal::BaseIndex;
use super::super::monitor::MonitorError;
use super::super::provider::{ReadRequest, ReadResult};
use super::{secure_outputs, step_state};

/// What a refresh found for one resource.
pub(crate) enum Refreshed {
    Unchanged,
    Drifted(Box<ResourceState>),
    /// Deleted out of band.
    Gone,
}

/// Reads base entry `index` from its provider.
pub(crate) struct RefreshStep {
    pub index: BaseIndex,
}

impl RefreshStep {
    pub async fn apply(self, engine: &Engine) -> Result<Refreshed, MonitorError> {
        let resource = engine.base().resources[self.index].clone();
        let provider = engine
            .provider_for_old(&resource)
            .await
            .map_err(|e| err(format!("cannot refresh {}: {e}", resource.urn)))?;
        let Some(provider) = provider else {
            return Ok(Refreshed::Unchanged);
        };
        let read = engine
            .checked_read(
                &*provider,
                ReadRequest {
                    urn: resource.urn.clone(),
                    id: resource.id.clone().unwrap_or_default(),
                    inputs: resource.inputs.clone(),
                    state: resource.outputs.clone(),
                },
            )
            .await?;
        let mut info = engine.step_info(StepOp::Refresh, &resource);
        info.old = Some(step_state(&resource));
        let read = match read {
            Ok(read) => read,
            Err(e) => {
                let message = format!("refreshing {} failed: {e}", resource.urn);
                engine.emit(EngineEvent::StepFailed {
                    step: info,
                    error: e.to_string(),
                    duration: std::time::Duration::ZERO,
                });
                engine.note_failure(&resource.urn, StepOp::Refresh, message.clone());
                return Err(err(message));
            }
        };
        if read.id.is_empty() {
            info.op = StepOp::Discard;
            engine.emit(EngineEvent::Diagnostic {
                severity: Severity::Info,
                urn: Some(resource.urn.clone()),
                message: format!(
                    "{} no longer exists; it is removed from the state",
                    resource.urn
                ),
            });
            engine.finish_instantly(info);
            return Ok(Refreshed::Gone);
        }
        let refreshed = refreshed_state(&resource, read);
        info.changes = diff_properties(&resource.outputs, &refreshed.outputs);
        info.new = Some(step_state(&refreshed));
        let drifted = !info.changes.is_empty() || refreshed.inputs != resource.inputs;
        if drifted {
            info.op = StepOp::Update;
        }
        engine.finish_instantly(info);
        Ok(if drifted {
            Refreshed::Drifted(Box::new(refreshed))
        } else {
            Refreshed::Unchanged
        })
    }
}

/// `resource` as its provider read it: the read ID and outputs, and the read inputs when the
/// provider returned any (keeping the secretness of the recorded ones).
fn refreshed_state(resource: &ResourceState, read: ReadResult) -> ResourceState {
    let mut refreshed = resource.clone();
    refreshed.id = Some(read.id);
    if !read.inputs.is_empty() {
        refreshed.inputs = read.inputs;
        crate::value::restore_secrets(&mut refreshed.inputs, &resource.inputs);
    }
    refreshed.outputs = secure_outputs(
        read.outputs,
        &refreshed.inputs,
        &refreshed.additional_secret_outputs,
    );
    refreshed
}
