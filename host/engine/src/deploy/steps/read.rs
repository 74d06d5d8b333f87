//! The `read` and `read-replacement` steps: the provider reads an external resource by ID and
//! its state is recorded as external (never deleted by the stack).

use std::sync::Arc;

use crate::state::ResourceState;
use crate::value::PropertyMap;

use super::super::admission::accept_read;
use super::super::engine::Engine;
use super::super::events::StepOp;
use super::super::journal::{BaseIndex, Mutation};
use super::super::monitor::MonitorError;
use super::super::provider::{Provider, ReadRequest};
use super::{secure_outputs, step_state};

/// Reads the resource `state` names (its ID set) through `provider`, with the `properties`
/// the program gave; `old` is the claimed state at that URN, if any.
pub(crate) struct ReadStep<'a> {
    pub state: ResourceState,
    pub properties: PropertyMap,
    pub provider: Arc<dyn Provider>,
    pub old: Option<(BaseIndex, &'a ResourceState)>,
}

impl ReadStep<'_> {
    pub async fn apply(self, engine: &Engine) -> Result<ResourceState, MonitorError> {
        let ReadStep {
            state: pending,
            properties,
            provider,
            old,
        } = self;
        let urn = pending.urn.clone();
        let id = pending.id.clone().unwrap_or_default();
        // Reading over a resource the stack managed replaces it.
        let op = match &old {
            Some((_, o)) if !o.external => StepOp::ReadReplacement,
            _ => StepOp::Read,
        };
        let mut info = engine.step_info(op, &pending);
        info.old = old.as_ref().map(|(_, o)| step_state(o));
        let done = engine
            .run_step_to(info, true, async {
                let read = engine
                    .provider_operation(provider.read(ReadRequest {
                        urn: urn.clone(),
                        id: id.clone(),
                        inputs: properties.clone(),
                        state: properties.clone(),
                    }))
                    .await?
                    .map_err(|e| e.to_string())?;
                accept_read(&*provider, &urn, &read)?;
                if read.id.is_empty() {
                    return Err(format!("there is no resource with ID {id:?}").into());
                }
                let mut done = pending.clone();
                done.id = Some(read.id);
                done.inputs = if read.inputs.is_empty() {
                    properties.clone()
                } else {
                    read.inputs
                };
                done.outputs =
                    secure_outputs(read.outputs, &done.inputs, &done.additional_secret_outputs);
                Ok(done)
            })
            .await?;
        let mut mutations = vec![Mutation::Append(done.clone())];
        match old {
            Some((i, o)) if !o.external => {
                let mut doomed = o.clone();
                doomed.delete = true;
                mutations.push(Mutation::ReplaceBase(i, doomed));
                engine.plan().pending_deletes.push(i);
            }
            Some((i, _)) => mutations.push(Mutation::RemoveBase(i)),
            None => {}
        }
        engine.apply(mutations)?;
        engine.record(&done);
        Ok(done)
    }
}
