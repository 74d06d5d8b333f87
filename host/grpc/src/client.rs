//! [`GrpcProvider`]: the engine's [`Provider`] implemented by a gRPC provider plugin (a
//! `pulumi-resource-<pkg>` binary, a Python `pulumi.provider.main` provider, an SDK's dynamic
//! provider, or `cairn provider serve`).
//!
//! Start-up follows the plugin protocol (see [`crate::plugin`]), then `Handshake` (older
//! plugins answer `Unimplemented`, which is fine) and `GetPluginInfo`. Values sent to the plugin
//! are downgraded to what it says it accepts: its `Handshake` response, else its `Configure`
//! response. Every failure names the plugin and the method; when the plugin process died, the
//! message says so and quotes the end of its stderr.
//!
//! **Previews never act.** In a preview, `Create` and `Update` reach the plugin only when it
//! supports previews (it answered `Handshake`, or its `Configure` response says
//! `supportsPreview`), as in Pulumi's provider client. Otherwise the client answers itself: the
//! checked inputs as the outputs (an empty ID for `Create`), or nothing at all when the
//! provider's configuration held unknowns; the SDK then treats the other outputs as unknown.
//! Python and Node.js dynamic providers never support previews.
//!
//! **Unknown outcomes.** When the plugin dies or the connection to it breaks during `Create`,
//! `Update` or `Delete`, the operation may or may not have happened: the error is
//! [`ProviderError::OutcomeUnknown`], which the engine leaves as a pending operation.
//!
//! Everything a plugin answers is checked before the engine sees it: values in
//! [`crate::convert`], IDs, URNs, keys and paths with [`crate::wire`], messages capped at
//! [`MAX_MESSAGE_BYTES`]. Replies are at most [`wire::max_message_bytes`] long. When a `Create`
//! or `Update` succeeded but its reply cannot be accepted whole, the resource exists: the error
//! carries a partial state (its ID and the outputs that could be kept) so the engine records it.

use std::error::Error as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::provider::{
    self as p, DiffChanges, DiffKind, PartialState, Provider, ProviderError, ProviderOrigin,
};
use cairn_engine::value::{PropertyDependencies, PropertyMap, PropertyValue};
use indexmap::IndexMap;
use prost::Message;
use tonic::transport::Channel;

use cairn_engine::deploy::events::NullSink;

use cairn_engine::limits::{MAX_MESSAGE_BYTES, cap_message, cap_text};
use cairn_engine::text::visible_text;
use cairn_engine::urn::{TypeToken, Urn};

use crate::convert::{ConvertError, Marshal, from_struct, from_struct_lossy, shown, to_struct};
use crate::monitor::{Failures, serve_monitor};
use crate::plugin::{OutputSink, PluginCommand, PluginError, PluginProcess, connect, launch};
use crate::proto::pulumirpc as rpc;
use crate::proto::pulumirpc::resource_provider_client::ResourceProviderClient;
use crate::serve::{INIT_FAILED_TYPE, RpcStatus};
use crate::wire;

/// Parallelism a component provider is told for the children it registers.
const CALLBACK_PARALLELISM: usize = 16;

/// How long `Cancel` may take on shutdown, and how long the process then has to exit.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How long `Handshake` and `GetPluginInfo` may take at start-up: a plugin answers them at once,
/// and a port that leads to something else must not hold the deployment for the call timeout.
const INTRODUCE_TIMEOUT: Duration = Duration::from_secs(30);

/// A provider plugin reached over gRPC.
pub struct GrpcProvider {
    package: String,
    version: Option<semver::Version>,
    client: ResourceProviderClient<Channel>,
    /// The same channel with room for a large schema.
    schema_client: ResourceProviderClient<Channel>,
    process: Option<Arc<PluginProcess>>,
    /// What the plugin accepts and supports.
    protocol: Mutex<Protocol>,
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
        let port = process.port;
        let channel = connect(&command.name, port, Duration::from_secs(10)).await?;
        let mut provider = GrpcProvider::over(package, channel, Some(Arc::new(process)));
        provider
            .introduce(engine_address)
            .await
            .map_err(|message| PluginError::NotAPlugin {
                plugin: command.name.clone(),
                port,
                message,
            })?;
        Ok(provider)
    }

    /// A provider over an established channel (a plugin someone else started).
    pub fn over(package: &str, channel: Channel, process: Option<Arc<PluginProcess>>) -> Self {
        let limit = wire::max_message_bytes();
        GrpcProvider {
            package: package.to_owned(),
            version: None,
            client: ResourceProviderClient::new(channel.clone())
                .max_decoding_message_size(limit)
                .max_encoding_message_size(usize::MAX),
            schema_client: ResourceProviderClient::new(channel)
                .max_decoding_message_size(limit.max(wire::SCHEMA_MESSAGE_BYTES)),
            process,
            protocol: Mutex::new(Protocol::default()),
            origin: ProviderOrigin::DiscoveredPlugin,
        }
    }

    /// Marks the plugin as one the project names (by default it counts as found by lookup).
    pub fn named_by_project(mut self) -> Self {
        self.origin = ProviderOrigin::NamedPlugin;
        self
    }

    /// `Handshake` (when implemented) and `GetPluginInfo`. What answers on the plugin's port
    /// must speak the plugin protocol: `GetPluginInfo` must succeed or be unimplemented within
    /// [`INTRODUCE_TIMEOUT`]; otherwise the reason is returned.
    pub async fn introduce(&mut self, engine_address: &str) -> Result<(), String> {
        let mut client = self.client.clone();
        let handshake = client.handshake(rpc::ProviderHandshakeRequest {
            engine_address: engine_address.to_owned(),
            ..Default::default()
        });
        if let Ok(Ok(response)) = tokio::time::timeout(INTRODUCE_TIMEOUT, handshake).await {
            let r = response.into_inner();
            let mut protocol = lock(&self.protocol);
            protocol.accepts = Marshal {
                secrets: r.accept_secrets,
                resources: r.accept_resources,
                outputs: false,
            };
            // A plugin that handshakes supports previews (the protocol says so), and its
            // answer is final: `Configure`'s does not change it.
            protocol.supports_preview = true;
            protocol.handshaken = true;
        }
        match tokio::time::timeout(INTRODUCE_TIMEOUT, client.get_plugin_info(())).await {
            Ok(Ok(info)) => {
                let version = info.into_inner().version;
                self.version = semver::Version::parse(version.trim_start_matches('v')).ok();
                Ok(())
            }
            Ok(Err(status)) if status.code() == tonic::Code::Unimplemented => Ok(()),
            Ok(Err(status)) => Err(format!(
                "GetPluginInfo failed: {}",
                cap_text(&visible_text(status.message()), 2000)
            )),
            Err(_) => Err(format!(
                "GetPluginInfo had no answer within {} s",
                INTRODUCE_TIMEOUT.as_secs()
            )),
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
        to_struct(map, lock(&self.protocol).accepts)
    }

    /// What a preview's `Create` or `Update` answers without asking the plugin, as Pulumi
    /// does: nothing when the provider's configuration held unknowns, the inputs when the
    /// plugin does not support previews. `None`: the plugin is asked.
    fn preview_without_plugin(&self, inputs: &PropertyMap) -> Option<PropertyMap> {
        let protocol = *lock(&self.protocol);
        if !protocol.config_known {
            Some(PropertyMap::new())
        } else if !protocol.supports_preview {
            Some(inputs.clone())
        } else {
            None
        }
    }

    /// Turns a failed call into the engine's error, naming the plugin and method. A plugin
    /// that died, or a connection that broke, during a call that changes a resource leaves its
    /// outcome unknown.
    fn error(&self, method: &'static str, status: tonic::Status) -> ProviderError {
        let changes_a_resource = matches!(method, "Create" | "Update" | "Delete");
        let lost = |message: String| {
            if changes_a_resource {
                ProviderError::outcome_unknown(message)
            } else {
                ProviderError::failed(message)
            }
        };
        if let Some(process) = &self.process
            && let Some(exit) = exited(process, &status)
        {
            let tail = process.stderr_tail();
            return lost(format!(
                "{} {method}: the plugin exited unexpectedly ({exit}){}",
                self.name(),
                if tail.trim().is_empty() {
                    String::new()
                } else {
                    format!("; its stderr ends with: {}", visible_text(tail.trim()))
                }
            ));
        }
        if timed_out(&status) {
            // Abandoned, not answered: the plugin may have acted all the same.
            return lost(format!(
                "{} {method}: the plugin did not answer within {} s (CAIRN_PLUGIN_CALL_TIMEOUT)",
                self.name(),
                crate::plugin::call_timeout().as_secs_f64()
            ));
        }
        if let Some(sizes) = wire::oversized(&status) {
            return ProviderError::failed(format!(
                "{} {method}: the plugin's reply was refused: {sizes}",
                self.name()
            ));
        }
        let text = cap_message(status.message());
        match status.code() {
            tonic::Code::Unimplemented => return ProviderError::Unimplemented { method },
            tonic::Code::Unavailable => {
                return lost(format!(
                    "{} {method}: the plugin is unreachable: {text}",
                    self.name()
                ));
            }
            // A status with a source was made here from a transport failure (the plugin
            // never answered), not sent by the plugin.
            _ if status.source().is_some() => {
                return lost(format!(
                    "{} {method}: the connection to the plugin broke: {text}",
                    self.name()
                ));
            }
            tonic::Code::Cancelled => return ProviderError::Cancelled,
            _ => {}
        }
        if status.code() == tonic::Code::Internal
            && text.starts_with("failed to decode Protobuf message")
        {
            return ProviderError::failed(format!(
                "{} {method}: the plugin's reply is not a valid {method} response: {text}",
                self.name()
            ));
        }
        if let Some(partial) = init_failed(status.details()) {
            return self.partial_failure(method, text.into_owned(), partial);
        }
        let message = match status.code() {
            tonic::Code::Unknown | tonic::Code::Internal => text.into_owned(),
            code => format!("{} {method}: {code:?}: {text}", self.name()),
        };
        ProviderError::failed(message)
    }

    /// [`Self::error`] for `Create` and `Update`: in a preview nothing can have happened, so
    /// a plugin that died there failed the preview, no more.
    fn mutation_error(
        &self,
        method: &'static str,
        preview: bool,
        status: tonic::Status,
    ) -> ProviderError {
        match self.error(method, status) {
            ProviderError::OutcomeUnknown { message } if preview => ProviderError::failed(message),
            other => other,
        }
    }

    /// A failure that left a resource behind (`ErrorResourceInitFailed`), its state checked like
    /// any reply: what cannot be kept is dropped and named in the message.
    fn partial_failure(
        &self,
        method: &'static str,
        message: String,
        partial: InitFailed,
    ) -> ProviderError {
        let problems = partial.problems;
        // As Pulumi: the failure is what the provider gives as reasons; the status text only
        // when it gives none.
        let message = if partial.state.reasons.is_empty() {
            message
        } else {
            partial.state.reasons.join("; ")
        };
        if let Err(e) = wire::id("id", &partial.state.id) {
            // Without a storable ID the resource cannot be tracked: say so loudly.
            return ProviderError::failed(format!(
                "{message}; {} {method}: the plugin reported a partly created resource with an ID that cannot be recorded ({e}); the resource may exist and is not tracked",
                self.name()
            ));
        }
        let message = if problems.is_empty() {
            message
        } else {
            format!(
                "{message}; {} {method}: properties of the partly created resource were dropped: {}{}",
                self.name(),
                problems[..problems.len().min(10)].join("; "),
                if problems.len() > 10 {
                    format!("; and {} more", problems.len() - 10)
                } else {
                    String::new()
                }
            )
        };
        ProviderError::Failed {
            message,
            partial: Some(Box::new(partial.state)),
        }
    }

    /// The outputs of a `Create` or `Update` that succeeded: the resource exists, so outputs
    /// that cannot be accepted make the step fail with a partial state holding the ID and the
    /// outputs that can be kept, for the engine to record.
    fn outputs_of_a_real_resource(
        &self,
        method: &'static str,
        id: &str,
        inputs: &PropertyMap,
        outputs: Option<&prost_types::Struct>,
    ) -> Result<PropertyMap, ProviderError> {
        let (kept, errors) = from_struct_lossy(outputs);
        if errors.is_empty() {
            return Ok(kept);
        }
        let listed: Vec<String> = errors.iter().take(10).map(ToString::to_string).collect();
        Err(ProviderError::Failed {
            message: format!(
                "{} {method}: the resource {id:?} was {} but the plugin's outputs cannot be accepted ({}{}); it is recorded without them",
                self.name(),
                if method == "Create" {
                    "created"
                } else {
                    "updated"
                },
                listed.join("; "),
                if errors.len() > listed.len() {
                    format!("; and {} more", errors.len() - listed.len())
                } else {
                    String::new()
                }
            ),
            partial: Some(Box::new(PartialState {
                id: id.to_owned(),
                inputs: inputs.clone(),
                outputs: kept,
                reasons: vec![],
            })),
        })
    }

    fn check_request(&self, request: p::CheckRequest<'_>) -> rpc::CheckRequest {
        rpc::CheckRequest {
            urn: request.urn.to_string(),
            name: request.urn.name().to_owned(),
            r#type: request.urn.resource_type().to_owned(),
            olds: Some(self.out(request.olds)),
            news: Some(self.out(request.news)),
            random_seed: request.random_seed.to_vec(),
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
            "{} {method}: the plugin's reply was refused: {e}",
            self.name()
        ))
    }

    fn bad_field(&self, method: &str, e: wire::FieldError) -> ProviderError {
        ProviderError::failed(format!(
            "{} {method}: the plugin's reply was refused: {e}",
            self.name()
        ))
    }

    /// A diff as the engine takes it, its keys and paths checked.
    fn diff_result(
        &self,
        method: &'static str,
        r: rpc::DiffResponse,
    ) -> Result<p::DiffResult, ProviderError> {
        for (field, keys) in [
            ("replaces", &r.replaces),
            ("stables", &r.stables),
            ("diffs", &r.diffs),
        ] {
            for key in keys {
                wire::key(field, key).map_err(|e| self.bad_field(method, e))?;
            }
        }
        for path in r.detailed_diff.keys() {
            // Detailed-diff keys are property paths; ones that do not parse are shown as keys.
            wire::key("detailedDiff", path)
                .or_else(|_| wire::path("detailedDiff", path))
                .map_err(|e| self.bad_field(method, e))?;
        }
        Ok(diff_result(r))
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

/// What a plugin accepts and supports, and whether its configuration is known.
#[derive(Debug, Clone, Copy)]
struct Protocol {
    /// Which kinds of values may be sent as they are (the rest are downgraded).
    accepts: Marshal,
    /// `Create` and `Update` may be called in a preview.
    supports_preview: bool,
    /// The plugin answered `Handshake`: what it said there is final.
    handshaken: bool,
    /// The configuration it was given held no unknowns.
    config_known: bool,
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol {
            accepts: Marshal::PLAIN,
            supports_preview: false,
            handshaken: false,
            config_known: true,
        }
    }
}

/// The plugin's exit status if it has died. A connection that broke may be seen before the
/// process is reaped, so on a transport failure this waits briefly for the exit.
fn exited(process: &PluginProcess, status: &tonic::Status) -> Option<std::process::ExitStatus> {
    if let Some(exit) = process.exit_status() {
        return Some(exit);
    }
    let transport = (status.source().is_some() && !timed_out(status))
        || (matches!(
            status.code(),
            tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Internal
        ) && (status.message().contains("transport")
            || status.message().contains("connection")));
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

/// The call timeout (`CAIRN_PLUGIN_CALL_TIMEOUT`) expired.
fn timed_out(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Cancelled && status.message().contains("Timeout expired")
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The most reasons of an `ErrorResourceInitFailed` that are kept.
const MAX_INIT_REASONS: usize = 20;

/// The partial state in an `ErrorResourceInitFailed` status detail, with the properties that
/// could not be accepted (dropped from it) described.
struct InitFailed {
    state: PartialState,
    problems: Vec<String>,
}

fn init_failed(details: &[u8]) -> Option<InitFailed> {
    if details.is_empty() {
        return None;
    }
    let status = RpcStatus::decode(details).ok()?;
    let any = status
        .details
        .iter()
        .find(|a| a.type_url == INIT_FAILED_TYPE)?;
    let failed = rpc::ErrorResourceInitFailed::decode(any.value.as_slice()).ok()?;
    // The reasons become the resource's initErrors and the step's error: kept few and short.
    let reasons = failed
        .reasons
        .iter()
        .take(MAX_INIT_REASONS)
        .map(|r| cap_message(r).into_owned())
        .collect();
    let (inputs, input_errors) = from_struct_lossy(failed.inputs.as_ref());
    let (outputs, output_errors) = from_struct_lossy(failed.properties.as_ref());
    let problems = input_errors
        .iter()
        .map(|e| format!("input {e}"))
        .chain(output_errors.iter().map(|e| format!("output {e}")))
        .collect();
    Some(InitFailed {
        state: PartialState {
            id: failed.id,
            inputs,
            outputs,
            reasons,
        },
        problems,
    })
}

/// Property dependencies from a plugin's reply, URNs checked.
fn dependencies(
    plugin: &str,
    method: &str,
    field: &str,
    deps: impl Iterator<Item = (String, Vec<String>)>,
) -> Result<PropertyDependencies, ProviderError> {
    let refused = |e: wire::FieldError| {
        ProviderError::failed(format!(
            "{plugin} {method}: the plugin's reply was refused: {e}"
        ))
    };
    deps.map(|(k, urns)| {
        wire::key(field, &k).map_err(refused)?;
        let urns = wire::urns(&format!("{field}[{:?}]", shown(&k, 64)), &urns).map_err(refused)?;
        Ok((k, urns))
    })
    .collect()
}

/// Check failures as the engine takes them: at most [`wire::MAX_CHECK_FAILURES`] (the rest
/// counted in one more), each property path and reason capped.
fn check_failures(failures: Vec<rpc::CheckFailure>) -> Vec<p::CheckFailure> {
    let total = failures.len();
    let mut kept: Vec<p::CheckFailure> = failures
        .into_iter()
        .take(wire::MAX_CHECK_FAILURES)
        .map(|f| p::CheckFailure {
            property: cap_text(&f.property, 1024).into_owned(),
            reason: cap_text(&f.reason, MAX_MESSAGE_BYTES / 16).into_owned(),
        })
        .collect();
    if total > kept.len() {
        kept.push(p::CheckFailure {
            property: String::new(),
            reason: format!("and {} more failures (not shown)", total - kept.len()),
        });
    }
    kept
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
            .schema_client
            .clone()
            .get_schema(rpc::GetSchemaRequest { version: 0 })
            .await
            .map_err(|s| self.error("GetSchema", s))?;
        Ok(r.into_inner().schema)
    }

    async fn check_config(
        &self,
        request: p::CheckRequest<'_>,
    ) -> Result<p::CheckResult, ProviderError> {
        let r = self
            .client
            .clone()
            .check_config(self.check_request(request))
            .await;
        match r {
            // Older plugins have no CheckConfig: the inputs are fine as they are.
            Err(s) if s.code() == tonic::Code::Unimplemented => Ok(p::CheckResult {
                inputs: request.news.clone(),
                failures: vec![],
            }),
            Err(s) => Err(self.error("CheckConfig", s)),
            Ok(r) => {
                let r = r.into_inner();
                Ok(p::CheckResult {
                    inputs: from_struct(r.inputs.as_ref())
                        .map_err(|e| self.bad_reply("CheckConfig", e))?,
                    failures: check_failures(r.failures),
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
            Ok(r) => self.diff_result("DiffConfig", r.into_inner()),
        }
    }

    async fn configure(&self, inputs: PropertyMap, _preview: bool) -> Result<(), ProviderError> {
        let known = !inputs.values().any(PropertyValue::contains_unknowns);
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
        let mut protocol = lock(&self.protocol);
        if !protocol.handshaken {
            protocol.accepts = Marshal {
                secrets: r.accept_secrets,
                resources: r.accept_resources,
                outputs: false,
            };
            protocol.supports_preview = r.supports_preview;
        }
        protocol.config_known = known;
        Ok(())
    }

    async fn check(&self, request: p::CheckRequest<'_>) -> Result<p::CheckResult, ProviderError> {
        let r = self
            .client
            .clone()
            .check(self.check_request(request))
            .await
            .map_err(|s| self.error("Check", s))?
            .into_inner();
        Ok(p::CheckResult {
            inputs: from_struct(r.inputs.as_ref()).map_err(|e| self.bad_reply("Check", e))?,
            failures: check_failures(r.failures),
        })
    }

    async fn diff(&self, request: p::DiffRequest<'_>) -> Result<p::DiffResult, ProviderError> {
        let r = self
            .client
            .clone()
            .diff(self.diff_request(request))
            .await
            .map_err(|s| self.error("Diff", s))?;
        self.diff_result("Diff", r.into_inner())
    }

    async fn create(&self, request: p::CreateRequest) -> Result<p::CreateResult, ProviderError> {
        if request.preview
            && let Some(outputs) = self.preview_without_plugin(&request.properties)
        {
            return Ok(p::CreateResult {
                id: String::new(),
                outputs,
            });
        }
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
            .map_err(|s| self.mutation_error("Create", request.preview, s))?
            .into_inner();
        if request.preview {
            wire::id("id", &r.id).map_err(|e| self.bad_field("Create", e))?;
        } else {
            // Without a storable ID the engine cannot track what was created.
            let problem = if r.id.is_empty() {
                Some("the plugin returned no ID".to_owned())
            } else {
                wire::id("id", &r.id).err().map(|e| e.to_string())
            };
            if let Some(problem) = problem {
                return Err(ProviderError::failed(format!(
                    "{} Create: {problem}; the resource {} may have been created and is not recorded",
                    self.name(),
                    request.urn
                )));
            }
        }
        let outputs = if request.preview {
            from_struct(r.properties.as_ref()).map_err(|e| self.bad_reply("Create", e))?
        } else {
            self.outputs_of_a_real_resource(
                "Create",
                &r.id,
                &request.properties,
                r.properties.as_ref(),
            )?
        };
        Ok(p::CreateResult { id: r.id, outputs })
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
        wire::id("id", &r.id).map_err(|e| self.bad_field("Read", e))?;
        Ok(p::ReadResult {
            id: r.id,
            inputs: from_struct(r.inputs.as_ref()).map_err(|e| self.bad_reply("Read", e))?,
            outputs: from_struct(r.properties.as_ref()).map_err(|e| self.bad_reply("Read", e))?,
        })
    }

    async fn update(&self, request: p::UpdateRequest) -> Result<p::UpdateResult, ProviderError> {
        if request.preview
            && let Some(outputs) = self.preview_without_plugin(&request.news)
        {
            return Ok(p::UpdateResult { outputs });
        }
        let id = request.id.clone();
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
            .map_err(|s| self.mutation_error("Update", request.preview, s))?
            .into_inner();
        let outputs = if request.preview {
            from_struct(r.properties.as_ref()).map_err(|e| self.bad_reply("Update", e))?
        } else {
            self.outputs_of_a_real_resource("Update", &id, &request.news, r.properties.as_ref())?
        };
        Ok(p::UpdateResult { outputs })
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
            failures: check_failures(r.failures),
        })
    }

    async fn construct(
        &self,
        request: p::ConstructRequest,
        monitor: Monitor,
    ) -> Result<p::ConstructResult, ProviderError> {
        // The URN the component must have: the plugin registers it (through the monitor) and
        // answers with it; any other URN is refused.
        let expected = TypeToken::parse(&request.resource_type)
            .map_err(|e| e.to_string())
            .and_then(|t| {
                Urn::new(
                    &request.stack,
                    &request.project,
                    request.parent.as_ref().map(Urn::qualified_type),
                    &t,
                    &request.name,
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|e| ProviderError::failed(format!("{} Construct: {e}", self.name())))?;
        // The plugin registers the component's children with a monitor served for this call.
        let served = serve_monitor(
            monitor,
            CALLBACK_PARALLELISM,
            Arc::new(NullSink),
            Arc::new(Failures::default()),
        )
        .await
        .map_err(|e| ProviderError::failed(format!("{} Construct: {e}", self.name())))?;
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
                config_secret_keys: request.config_secret_keys,
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
        let urn = wire::optional_urn("urn", &r.urn).map_err(|e| self.bad_field("Construct", e))?;
        if let Some(urn) = &urn
            && urn != &expected
        {
            return Err(ProviderError::failed(format!(
                "{} Construct: the plugin answered with the URN {:?}, not the component's {expected}",
                self.name(),
                shown(urn.as_str(), 1024)
            )));
        }
        Ok(p::ConstructResult {
            urn,
            state: from_struct(r.state.as_ref()).map_err(|e| self.bad_reply("Construct", e))?,
            state_dependencies: dependencies(
                &self.name(),
                "Construct",
                "stateDependencies",
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
                "returnDependencies",
                r.return_dependencies.into_iter().map(|(k, v)| (k, v.urns)),
            )?,
            failures: check_failures(r.failures),
        })
    }

    async fn cancel(&self) {
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, self.client.clone().cancel(())).await;
    }
}
