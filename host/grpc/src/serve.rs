//! Serves any engine [`Provider`] as a `pulumirpc.ResourceProvider` plugin: how a wasm provider
//! becomes usable by gRPC engines (`cairn provider serve FILE.wasm`).
//!
//! The plugin protocol is followed as a plugin: the engine address arrives as an argument (we
//! serve regardless), the chosen port is printed on the first stdout line, `Cancel` is passed
//! to the provider. Provider errors become gRPC `Unknown` statuses carrying the message (with
//! an `ErrorResourceInitFailed` detail when a resource was left behind); `Unimplemented`
//! methods answer `Unimplemented`, as engines expect.

use std::sync::{Arc, Mutex};

use cairn_engine::deploy::provider::{self as p, DiffChanges, DiffKind, Provider, ProviderError};
use cairn_engine::path::PropertyPath;
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyMap;
use prost::Message;
use tonic::{Request, Response, Status};

use crate::convert::{ConvertError, Marshal, from_struct, to_struct};
use crate::engine::{ServeError, Served, serve};
use crate::proto::pulumirpc as rpc;
use crate::proto::pulumirpc::resource_provider_server::{ResourceProvider, ResourceProviderServer};
use crate::wire;

/// `google.rpc.Status`, as carried in the `grpc-status-details-bin` trailer.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(message, repeated, tag = "3")]
    pub details: Vec<prost_types::Any>,
}

/// The type URL of [`rpc::ErrorResourceInitFailed`] in a status detail.
pub(crate) const INIT_FAILED_TYPE: &str = "type.googleapis.com/pulumirpc.ErrorResourceInitFailed";

/// A provider served over gRPC.
pub struct ProviderService {
    provider: Arc<dyn Provider>,
    /// What the engine said it accepts in `Configure`.
    marshal: Mutex<Marshal>,
}

impl ProviderService {
    pub fn new(provider: Arc<dyn Provider>) -> ProviderService {
        ProviderService {
            provider,
            marshal: Mutex::new(Marshal {
                secrets: false,
                resources: false,
                outputs: false,
            }),
        }
    }

    fn marshal(&self) -> Marshal {
        *self
            .marshal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn out(&self, map: &cairn_engine::value::PropertyMap) -> prost_types::Struct {
        to_struct(map, self.marshal())
    }
}

/// Serves `provider` on a loopback port until the handle is dropped.
pub async fn serve_provider(provider: Arc<dyn Provider>) -> Result<Served, ServeError> {
    // The engine is the client: like Pulumi's provider servers (rpcutil's 400 MiB), accept its
    // large requests (10 MB of config or inputs), where tonic's default stops at 4 MiB.
    let router = tonic::transport::Server::builder().add_service(
        ResourceProviderServer::new(ProviderService::new(provider))
            .max_decoding_message_size(wire::max_message_bytes().max(wire::PULUMI_MESSAGE_BYTES))
            .max_encoding_message_size(usize::MAX),
    );
    serve("provider", router).await
}

fn bad_request(e: ConvertError) -> Status {
    Status::invalid_argument(format!("malformed property value: {e}"))
}

fn urn(text: &str) -> Result<Urn, Status> {
    Urn::parse(text).map_err(|e| Status::invalid_argument(format!("invalid URN {text:?}: {e}")))
}

fn paths(texts: &[String]) -> Result<Vec<PropertyPath>, Status> {
    texts
        .iter()
        .map(|t| {
            PropertyPath::parse(t)
                .map_err(|e| Status::invalid_argument(format!("invalid property path {t:?}: {e}")))
        })
        .collect()
}

/// A provider error as the status an engine expects.
fn status(error: ProviderError, marshal: Marshal) -> Status {
    match error {
        ProviderError::Unimplemented { method } => {
            Status::unimplemented(format!("{method} is not implemented"))
        }
        ProviderError::Cancelled => Status::cancelled("the operation was cancelled"),
        ProviderError::Timeout { seconds } => {
            Status::deadline_exceeded(format!("the operation did not finish within {seconds} s"))
        }
        // Whoever called this server cannot know the outcome either.
        error @ ProviderError::OutcomeUnknown { .. } => Status::unavailable(error.to_string()),
        ProviderError::Failed { message, partial } => match partial {
            None => Status::unknown(message),
            Some(partial) => {
                let detail = rpc::ErrorResourceInitFailed {
                    id: partial.id.clone(),
                    properties: Some(to_struct(&partial.outputs, marshal)),
                    reasons: if partial.reasons.is_empty() {
                        vec![message.clone()]
                    } else {
                        partial.reasons.clone()
                    },
                    inputs: Some(to_struct(&partial.inputs, marshal)),
                };
                let details = RpcStatus {
                    code: tonic::Code::Unknown as i32,
                    message: message.clone(),
                    details: vec![prost_types::Any {
                        type_url: INIT_FAILED_TYPE.to_owned(),
                        value: detail.encode_to_vec(),
                    }],
                };
                Status::with_details(
                    tonic::Code::Unknown,
                    message,
                    details.encode_to_vec().into(),
                )
            }
        },
    }
}

fn failures(failures: Vec<p::CheckFailure>) -> Vec<rpc::CheckFailure> {
    failures
        .into_iter()
        .map(|f| rpc::CheckFailure {
            property: f.property,
            reason: f.reason,
        })
        .collect()
}

fn diff_response(d: p::DiffResult) -> rpc::DiffResponse {
    use rpc::diff_response::DiffChanges as C;
    use rpc::property_diff::Kind as K;
    let has_detailed = d.detailed_diff.is_some();
    rpc::DiffResponse {
        replaces: d.replace_keys,
        stables: d.stable_keys,
        delete_before_replace: d.delete_before_replace,
        changes: match d.changes {
            DiffChanges::Unknown => C::DiffUnknown,
            DiffChanges::None => C::DiffNone,
            DiffChanges::Some => C::DiffSome,
        } as i32,
        diffs: d.changed_keys,
        detailed_diff: d
            .detailed_diff
            .unwrap_or_default()
            .into_iter()
            .map(|(path, diff)| {
                let kind = match diff.kind {
                    DiffKind::Add => K::Add,
                    DiffKind::AddReplace => K::AddReplace,
                    DiffKind::Delete => K::Delete,
                    DiffKind::DeleteReplace => K::DeleteReplace,
                    DiffKind::Update => K::Update,
                    DiffKind::UpdateReplace => K::UpdateReplace,
                };
                (
                    path,
                    rpc::PropertyDiff {
                        kind: kind as i32,
                        input_diff: diff.input_diff,
                    },
                )
            })
            .collect(),
        has_detailed_diff: has_detailed,
    }
}

/// A decoded `CheckRequest`, which the engine's (borrowed) request is lent from.
struct Check {
    urn: Urn,
    olds: PropertyMap,
    news: PropertyMap,
    random_seed: Vec<u8>,
}

impl Check {
    fn decode(r: rpc::CheckRequest) -> Result<Check, Status> {
        Ok(Check {
            urn: urn(&r.urn)?,
            olds: from_struct(r.olds.as_ref()).map_err(bad_request)?,
            news: from_struct(r.news.as_ref()).map_err(bad_request)?,
            random_seed: r.random_seed,
        })
    }

    fn request(&self) -> p::CheckRequest<'_> {
        p::CheckRequest {
            urn: &self.urn,
            olds: &self.olds,
            news: &self.news,
            random_seed: &self.random_seed,
        }
    }
}

/// A decoded `DiffRequest`, which the engine's (borrowed) request is lent from.
struct Diff {
    urn: Urn,
    id: String,
    old_inputs: PropertyMap,
    old_outputs: PropertyMap,
    news: PropertyMap,
    ignore_changes: Vec<PropertyPath>,
}

impl Diff {
    fn decode(r: rpc::DiffRequest) -> Result<Diff, Status> {
        Ok(Diff {
            urn: urn(&r.urn)?,
            id: r.id,
            old_inputs: from_struct(r.old_inputs.as_ref()).map_err(bad_request)?,
            old_outputs: from_struct(r.olds.as_ref()).map_err(bad_request)?,
            news: from_struct(r.news.as_ref()).map_err(bad_request)?,
            ignore_changes: paths(&r.ignore_changes)?,
        })
    }

    fn request(&self) -> p::DiffRequest<'_> {
        p::DiffRequest {
            urn: &self.urn,
            id: &self.id,
            old_inputs: &self.old_inputs,
            old_outputs: &self.old_outputs,
            news: &self.news,
            ignore_changes: &self.ignore_changes,
        }
    }
}

#[tonic::async_trait]
impl ResourceProvider for ProviderService {
    async fn handshake(
        &self,
        _request: Request<rpc::ProviderHandshakeRequest>,
    ) -> Result<Response<rpc::ProviderHandshakeResponse>, Status> {
        Ok(Response::new(rpc::ProviderHandshakeResponse {
            accept_secrets: true,
            accept_resources: true,
            accept_outputs: false,
            supports_autonaming_configuration: false,
        }))
    }

    async fn get_schema(
        &self,
        _request: Request<rpc::GetSchemaRequest>,
    ) -> Result<Response<rpc::GetSchemaResponse>, Status> {
        let schema = self
            .provider
            .get_schema()
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(rpc::GetSchemaResponse { schema }))
    }

    async fn check_config(
        &self,
        request: Request<rpc::CheckRequest>,
    ) -> Result<Response<rpc::CheckResponse>, Status> {
        let result = self
            .provider
            .check_config(Check::decode(request.into_inner())?.request())
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(rpc::CheckResponse {
            inputs: Some(self.out(&result.inputs)),
            failures: failures(result.failures),
        }))
    }

    async fn diff_config(
        &self,
        request: Request<rpc::DiffRequest>,
    ) -> Result<Response<rpc::DiffResponse>, Status> {
        let result = self
            .provider
            .diff_config(Diff::decode(request.into_inner())?.request())
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(diff_response(result)))
    }

    async fn configure(
        &self,
        request: Request<rpc::ConfigureRequest>,
    ) -> Result<Response<rpc::ConfigureResponse>, Status> {
        let r = request.into_inner();
        *self
            .marshal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Marshal {
            secrets: r.accept_secrets,
            resources: r.accept_resources,
            outputs: false,
        };
        let inputs = match &r.args {
            Some(args) => from_struct(Some(args)).map_err(bad_request)?,
            // Older engines send only `variables` (`<pkg>:config:<key>` → string).
            None => r
                .variables
                .iter()
                .map(|(k, v)| {
                    let key = k.rsplit(':').next().unwrap_or(k).to_owned();
                    (key, cairn_engine::value::PropertyValue::String(v.clone()))
                })
                .collect(),
        };
        let preview = inputs.values().any(|v| v.contains_unknowns());
        self.provider
            .configure(inputs, preview)
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(rpc::ConfigureResponse {
            accept_secrets: true,
            supports_preview: true,
            accept_resources: true,
            accept_outputs: false,
            supports_autonaming_configuration: false,
        }))
    }

    async fn invoke(
        &self,
        request: Request<rpc::InvokeRequest>,
    ) -> Result<Response<rpc::InvokeResponse>, Status> {
        let r = request.into_inner();
        let result = self
            .provider
            .invoke(p::InvokeRequest {
                token: r.tok,
                args: from_struct(r.args.as_ref()).map_err(bad_request)?,
            })
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(rpc::InvokeResponse {
            r#return: Some(self.out(&result.outputs)),
            failures: failures(result.failures),
        }))
    }

    async fn call(
        &self,
        _request: Request<rpc::CallRequest>,
    ) -> Result<Response<rpc::CallResponse>, Status> {
        Err(Status::unimplemented(
            "Call is not available when serving a wasm provider over gRPC",
        ))
    }

    async fn check(
        &self,
        request: Request<rpc::CheckRequest>,
    ) -> Result<Response<rpc::CheckResponse>, Status> {
        let result = self
            .provider
            .check(Check::decode(request.into_inner())?.request())
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(rpc::CheckResponse {
            inputs: Some(self.out(&result.inputs)),
            failures: failures(result.failures),
        }))
    }

    async fn diff(
        &self,
        request: Request<rpc::DiffRequest>,
    ) -> Result<Response<rpc::DiffResponse>, Status> {
        let result = self
            .provider
            .diff(Diff::decode(request.into_inner())?.request())
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(diff_response(result)))
    }

    async fn create(
        &self,
        request: Request<rpc::CreateRequest>,
    ) -> Result<Response<rpc::CreateResponse>, Status> {
        let r = request.into_inner();
        let result = self
            .provider
            .create(p::CreateRequest {
                urn: urn(&r.urn)?,
                properties: from_struct(r.properties.as_ref()).map_err(bad_request)?,
                timeout: r.timeout,
                preview: r.preview,
            })
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(rpc::CreateResponse {
            id: result.id,
            properties: Some(self.out(&result.outputs)),
        }))
    }

    async fn read(
        &self,
        request: Request<rpc::ReadRequest>,
    ) -> Result<Response<rpc::ReadResponse>, Status> {
        let r = request.into_inner();
        let result = self
            .provider
            .read(p::ReadRequest {
                urn: urn(&r.urn)?,
                id: r.id,
                inputs: from_struct(r.inputs.as_ref()).map_err(bad_request)?,
                state: from_struct(r.properties.as_ref()).map_err(bad_request)?,
            })
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(rpc::ReadResponse {
            id: result.id,
            properties: Some(self.out(&result.outputs)),
            inputs: Some(self.out(&result.inputs)),
        }))
    }

    async fn update(
        &self,
        request: Request<rpc::UpdateRequest>,
    ) -> Result<Response<rpc::UpdateResponse>, Status> {
        let r = request.into_inner();
        let result = self
            .provider
            .update(p::UpdateRequest {
                urn: urn(&r.urn)?,
                id: r.id,
                old_inputs: from_struct(r.old_inputs.as_ref()).map_err(bad_request)?,
                old_outputs: from_struct(r.olds.as_ref()).map_err(bad_request)?,
                news: from_struct(r.news.as_ref()).map_err(bad_request)?,
                timeout: r.timeout,
                ignore_changes: paths(&r.ignore_changes)?,
                preview: r.preview,
            })
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(rpc::UpdateResponse {
            properties: Some(self.out(&result.outputs)),
        }))
    }

    async fn delete(&self, request: Request<rpc::DeleteRequest>) -> Result<Response<()>, Status> {
        let r = request.into_inner();
        self.provider
            .delete(p::DeleteRequest {
                urn: urn(&r.urn)?,
                id: r.id,
                inputs: from_struct(r.old_inputs.as_ref()).map_err(bad_request)?,
                outputs: from_struct(r.properties.as_ref()).map_err(bad_request)?,
                timeout: r.timeout,
            })
            .await
            .map_err(|e| status(e, self.marshal()))?;
        Ok(Response::new(()))
    }

    async fn construct(
        &self,
        _request: Request<rpc::ConstructRequest>,
    ) -> Result<Response<rpc::ConstructResponse>, Status> {
        Err(Status::unimplemented(
            "Construct is not available when serving a wasm provider over gRPC",
        ))
    }

    async fn cancel(&self, _request: Request<()>) -> Result<Response<()>, Status> {
        self.provider.cancel().await;
        Ok(Response::new(()))
    }

    async fn get_plugin_info(
        &self,
        _request: Request<()>,
    ) -> Result<Response<rpc::PluginInfo>, Status> {
        Ok(Response::new(rpc::PluginInfo {
            version: self
                .provider
                .version()
                .map(|v| v.to_string())
                .unwrap_or_default(),
        }))
    }

    async fn attach(&self, _request: Request<rpc::PluginAttach>) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }
}
