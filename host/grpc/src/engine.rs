//! The engine address plugins and programs are given: serves `pulumirpc.Engine` (log messages
//! become engine diagnostics; the root resource URN) and `grpc.health.v1.Health` (plugins poll
//! it and exit when the engine is gone) on a loopback port.
//!
//! `Log` is bounded: each message is capped at `MAX_MESSAGE_BYTES`, and the messages of one
//! served engine (one deployment's plugins, or one program) are shown up to the log limit
//! (`CAIRN_GRPC_LOG_MB`), then dropped with one note.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use cairn_engine::deploy::events::{EngineEvent, EventSink, Severity};
use cairn_engine::limits::cap_message;
use cairn_engine::urn::Urn;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

use crate::proto::health::health_check_response::ServingStatus;
use crate::proto::health::health_server::{Health, HealthServer};
use crate::proto::health::{HealthCheckRequest, HealthCheckResponse};
use crate::proto::pulumirpc::engine_server::{Engine, EngineServer};
use crate::proto::pulumirpc::{
    GetRootResourceRequest, GetRootResourceResponse, LogRequest, LogSeverity,
    SetRootResourceRequest, SetRootResourceResponse,
};
use crate::wire::{self, Admit, LogBudget};

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
#[error("starting the {what} gRPC server: {source}")]
pub struct ServeError {
    pub what: &'static str,
    #[source]
    pub source: std::io::Error,
}

/// A running server; dropping it stops the server.
pub struct Served {
    pub address: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Served {
    /// `127.0.0.1:<port>`, as plugins take it.
    pub fn target(&self) -> String {
        self.address.to_string()
    }
}

/// Binds a loopback port and serves `router` on it until the returned handle is dropped.
pub(crate) async fn serve(
    what: &'static str,
    router: tonic::transport::server::Router,
) -> Result<Served, ServeError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|source| ServeError { what, source })?;
    let address = listener
        .local_addr()
        .map_err(|source| ServeError { what, source })?;
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        // Small request/response exchanges: without TCP_NODELAY each can wait ~40 ms for a
        // delayed ACK.
        let incoming = futures::StreamExt::map(TcpListenerStream::new(listener), |stream| {
            stream.inspect(|s| {
                let _ = s.set_nodelay(true);
            })
        });
        let shutdown = async {
            let _ = stopped.await;
        };
        if let Err(e) = router
            .serve_with_incoming_shutdown(incoming, shutdown)
            .await
        {
            tracing::warn!(server = what, error = %e, "gRPC server stopped");
        }
    });
    Ok(Served {
        address,
        _stop: stop,
    })
}

/// The `Engine` service: forwards log messages to the deployment's events.
pub struct EngineService {
    events: Arc<dyn EventSink>,
    root: Mutex<Option<String>>,
    budget: LogBudget,
}

impl EngineService {
    pub fn new(events: Arc<dyn EventSink>, root: Option<&Urn>) -> EngineService {
        EngineService::with_budget(events, root, LogBudget::from_settings())
    }

    /// A service whose log messages are shown within `budget`.
    pub fn with_budget(
        events: Arc<dyn EventSink>,
        root: Option<&Urn>,
        budget: LogBudget,
    ) -> EngineService {
        EngineService {
            events,
            root: Mutex::new(root.map(ToString::to_string)),
            budget,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[tonic::async_trait]
impl Engine for EngineService {
    async fn log(&self, request: Request<LogRequest>) -> Result<Response<()>, Status> {
        let r = request.into_inner();
        if r.ephemeral {
            return Ok(Response::new(()));
        }
        let severity = match LogSeverity::try_from(r.severity).unwrap_or(LogSeverity::Info) {
            // No display shows debug messages, and Pulumi's Python SDK sends one or two for
            // every registration: dropped here, they neither cost a conversion nor use up the
            // budget that the program's warnings and errors are shown within (a 100,000-
            // resource program's chatter exhausted it).
            LogSeverity::Debug => return Ok(Response::new(())),
            LogSeverity::Info => Severity::Info,
            LogSeverity::Warning => Severity::Warning,
            LogSeverity::Error => Severity::Error,
        };
        let message = cap_message(r.message.trim_end());
        let (urn, message) = match Urn::parse(&r.urn) {
            Ok(urn) => (Some(urn), message.into_owned()),
            Err(_) if r.urn.is_empty() => (None, message.into_owned()),
            Err(_) => (
                None,
                format!("[{}] {message}", crate::convert::shown(&r.urn, 200)),
            ),
        };
        match self.budget.admit(message.len()) {
            Admit::Show => self.events.emit(EngineEvent::Diagnostic {
                severity,
                urn,
                message,
            }),
            Admit::FirstDropped => self.events.emit(EngineEvent::Diagnostic {
                severity: Severity::Warning,
                urn: None,
                message: self.budget.note("log messages sent to the engine"),
            }),
            Admit::Dropped => {}
        }
        Ok(Response::new(()))
    }

    async fn get_root_resource(
        &self,
        _request: Request<GetRootResourceRequest>,
    ) -> Result<Response<GetRootResourceResponse>, Status> {
        Ok(Response::new(GetRootResourceResponse {
            urn: lock(&self.root).clone().unwrap_or_default(),
        }))
    }

    async fn set_root_resource(
        &self,
        request: Request<SetRootResourceRequest>,
    ) -> Result<Response<SetRootResourceResponse>, Status> {
        let urn = wire::urn("urn", &request.into_inner().urn)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        *lock(&self.root) = Some(urn.to_string());
        Ok(Response::new(SetRootResourceResponse {}))
    }
}

/// `grpc.health.v1.Health`: always serving while the server runs.
#[derive(Default)]
pub struct HealthService;

#[tonic::async_trait]
impl Health for HealthService {
    async fn check(
        &self,
        _request: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        Ok(Response::new(HealthCheckResponse {
            status: ServingStatus::Serving as i32,
        }))
    }

    type WatchStream = futures::stream::BoxStream<'static, Result<HealthCheckResponse, Status>>;

    async fn watch(
        &self,
        _request: Request<HealthCheckRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        // One "serving" answer, then the stream stays open until the server stops.
        let first = futures::stream::once(async {
            Ok(HealthCheckResponse {
                status: ServingStatus::Serving as i32,
            })
        });
        let rest = futures::stream::pending();
        Ok(Response::new(Box::pin(futures::StreamExt::chain(
            first, rest,
        ))))
    }
}

/// Whether the server at `address` answers a health check within two seconds.
pub async fn healthy(address: &str) -> bool {
    use crate::proto::health::health_client::HealthClient;
    let check = async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
            .ok()?
            .connect()
            .await
            .ok()?;
        let response = HealthClient::new(channel)
            .check(HealthCheckRequest::default())
            .await
            .ok()?;
        Some(response.into_inner().status == ServingStatus::Serving as i32)
    };
    matches!(
        tokio::time::timeout(std::time::Duration::from_secs(2), check).await,
        Ok(Some(true))
    )
}

/// Serves `Engine` and `Health` for one deployment (the address plugins get).
pub async fn serve_engine(
    events: Arc<dyn EventSink>,
    root: Option<&Urn>,
) -> Result<Served, ServeError> {
    let router = tonic::transport::Server::builder()
        .add_service(
            EngineServer::new(EngineService::new(events, root))
                .max_decoding_message_size(wire::max_message_bytes()),
        )
        .add_service(HealthServer::new(HealthService));
    serve("engine", router).await
}
