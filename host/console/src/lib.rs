//! `cairn console`: a read-only web console over a state backend (a directory or PostgreSQL),
//! served on 127.0.0.1 with a random access token.
//!
//! The server ([`Console`]) answers JSON for the page's views (`api/*`), follows running updates
//! through their journals ([`live`]) as server-sent events, lays graphs out itself ([`layout`])
//! and serves the page's three files, compiled into the binary ([`assets`]). Every request passes
//! [`access::guard`] first. Nothing here writes to the backend.

pub mod access;
mod assets;
pub mod layout;
pub mod live;
pub mod view;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use cairn_backend::Backend;
use cairn_engine::secrets::Crypter;
use futures::Stream;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::access::Access;
use crate::live::JournalFollower;
use crate::view::{Reveal, StackView};

/// How long a stack read from the backend is reused before it is read again.
const FRESH_FOR: Duration = Duration::from_secs(2);
/// How often the live view looks at a running update's journal.
const LIVE_POLL: Duration = Duration::from_millis(300);

/// Opens a stack's secrets for `--show-secrets`: the crypter of (project, stack), or why not.
pub type OpenSecrets =
    Arc<dyn Fn(&str, &str) -> Result<Arc<dyn Crypter>, String> + Send + Sync + 'static>;

/// Why the console could not start.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    #[error("could not listen on 127.0.0.1:{port}: {source}")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("could not draw a random access token: {0}")]
    Token(getrandom::Error),
    #[error("the console's server failed: {0}")]
    Serve(#[source] std::io::Error),
}

/// How the console was asked to run.
#[derive(Clone, Default)]
pub struct Options {
    /// Decrypts secrets for the page (`--show-secrets`); absent, secrets are masked.
    pub show_secrets: Option<OpenSecrets>,
}

/// A console bound to its port, ready to serve.
pub struct Console {
    listener: tokio::net::TcpListener,
    access: Access,
    address: SocketAddr,
}

impl Console {
    /// Binds 127.0.0.1 (never another interface) and draws the access token.
    pub async fn bind(port: u16) -> Result<Console, ConsoleError> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .await
            .map_err(|source| ConsoleError::Bind { port, source })?;
        let address = listener
            .local_addr()
            .map_err(|source| ConsoleError::Bind { port, source })?;
        let token = Access::random_token().map_err(ConsoleError::Token)?;
        Ok(Console {
            listener,
            access: Access::new(token, address.port()),
            address,
        })
    }

    /// The URL to open, with the access token.
    pub fn url(&self) -> String {
        self.access.url()
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves until the process ends.
    pub async fn serve(self, backend: Backend, options: Options) -> Result<(), ConsoleError> {
        let state = Shared {
            backend,
            show_secrets: options.show_secrets,
            views: Arc::new(Mutex::new(HashMap::new())),
        };
        let api = Router::new()
            .route("/api/stacks", get(stacks))
            .route("/api/stack", get(stack))
            .route("/api/resource", get(resource))
            .route("/api/graph", get(graph))
            .route("/api/history", get(history))
            .route("/api/update", get(update))
            .route("/api/live", get(live))
            .with_state(state);
        let app = assets::routes()
            .merge(api)
            .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
            .layer(axum::middleware::from_fn_with_state(
                self.access.clone(),
                access::guard,
            ));
        axum::serve(self.listener, app)
            .await
            .map_err(ConsoleError::Serve)
    }
}

/// What every handler shares.
#[derive(Clone)]
struct Shared {
    backend: Backend,
    show_secrets: Option<OpenSecrets>,
    views: Arc<Mutex<RecentViews>>,
}

/// Stacks read lately, by (project, stack), with when they were read.
type RecentViews = HashMap<(String, String), (Instant, Arc<StackView>)>;

impl Shared {
    fn reveal(&self, project: &str, stack: &str) -> Reveal {
        match &self.show_secrets {
            None => Reveal::Masked,
            Some(open) => match open(project, stack) {
                Ok(crypter) => Reveal::Shown(crypter),
                Err(why) => Reveal::Unavailable(why),
            },
        }
    }

    /// Drops the stack's reused view, so the next page reads the stack again.
    fn forget(&self, project: &str, stack: &str) {
        self.views
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(project.to_owned(), stack.to_owned()));
    }

    /// The stack's latest deployment, read at most every [`FRESH_FOR`] (sooner when the live
    /// view sees it change).
    fn view(&self, project: &str, stack: &str) -> Result<Arc<StackView>, Failure> {
        let key = (project.to_owned(), stack.to_owned());
        if let Some((at, view)) = self
            .views
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            && at.elapsed() < FRESH_FOR
        {
            return Ok(view.clone());
        }
        let deployment = self
            .backend
            .latest_as_stored(project, stack)
            .map_err(Failure::backend)?
            .ok_or_else(|| Failure::not_found(format!("stack {stack:?} has no deployment yet")))?;
        let view = Arc::new(StackView::new(deployment));
        let mut views = self.views.lock().unwrap_or_else(PoisonError::into_inner);
        views.retain(|_, (at, _)| at.elapsed() < FRESH_FOR);
        views.insert(key, (Instant::now(), view.clone()));
        Ok(view)
    }
}

/// An error answer: a status and a message for the page.
struct Failure {
    status: StatusCode,
    message: String,
}

impl Failure {
    fn backend(error: impl std::fmt::Display) -> Failure {
        Failure {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: error.to_string(),
        }
    }

    fn not_found(message: String) -> Failure {
        Failure {
            status: StatusCode::NOT_FOUND,
            message,
        }
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (self.status, axum::Json(json!({"error": self.message}))).into_response()
    }
}

/// Runs backend reads off the server's threads (file reads, PostgreSQL queries).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Failure::backend(format!("internal error: {e}")))?
}

fn json_answer(value: Value) -> Response {
    axum::Json(value).into_response()
}

#[derive(Deserialize)]
struct StackQuery {
    project: String,
    stack: String,
}

#[derive(Deserialize)]
struct ResourceQuery {
    project: String,
    stack: String,
    urn: String,
}

#[derive(Deserialize)]
struct GraphQuery {
    project: String,
    stack: String,
    focus: Option<String>,
}

#[derive(Deserialize)]
struct UpdateQuery {
    project: String,
    stack: String,
    version: u64,
}

async fn stacks(State(shared): State<Shared>) -> Result<Response, Failure> {
    let rows = blocking(move || {
        let backend = &shared.backend;
        let mut rows = Vec::new();
        for project in backend.project_names().map_err(Failure::backend)? {
            for summary in backend.list_stacks(&project).map_err(Failure::backend)? {
                let tags = backend
                    .tags(&project, &summary.name)
                    .map_err(Failure::backend)?;
                let running = backend
                    .read_journal(&project, &summary.name)
                    .map_err(Failure::backend)?
                    .is_some_and(|j| !j.is_empty());
                rows.push(json!({
                    "project": project,
                    "stack": summary.name,
                    "lastUpdate": summary.last_update,
                    "resourceCount": summary.resource_count,
                    "tags": tags,
                    "running": running,
                }));
            }
        }
        Ok(json!({
            "backend": backend.url(),
            "showSecrets": shared.show_secrets.is_some(),
            "stacks": rows,
        }))
    })
    .await?;
    Ok(json_answer(rows))
}

async fn stack(
    State(shared): State<Shared>,
    Query(q): Query<StackQuery>,
) -> Result<Response, Failure> {
    let answer = blocking(move || {
        let reveal = shared.reveal(&q.project, &q.stack);
        let view = shared.view(&q.project, &q.stack)?;
        let history = shared
            .backend
            .history(&q.project, &q.stack)
            .map_err(Failure::backend)?;
        let tags = shared
            .backend
            .tags(&q.project, &q.stack)
            .map_err(Failure::backend)?;
        // The configuration the latest update ran with (as Pulumi's backends record it).
        let config: Vec<Value> = history
            .last()
            .map(|latest| {
                latest
                    .config
                    .iter()
                    .map(|(key, value)| {
                        let (value, secret) = view::display_config(value, &reveal);
                        json!({"key": key, "value": value, "secret": secret})
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(json!({
            "project": q.project,
            "stack": q.stack,
            "time": view.deployment.manifest.time,
            "tags": tags,
            "resources": view.resources(),
            "outputs": view.outputs(&reveal),
            "config": config,
            "updates": history.len(),
        }))
    })
    .await?;
    Ok(json_answer(answer))
}

async fn resource(
    State(shared): State<Shared>,
    Query(q): Query<ResourceQuery>,
) -> Result<Response, Failure> {
    let answer = blocking(move || {
        let reveal = shared.reveal(&q.project, &q.stack);
        let view = shared.view(&q.project, &q.stack)?;
        view.resource(&q.urn, &reveal)
            .ok_or_else(|| Failure::not_found(format!("no resource {:?} in this stack", q.urn)))
    })
    .await?;
    Ok(json_answer(answer))
}

async fn graph(
    State(shared): State<Shared>,
    Query(q): Query<GraphQuery>,
) -> Result<Response, Failure> {
    let answer = blocking(move || {
        let view = shared.view(&q.project, &q.stack)?;
        let scene = layout::scene(&view.graph, q.focus.as_deref());
        serde_json::to_value(scene).map_err(Failure::backend)
    })
    .await?;
    Ok(json_answer(answer))
}

async fn history(
    State(shared): State<Shared>,
    Query(q): Query<StackQuery>,
) -> Result<Response, Failure> {
    let answer = blocking(move || {
        let history = shared
            .backend
            .history(&q.project, &q.stack)
            .map_err(Failure::backend)?;
        // Newest first, without the per-step records (the update's own page loads those).
        let updates: Vec<Value> = history
            .iter()
            .rev()
            .map(|u| {
                json!({
                    "version": u.version,
                    "kind": u.kind,
                    "result": u.result,
                    "message": u.message,
                    "startTime": u.start_time,
                    "endTime": u.end_time,
                    "user": u.environment.get("user"),
                    "resourceChanges": u.resource_changes,
                })
            })
            .collect();
        Ok(json!({"updates": updates}))
    })
    .await?;
    Ok(json_answer(answer))
}

async fn update(
    State(shared): State<Shared>,
    Query(q): Query<UpdateQuery>,
) -> Result<Response, Failure> {
    let answer = blocking(move || {
        let history = shared
            .backend
            .history(&q.project, &q.stack)
            .map_err(Failure::backend)?;
        let record = history
            .into_iter()
            .find(|u| u.version == q.version)
            .ok_or_else(|| {
                Failure::not_found(format!("no update {} in this stack's history", q.version))
            })?;
        let mut value = serde_json::to_value(&record).map_err(Failure::backend)?;
        // The recorded configuration is shown on the stack's page, masked there.
        if let Some(object) = value.as_object_mut() {
            object.remove("config");
        }
        Ok(value)
    })
    .await?;
    Ok(json_answer(answer))
}

/// Server-sent events: `progress` whenever the stack's journal changes, `idle` when no update
/// is running (then the page reloads the stack).
async fn live(
    State(shared): State<Shared>,
    Query(q): Query<StackQuery>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream = futures::stream::unfold(
        (shared, q, JournalFollower::default(), None::<String>, true),
        |(shared, q, mut follower, last, mut first)| async move {
            loop {
                if !first {
                    tokio::time::sleep(LIVE_POLL).await;
                }
                let (backend, project, stack) =
                    (shared.backend.clone(), q.project.clone(), q.stack.clone());
                let journal =
                    tokio::task::spawn_blocking(move || backend.read_journal(&project, &stack))
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .flatten();
                let progress = follower.observe(journal.as_deref());
                let name = if progress.running { "progress" } else { "idle" };
                let data = serde_json::to_string(progress).unwrap_or_default();
                let text = format!("{name}\n{data}");
                if last.as_deref() != Some(text.as_str()) {
                    // The stack is changing (or just changed): the next page reads it again.
                    shared.forget(&q.project, &q.stack);
                    let event = Event::default().event(name).data(data);
                    return Some((Ok(event), (shared, q, follower, Some(text), false)));
                }
                first = false;
            }
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// The `Content-Type` for a served asset.
fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        _ => "text/html; charset=utf-8",
    }
}

fn asset_response(path: &str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type(path))], body).into_response()
}
