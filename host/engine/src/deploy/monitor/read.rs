//! `ReadResource`: an external resource read by ID, admitted as the registration of a
//! resource with those references, then read by the [`ReadStep`].

use std::sync::Arc;

use indexmap::IndexMap;

use crate::state::ResourceState;
use crate::value::PropertyMap;

use super::super::admission::check_request;
use super::super::engine::{Engine, err};
use super::super::program::{
    ReadResourceRequest, ReadResourceResponse, RegisterResourceRequest, ResourceOptions,
};
use super::super::steps::read::ReadStep;
use super::MonitorError;
use super::scope::Caller;

impl Engine {
    /// Reads the external resource `request` names and records it.
    pub async fn read_resource(
        self: &Arc<Self>,
        request: ReadResourceRequest,
        caller: &Caller,
    ) -> Result<ReadResourceResponse, MonitorError> {
        self.ensure_running()?;
        request.resource_type.check_member().map_err(|e| {
            err(format!(
                "reading {:?}: {e}",
                crate::text::visible_line(&request.name)
            ))
        })?;
        let parent = match (&request.parent, caller.scope()) {
            (Some(parent), _) => Some(parent.clone()),
            (None, Some(_)) => None,
            (None, None) => Some(self.root_urn.clone()),
        };
        let as_registration = as_registration(&request, parent.clone());
        check_request(&as_registration)?;
        let urn = self.urn_for(parent.as_ref(), &request.resource_type, &request.name)?;
        if let Some(scope) = caller.scope() {
            self.check_in_scope(scope, &urn, parent.as_ref(), &as_registration)?;
        }
        self.check_references(&urn, parent.as_ref(), &as_registration)?;
        let old = self.claim(&urn, vec![], parent.as_ref(), caller)?;
        let package = request.resource_type.package().to_owned();
        let (provider_ref, provider) = self
            .resolve_provider(
                request.provider.as_deref(),
                &IndexMap::new(),
                &package,
                request.version.as_deref(),
                None,
                caller,
            )
            .await?;
        if self.configuring() {
            // Only configuring providers: the recorded state stays, and nothing new is read.
            let outputs = match old {
                Some((_, old)) => {
                    self.record(old);
                    old.outputs.clone()
                }
                None => {
                    self.record(&ResourceState::new(
                        urn.clone(),
                        request.resource_type.clone(),
                        true,
                    ));
                    request.properties
                }
            };
            return Ok(ReadResourceResponse { urn, outputs });
        }
        let mut state = ResourceState::new(urn.clone(), request.resource_type.clone(), true);
        state.parent = parent;
        state.external = true;
        state.provider = Some(provider_ref);
        state.dependencies = request.dependencies.clone();
        state.additional_secret_outputs = request.additional_secret_outputs.clone();
        state.id = Some(request.id.clone());
        let step = ReadStep {
            state,
            properties: request.properties,
            provider,
            old,
        };
        let done = step.apply(self).await?;
        Ok(ReadResourceResponse {
            urn,
            outputs: done.outputs,
        })
    }
}

/// A read checked as the registration of an external resource with its references.
fn as_registration(
    request: &ReadResourceRequest,
    parent: Option<crate::urn::Urn>,
) -> RegisterResourceRequest {
    RegisterResourceRequest {
        parent,
        inputs: request.properties.clone(),
        options: ResourceOptions {
            depends_on: request.dependencies.clone(),
            provider: request.provider.clone(),
            import_id: Some(request.id.clone()),
            ..ResourceOptions::default()
        },
        ..RegisterResourceRequest::custom(
            request.resource_type.clone(),
            request.name.clone(),
            PropertyMap::new(),
        )
    }
}
