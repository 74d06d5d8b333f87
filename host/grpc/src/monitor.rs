//! `pulumirpc.ResourceMonitor` served over the engine's [`Monitor`]: what SDK programs (Python,
//! Node.js) register resources with. Each request is answered when the engine has handled it
//! (a registration: once the resource's steps have run), so a program's concurrent requests
//! deploy in parallel.
//!
//! Features offered through `SupportsFeature` (and `GetDeploymentInfo`): secrets, resource
//! references, alias specs, `deletedWith`, transforms, invoke transforms and resource hooks
//! (run through the program's `Callbacks` service, [`crate::callbacks`]); `GetDeploymentInfo`
//! also lists state migrations, which have no string id. Output values are not offered, so SDKs
//! send plain values with property dependencies alongside. `pulumi:pulumi:getResource` is an
//! invoke the engine answers; `StreamInvoke` (which SDKs before Pulumi 3.161 had) streams the
//! one result of the invoke.
//!
//! Every request is checked before the engine sees it, and refused naming the method, the
//! resource and the field: property values in [`crate::convert`] (finite numbers, keys, depth),
//! and every string that becomes a type, name, URN, ID, key, property path, provider reference
//! or version with [`crate::wire`]. Requests are at most [`wire::max_message_bytes`] long.

use cairn_engine::deploy::monitor::GET_RESOURCE;
use cairn_engine::deploy::monitor::{Monitor, MonitorError, Unregistered};
use cairn_engine::deploy::program::{
    Alias, ProgramCallRequest, ProgramInvokeRequest, ReadResourceRequest, RegisterResourceRequest,
    ResourceOptions,
};
use cairn_engine::limits::cap_message;
use cairn_engine::state::CustomTimeouts;
use cairn_engine::value::{PropertyDependencies, PropertyMap, PropertyValue};
use indexmap::IndexMap;
use tonic::{Request, Response, Status};

use crate::callbacks::Callbacks;
use crate::convert::{ConvertError, Marshal, from_struct, shown, to_struct};
use crate::engine::{EngineService, HealthService, ServeError, Served, serve};
use crate::proto::health::health_server::HealthServer;
use crate::proto::pulumirpc as rpc;
use crate::proto::pulumirpc::engine_server::EngineServer;
use crate::proto::pulumirpc::resource_monitor_server::{ResourceMonitor, ResourceMonitorServer};
use crate::wire::{self, FieldError};

/// The features `SupportsFeature` answers yes to, and the same as `GetDeploymentInfo` lists them.
pub const FEATURES: [(&str, rpc::ResourceMonitorFeature); 7] = [
    ("secrets", rpc::ResourceMonitorFeature::Secrets),
    (
        "resourceReferences",
        rpc::ResourceMonitorFeature::ResourceReferences,
    ),
    ("aliasSpecs", rpc::ResourceMonitorFeature::AliasSpecs),
    ("deletedWith", rpc::ResourceMonitorFeature::DeletedWith),
    ("transforms", rpc::ResourceMonitorFeature::Transforms),
    (
        "invokeTransforms",
        rpc::ResourceMonitorFeature::InvokeTransforms,
    ),
    ("resourceHooks", rpc::ResourceMonitorFeature::ResourceHooks),
];

/// The monitor service of one deployment.
pub struct MonitorService {
    monitor: Monitor,
    parallel: i32,
    failures: std::sync::Arc<Failures>,
    /// The program's `Callbacks` services (transforms).
    callbacks: Callbacks,
}

/// The first request the engine failed, so a launcher can stop a program that does not exit by
/// itself afterwards.
#[derive(Default)]
pub struct Failures {
    first: std::sync::Mutex<Option<String>>,
    notify: tokio::sync::Notify,
}

impl Failures {
    fn record(&self, message: &str) {
        let mut first = self
            .first
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if first.is_none() {
            *first = Some(message.to_owned());
            self.notify.notify_one();
        }
    }

    /// Resolves with the first failure (at once if there was one already).
    pub async fn first(&self) -> String {
        loop {
            let notified = self.notify.notified();
            if let Some(first) = self
                .first
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
            {
                return first;
            }
            notified.await;
        }
    }
}

impl MonitorService {
    pub fn new(monitor: Monitor, parallel: usize, failures: std::sync::Arc<Failures>) -> Self {
        MonitorService {
            monitor,
            parallel: i32::try_from(parallel).unwrap_or(i32::MAX),
            failures,
            callbacks: Callbacks::default(),
        }
    }

    fn failed(&self, e: impl std::fmt::Display) -> Status {
        let message = cap_message(&e.to_string()).into_owned();
        self.failures.record(&message);
        Status::unknown(message)
    }

    /// A request refused before the engine saw it.
    fn refused(&self, request: &str, e: impl std::fmt::Display) -> Status {
        let message = format!("{request}: {e}");
        self.failures.record(&message);
        Status::invalid_argument(message)
    }
}

/// Serves `ResourceMonitor`, `Engine` and `Health` on one loopback port (the SDKs are given
/// the same address for the monitor and the engine).
pub async fn serve_monitor(
    monitor: Monitor,
    parallel: usize,
    events: std::sync::Arc<dyn cairn_engine::deploy::events::EventSink>,
    failures: std::sync::Arc<Failures>,
) -> Result<Served, ServeError> {
    let root = monitor.root_urn().clone();
    let limit = wire::max_message_bytes();
    let router = tonic::transport::Server::builder()
        .add_service(
            ResourceMonitorServer::new(MonitorService::new(monitor, parallel, failures))
                .max_decoding_message_size(limit)
                .max_encoding_message_size(usize::MAX),
        )
        .add_service(
            EngineServer::new(EngineService::new(events, Some(&root)))
                .max_decoding_message_size(limit),
        )
        .add_service(HealthServer::new(HealthService));
    serve("resource monitor", router).await
}

pub(crate) fn optional(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// Property values from a request, refused naming the field (`object`, `args`).
pub(crate) fn properties(
    field: &str,
    value: Option<&prost_types::Struct>,
) -> Result<PropertyMap, FieldError> {
    from_struct(value).map_err(|e: ConvertError| FieldError {
        field: field.to_owned(),
        problem: e.to_string(),
    })
}

/// A map of property keys to URNs (`propertyDependencies`, `argDependencies`).
fn dependency_map(
    field: &str,
    map: impl IntoIterator<Item = (String, Vec<String>)>,
) -> Result<PropertyDependencies, FieldError> {
    let mut out: PropertyDependencies = map
        .into_iter()
        .map(|(k, urns)| {
            wire::key(field, &k)?;
            let urns = wire::urns(&format!("{field}[{:?}]", shown(&k, 64)), &urns)?;
            Ok((k, urns))
        })
        .collect::<Result<_, FieldError>>()?;
    // Protobuf maps arrive in any order.
    out.sort_keys();
    Ok(out)
}

pub(crate) fn optional_version(field: &str, text: String) -> Result<Option<String>, FieldError> {
    let version = optional(text);
    if let Some(v) = &version {
        wire::version(field, v)?;
    }
    Ok(version)
}

pub(crate) fn optional_provider(field: &str, text: String) -> Result<Option<String>, FieldError> {
    let provider = optional(text);
    if let Some(p) = &provider {
        wire::provider_reference(field, p)?;
    }
    Ok(provider)
}

pub(crate) fn each<'a>(
    field: &str,
    texts: impl IntoIterator<Item = &'a String>,
    check: impl Fn(&str, &str) -> Result<(), FieldError>,
) -> Result<(), FieldError> {
    texts
        .into_iter()
        .enumerate()
        .try_for_each(|(i, t)| check(&format!("{field}[{i}]"), t))
}

/// A Go-style duration (`1h30m`, `5m`, `90s`, `1.5h`, `300ms`) in seconds; empty is 0.
pub fn duration_seconds(text: &str) -> Result<f64, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(0.0);
    }
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("{text:?} has a number without a unit"))?;
        let number: f64 = rest[..number_end]
            .parse()
            .map_err(|_| format!("{text:?} is not a duration"))?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            unit => return Err(format!("{text:?} has an unknown unit {unit:?}")),
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    if !total.is_finite() {
        return Err(format!("{:?} is too long a duration", shown(text, 64)));
    }
    Ok(total)
}

pub(crate) fn alias(field: &str, a: rpc::Alias) -> Result<Alias, FieldError> {
    use rpc::alias::spec::Parent;
    match a.alias {
        Some(rpc::alias::Alias::Urn(u)) => Ok(Alias::Urn(wire::urn(&format!("{field}.urn"), &u)?)),
        Some(rpc::alias::Alias::Spec(spec)) => {
            let name = optional(spec.name);
            if let Some(name) = &name {
                wire::name(&format!("{field}.name"), name)?;
            }
            let stack = optional(spec.stack);
            if let Some(stack) = &stack {
                wire::stack_or_project(&format!("{field}.stack"), stack)?;
            }
            let project = optional(spec.project);
            if let Some(project) = &project {
                wire::stack_or_project(&format!("{field}.project"), project)?;
            }
            Ok(Alias::Spec {
                name,
                resource_type: optional(spec.r#type)
                    .map(|t| wire::type_token(&format!("{field}.type"), &t))
                    .transpose()?,
                parent: match spec.parent {
                    None => None,
                    Some(Parent::NoParent(true)) => Some(None),
                    Some(Parent::NoParent(false)) => None,
                    Some(Parent::ParentUrn(p)) if p.is_empty() => None,
                    Some(Parent::ParentUrn(p)) => {
                        Some(Some(wire::urn(&format!("{field}.parentUrn"), &p)?))
                    }
                },
                stack,
                project,
            })
        }
        None => Err(FieldError {
            field: field.to_owned(),
            problem: "an alias has neither a URN nor a spec".to_owned(),
        }),
    }
}

/// Custom timeouts: Go durations, finite.
pub(crate) fn custom_timeouts(
    t: rpc::register_resource_request::CustomTimeouts,
) -> Result<CustomTimeouts, FieldError> {
    let parse = |field: &str, text: &str| {
        duration_seconds(text).map_err(|problem| FieldError {
            field: format!("customTimeouts.{field}"),
            problem,
        })
    };
    Ok(CustomTimeouts {
        create: parse("create", &t.create)?,
        update: parse("update", &t.update)?,
        delete: parse("delete", &t.delete)?,
        read: parse("read", &t.read)?,
    })
}

/// How a request names its resource in errors: `RegisterResource aws:s3:Bucket "b"`.
fn describe(method: &str, resource_type: &str, name: &str) -> String {
    format!(
        "{method} {} {:?}",
        shown(resource_type, 200),
        shown(name, 200)
    )
}

fn register_request(
    r: rpc::RegisterResourceRequest,
    callbacks: &Callbacks,
) -> Result<RegisterResourceRequest, FieldError> {
    let resource_type = wire::type_token("type", &r.r#type)?;
    wire::name("name", &r.name)?;
    let mut aliases: Vec<Alias> = r
        .aliases
        .into_iter()
        .enumerate()
        .map(|(i, a)| alias(&format!("aliases[{i}]"), a))
        .collect::<Result<_, _>>()?;
    aliases.extend(
        wire::urns("aliasURNs", &r.alias_ur_ns)?
            .into_iter()
            .map(Alias::Urn),
    );
    let custom_timeouts = r.custom_timeouts.map(custom_timeouts).transpose()?;
    let property_dependencies = dependency_map(
        "propertyDependencies",
        r.property_dependencies
            .into_iter()
            .map(|(k, v)| (k, v.urns)),
    )?;
    each("ignoreChanges", &r.ignore_changes, wire::path)?;
    each("replaceOnChanges", &r.replace_on_changes, wire::path)?;
    each(
        "additionalSecretOutputs",
        &r.additional_secret_outputs,
        wire::key,
    )?;
    let mut providers = IndexMap::new();
    for (package, reference) in r.providers {
        wire::package("providers", &package)?;
        wire::provider_reference(&format!("providers[{package:?}]"), &reference)?;
        providers.insert(package, reference);
    }
    providers.sort_keys();
    let import_id = optional(r.import_id);
    if let Some(id) = &import_id {
        wire::id("importId", id)?;
    }
    let transforms = r
        .transforms
        .into_iter()
        .enumerate()
        .map(|(i, callback)| callbacks.transform(&format!("transforms[{i}]"), callback))
        .collect::<Result<_, _>>()?;
    let state_migrations = r
        .state_migrations
        .into_iter()
        .enumerate()
        .map(|(i, callback)| callbacks.state_migration(&format!("state_migrations[{i}]"), callback))
        .collect::<Result<_, _>>()?;
    Ok(RegisterResourceRequest {
        resource_type,
        name: r.name,
        custom: r.custom,
        remote: r.remote,
        parent: wire::optional_urn("parent", &r.parent)?,
        inputs: properties("object", r.object.as_ref())?,
        property_dependencies,
        options: ResourceOptions {
            protect: r.protect.unwrap_or(false),
            retain_on_delete: r.retain_on_delete.unwrap_or(false),
            deleted_with: wire::optional_urn("deletedWith", &r.deleted_with)?,
            depends_on: wire::urns("dependencies", &r.dependencies)?,
            provider: optional_provider("provider", r.provider)?,
            providers,
            aliases,
            ignore_changes: r.ignore_changes,
            replace_on_changes: r.replace_on_changes,
            delete_before_replace: (r.delete_before_replace_defined || r.delete_before_replace)
                .then_some(r.delete_before_replace),
            additional_secret_outputs: r.additional_secret_outputs,
            custom_timeouts,
            import_id,
            version: optional_version("version", r.version)?,
            plugin_download_url: optional_download_url(r.plugin_download_url)?,
            transforms,
            hooks: crate::callbacks::hooks_from_rpc("hooks", r.hooks)?,
            state_migrations,
        },
    })
}

/// `pluginDownloadURL`: empty is none; a URL of at most 2048 printable characters.
pub(crate) fn optional_download_url(url: String) -> Result<Option<String>, FieldError> {
    if url.is_empty() {
        return Ok(None);
    }
    if url.len() > 2048 || url.chars().any(char::is_control) || !url.contains("://") {
        return Err(FieldError {
            field: "pluginDownloadURL".to_owned(),
            problem: "must be a URL of at most 2048 printable characters".to_owned(),
        });
    }
    Ok(Some(url))
}

fn read_request(r: rpc::ReadResourceRequest) -> Result<ReadResourceRequest, FieldError> {
    let resource_type = wire::type_token("type", &r.r#type)?;
    wire::name("name", &r.name)?;
    wire::id("id", &r.id)?;
    each(
        "additionalSecretOutputs",
        &r.additional_secret_outputs,
        wire::key,
    )?;
    Ok(ReadResourceRequest {
        resource_type,
        name: r.name,
        id: r.id,
        parent: wire::optional_urn("parent", &r.parent)?,
        properties: properties("properties", r.properties.as_ref())?,
        dependencies: wire::urns("dependencies", &r.dependencies)?,
        provider: optional_provider("provider", r.provider)?,
        version: optional_version("version", r.version)?,
        additional_secret_outputs: r.additional_secret_outputs,
    })
}

fn invoke_request(r: rpc::ResourceInvokeRequest) -> Result<ProgramInvokeRequest, FieldError> {
    wire::type_token("tok", &r.tok)?;
    Ok(ProgramInvokeRequest {
        token: r.tok,
        args: properties("args", r.args.as_ref())?,
        provider: optional_provider("provider", r.provider)?,
        version: optional_version("version", r.version)?,
    })
}

fn call_request(r: rpc::ResourceCallRequest) -> Result<ProgramCallRequest, FieldError> {
    wire::type_token("tok", &r.tok)?;
    Ok(ProgramCallRequest {
        token: r.tok,
        args: properties("args", r.args.as_ref())?,
        arg_dependencies: dependency_map(
            "argDependencies",
            r.arg_dependencies.into_iter().map(|(k, v)| (k, v.urns)),
        )?,
        provider: optional_provider("provider", r.provider)?,
        version: optional_version("version", r.version)?,
    })
}

fn marshal(accept_secrets: bool, accept_resources: bool) -> Marshal {
    Marshal {
        secrets: accept_secrets,
        resources: accept_resources,
        outputs: false,
    }
}

impl MonitorService {
    /// An invoke (or streamed invoke): checked, run by the engine, its result encoded.
    async fn run_invoke(
        &self,
        method: &str,
        r: rpc::ResourceInvokeRequest,
    ) -> Result<rpc::InvokeResponse, Status> {
        // As Pulumi does, getResource answers with references whatever the SDK says: it is how
        // SDKs rehydrate them.
        let out = marshal(true, r.accept_resources || r.tok == GET_RESOURCE);
        let what = format!("{method} {}", shown(&r.tok, 200));
        let invoke = invoke_request(r).map_err(|e| self.refused(&what, e))?;
        let result = self
            .monitor
            .invoke(invoke)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(rpc::InvokeResponse {
            r#return: Some(to_struct(&result.outputs, out)),
            failures: result
                .failures
                .into_iter()
                .map(|f| rpc::CheckFailure {
                    property: f.property,
                    reason: f.reason,
                })
                .collect(),
        })
    }
}

#[tonic::async_trait]
impl ResourceMonitor for MonitorService {
    async fn supports_feature(
        &self,
        request: Request<rpc::SupportsFeatureRequest>,
    ) -> Result<Response<rpc::SupportsFeatureResponse>, Status> {
        let id = request.into_inner().id;
        Ok(Response::new(rpc::SupportsFeatureResponse {
            has_support: FEATURES.iter().any(|(name, _)| *name == id),
        }))
    }

    async fn invoke(
        &self,
        request: Request<rpc::ResourceInvokeRequest>,
    ) -> Result<Response<rpc::InvokeResponse>, Status> {
        self.run_invoke("Invoke", request.into_inner())
            .await
            .map(Response::new)
    }

    type StreamInvokeStream =
        futures::stream::Iter<std::vec::IntoIter<Result<rpc::InvokeResponse, Status>>>;

    /// Streams the invoke's result, then its check failures in a message of their own, as
    /// Pulumi's engine did (it ends the stream after them).
    async fn stream_invoke(
        &self,
        request: Request<rpc::ResourceInvokeRequest>,
    ) -> Result<Response<Self::StreamInvokeStream>, Status> {
        let mut result = self
            .run_invoke("StreamInvoke", request.into_inner())
            .await?;
        let mut messages = Vec::new();
        let failures = std::mem::take(&mut result.failures);
        messages.push(Ok(result));
        if !failures.is_empty() {
            messages.push(Ok(rpc::InvokeResponse {
                r#return: None,
                failures,
            }));
        }
        Ok(Response::new(futures::stream::iter(messages)))
    }

    async fn register_stack_transform(
        &self,
        request: Request<rpc::Callback>,
    ) -> Result<Response<()>, Status> {
        let transform = self
            .callbacks
            .transform("callback", request.into_inner())
            .map_err(|e| self.refused("RegisterStackTransform", e))?;
        self.monitor
            .register_stack_transform(transform.0)
            .map_err(|e| self.failed(e))?;
        Ok(Response::new(()))
    }

    async fn register_stack_invoke_transform(
        &self,
        request: Request<rpc::Callback>,
    ) -> Result<Response<()>, Status> {
        let transform = self
            .callbacks
            .invoke_transform("callback", request.into_inner())
            .map_err(|e| self.refused("RegisterStackInvokeTransform", e))?;
        self.monitor
            .register_invoke_transform(transform)
            .map_err(|e| self.failed(e))?;
        Ok(Response::new(()))
    }

    async fn call(
        &self,
        request: Request<rpc::ResourceCallRequest>,
    ) -> Result<Response<rpc::CallResponse>, Status> {
        let r = request.into_inner();
        let what = format!("Call {}", shown(&r.tok, 200));
        let call = call_request(r).map_err(|e| self.refused(&what, e))?;
        let result = self.monitor.call(call).await.map_err(|e| self.failed(e))?;
        Ok(Response::new(rpc::CallResponse {
            r#return: Some(to_struct(&result.outputs, Marshal::ALL)),
            return_dependencies: result
                .output_dependencies
                .into_iter()
                .map(|(k, v)| {
                    (
                        k,
                        rpc::call_response::ReturnDependencies {
                            urns: v.iter().map(ToString::to_string).collect(),
                        },
                    )
                })
                .collect(),
            failures: result
                .failures
                .into_iter()
                .map(|f| rpc::CheckFailure {
                    property: f.property,
                    reason: f.reason,
                })
                .collect(),
        }))
    }

    async fn read_resource(
        &self,
        request: Request<rpc::ReadResourceRequest>,
    ) -> Result<Response<rpc::ReadResourceResponse>, Status> {
        let r = request.into_inner();
        let out = marshal(r.accept_secrets, r.accept_resources);
        let what = describe("ReadResource", &r.r#type, &r.name);
        let read = read_request(r).map_err(|e| self.refused(&what, e))?;
        let response = self
            .monitor
            .read_resource(read)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(Response::new(rpc::ReadResourceResponse {
            urn: response.urn.to_string(),
            properties: Some(to_struct(&response.outputs, out)),
        }))
    }

    async fn register_resource(
        &self,
        request: Request<rpc::RegisterResourceRequest>,
    ) -> Result<Response<rpc::RegisterResourceResponse>, Status> {
        let r = request.into_inner();
        let out = marshal(r.accept_secrets, r.accept_resources);
        let what = describe("RegisterResource", &r.r#type, &r.name);
        let reports_results = r.supports_result_reporting;
        let register = register_request(r, &self.callbacks).map_err(|e| self.refused(&what, e))?;
        let response = match self.monitor.register_resource(register).await {
            Ok(response) => response,
            // Under --continue-on-error, an SDK that reads the result goes on without the
            // resource (its outputs unknown), as Pulumi's engine answers it.
            Err(MonitorError {
                continued: Some(continued),
                urn: Some(urn),
                ..
            }) if reports_results => {
                let result = match continued {
                    Unregistered::Failed => rpc::Result::Fail,
                    Unregistered::Skipped => rpc::Result::Skip,
                };
                return Ok(Response::new(rpc::RegisterResourceResponse {
                    urn: urn.to_string(),
                    object: Some(prost_types::Struct::default()),
                    result: result.into(),
                    ..Default::default()
                }));
            }
            Err(e) => return Err(self.failed(e)),
        };
        Ok(Response::new(rpc::RegisterResourceResponse {
            urn: response.urn.to_string(),
            id: response.id.unwrap_or_default(),
            object: Some(to_struct(&response.outputs, out)),
            stable: false,
            stables: Vec::new(),
            property_dependencies: response
                .property_dependencies
                .into_iter()
                .map(|(k, v)| {
                    (
                        k,
                        rpc::register_resource_response::PropertyDependencies {
                            urns: v.iter().map(ToString::to_string).collect(),
                        },
                    )
                })
                .collect(),
            result: rpc::Result::Success.into(),
        }))
    }

    async fn register_resource_outputs(
        &self,
        request: Request<rpc::RegisterResourceOutputsRequest>,
    ) -> Result<Response<()>, Status> {
        let r = request.into_inner();
        let what = format!("RegisterResourceOutputs {}", shown(&r.urn, 1024));
        let urn = wire::urn("urn", &r.urn).map_err(|e| self.refused(&what, e))?;
        let outputs =
            properties("outputs", r.outputs.as_ref()).map_err(|e| self.refused(&what, e))?;
        self.monitor
            .register_resource_outputs(&urn, outputs)
            .map_err(|e| self.failed(e))?;
        // A component is finished once it has its outputs: the after hooks of its creation or
        // update run now.
        self.monitor
            .run_component_hooks(&urn)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(Response::new(()))
    }

    async fn register_resource_hook(
        &self,
        request: Request<rpc::RegisterResourceHookRequest>,
    ) -> Result<Response<()>, Status> {
        let r = request.into_inner();
        let what = format!("RegisterResourceHook {:?}", shown(&r.name, 200));
        wire::hook_name("name", &r.name).map_err(|e| self.refused(&what, e))?;
        let Some(callback) = r.callback else {
            return Err(self.refused(&what, "callback: missing"));
        };
        let callback = self
            .callbacks
            .resource_hook("callback", &r.name, callback)
            .map_err(|e| self.refused(&what, e))?;
        let hook = cairn_engine::deploy::hooks::RegisteredHook {
            callback,
            on_dry_run: r.on_dry_run,
            ignore_errors: r.ignore_errors,
        };
        self.monitor
            .register_resource_hook(&r.name, hook)
            .map_err(|e| self.failed(e))?;
        Ok(Response::new(()))
    }

    async fn signal_and_wait_for_shutdown(
        &self,
        _request: Request<()>,
    ) -> Result<Response<()>, Status> {
        // Every registration is answered only once the engine has handled it, so nothing the
        // program sent is still outstanding here. A program with resource hooks waits until
        // the deployment has run the deletes that may call them.
        self.monitor.signal_and_wait_for_shutdown().await;
        Ok(Response::new(()))
    }

    async fn get_deployment_info(
        &self,
        _request: Request<()>,
    ) -> Result<Response<rpc::DeploymentInfo>, Status> {
        let (config, secret_keys) = program_config(&self.monitor);
        Ok(Response::new(rpc::DeploymentInfo {
            project: self.monitor.project().to_owned(),
            stack: self.monitor.stack().to_owned(),
            organization: "organization".to_owned(),
            config,
            config_secret_keys: secret_keys,
            dry_run: self.monitor.is_preview(),
            parallel: self.parallel,
            // State migrations have no string id: SDKs learn of them only here.
            supported_features: FEATURES
                .iter()
                .map(|(_, f)| *f as i32)
                .chain([rpc::ResourceMonitorFeature::StateMigrations as i32])
                .collect(),
        }))
    }
}

/// The stack's configuration as SDKs take it: `namespace:key` → string, and the secret keys.
pub fn program_config(
    monitor: &Monitor,
) -> (std::collections::HashMap<String, String>, Vec<String>) {
    let mut config = std::collections::HashMap::new();
    let mut secret = Vec::new();
    for (key, value) in monitor.config() {
        let (text, is_secret) = match value {
            PropertyValue::Secret(inner) => (inner.as_str().map(str::to_owned), true),
            other => (other.as_str().map(str::to_owned), false),
        };
        if let Some(text) = text {
            if is_secret {
                secret.push(key.clone());
            }
            config.insert(key.clone(), text);
        }
    }
    secret.sort();
    (config, secret)
}

#[cfg(test)]
mod tests {
    use super::duration_seconds;

    #[test]
    fn go_durations() {
        for (text, seconds) in [
            ("", 0.0),
            ("5m", 300.0),
            ("1h30m", 5400.0),
            ("1.5h", 5400.0),
            ("90s", 90.0),
            ("300ms", 0.3),
        ] {
            assert!(
                (duration_seconds(text).unwrap() - seconds).abs() < 1e-9,
                "{text}"
            );
        }
        assert!(duration_seconds("5").is_err());
        assert!(duration_seconds("5 days").is_err());
    }
}
