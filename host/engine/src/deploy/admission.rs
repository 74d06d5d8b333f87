//! What the engine admits from programs and providers: the checks every registration request
//! and every provider result passes before the engine acts on it or records it (limits,
//! storable values, usable IDs), and the wording of refusals.

use crate::urn::Urn;
use crate::value::PropertyMap;

use super::engine::err;
use super::monitor::MonitorError;
use super::monitor::scope::Caller;
use super::program::RegisterResourceRequest;
use super::provider::{PartialState, Provider, ProviderError, ReadResult};

/// Checks what a registration request carries against the engine's limits, before anything
/// else looks at it: name length, input values (finite numbers, key lengths, depth), custom
/// timeouts, the import ID.
pub(super) fn check_request(request: &RegisterResourceRequest) -> Result<(), MonitorError> {
    let what = || {
        format!(
            "registering {} {:?}",
            request.resource_type,
            crate::text::visible_line(&request.name.chars().take(64).collect::<String>())
        )
    };
    crate::limits::check_len(
        "resource name",
        &request.name,
        crate::limits::MAX_NAME_BYTES,
    )
    .map_err(|e| err(format!("{}: {e}", what())))?;
    crate::limits::check_properties(&request.inputs)
        .map_err(|e| err(format!("{}: invalid inputs: {e}", what())))?;
    for key in request.property_dependencies.keys() {
        crate::limits::check_len("property key", key, crate::limits::MAX_KEY_BYTES)
            .map_err(|e| err(format!("{}: propertyDependencies: {e}", what())))?;
    }
    let options = &request.options;
    if let Some(id) = &options.import_id {
        crate::limits::check_len("import ID", id, crate::limits::MAX_ID_BYTES)
            .map_err(|e| err(format!("{}: {e}", what())))?;
        if id.is_empty() {
            return Err(err(format!("{}: the import ID is empty", what())));
        }
    }
    if let Some(timeouts) = &options.custom_timeouts {
        for (name, seconds) in [
            ("create", timeouts.create),
            ("update", timeouts.update),
            ("delete", timeouts.delete),
            ("read", timeouts.read),
        ] {
            if !seconds.is_finite() || seconds < 0.0 {
                return Err(err(format!(
                    "{}: customTimeouts.{name} is {seconds}; it must be a finite number of seconds, 0 or more",
                    what()
                )));
            }
        }
    }
    Ok(())
}

pub(super) fn describe_parent(parent: Option<&Urn>) -> String {
    match parent {
        Some(parent) => parent.to_string(),
        None => "(none)".to_owned(),
    }
}

/// Checks a created or updated resource's result before it is recorded: a usable ID (unless a
/// preview) and outputs that can be stored. A result that fails is turned into an error with
/// partial state, so the resource (which exists) is recorded with what can be kept.
pub(super) fn accept_result(
    provider: &dyn Provider,
    urn: &Urn,
    id: &str,
    outputs: PropertyMap,
    check_id: bool,
) -> Result<PropertyMap, ProviderError> {
    let who = provider.describe();
    if check_id && id.is_empty() {
        return Err(ProviderError::failed(format!(
            "{who} reported {urn} done but returned no ID, so it cannot be tracked; if it exists, delete it with the provider's own tools"
        )));
    }
    if id.len() > crate::limits::MAX_ID_BYTES {
        return Err(ProviderError::Failed {
            message: format!(
                "{who} returned an ID of {} bytes for {urn}; at most {} are allowed",
                id.len(),
                crate::limits::MAX_ID_BYTES
            ),
            partial: Some(Box::new(PartialState {
                id: id.to_owned(),
                ..PartialState::default()
            })),
        });
    }
    let (kept, dropped) = storable_outputs(outputs);
    if dropped.is_empty() {
        return Ok(kept);
    }
    Err(ProviderError::Failed {
        message: format!(
            "{who} returned outputs for {urn} that cannot be recorded: {}",
            dropped.join("; ")
        ),
        partial: Some(Box::new(PartialState {
            id: id.to_owned(),
            outputs: kept,
            ..PartialState::default()
        })),
    })
}

/// Checks what a `read` returned (refresh, import, an external read) before anything uses it:
/// an ID within the limit, inputs and outputs that can be stored. Nothing was changed by the
/// provider, so a bad result is simply an error.
pub(super) fn accept_read(
    provider: &dyn Provider,
    urn: &Urn,
    read: &ReadResult,
) -> Result<(), String> {
    let who = provider.describe();
    crate::limits::check_len("ID", &read.id, crate::limits::MAX_ID_BYTES)
        .map_err(|e| format!("{who} read {urn}: {e}"))?;
    crate::limits::check_properties(&read.inputs)
        .map_err(|e| format!("{who} read {urn}: invalid inputs: {e}"))?;
    crate::limits::check_properties(&read.outputs)
        .map_err(|e| format!("{who} read {urn}: invalid outputs: {e}"))
}

/// The outputs that can be stored: those whose values pass [`crate::limits::check_properties`];
/// and why each other one cannot be.
pub(super) fn storable_outputs(outputs: PropertyMap) -> (PropertyMap, Vec<String>) {
    if crate::limits::check_properties(&outputs).is_ok() {
        return (outputs, vec![]);
    }
    let mut kept = PropertyMap::new();
    let mut dropped = Vec::new();
    for (key, value) in outputs {
        let single: PropertyMap = [(key, value)].into_iter().collect();
        match crate::limits::check_properties(&single) {
            Ok(()) => kept.extend(single),
            Err(e) => dropped.push(e.to_string()),
        }
    }
    (kept, dropped)
}

/// Why a default provider cannot serve `caller`: it is a native plugin found by lookup.
pub(super) fn native_refusal(package: &str, caller: &Caller) -> String {
    let who = match caller.scope() {
        Some(scope) => format!(
            "what the sandboxed provider {} registers in {}",
            scope.provider, scope.method
        ),
        None => "a wasm program".to_owned(),
    };
    format!(
        "package {package:?} resolves to a native plugin found on PATH or in the plugin directory, and {who} may use only wasm providers and native plugins the project names; install a wasm provider for {package:?}, or name the plugin in Pulumi.yaml (plugins: {{providers: [{{name: {package}, path: ...}}]}})"
    )
}
