//! Test plugins and harnesses: a scripted hostile provider plugin (tonic, in-process), protobuf
//! value builders, and an in-memory deployment whose provider is a gRPC plugin.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::PropertyMap;
use cairn_engine::deploy::events::{EngineEvent, EventSink};
use cairn_engine::deploy::journal::{PersistError, Persister, SnapshotManager};
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError};
use cairn_engine::deploy::provider::{
    CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest, DiffRequest, DiffResult,
    LoadError, NativePlugins, Provider, ProviderError, ProviderLoader, ReadRequest, ReadResult,
    UpdateRequest, UpdateResult,
};
use cairn_engine::deploy::{DeployError, Deployment, DeploymentOptions, Outcome};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::codec::decode_deployment;
use cairn_engine::state::{DeploymentV3, Manifest, Snapshot, verify_integrity};
use cairn_grpc::GrpcProvider;
use cairn_grpc::proto::pulumirpc as rpc;
use cairn_grpc::proto::pulumirpc::resource_monitor_client::ResourceMonitorClient;
use cairn_grpc::proto::pulumirpc::resource_provider_server::{
    ResourceProvider, ResourceProviderServer,
};
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};
use tokio::sync::oneshot;
use tonic::{Request, Response, Status};

// ---------------------------------------------------------------------------------------------
// Protobuf values.

pub fn num(n: f64) -> Value {
    Value {
        kind: Some(Kind::NumberValue(n)),
    }
}

pub fn text(s: &str) -> Value {
    Value {
        kind: Some(Kind::StringValue(s.to_owned())),
    }
}

pub fn null() -> Value {
    Value {
        kind: Some(Kind::NullValue(0)),
    }
}

pub fn list(values: Vec<Value>) -> Value {
    Value {
        kind: Some(Kind::ListValue(ListValue { values })),
    }
}

pub fn fields(entries: Vec<(&str, Value)>) -> Struct {
    Struct {
        fields: entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    }
}

pub fn object(entries: Vec<(&str, Value)>) -> Value {
    Value {
        kind: Some(Kind::StructValue(fields(entries))),
    }
}

// ---------------------------------------------------------------------------------------------
// Servers.

/// A server on a loopback port, stopped when dropped.
pub struct Running {
    pub port: u16,
    _stop: oneshot::Sender<()>,
}

/// Serves `router` on a loopback port.
pub async fn serve(router: tonic::transport::server::Router) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        let _ = router
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stopped.await;
            })
            .await;
    });
    Running { port, _stop: stop }
}

/// One scripted reply per method, used once; calls without one are answered honestly.
#[derive(Default)]
pub struct Script {
    pub create: Option<Result<rpc::CreateResponse, Status>>,
    pub update: Option<Result<rpc::UpdateResponse, Status>>,
    pub check: Option<Result<rpc::CheckResponse, Status>>,
    pub diff: Option<Result<rpc::DiffResponse, Status>>,
    pub read: Option<Result<rpc::ReadResponse, Status>>,
    pub invoke: Option<Result<rpc::InvokeResponse, Status>>,
    pub construct: Option<Result<rpc::ConstructResponse, Status>>,
    /// What `Construct` registers through the engine's monitor, in order (the first is
    /// normally the component itself); it answers with the URN of the first that succeeds.
    pub construct_registrations: Vec<rpc::RegisterResourceRequest>,
    /// What `Construct` invokes through the engine's monitor after its registrations.
    pub construct_invokes: Vec<rpc::ResourceInvokeRequest>,
    /// A stack transform `Construct` registers through the engine's monitor, first.
    pub construct_stack_transform: Option<rpc::Callback>,
}

/// A provider plugin for package `hostile` that answers what its script says.
#[derive(Default)]
pub struct Hostile {
    pub script: Mutex<Script>,
    /// Create requests seen (name of each resource).
    pub created: Mutex<Vec<String>>,
    /// What each of `construct_registrations` got: the URN, or the refusal.
    pub construct_results: Mutex<Vec<Result<String, String>>>,
    /// What each of `construct_invokes` got (and `construct_stack_transform`, first).
    pub construct_invoke_results: Mutex<Vec<Result<rpc::InvokeResponse, String>>>,
    /// The inputs of the last `Construct`.
    pub construct_inputs: Mutex<Option<Struct>>,
    /// What its `Configure` answers for `supportsPreview`.
    pub supports_preview: std::sync::atomic::AtomicBool,
    /// Every `Create`, `Update` and `Delete` it received: `"Create a (preview)"`, `"Update a"`.
    pub mutations: Mutex<Vec<String>>,
}

impl Hostile {
    pub fn set(&self, f: impl FnOnce(&mut Script)) {
        f(&mut self.script.lock().unwrap());
    }
}

fn scripted<T>(
    slot: &mut Option<Result<T, Status>>,
    honest: impl FnOnce() -> T,
) -> Result<Response<T>, Status> {
    match slot.take() {
        Some(reply) => reply.map(Response::new),
        None => Ok(Response::new(honest())),
    }
}

fn name_of(urn: &str) -> String {
    urn.rsplit("::").next().unwrap_or_default().to_owned()
}

impl Hostile {
    fn mutated(&self, method: &str, urn: &str, preview: bool) {
        self.mutations.lock().unwrap().push(format!(
            "{method} {}{}",
            name_of(urn),
            if preview { " (preview)" } else { "" }
        ));
    }
}

#[async_trait]
impl ResourceProvider for Hostile {
    async fn handshake(
        &self,
        _: Request<rpc::ProviderHandshakeRequest>,
    ) -> Result<Response<rpc::ProviderHandshakeResponse>, Status> {
        Err(Status::unimplemented("no handshake"))
    }

    async fn get_schema(
        &self,
        _: Request<rpc::GetSchemaRequest>,
    ) -> Result<Response<rpc::GetSchemaResponse>, Status> {
        Ok(Response::new(rpc::GetSchemaResponse {
            schema: "{}".into(),
        }))
    }

    async fn check_config(
        &self,
        r: Request<rpc::CheckRequest>,
    ) -> Result<Response<rpc::CheckResponse>, Status> {
        Ok(Response::new(rpc::CheckResponse {
            inputs: r.into_inner().news,
            failures: vec![],
        }))
    }

    async fn diff_config(
        &self,
        _: Request<rpc::DiffRequest>,
    ) -> Result<Response<rpc::DiffResponse>, Status> {
        Ok(Response::new(rpc::DiffResponse::default()))
    }

    async fn configure(
        &self,
        _: Request<rpc::ConfigureRequest>,
    ) -> Result<Response<rpc::ConfigureResponse>, Status> {
        Ok(Response::new(rpc::ConfigureResponse {
            accept_secrets: true,
            accept_resources: true,
            supports_preview: self
                .supports_preview
                .load(std::sync::atomic::Ordering::SeqCst),
            ..Default::default()
        }))
    }

    async fn invoke(
        &self,
        r: Request<rpc::InvokeRequest>,
    ) -> Result<Response<rpc::InvokeResponse>, Status> {
        let r = r.into_inner();
        scripted(&mut self.script.lock().unwrap().invoke, || {
            rpc::InvokeResponse {
                r#return: r.args,
                failures: vec![],
            }
        })
    }

    async fn call(
        &self,
        _: Request<rpc::CallRequest>,
    ) -> Result<Response<rpc::CallResponse>, Status> {
        Err(Status::unimplemented("no call"))
    }

    async fn check(
        &self,
        r: Request<rpc::CheckRequest>,
    ) -> Result<Response<rpc::CheckResponse>, Status> {
        let r = r.into_inner();
        scripted(&mut self.script.lock().unwrap().check, || {
            rpc::CheckResponse {
                inputs: r.news,
                failures: vec![],
            }
        })
    }

    async fn diff(
        &self,
        _: Request<rpc::DiffRequest>,
    ) -> Result<Response<rpc::DiffResponse>, Status> {
        scripted(
            &mut self.script.lock().unwrap().diff,
            rpc::DiffResponse::default,
        )
    }

    async fn create(
        &self,
        r: Request<rpc::CreateRequest>,
    ) -> Result<Response<rpc::CreateResponse>, Status> {
        let r = r.into_inner();
        self.created.lock().unwrap().push(name_of(&r.urn));
        self.mutated("Create", &r.urn, r.preview);
        scripted(&mut self.script.lock().unwrap().create, || {
            rpc::CreateResponse {
                id: format!("{}-1", name_of(&r.urn)),
                properties: r.properties,
            }
        })
    }

    async fn read(
        &self,
        r: Request<rpc::ReadRequest>,
    ) -> Result<Response<rpc::ReadResponse>, Status> {
        let r = r.into_inner();
        scripted(&mut self.script.lock().unwrap().read, || {
            rpc::ReadResponse {
                id: r.id,
                properties: r.properties,
                inputs: r.inputs,
            }
        })
    }

    async fn update(
        &self,
        r: Request<rpc::UpdateRequest>,
    ) -> Result<Response<rpc::UpdateResponse>, Status> {
        let r = r.into_inner();
        self.mutated("Update", &r.urn, r.preview);
        scripted(&mut self.script.lock().unwrap().update, || {
            rpc::UpdateResponse { properties: r.news }
        })
    }

    async fn delete(&self, r: Request<rpc::DeleteRequest>) -> Result<Response<()>, Status> {
        self.mutated("Delete", &r.into_inner().urn, false);
        Ok(Response::new(()))
    }

    async fn construct(
        &self,
        request: Request<rpc::ConstructRequest>,
    ) -> Result<Response<rpc::ConstructResponse>, Status> {
        let (registrations, invokes, stack_transform) = {
            let mut script = self.script.lock().unwrap();
            (
                std::mem::take(&mut script.construct_registrations),
                std::mem::take(&mut script.construct_invokes),
                script.construct_stack_transform.take(),
            )
        };
        if registrations.is_empty() {
            return scripted(
                &mut self.script.lock().unwrap().construct,
                rpc::ConstructResponse::default,
            );
        }
        let request = request.into_inner();
        *self.construct_inputs.lock().unwrap() = request.inputs.clone();
        let endpoint = format!("http://{}", request.monitor_endpoint);
        let mut monitor = ResourceMonitorClient::connect(endpoint)
            .await
            .map_err(|e| Status::internal(e.to_string()))?;
        if let Some(callback) = stack_transform {
            let result = monitor
                .register_stack_transform(callback)
                .await
                .map(|_| rpc::InvokeResponse::default())
                .map_err(|status| status.message().to_owned());
            self.construct_invoke_results.lock().unwrap().push(result);
        }
        let mut urn = String::new();
        for registration in registrations {
            let result = monitor
                .register_resource(registration)
                .await
                .map(|r| r.into_inner().urn)
                .map_err(|status| status.message().to_owned());
            if let (true, Ok(registered)) = (urn.is_empty(), &result) {
                urn = registered.clone();
            }
            self.construct_results.lock().unwrap().push(result);
        }
        for invoke in invokes {
            let result = monitor
                .invoke(invoke)
                .await
                .map(tonic::Response::into_inner)
                .map_err(|status| status.message().to_owned());
            self.construct_invoke_results.lock().unwrap().push(result);
        }
        Ok(Response::new(rpc::ConstructResponse {
            urn,
            ..Default::default()
        }))
    }

    async fn cancel(&self, _: Request<()>) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }

    async fn get_plugin_info(&self, _: Request<()>) -> Result<Response<rpc::PluginInfo>, Status> {
        Ok(Response::new(rpc::PluginInfo {
            version: "1.0.0".into(),
        }))
    }

    async fn attach(&self, _: Request<rpc::PluginAttach>) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("no attach"))
    }
}

/// The hostile plugin, served, and a configured provider talking to it.
pub async fn hostile() -> (Arc<Hostile>, GrpcProvider, Running) {
    let (plugin, running) = hostile_served(Hostile::default()).await;
    let provider = provider_at(running.port).await;
    provider
        .configure(cairn_engine::PropertyMap::new(), false)
        .await
        .unwrap();
    (plugin, provider, running)
}

/// `plugin`, served.
pub async fn hostile_served(plugin: Hostile) -> (Arc<Hostile>, Running) {
    let plugin = Arc::new(plugin);
    let running = serve(
        tonic::transport::Server::builder()
            .add_service(ResourceProviderServer::from_arc(plugin.clone())),
    )
    .await;
    (plugin, running)
}

/// A provider for package `hostile` talking to the plugin at `port`.
pub async fn provider_at(port: u16) -> GrpcProvider {
    let channel = cairn_grpc::plugin::connect("hostile", port, std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let mut provider = GrpcProvider::over("hostile", channel, None);
    provider.introduce("127.0.0.1:1").await.unwrap();
    provider
}

/// `google.rpc.Status`, to carry an `ErrorResourceInitFailed` in a status's details.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(message, repeated, tag = "3")]
    pub details: Vec<prost_types::Any>,
}

/// A failure that left a resource behind, as plugins report it.
pub fn init_failed(message: &str, failed: rpc::ErrorResourceInitFailed) -> Status {
    use prost::Message;
    let details = RpcStatus {
        code: tonic::Code::Unknown as i32,
        message: message.to_owned(),
        details: vec![prost_types::Any {
            type_url: "type.googleapis.com/pulumirpc.ErrorResourceInitFailed".into(),
            value: failed.encode_to_vec(),
        }],
    };
    Status::with_details(
        tonic::Code::Unknown,
        message.to_owned(),
        details.encode_to_vec().into(),
    )
}

// ---------------------------------------------------------------------------------------------
// Deployments.

/// Keeps the last state saved, as JSON text (what a backend would write).
#[derive(Default)]
struct Saved(Mutex<Option<String>>);

impl Persister for Saved {
    fn append(&self, _lines: &[u8]) -> Result<(), PersistError> {
        Ok(())
    }
    fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
        let text =
            String::from_utf8(deployment.to_vec()).map_err(|e| PersistError::new(e.to_string()))?;
        *self.0.lock().unwrap() = Some(text);
        Ok(())
    }
}

struct Plain;

impl Crypter for Plain {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        Ok(plaintext.to_owned())
    }
    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        Ok(ciphertext.to_owned())
    }
}

/// Collects a deployment's events.
#[derive(Default)]
pub struct Events(pub Mutex<Vec<EngineEvent>>);

impl EventSink for Events {
    fn emit(&self, event: EngineEvent) {
        self.0.lock().unwrap().push(event);
    }
}

/// Loads package `hostile` as the plugin on `port`, and the built-in `pulumi` package (whose
/// default provider a program's `pulumi:pulumi:getResource` registers) as [`Builtins`].
struct Loader {
    port: u16,
}

/// The `pulumi` package as the CLI's built-in provider stands for it here: configured with
/// anything, and no resources of its own.
struct Builtins;

#[async_trait]
impl Provider for Builtins {
    fn package(&self) -> &str {
        "pulumi"
    }

    async fn configure(&self, _: PropertyMap, _: bool) -> Result<(), ProviderError> {
        Ok(())
    }

    async fn check(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: request.news.clone(),
            failures: vec![],
        })
    }

    async fn diff(&self, _: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        Ok(DiffResult::default())
    }

    async fn create(&self, _: CreateRequest) -> Result<CreateResult, ProviderError> {
        Err(ProviderError::failed(
            "the test's pulumi package has no resources",
        ))
    }

    async fn read(&self, _: ReadRequest) -> Result<ReadResult, ProviderError> {
        Err(ProviderError::failed(
            "the test's pulumi package has no resources",
        ))
    }

    async fn update(&self, _: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        Err(ProviderError::failed(
            "the test's pulumi package has no resources",
        ))
    }

    async fn delete(&self, _: DeleteRequest) -> Result<(), ProviderError> {
        Ok(())
    }
}

#[async_trait]
impl ProviderLoader for Loader {
    async fn load(
        &self,
        package: &str,
        _version: Option<&semver::Version>,
        _native: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        if package == "pulumi" {
            return Ok(Arc::new(Builtins));
        }
        if package != "hostile" {
            return Err(LoadError::NotFound {
                package: package.to_owned(),
                version: None,
            });
        }
        Ok(Arc::new(provider_at(self.port).await))
    }
}

/// Runs `program` as an update of `base` with the plugin on `port` as package `hostile`.
/// Returns the outcome, and the state the deployment saved, read back as the next command
/// would read it (it must pass the integrity check).
pub async fn deploy(
    base: Snapshot,
    port: u16,
    program: Arc<dyn Program>,
) -> (Result<Outcome, DeployError>, Snapshot) {
    let mut manifest = Manifest::new();
    manifest.time = format!("{}-{}", manifest.time, base.resources.len());
    let saved = Arc::new(Saved::default());
    let journal = Arc::new(
        SnapshotManager::new(base, manifest, Some(saved.clone()), Arc::new(Plain)).unwrap(),
    );
    let deployment = Deployment::new(
        {
            // The plugin is native code found by lookup, as for an SDK program.
            let mut options = DeploymentOptions::new("proj", "dev");
            options.native_plugins = NativePlugins::Any;
            options
        },
        Arc::new(Loader { port }),
        Arc::new(Events::default()),
        journal,
    )
    .unwrap();
    let outcome = deployment.update(program).await;
    let text = saved
        .0
        .lock()
        .unwrap()
        .clone()
        .expect("the deployment saved its state");
    let stored: DeploymentV3 = serde_json::from_str(&text).unwrap();
    let snapshot = decode_deployment(stored, Some(&Plain)).unwrap();
    verify_integrity(&snapshot).unwrap_or_else(|e| panic!("{e}"));
    (outcome, snapshot)
}

// ---------------------------------------------------------------------------------------------
// SDK programs.

/// The client an [`SdkScript`] talks to the served monitor with.
pub type MonitorClient = ResourceMonitorClient<tonic::transport::Channel>;

type ScriptFn = dyn Fn(MonitorClient) -> futures::future::BoxFuture<'static, Result<(), ProgramError>>
    + Send
    + Sync;

/// A program that talks to the served monitor as an SDK does: `script` runs with a client of a
/// monitor served for it (`serve_monitor`, as for Python and Node.js programs).
pub struct SdkScript(pub Box<ScriptFn>);

impl SdkScript {
    pub fn new<F>(script: impl Fn(MonitorClient) -> F + Send + Sync + 'static) -> Arc<SdkScript>
    where
        F: std::future::Future<Output = Result<(), ProgramError>> + Send + 'static,
    {
        Arc::new(SdkScript(Box::new(move |client| Box::pin(script(client)))))
    }
}

#[async_trait]
impl Program for SdkScript {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let served = cairn_grpc::monitor::serve_monitor(
            monitor,
            4,
            Arc::new(Events::default()),
            Arc::new(cairn_grpc::monitor::Failures::default()),
        )
        .await
        .map_err(|e| ProgramError::new(e.to_string()))?;
        let channel =
            tonic::transport::Endpoint::from_shared(format!("http://{}", served.target()))
                .unwrap()
                .connect()
                .await
                .map_err(|e| ProgramError::new(e.to_string()))?;
        (self.0)(ResourceMonitorClient::new(channel)).await
    }
}

/// A failed monitor request as a program error (its message).
pub fn failed(status: Status) -> ProgramError {
    ProgramError::new(status.message())
}
