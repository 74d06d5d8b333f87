//! The `read` and `read-replacement` steps: the provider reads an external resource by ID and
//! its state is recorded as external (never deleted by the stack). Reading a resource the stack
//! manages by its own ID relinquishes it: the stack stops managing it but does not delete it,
//! protected or not (Pulumi's `read_relinquish`).

use std::sync::Arc;

use crate::state::ResourceState;
use crate::value::PropertyMap;

use super::super::admission::accept_read;
use super::super::engine::Engine;
use super::super::events::StepOp;
use super::super::journal::{BaseIndex, Mutation};
use super::super::monitor::MonitorError;
use super::super::provider::{Provider, ReadRequest};
use super::{now, secure_outputs, step_state};

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
        // Reading over a resource the stack managed replaces it, unless the read names that
        // very resource: then the stack lets go of it and nothing is deleted.
        let replacing = old
            .as_ref()
            .is_some_and(|(_, o)| !o.external && o.id.as_deref() != Some(id.as_str()));
        let op = if replacing {
            StepOp::ReadReplacement
        } else {
            StepOp::Read
        };
        let mut info = engine.step_info(op, &pending);
        info.old = old.as_ref().map(|(_, o)| step_state(o));
        // Pulumi's summary never counts a read, not even as unchanged; a read that replaces a
        // managed resource counts as one `replace`.
        let done = engine
            .run_step_to(info, false, async {
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
                // The resource keeps its history: `modified` moves only when the read changed it.
                if let Some((_, o)) = &old {
                    done.created = o.created.clone();
                    done.modified = o.modified.clone();
                    if done.inputs != o.inputs || done.outputs != o.outputs {
                        done.modified = Some(now());
                    }
                }
                Ok(done)
            })
            .await?;
        if replacing {
            engine.count(StepOp::Replace, &urn);
        }
        let mut mutations = vec![Mutation::Append(done.clone())];
        match old {
            Some((i, o)) if replacing => {
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
