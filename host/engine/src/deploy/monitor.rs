//! The resource monitor: the handle programs (and component providers in `Construct`/`Call`)
//! register resources with. There is one per deployment; clones share it.

use std::sync::Arc;

use crate::urn::Urn;
use crate::value::PropertyMap;

use super::engine::Engine;
use super::program::{
    ProgramCallRequest, ProgramInvokeRequest, ReadResourceRequest, ReadResourceResponse,
    RegisterResourceRequest, RegisterResourceResponse,
};
use super::provider::{CallResult, InvokeResult};

/// A handle to the deployment's resource monitor.
#[derive(Clone)]
pub struct Monitor {
    engine: Arc<Engine>,
}

/// Why a monitor request failed; the message names the resource at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct MonitorError {
    pub message: String,
}

impl Monitor {
    pub(crate) fn new(engine: Arc<Engine>) -> Monitor {
        Monitor { engine }
    }

    pub fn project(&self) -> &str {
        &self.engine.options.project
    }

    pub fn stack(&self) -> &str {
        &self.engine.options.stack
    }

    /// True in a preview: outputs of resources not yet created are unknown.
    pub fn is_preview(&self) -> bool {
        self.engine.options.preview
    }

    /// The URN of the stack's root resource, the default parent.
    pub fn root_urn(&self) -> &Urn {
        &self.engine.root_urn
    }

    /// The stack's configuration (`namespace:key` → value).
    pub fn config(&self) -> &indexmap::IndexMap<String, crate::value::PropertyValue> {
        &self.engine.options.config
    }

    /// Declares a resource; completes when its steps have run.
    pub async fn register_resource(
        &self,
        request: RegisterResourceRequest,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        self.engine.register_resource(request).await
    }

    /// Sets the outputs of a component (or of the root stack: the stack outputs).
    pub fn register_resource_outputs(
        &self,
        urn: &Urn,
        outputs: PropertyMap,
    ) -> Result<(), MonitorError> {
        self.engine.register_outputs(urn, outputs)
    }

    /// Reads an external resource.
    pub async fn read_resource(
        &self,
        request: ReadResourceRequest,
    ) -> Result<ReadResourceResponse, MonitorError> {
        self.engine.read_resource(request).await
    }

    /// Calls a provider function.
    pub async fn invoke(
        &self,
        request: ProgramInvokeRequest,
    ) -> Result<InvokeResult, MonitorError> {
        self.engine.invoke(request).await
    }

    /// Calls a component method.
    pub async fn call(&self, request: ProgramCallRequest) -> Result<CallResult, MonitorError> {
        self.engine.call(request).await
    }
}
