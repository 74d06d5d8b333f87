//! The engine's resource monitor, for `construct` (register children, set outputs).
//!
//! Outside a component (native unit tests) these return an error.

use crate::error::{Error, Result};
use crate::provider::Dependencies;
use crate::value::PropertyMap;

/// A child resource to register.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RegisterResource {
    pub resource_type: String,
    pub name: String,
    /// True for a custom resource, false for a component.
    pub custom: bool,
    pub parent: Option<String>,
    pub inputs: PropertyMap,
    pub property_dependencies: Dependencies,
    pub dependencies: Vec<String>,
    /// A provider reference (`<urn>::<id>`).
    pub provider: Option<String>,
    pub protect: bool,
}

/// A registered resource, after its steps have run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Registered {
    pub urn: String,
    pub id: Option<String>,
    pub outputs: PropertyMap,
}

/// Registers a child resource; returns when its steps have run.
pub fn register_resource(request: &RegisterResource) -> Result<Registered> {
    #[cfg(target_family = "wasm")]
    {
        use crate::bindings::cairn::deploy::engine as wit;
        use crate::wire;
        let response = wit::register_resource(&wit::RegisterResourceRequest {
            resource_type: request.resource_type.clone(),
            name: request.name.clone(),
            custom: request.custom,
            parent: request.parent.clone(),
            inputs: wire::encode_map(&request.inputs),
            property_dependencies: crate::export::dependencies_to_wit(
                &request.property_dependencies,
            ),
            dependencies: request.dependencies.clone(),
            provider: request.provider.clone(),
            protect: request.protect,
        })
        .map_err(Error::failed)?;
        Ok(Registered {
            urn: response.urn,
            id: response.id,
            outputs: wire::decode_map(response.outputs)?,
        })
    }
    #[cfg(not(target_family = "wasm"))]
    {
        let _ = request;
        Err(native())
    }
}

/// Sets a component's outputs.
pub fn register_resource_outputs(urn: &str, outputs: &PropertyMap) -> Result<()> {
    #[cfg(target_family = "wasm")]
    {
        use crate::bindings::cairn::deploy::engine as wit;
        wit::register_resource_outputs(urn, &crate::wire::encode_map(outputs))
            .map_err(Error::failed)
    }
    #[cfg(not(target_family = "wasm"))]
    {
        let _ = (urn, outputs);
        Err(native())
    }
}

#[cfg(not(target_family = "wasm"))]
fn native() -> Error {
    Error::failed("the engine is only reachable from inside a component")
}
