//! The program contract: what a program sends the resource monitor, and what it gets back.
//!
//! A program (wasm component, SDK program over gRPC, or in-process test program) runs against a
//! [`Monitor`](super::monitor::Monitor) and registers resources; each registration completes when
//! the resource's steps have run, so independent registrations proceed in parallel.
//!
//! A program may also hand the monitor transforms ([`ResourceTransform`], [`InvokeTransform`]):
//! callbacks into the program that the monitor runs on a registration (or an invoke) before
//! admitting it.

use std::sync::Arc;

use async_trait::async_trait;
use indexmap::IndexMap;

use crate::state::CustomTimeouts;
use crate::urn::{TypeToken, Urn};
use crate::value::{PropertyDependencies, PropertyMap};

/// A program that declares resources.
#[async_trait]
pub trait Program: Send + Sync {
    /// Runs the program to completion against `monitor`.
    async fn run(&self, monitor: super::monitor::Monitor) -> Result<(), ProgramError>;
}

/// A program failed: an error it reported, or a failed registration it did not handle.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProgramError {
    pub message: String,
}

impl ProgramError {
    pub fn new(message: impl Into<String>) -> ProgramError {
        ProgramError {
            message: message.into(),
        }
    }
}

impl From<super::monitor::MonitorError> for ProgramError {
    fn from(e: super::monitor::MonitorError) -> Self {
        ProgramError::new(e.to_string())
    }
}

/// A previous identity of a resource, so that renames, reparenting and retyping keep its state.
#[derive(Debug, Clone, PartialEq)]
pub enum Alias {
    /// The full old URN.
    Urn(Urn),
    /// The old URN built from parts; unset parts default to the resource's current ones.
    Spec {
        name: Option<String>,
        resource_type: Option<TypeToken>,
        /// `Some(None)` means "had no parent"; `None` means "same parent as now".
        parent: Option<Option<Urn>>,
        stack: Option<String>,
        project: Option<String>,
    },
}

/// Resource options, as the programming model defines them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceOptions {
    pub protect: bool,
    pub retain_on_delete: bool,
    pub deleted_with: Option<Urn>,
    /// `dependsOn`: explicit dependencies beyond those carried by inputs.
    pub depends_on: Vec<Urn>,
    /// An explicit provider reference (`<urn>::<id>`).
    pub provider: Option<String>,
    /// Provider references per package, for components' children.
    pub providers: IndexMap<String, String>,
    pub aliases: Vec<Alias>,
    /// Property paths whose changes are ignored.
    pub ignore_changes: Vec<String>,
    /// Property paths whose changes force replacement.
    pub replace_on_changes: Vec<String>,
    /// `Some(true)` forces delete-before-replace.
    pub delete_before_replace: Option<bool>,
    pub additional_secret_outputs: Vec<String>,
    pub custom_timeouts: Option<CustomTimeouts>,
    /// `import`: the ID of an existing resource to adopt.
    pub import_id: Option<String>,
    /// The provider package version to use.
    pub version: Option<String>,
    /// `pluginDownloadURL`: where the provider package can be fetched when it is not installed
    /// (the resource option, or the `server` a Pulumi SDK package declares).
    pub plugin_download_url: Option<String>,
    /// `transforms`: callbacks run on this resource's registration and on its children's.
    pub transforms: Vec<Transform>,
    /// `hooks`: the program's hooks, by the names it registered them under, run around this
    /// resource's create, update and delete ([`super::hooks`]). Boxed, and none without
    /// hooks: a registration carries its options while it waits, and most have none.
    pub hooks: Option<Box<super::hooks::HookBinding>>,
    /// `stateMigrations`: run in order on the prior state of this resource and its
    /// descendants before it is diffed ([`super::migrations`]).
    pub state_migrations: Vec<super::migrations::Migration>,
}

/// `RegisterResource`: declares a resource and its desired state.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisterResourceRequest {
    pub resource_type: TypeToken,
    pub name: String,
    /// A custom resource (managed by a provider) rather than a component.
    pub custom: bool,
    /// A component implemented by a provider (dispatched to `Construct`).
    pub remote: bool,
    pub parent: Option<Urn>,
    pub inputs: PropertyMap,
    /// The resources each input property depends on.
    pub property_dependencies: PropertyDependencies,
    pub options: ResourceOptions,
}

impl RegisterResourceRequest {
    /// A custom resource with no options.
    pub fn custom(resource_type: TypeToken, name: impl Into<String>, inputs: PropertyMap) -> Self {
        RegisterResourceRequest {
            resource_type,
            name: name.into(),
            custom: true,
            remote: false,
            parent: None,
            inputs,
            property_dependencies: Default::default(),
            options: ResourceOptions::default(),
        }
    }

    /// A local component with no options.
    pub fn component(resource_type: TypeToken, name: impl Into<String>) -> Self {
        RegisterResourceRequest {
            custom: false,
            ..RegisterResourceRequest::custom(resource_type, name, PropertyMap::new())
        }
    }
}

/// The result of a registration: the resource's identity and state.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisterResourceResponse {
    pub urn: Urn,
    /// The provider-assigned ID (custom resources); empty during a preview of a create.
    pub id: Option<String>,
    /// Output properties; unknowns stand for values not known until an update.
    pub outputs: PropertyMap,
    /// The resources each output property depends on (components built by `Construct`).
    pub property_dependencies: PropertyDependencies,
}

/// `ReadResource`: reads an existing resource the stack does not manage.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadResourceRequest {
    pub resource_type: TypeToken,
    pub name: String,
    pub id: String,
    pub parent: Option<Urn>,
    /// Properties that help the provider find the resource.
    pub properties: PropertyMap,
    pub dependencies: Vec<Urn>,
    pub provider: Option<String>,
    pub version: Option<String>,
    pub additional_secret_outputs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReadResourceResponse {
    pub urn: Urn,
    pub outputs: PropertyMap,
}

/// `Invoke`: calls a provider function.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramInvokeRequest {
    pub token: String,
    pub args: PropertyMap,
    pub provider: Option<String>,
    pub version: Option<String>,
}

/// `Call`: calls a method of a component resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramCallRequest {
    pub token: String,
    pub args: PropertyMap,
    pub arg_dependencies: PropertyDependencies,
    pub provider: Option<String>,
    pub version: Option<String>,
}

/// A transform: a function of the program the monitor runs on a registration before admitting
/// it (`transforms` resource option, `RegisterStackTransform`). What it returns is untrusted
/// like anything else the program sends: it is checked as the registration would be.
#[async_trait]
pub trait ResourceTransform: Send + Sync {
    /// Names the callback in errors (`transform 1b2c… at 127.0.0.1:4000`).
    fn describe(&self) -> String;

    /// The transformed inputs and options; the registration's identity stays as it was.
    async fn transform(&self, request: TransformRequest) -> Result<Transformed, String>;
}

/// What a transform is asked to transform.
#[derive(Debug, Clone, PartialEq)]
pub struct TransformRequest {
    pub resource_type: TypeToken,
    pub name: String,
    pub custom: bool,
    pub parent: Option<Urn>,
    /// The inputs; those with dependencies are output values carrying them (when the
    /// registration brought transforms of its own, as Pulumi does).
    pub inputs: PropertyMap,
    /// The options (without transforms).
    pub options: ResourceOptions,
}

/// A transform's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Transformed {
    pub inputs: PropertyMap,
    pub options: ResourceOptions,
}

/// A transform handed to the monitor; equal only to itself.
#[derive(Clone)]
pub struct Transform(pub Arc<dyn ResourceTransform>);

impl PartialEq for Transform {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for Transform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.describe())
    }
}

/// An invoke transform: a function of the program the monitor runs on every invoke
/// (`RegisterStackInvokeTransform`) before resolving its provider.
#[async_trait]
pub trait InvokeTransform: Send + Sync {
    fn describe(&self) -> String;

    /// The transformed arguments, provider and version; the token stays as it was.
    async fn transform(
        &self,
        request: ProgramInvokeRequest,
    ) -> Result<ProgramInvokeRequest, String>;
}
