//! `pulumirpc.ResourceMonitor` served over the engine's [`Monitor`]: what SDK programs (Python,
//! Node.js) register resources with. Each request is answered when the engine has handled it
//! (a registration: once the resource's steps have run), so a program's concurrent requests
//! deploy in parallel.
//!
//! Features offered through `SupportsFeature`: secrets, resource references, alias specs and
//! `deletedWith`. Output values are not offered, so SDKs send plain values with property
//! dependencies alongside.

use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{
    Alias, ProgramCallRequest, ProgramInvokeRequest, ReadResourceRequest, RegisterResourceRequest,
    ResourceOptions,
};
use cairn_engine::state::CustomTimeouts;
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::PropertyValue;
use indexmap::IndexMap;
use tonic::{Request, Response, Status};

use crate::convert::{Marshal, from_struct, to_struct};
use crate::engine::{EngineService, HealthService, ServeError, Served, serve};
use crate::proto::health::health_server::HealthServer;
use crate::proto::pulumirpc as rpc;
use crate::proto::pulumirpc::engine_server::EngineServer;
use crate::proto::pulumirpc::resource_monitor_server::{ResourceMonitor, ResourceMonitorServer};

/// The features `SupportsFeature` answers yes to.
pub const FEATURES: [&str; 4] = ["secrets", "resourceReferences", "aliasSpecs", "deletedWith"];

/// The monitor service of one deployment.
pub struct MonitorService {
    monitor: Monitor,
    parallel: i32,
    failures: std::sync::Arc<Failures>,
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
        }
    }

    fn failed(&self, e: impl std::fmt::Display) -> Status {
        let message = e.to_string();
        self.failures.record(&message);
        Status::unknown(message)
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
    let router = tonic::transport::Server::builder()
        .add_service(
            ResourceMonitorServer::new(MonitorService::new(monitor, parallel, failures))
                .max_decoding_message_size(256 * 1024 * 1024)
                .max_encoding_message_size(256 * 1024 * 1024),
        )
        .add_service(EngineServer::new(EngineService::new(events, Some(&root))))
        .add_service(HealthServer::new(HealthService));
    serve("resource monitor", router).await
}

fn invalid(what: &str, e: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("{what}: {e}"))
}

fn urn(field: &str, text: &str) -> Result<Urn, Status> {
    Urn::parse(text).map_err(|e| invalid(field, format!("invalid URN {text:?}: {e}")))
}

fn optional_urn(field: &str, text: &str) -> Result<Option<Urn>, Status> {
    if text.is_empty() {
        Ok(None)
    } else {
        urn(field, text).map(Some)
    }
}

fn urns(field: &str, texts: &[String]) -> Result<Vec<Urn>, Status> {
    texts.iter().map(|u| urn(field, u)).collect()
}

fn optional(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
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
    Ok(total)
}

fn alias(a: rpc::Alias) -> Result<Alias, Status> {
    use rpc::alias::spec::Parent;
    match a.alias {
        Some(rpc::alias::Alias::Urn(u)) => Ok(Alias::Urn(urn("aliases.urn", &u)?)),
        Some(rpc::alias::Alias::Spec(spec)) => Ok(Alias::Spec {
            name: optional(spec.name),
            resource_type: optional(spec.r#type)
                .map(|t| TypeToken::parse(&t).map_err(|e| invalid("aliases.type", e)))
                .transpose()?,
            parent: match spec.parent {
                None => None,
                Some(Parent::NoParent(true)) => Some(None),
                Some(Parent::NoParent(false)) => None,
                Some(Parent::ParentUrn(p)) if p.is_empty() => None,
                Some(Parent::ParentUrn(p)) => Some(Some(urn("aliases.parentUrn", &p)?)),
            },
            stack: optional(spec.stack),
            project: optional(spec.project),
        }),
        None => Err(Status::invalid_argument(
            "an alias has neither a URN nor a spec",
        )),
    }
}

fn register_request(r: rpc::RegisterResourceRequest) -> Result<RegisterResourceRequest, Status> {
    let resource_type =
        TypeToken::parse(&r.r#type).map_err(|e| invalid("type", format!("{:?}: {e}", r.r#type)))?;
    let mut aliases: Vec<Alias> = r.aliases.into_iter().map(alias).collect::<Result<_, _>>()?;
    aliases.extend(
        urns("aliasURNs", &r.alias_ur_ns)?
            .into_iter()
            .map(Alias::Urn),
    );
    let custom_timeouts = match r.custom_timeouts {
        None => None,
        Some(t) => Some(CustomTimeouts {
            create: duration_seconds(&t.create).map_err(|e| invalid("customTimeouts.create", e))?,
            update: duration_seconds(&t.update).map_err(|e| invalid("customTimeouts.update", e))?,
            delete: duration_seconds(&t.delete).map_err(|e| invalid("customTimeouts.delete", e))?,
        }),
    };
    let property_dependencies = r
        .property_dependencies
        .into_iter()
        .map(|(k, v)| {
            Ok((
                k.clone(),
                urns(&format!("propertyDependencies.{k}"), &v.urns)?,
            ))
        })
        .collect::<Result<IndexMap<_, _>, Status>>()?;
    Ok(RegisterResourceRequest {
        resource_type,
        name: r.name,
        custom: r.custom,
        remote: r.remote,
        parent: optional_urn("parent", &r.parent)?,
        inputs: from_struct(r.object.as_ref()).map_err(|e| invalid("object", e))?,
        property_dependencies,
        options: ResourceOptions {
            protect: r.protect.unwrap_or(false),
            retain_on_delete: r.retain_on_delete.unwrap_or(false),
            deleted_with: optional_urn("deletedWith", &r.deleted_with)?,
            depends_on: urns("dependencies", &r.dependencies)?,
            provider: optional(r.provider),
            providers: r.providers.into_iter().collect(),
            aliases,
            ignore_changes: r.ignore_changes,
            replace_on_changes: r.replace_on_changes,
            delete_before_replace: (r.delete_before_replace_defined || r.delete_before_replace)
                .then_some(r.delete_before_replace),
            additional_secret_outputs: r.additional_secret_outputs,
            custom_timeouts,
            import_id: optional(r.import_id),
            version: optional(r.version),
        },
    })
}

fn marshal(accept_secrets: bool, accept_resources: bool) -> Marshal {
    Marshal {
        secrets: accept_secrets,
        resources: accept_resources,
        outputs: false,
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
            has_support: FEATURES.contains(&id.as_str()),
        }))
    }

    async fn invoke(
        &self,
        request: Request<rpc::ResourceInvokeRequest>,
    ) -> Result<Response<rpc::InvokeResponse>, Status> {
        let r = request.into_inner();
        let out = marshal(true, r.accept_resources);
        let result = self
            .monitor
            .invoke(ProgramInvokeRequest {
                token: r.tok,
                args: from_struct(r.args.as_ref()).map_err(|e| invalid("args", e))?,
                provider: optional(r.provider),
                version: optional(r.version),
            })
            .await
            .map_err(|e| self.failed(e))?;
        Ok(Response::new(rpc::InvokeResponse {
            r#return: Some(to_struct(&result.outputs, out)),
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

    async fn call(
        &self,
        request: Request<rpc::ResourceCallRequest>,
    ) -> Result<Response<rpc::CallResponse>, Status> {
        let r = request.into_inner();
        let arg_dependencies = r
            .arg_dependencies
            .into_iter()
            .map(|(k, v)| Ok((k.clone(), urns(&format!("argDependencies.{k}"), &v.urns)?)))
            .collect::<Result<IndexMap<_, _>, Status>>()?;
        let result = self
            .monitor
            .call(ProgramCallRequest {
                token: r.tok,
                args: from_struct(r.args.as_ref()).map_err(|e| invalid("args", e))?,
                arg_dependencies,
                provider: optional(r.provider),
                version: optional(r.version),
            })
            .await
            .map_err(|e| self.failed(e))?;
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
        let response = self
            .monitor
            .read_resource(ReadResourceRequest {
                resource_type: TypeToken::parse(&r.r#type)
                    .map_err(|e| invalid("type", format!("{:?}: {e}", r.r#type)))?,
                name: r.name,
                id: r.id,
                parent: optional_urn("parent", &r.parent)?,
                properties: from_struct(r.properties.as_ref())
                    .map_err(|e| invalid("properties", e))?,
                dependencies: urns("dependencies", &r.dependencies)?,
                provider: optional(r.provider),
                version: optional(r.version),
                additional_secret_outputs: r.additional_secret_outputs,
            })
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
        let response = self
            .monitor
            .register_resource(register_request(r)?)
            .await
            .map_err(|e| self.failed(e))?;
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
        }))
    }

    async fn register_resource_outputs(
        &self,
        request: Request<rpc::RegisterResourceOutputsRequest>,
    ) -> Result<Response<()>, Status> {
        let r = request.into_inner();
        let outputs = from_struct(r.outputs.as_ref()).map_err(|e| invalid("outputs", e))?;
        self.monitor
            .register_resource_outputs(&urn("urn", &r.urn)?, outputs)
            .map_err(|e| self.failed(e))?;
        Ok(Response::new(()))
    }

    async fn signal_and_wait_for_shutdown(
        &self,
        _request: Request<()>,
    ) -> Result<Response<()>, Status> {
        // Every registration is answered only once the engine has handled it, so nothing the
        // program sent is still outstanding here.
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
            supported_features: vec![
                rpc::ResourceMonitorFeature::Secrets as i32,
                rpc::ResourceMonitorFeature::ResourceReferences as i32,
                rpc::ResourceMonitorFeature::AliasSpecs as i32,
                rpc::ResourceMonitorFeature::DeletedWith as i32,
            ],
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
