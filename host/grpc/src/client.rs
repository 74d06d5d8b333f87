//! [`GrpcProvider`]: the engine's [`Provider`] implemented by a gRPC provider plugin (a
//! `pulumi-resource-<pkg>` binary, a Python `pulumi.provider.main` provider, an SDK's dynamic
//! provider, or `cairn provider serve`).
//!
//! Start-up follows the plugin protocol (see [`crate::plugin`]), then `Handshake` (older
//! plugins answer `Unimplemented`, which is fine) and `GetPluginInfo`. Values sent to the plugin
//! are downgraded to what its `Configure` response says it accepts. Every failure names the
//! plugin and the method; when the plugin process died, the message says so and quotes the end
//! of its stderr.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::provider::{
    self as p, DiffChanges, DiffKind, PartialState, Provider, ProviderError, ProviderOrigin,
};
use cairn_engine::value::{PropertyMap, PropertyValue};
use indexmap::IndexMap;
use prost::Message;
use tonic::transport::Channel;

use cairn_engine::deploy::events::NullSink;

use crate::convert::{ConvertError, Marshal, from_struct, to_struct};
use crate::monitor::{Failures, serve_monitor};
use crate::plugin::{OutputSink, PluginCommand, PluginError, PluginProcess, connect, launch};
use crate::proto::pulumirpc as rpc;
use crate::proto::pulumirpc::resource_provider_client::ResourceProviderClient;
use crate::serve::{INIT_FAILED_TYPE, RpcStatus};

/// Parallelism a component provider is told for the children it registers.
const CALLBACK_PARALLELISM: usize = 16;

/// How long `Cancel` may take on shutdown, and how long the process then has to exit.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A provider plugin reached over gRPC.
pub struct GrpcProvider {
    package: String,
    version: Option<semver::Version>,
    client: ResourceProviderClient<Channel>,
    process: Option<Arc<PluginProcess>>,
    /// What the plugin accepts (from its `Configure` response).
    accepts: Mutex<Marshal>,
    /// How the plugin was found (native code either way).
    origin: ProviderOrigin,
}

impl GrpcProvider {
    /// Starts the plugin, connects, and asks what it is.
    pub async fn start(
        package: &str,
        command: &PluginCommand,
        engine_address: &str,
        start_timeout: Duration,
        output: OutputSink,
    ) -> Result<GrpcProvider, PluginError> {
        let process = launch(command, engine_address, start_timeout, output).await?;
        let channel = connect(&command.name, process.port, Duration::from_secs(10)).await?;
        let mut provider = GrpcProvider::over(package, channel, Some(Arc::new(process)));
        provider.introduce(engine_address).await;
        Ok(provider)
    }

    /// A provider over an established channel (a plugin someone else started).
    pub fn over(package: &str, channel: Channel, process: Option<Arc<PluginProcess>>) -> Self {
        GrpcProvider {
            package: package.to_owned(),
            version: None,
            client: ResourceProviderClient::new(channel)
                .max_decoding_message_size(256 * 1024 * 1024)
                .max_encoding_message_size(256 * 1024 * 1024),
            process,
            accepts: Mutex::new(Marshal::PLAIN),
            origin: ProviderOrigin::DiscoveredPlugin,
        }
    }

    /// Marks the plugin as one the project names (by default it counts as found by lookup).
    pub fn named_by_project(mut self) -> Self {
        self.origin = ProviderOrigin::NamedPlugin;
        self
    }

    /// `Handshake` (when implemented) and `GetPluginInfo`.
    pub async fn introduce(&mut self, engine_address: &str) {
        let mut client = self.client.clone();
        if let Ok(response) = client
            .handshake(rpc::ProviderHandshakeRequest {
                engine_address: engine_address.to_owned(),
                ..Default::default()
            })
            .await
        {
            let r = response.into_inner();
            *lock(&self.accepts) = Marshal {
                secrets: r.accept_secrets,
                resources: r.accept_resources,
                outputs: false,
            };
        }
        if let Ok(info) = client.get_plugin_info(()).await {
            let version = info.into_inner().version;
            self.version = semver::Version::parse(version.trim_start_matches('v')).ok();
        }
    }

    /// Asks the plugin to stop, then ends its process.
    pub async fn shutdown(&self) {
        let mut client = self.client.clone();
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, client.cancel(())).await;
        if let Some(process) = &self.process {
            process.shutdown(SHUTDOWN_GRACE).await;
        }
    }

    fn name(&self) -> String {
        match &self.process {
            Some(p) => p.name.clone(),
            None => format!("{} plugin", self.package),
        }
    }

    fn out(&self, map: &PropertyMap) -> prost_types::Struct {
        to_struct(map, *lock(&self.accepts))
    }

    /// Turns a failed call into the engine's error, naming the plugin and method.
    fn error(&self, method: &'static str, status: tonic::Status) -> ProviderError {
        if let Some(process) = &self.process
            && let Some(exit) = exited(process, &status)
        {
            let tail = process.stderr_tail();
            return ProviderError::failed(format!(
                "{} {method}: the plugin exited unexpectedly ({exit}){}",
                self.name(),
                if tail.trim().is_empty() {
                    String::new()
                } else {
                    format!("; its stderr ends with: {}", tail.trim())
                }
            ));
        }
        if status.code() == tonic::Code::Cancelled && status.message().contains("Timeout expired") {
            return ProviderError::failed(format!(
                "{} {method}: the plugin did not answer within {} s (CAIRN_PLUGIN_CALL_TIMEOUT)",
                self.name(),
                crate::plugin::call_timeout().as_secs_f64()
            ));
        }
        match status.code() {
            tonic::Code::Unimplemented => return ProviderError::Unimplemented { method },
            tonic::Code::Cancelled => return ProviderError::Cancelled,
            _ => {}
        }
        if let Some(partial) = init_failed(status.details()) {
            return ProviderError::Failed {
                message: status.message().to_owned(),
                partial: Some(Box::new(partial)),
            };
        }
        let message = match status.code() {
            tonic::Code::Unknown | tonic::Code::Internal => status.message().to_owned(),
            tonic::Code::Unavailable => format!(
                "{} {method}: the plugin is unreachable: {}",
                self.name(),
                status.message()
            ),
            code => format!("{} {method}: {code:?}: {}", self.name(), status.message()),
        };
        ProviderError::failed(message)
    }

    fn check_request(&self, request: &p::CheckRequest) -> rpc::CheckRequest {
        rpc::CheckRequest {
            urn: request.urn.to_string(),
            name: request.urn.name().to_owned(),
            r#type: request.urn.resource_type().to_owned(),
            olds: Some(self.out(&request.olds)),
            news: Some(self.out(&request.news)),
            random_seed: request.random_seed.clone(),
        }
    }

    fn diff_request(&self, request: p::DiffRequest<'_>) -> rpc::DiffRequest {
        rpc::DiffRequest {
            urn: request.urn.to_string(),
            name: request.urn.name().to_owned(),
            r#type: request.urn.resource_type().to_owned(),
            olds: Some(self.out(request.old_outputs)),
            news: Some(self.out(request.news)),
            old_inputs: Some(self.out(request.old_inputs)),
            ignore_changes: request
                .ignore_changes
                .iter()
                .map(ToString::to_string)
                .collect(),
            id: request.id.to_owned(),
        }
    }

    fn bad_reply(&self, method: &str, e: ConvertError) -> ProviderError {
        ProviderError::failed(format!(
            "{} {method}: the plugin sent a malformed value: {e}",
            self.name()
        ))
    }
}

impl Drop for GrpcProvider {
    fn drop(&mut self) {
        // Cancel then a grace period, off the caller's path; the process is killed when its
        // handle goes.
        if let Some(process) = self.process.take() {
            let mut client = self.client.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, client.cancel(())).await;
                    process.shutdown(SHUTDOWN_GRACE).await;
                });
            }
        }
    }
}

/// The plugin's exit status if it has died. A connection that broke may be seen before the
/// process is reaped, so on a transport failure this waits briefly for the exit.
fn exited(process: &PluginProcess, status: &tonic::Status) -> Option<std::process::ExitStatus> {
    if let Some(exit) = process.exit_status() {
        return Some(exit);
    }
    let transport = matches!(
        status.code(),
        tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Internal
    ) && (status.message().contains("transport")
        || status.message().contains("connection"));
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if !transport || !multi_thread {
        return None;
    }
    tokio::task::block_in_place(|| {
        for _ in 0..50 {
            if let Some(exit) = process.exit_status() {
                return Some(exit);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The partial state in an `ErrorResourceInitFailed` status detail.
fn init_failed(details: &[u8]) -> Option<PartialState> {
    if details.is_empty() {
        return None;
    }
    let status = RpcStatus::decode(details).ok()?;
    let any = status
        .details
        .iter()
        .find(|a| a.type_url == INIT_FAILED_TYPE)?;
    let failed = rpc::ErrorResourceInitFailed::decode(any.value.as_slice()).ok()?;
    Some(PartialState {
        id: failed.id,
        inputs: from_struct(failed.inputs.as_ref()).ok()?,
        outputs: from_struct(failed.properties.as_ref()).ok()?,
    })
}

/// Property dependencies from a plugin's reply, URNs checked.
fn dependencies(
    plugin: &str,
    method: &str,
    deps: impl Iterator<Item = (String, Vec<String>)>,
) -> Result<IndexMap<String, Vec<cairn_engine::urn::Urn>>, ProviderError> {
    deps.map(|(k, urns)| {
        let urns = urns
            .iter()
            .map(|u| {
                cairn_engine::urn::Urn::parse(u).map_err(|e| {
                    ProviderError::failed(format!(
                        "{plugin} {method}: invalid URN {u:?} in the dependencies of {k}: {e}"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok((k, urns))
    })
    .collect()
}

fn failures(failures: Vec<rpc::CheckFailure>) -> Vec<p::CheckFailure> {
    failures
        .into_iter()
        .map(|f| p::CheckFailure {
            property: f.property,
            reason: f.reason,
        })
        .collect()
}

fn diff_result(r: rpc::DiffResponse) -> p::DiffResult {
    use rpc::diff_response::DiffChanges as C;
    use rpc::property_diff::Kind as K;
    let detailed = r.has_detailed_diff.then(|| {
        r.detailed_diff
            .into_iter()
            .map(|(path, d)| {
                let kind = match K::try_from(d.kind).unwrap_or(K::Update) {
                    K::Add => DiffKind::Add,
                    K::AddReplace => DiffKind::AddReplace,
                    K::Delete => DiffKind::Delete,
                    K::DeleteReplace => DiffKind::DeleteReplace,
                    K::Update => DiffKind::Update,
                    K::UpdateReplace => DiffKind::UpdateReplace,
                };
                (
                    path,
                    p::PropertyDiff {
                        kind,
                        input_diff: d.input_diff,
                    },
                )
            })
            .collect::<IndexMap<_, _>>()
    });
    p::DiffResult {
        changes: match C::try_from(r.changes).unwrap_or(C::DiffUnknown) {
            C::DiffUnknown => DiffChanges::Unknown,
            C::DiffNone => DiffChanges::None,
            C::DiffSome => DiffChanges::Some,
        },
        replace_keys: r.replaces,
        stable_keys: r.stables,
        changed_keys: r.diffs,
        detailed_diff: detailed,
        delete_before_replace: r.delete_before_replace,
    }
}

/// Configuration as the older `variables` map: `<pkg>:config:<key>` → string (JSON for
/// structured values).
fn variables(package: &str, inputs: &PropertyMap) -> std::collections::HashMap<String, String> {
    inputs
        .iter()
        .filter_map(|(k, v)| {
            let text = match v.clone().unsecret() {
                PropertyValue::String(s) => s,
                PropertyValue::Computed => return None,
                other => serde_json::to_string(&crate::convert::plain_json(&other)).ok()?,
            };
            Some((format!("{package}:config:{k}"), text))
        })
        .collect()
}

#[async_trait]
impl Provider for GrpcProvider {
    fn package(&self) -> &str {
        &self.package
    }

    fn origin(&self) -> ProviderOrigin {
        self.origin
    }

    fn version(&self) -> Option<semver::Version> {
        self.version.clone()
    }

    async fn get_schema(&self) -> Result<String, ProviderError> {
        let r = self
            .client
            .clone()
            .get_schema(rpc::GetSchemaRequest { version: 0 })
            .await
            .map_err(|s| self.error("GetSchema", s))?;
        Ok(r.into_inner().schema)
    }

    async fn check_config(
        &self,
        request: p::CheckRequest,
    ) -> Result<p::CheckResult, ProviderError> {
        let r = self
            .client
            .clone()
            .check_config(self.check_request(&request))
            .await;
        match r {
            // Older plugins have no CheckConfig: the inputs are fine as they are.
            Err(s) if s.code() == tonic::Code::Unimplemented => Ok(p::CheckResult {
                inputs: request.news,
                failures: vec![],
            }),
            Err(s) => Err(self.error("CheckConfig", s)),
            Ok(r) => {
                let r = r.into_inner();
                Ok(p::CheckResult {
                    inputs: from_struct(r.inputs.as_ref())
                        .map_err(|e| self.bad_reply("CheckConfig", e))?,
                    failures: failures(r.failures),
                })
            }
        }
    }

    async fn diff_config(
        &self,
        request: p::DiffRequest<'_>,
    ) -> Result<p::DiffResult, ProviderError> {
        let r = self
            .client
            .clone()
            .diff_config(self.diff_request(request))
            .await;
        match r {
            Err(s) if s.code() == tonic::Code::Unimplemented => Ok(p::DiffResult::default()),
            Err(s) => Err(self.error("DiffConfig", s)),
            Ok(r) => Ok(diff_result(r.into_inner())),
        }
    }

    async fn configure(&self, inputs: PropertyMap, _preview: bool) -> Result<(), ProviderError> {
        let r = self
            .client
            .clone()
            .configure(rpc::ConfigureRequest {
                variables: variables(&self.package, &inputs),
                args: Some(to_struct(&inputs, Marshal::PLAIN)),
                accept_secrets: true,
                accept_resources: true,
                sends_old_inputs: true,
                sends_old_inputs_to_delete: true,
                ..Default::default()
            })
            .await
            .map_err(|s| self.error("Configure", s))?
            .into_inner();
        *lock(&self.accepts) = Marshal {
            secrets: r.accept_secrets,
            resources: r.accept_resources,
            outputs: false,
        };
        Ok(())
    }

    async fn check(&self, request: p::CheckRequest) -> Result<p::CheckResult, ProviderError> {
        let r = self
            .client
            .clone()
            .check(self.check_request(&request))
            .await
            .map_err(|s| self.error("Check", s))?
            .into_inner();
        Ok(p::CheckResult {
            inputs: from_struct(r.inputs.as_ref()).map_err(|e| self.bad_reply("Check", e))?,
            failures: failures(r.failures),
        })
    }

    async fn diff(&self, request: p::DiffRequest<'_>) -> Result<p::DiffResult, ProviderError> {
        let r = self
            .client
            .clone()
            .diff(self.diff_request(request))
            .await
            .map_err(|s| self.error("Diff", s))?;
        Ok(diff_result(r.into_inner()))
    }

    async fn create(&self, request: p::CreateRequest) -> Result<p::CreateResult, ProviderError> {
        let r = self
            .client
            .clone()
            .create(rpc::CreateRequest {
                urn: request.urn.to_string(),
                name: request.urn.name().to_owned(),
                r#type: request.urn.resource_type().to_owned(),
                properties: Some(self.out(&request.properties)),
                timeout: request.timeout,
                preview: request.preview,
            })
            .await
            .map_err(|s| self.error("Create", s))?
            .into_inner();
        Ok(p::CreateResult {
            id: r.id,
            outputs: from_struct(r.properties.as_ref()).map_err(|e| self.bad_reply("Create", e))?,
        })
    }

    async fn read(&self, request: p::ReadRequest) -> Result<p::ReadResult, ProviderError> {
        let r = self
            .client
            .clone()
            .read(rpc::ReadRequest {
                id: request.id,
                urn: request.urn.to_string(),
                name: request.urn.name().to_owned(),
                r#type: request.urn.resource_type().to_owned(),
                properties: Some(self.out(&request.state)),
                inputs: Some(self.out(&request.inputs)),
            })
            .await
            .map_err(|s| self.error("Read", s))?
            .into_inner();
        Ok(p::ReadResult {
            id: r.id,
            inputs: from_struct(r.inputs.as_ref()).map_err(|e| self.bad_reply("Read", e))?,
            outputs: from_struct(r.properties.as_ref()).map_err(|e| self.bad_reply("Read", e))?,
        })
    }

    async fn update(&self, request: p::UpdateRequest) -> Result<p::UpdateResult, ProviderError> {
        let r = self
            .client
            .clone()
            .update(rpc::UpdateRequest {
                id: request.id,
                urn: request.urn.to_string(),
                name: request.urn.name().to_owned(),
                r#type: request.urn.resource_type().to_owned(),
                olds: Some(self.out(&request.old_outputs)),
                news: Some(self.out(&request.news)),
                old_inputs: Some(self.out(&request.old_inputs)),
                timeout: request.timeout,
                ignore_changes: request
                    .ignore_changes
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                preview: request.preview,
            })
            .await
            .map_err(|s| self.error("Update", s))?
            .into_inner();
        Ok(p::UpdateResult {
            outputs: from_struct(r.properties.as_ref()).map_err(|e| self.bad_reply("Update", e))?,
        })
    }

    async fn delete(&self, request: p::DeleteRequest) -> Result<(), ProviderError> {
        self.client
            .clone()
            .delete(rpc::DeleteRequest {
                id: request.id,
                urn: request.urn.to_string(),
                name: request.urn.name().to_owned(),
                r#type: request.urn.resource_type().to_owned(),
                properties: Some(self.out(&request.outputs)),
                old_inputs: Some(self.out(&request.inputs)),
                timeout: request.timeout,
            })
            .await
            .map_err(|s| self.error("Delete", s))?;
        Ok(())
    }

    async fn invoke(&self, request: p::InvokeRequest) -> Result<p::InvokeResult, ProviderError> {
        let r = self
            .client
            .clone()
            .invoke(rpc::InvokeRequest {
                tok: request.token,
                args: Some(self.out(&request.args)),
                preview: false,
            })
            .await
            .map_err(|s| self.error("Invoke", s))?
            .into_inner();
        Ok(p::InvokeResult {
            outputs: from_struct(r.r#return.as_ref()).map_err(|e| self.bad_reply("Invoke", e))?,
            failures: failures(r.failures),
        })
    }

    async fn construct(
        &self,
        request: p::ConstructRequest,
        monitor: Monitor,
    ) -> Result<p::ConstructResult, ProviderError> {
        // The plugin registers the component's children with a monitor served for this call.
        let served = serve_monitor(
            monitor,
            CALLBACK_PARALLELISM,
            Arc::new(NullSink),
            Arc::new(Failures::default()),
        )
        .await
        .map_err(|e| ProviderError::failed(format!("{} Construct: {e}", self.name())))?;
        let config_secret_keys = Vec::new();
        let r = self
            .client
            .clone()
            .construct(rpc::ConstructRequest {
                project: request.project,
                stack: request.stack,
                config: request.config.into_iter().collect(),
                dry_run: request.dry_run,
                parallel: CALLBACK_PARALLELISM as i32,
                monitor_endpoint: served.target(),
                r#type: request.resource_type,
                name: request.name,
                parent: request.parent.map(|u| u.to_string()).unwrap_or_default(),
                inputs: Some(self.out(&request.inputs)),
                input_dependencies: request
                    .input_dependencies
                    .into_iter()
                    .map(|(k, v)| {
                        (
                            k,
                            rpc::construct_request::PropertyDependencies {
                                urns: v.iter().map(ToString::to_string).collect(),
                            },
                        )
                    })
                    .collect(),
                protect: Some(request.protect),
                providers: request.providers.into_iter().collect(),
                dependencies: request
                    .dependencies
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                config_secret_keys,
                organization: "organization".to_owned(),
                aliases: request
                    .aliases
                    .iter()
                    .map(|u| rpc::Alias {
                        alias: Some(rpc::alias::Alias::Urn(u.to_string())),
                    })
                    .collect(),
                ..Default::default()
            })
            .await
            .map_err(|s| self.error("Construct", s))?
            .into_inner();
        drop(served);
        Ok(p::ConstructResult {
            urn: if r.urn.is_empty() {
                None
            } else {
                Some(cairn_engine::urn::Urn::parse(&r.urn).map_err(|e| {
                    ProviderError::failed(format!(
                        "{} Construct: the plugin returned an invalid URN {:?}: {e}",
                        self.name(),
                        r.urn
                    ))
                })?)
            },
            state: from_struct(r.state.as_ref()).map_err(|e| self.bad_reply("Construct", e))?,
            state_dependencies: dependencies(
                &self.name(),
                "Construct",
                r.state_dependencies.into_iter().map(|(k, v)| (k, v.urns)),
            )?,
        })
    }

    async fn call(
        &self,
        request: p::CallRequest,
        monitor: Monitor,
    ) -> Result<p::CallResult, ProviderError> {
        let served = serve_monitor(
            monitor,
            CALLBACK_PARALLELISM,
            Arc::new(NullSink),
            Arc::new(Failures::default()),
        )
        .await
        .map_err(|e| ProviderError::failed(format!("{} Call: {e}", self.name())))?;
        let r = self
            .client
            .clone()
            .call(rpc::CallRequest {
                tok: request.token,
                args: Some(self.out(&request.args)),
                arg_dependencies: request
                    .arg_dependencies
                    .into_iter()
                    .map(|(k, v)| {
                        (
                            k,
                            rpc::call_request::ArgumentDependencies {
                                urns: v.iter().map(ToString::to_string).collect(),
                            },
                        )
                    })
                    .collect(),
                project: request.project,
                stack: request.stack,
                dry_run: request.dry_run,
                parallel: CALLBACK_PARALLELISM as i32,
                monitor_endpoint: served.target(),
                organization: "organization".to_owned(),
                ..Default::default()
            })
            .await
            .map_err(|s| self.error("Call", s))?
            .into_inner();
        drop(served);
        Ok(p::CallResult {
            outputs: from_struct(r.r#return.as_ref()).map_err(|e| self.bad_reply("Call", e))?,
            output_dependencies: dependencies(
                &self.name(),
                "Call",
                r.return_dependencies.into_iter().map(|(k, v)| (k, v.urns)),
            )?,
            failures: failures(r.failures),
        })
    }

    async fn cancel(&self) {
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, self.client.clone().cancel(())).await;
    }
}
