//! The SDK path: what Cairn's engine adds to a Pulumi Python or Node.js program. The same
//! program of N components runs against Cairn's engine (its monitor over gRPC, the state in
//! memory, events to no display) and against a monitor that answers every request at once
//! with no engine behind it — the SDK's floor — taking turns; phases: create, no-change
//! preview, update (a config value every component's outputs carry changes), and destroy
//! (no program: the engine alone).
//!
//! `cargo bench -p cairn-grpc --bench sdk [-- [--lang python,nodejs] [--runs K] N...]`
//! (default N = 2000 10000, K = 3). Reported per phase: the median wall time of each, Cairn
//! over the floor, and CPU per registration (this process's user + system time, the language
//! process excluded, over the registrations) with Cairn and with the floor's monitor — the
//! latter is what the gRPC transport alone costs. The Python SDK comes from
//! `target/pyenv` and the Node.js SDK from `target/nodeenv`, as the test command installs
//! them (`CAIRN_BENCH_PYTHON` and `CAIRN_BENCH_NODE_MODULES` name others).
//!
//! The difference of the two CPU figures is the engine's share, but each is ~0.6 ms and moves
//! by ±10% from run to run, so a difference of 0.05 ms drowns in it. The engine's own CPU is
//! measured directly from a profile instead: `perf record -F 499 --call-graph dwarf,16384 -p
//! <bench pid>` for a whole run, then the samples of the bench's `tokio-rt-worker` threads
//! whose stack holds a frame of `cairn_engine::`, the monitor service or the value conversions
//! (`cairn_grpc::monitor`, `convert`, `wire`, `EngineService`), divided by the sampling rate
//! and the Cairn registrations of the run (perf follows the language processes too: count the
//! bench's threads only). The book's benchmarks page (docs/src/benchmarks.md) has the figures
//! and what the profiles showed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use cairn_engine::deploy::events::NullSink;
use cairn_engine::deploy::journal::SnapshotManager;
use cairn_engine::deploy::provider::{LoadError, NativePlugins, Provider, ProviderLoader};
use cairn_engine::deploy::{Deployment, DeploymentOptions};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::{Manifest, Snapshot};
use cairn_engine::value::PropertyValue;
use cairn_grpc::proto::pulumirpc as rpc;
use cairn_grpc::{Language, LanguageProgram, RunSettings};
use rpc::engine_server::{Engine, EngineServer};
use rpc::resource_monitor_server::{ResourceMonitor, ResourceMonitorServer};
use tokio::io::AsyncWriteExt;
use tonic::{Request, Response, Status};

/// The allocator `cairn` ships with, so figures measure what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const PROJECT: &str = "sdkbench";
const STACK: &str = "dev";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The program, the same in both languages: N components, each registering an output that
/// carries the config value `tag`.
const PYTHON_PROGRAM: &str = r#"
import pulumi

tag = pulumi.Config().get("tag") or "a"

class Comp(pulumi.ComponentResource):
    def __init__(self, name):
        super().__init__("bench:index:Comp", name, {}, None)
        self.register_outputs({"tag": tag})

for i in range(int(open("components").read())):
    Comp(f"c{i}")
"#;

const NODE_PROGRAM: &str = r#"
const pulumi = require("@pulumi/pulumi");
const tag = new pulumi.Config().get("tag") || "a";
class Comp extends pulumi.ComponentResource {
    constructor(name) {
        super("bench:index:Comp", name, {}, {});
        this.registerOutputs({ tag });
    }
}
const n = Number(require("fs").readFileSync("components", "utf8"));
for (let i = 0; i < n; i++) new Comp(`c${i}`);
"#;

#[derive(Clone, Copy, PartialEq)]
enum Lang {
    Python,
    Node,
}

impl Lang {
    fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Node => "nodejs",
        }
    }
}

/// A project directory holding the program, and how to run it.
struct Project {
    _dir: tempfile::TempDir,
    program: LanguageProgram,
}

impl Project {
    /// Sets how many components the program declares (read from the project directory, not
    /// the environment, which a running multi-threaded process must not change).
    fn size(&self, n: usize) {
        std::fs::write(self.program.dir.join("components"), n.to_string()).expect("size file");
    }
}

fn project(lang: Lang) -> Project {
    let dir = tempfile::tempdir().expect("temp dir");
    let language = match lang {
        Lang::Python => {
            std::fs::write(dir.path().join("__main__.py"), PYTHON_PROGRAM).expect("program");
            let python = std::env::var_os("CAIRN_BENCH_PYTHON")
                .map(PathBuf::from)
                .unwrap_or_else(|| repo().join("target/pyenv/bin/python"));
            Language::Python { python }
        }
        Lang::Node => {
            std::fs::write(dir.path().join("index.js"), NODE_PROGRAM).expect("program");
            let modules = std::env::var_os("CAIRN_BENCH_NODE_MODULES")
                .map(PathBuf::from)
                .unwrap_or_else(|| repo().join("target/nodeenv/node_modules"));
            std::os::unix::fs::symlink(&modules, dir.path().join("node_modules"))
                .expect("node_modules link");
            Language::Node {
                node: PathBuf::from("node"),
                run_script: modules.join("@pulumi/pulumi/cmd/run"),
                typescript: false,
                tsconfig: None,
            }
        }
    };
    let program = LanguageProgram {
        language,
        dir: dir.path().to_owned(),
        main: None,
        parallel: 16,
        events: Arc::new(NullSink),
    };
    Project { _dir: dir, program }
}

/// Components are all the program registers; no provider is ever loaded.
struct NoProviders;

#[async_trait]
impl ProviderLoader for NoProviders {
    async fn load(
        &self,
        package: &str,
        _: Option<&semver::Version>,
        _: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        Err(LoadError::NotFound {
            package: package.to_owned(),
            version: None,
        })
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

/// The monitor (and engine) of the floor: every registration answered at once with its own
/// inputs.
#[derive(Clone, Default)]
struct InstantMonitor {
    root: Arc<Mutex<String>>,
}

fn urn_of(r: &rpc::RegisterResourceRequest) -> String {
    // The parent's qualified type (the URN's third part) prefixes the child's.
    let qualified = match r.parent.split("::").nth(2) {
        Some(parent_type) if !r.parent.is_empty() => format!("{parent_type}${}", r.r#type),
        _ => r.r#type.clone(),
    };
    format!("urn:pulumi:{STACK}::{PROJECT}::{qualified}::{}", r.name)
}

#[tonic::async_trait]
impl ResourceMonitor for InstantMonitor {
    async fn supports_feature(
        &self,
        request: Request<rpc::SupportsFeatureRequest>,
    ) -> Result<Response<rpc::SupportsFeatureResponse>, Status> {
        let id = request.into_inner().id;
        Ok(Response::new(rpc::SupportsFeatureResponse {
            has_support: cairn_grpc::monitor::FEATURES
                .iter()
                .any(|(name, _)| *name == id),
        }))
    }
    async fn invoke(
        &self,
        _: Request<rpc::ResourceInvokeRequest>,
    ) -> Result<Response<rpc::InvokeResponse>, Status> {
        Err(Status::unimplemented("invoke"))
    }
    type StreamInvokeStream =
        futures::stream::Iter<std::vec::IntoIter<Result<rpc::InvokeResponse, Status>>>;
    async fn stream_invoke(
        &self,
        _: Request<rpc::ResourceInvokeRequest>,
    ) -> Result<Response<Self::StreamInvokeStream>, Status> {
        Err(Status::unimplemented("stream invoke"))
    }
    async fn call(
        &self,
        _: Request<rpc::ResourceCallRequest>,
    ) -> Result<Response<rpc::CallResponse>, Status> {
        Err(Status::unimplemented("call"))
    }
    async fn read_resource(
        &self,
        _: Request<rpc::ReadResourceRequest>,
    ) -> Result<Response<rpc::ReadResourceResponse>, Status> {
        Err(Status::unimplemented("read"))
    }
    async fn register_resource(
        &self,
        request: Request<rpc::RegisterResourceRequest>,
    ) -> Result<Response<rpc::RegisterResourceResponse>, Status> {
        let r = request.into_inner();
        Ok(Response::new(rpc::RegisterResourceResponse {
            urn: urn_of(&r),
            object: Some(r.object.unwrap_or_default()),
            result: rpc::Result::Success.into(),
            ..Default::default()
        }))
    }
    async fn register_resource_outputs(
        &self,
        _: Request<rpc::RegisterResourceOutputsRequest>,
    ) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }
    async fn register_stack_transform(
        &self,
        _: Request<rpc::Callback>,
    ) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("transforms"))
    }
    async fn register_stack_invoke_transform(
        &self,
        _: Request<rpc::Callback>,
    ) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("transforms"))
    }
    async fn register_resource_hook(
        &self,
        _: Request<rpc::RegisterResourceHookRequest>,
    ) -> Result<Response<()>, Status> {
        Err(Status::unimplemented("resource hooks"))
    }
    async fn signal_and_wait_for_shutdown(&self, _: Request<()>) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }
    async fn get_deployment_info(
        &self,
        _: Request<()>,
    ) -> Result<Response<rpc::DeploymentInfo>, Status> {
        Err(Status::unimplemented("deployment info"))
    }
}

#[tonic::async_trait]
impl Engine for InstantMonitor {
    async fn log(&self, _: Request<rpc::LogRequest>) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }
    async fn get_root_resource(
        &self,
        _: Request<rpc::GetRootResourceRequest>,
    ) -> Result<Response<rpc::GetRootResourceResponse>, Status> {
        let urn = self.root.lock().map(|r| r.clone()).unwrap_or_default();
        Ok(Response::new(rpc::GetRootResourceResponse { urn }))
    }
    async fn set_root_resource(
        &self,
        request: Request<rpc::SetRootResourceRequest>,
    ) -> Result<Response<rpc::SetRootResourceResponse>, Status> {
        if let Ok(mut root) = self.root.lock() {
            *root = request.into_inner().urn;
        }
        Ok(Response::new(rpc::SetRootResourceResponse {}))
    }
}

/// This process's user + system CPU seconds so far (all threads; not the language process).
fn own_cpu() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a rusage into the pointed-to, properly sized memory.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr());
        usage.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Runs the program against the instant monitor; returns wall seconds and this process's CPU
/// seconds (the gRPC transport's share, with no engine).
async fn floor(project: &Project, n: usize, preview: bool, tag: &str) -> (f64, f64) {
    let monitor = InstantMonitor::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    let incoming = futures::StreamExt::map(
        tokio_stream::wrappers::TcpListenerStream::new(listener),
        |stream| {
            stream.inspect(|s| {
                let _ = s.set_nodelay(true);
            })
        },
    );
    let router = tonic::transport::Server::builder()
        .add_service(ResourceMonitorServer::new(monitor.clone()))
        .add_service(EngineServer::new(monitor));
    let server = tokio::spawn(router.serve_with_incoming(incoming));
    let cpu = own_cpu();
    let started = Instant::now();
    let mut command = project.program.command(
        &RunSettings {
            project: PROJECT,
            stack: STACK,
            preview,
        },
        &address,
    );
    project.size(n);
    command.stdout(std::process::Stdio::null());
    let mut child = command.spawn().expect("start the program");
    let settings =
        serde_json::json!({ "config": { format!("{PROJECT}:tag"): tag }, "secretKeys": [] });
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(settings.to_string().as_bytes())
            .await
            .expect("config");
    }
    let output = child.wait_with_output().await.expect("the program runs");
    assert!(
        output.status.success(),
        "the program failed against the instant monitor: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seconds = started.elapsed().as_secs_f64();
    let cpu = own_cpu() - cpu;
    server.abort();
    (seconds, cpu)
}

/// Runs a phase on Cairn's engine from `base`; returns wall seconds, own CPU seconds and the
/// resulting snapshot.
async fn cairn(project: &Project, n: usize, base: Snapshot, phase: Phase) -> (f64, f64, Snapshot) {
    project.size(n);
    let journal = Arc::new(
        SnapshotManager::new(base, Manifest::new(), None, Arc::new(Plain)).expect("journal"),
    );
    let mut options = DeploymentOptions::new(PROJECT, STACK);
    options.preview = phase == Phase::Preview;
    options.config.insert(
        format!("{PROJECT}:tag"),
        PropertyValue::String(phase.tag().to_owned()),
    );
    let deployment = Deployment::new(options, Arc::new(NoProviders), Arc::new(NullSink), journal)
        .expect("deployment");
    let cpu = own_cpu();
    let started = Instant::now();
    let program = Arc::new(LanguageProgram {
        language: project.program.language.clone(),
        dir: project.program.dir.clone(),
        main: None,
        parallel: project.program.parallel,
        events: Arc::new(NullSink),
    });
    let outcome = match phase {
        Phase::Destroy => deployment.destroy().await,
        _ => deployment.update(program).await,
    }
    .expect("the deployment succeeds");
    (
        started.elapsed().as_secs_f64(),
        own_cpu() - cpu,
        outcome.snapshot,
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Create,
    Preview,
    Update,
    Destroy,
}

impl Phase {
    const ALL: [Phase; 4] = [Phase::Create, Phase::Preview, Phase::Update, Phase::Destroy];

    fn name(self) -> &'static str {
        match self {
            Phase::Create => "create",
            Phase::Preview => "no-change preview",
            Phase::Update => "update",
            Phase::Destroy => "destroy",
        }
    }

    /// The config value the phase runs with: the update changes it.
    fn tag(self) -> &'static str {
        match self {
            Phase::Update => "b",
            _ => "a",
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main]
async fn main() {
    let mut sizes = Vec::new();
    let mut langs = vec![Lang::Python, Lang::Node];
    let mut runs = 3;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bench" => {}
            "--runs" => runs = args.next().and_then(|r| r.parse().ok()).expect("--runs K"),
            "--lang" => {
                let list = args.next().expect("--lang python,nodejs");
                langs = list
                    .split(',')
                    .map(|l| match l {
                        "python" => Lang::Python,
                        "nodejs" | "node" => Lang::Node,
                        other => panic!("unknown language {other:?}: python or nodejs"),
                    })
                    .collect();
            }
            n => sizes.push(n.parse::<usize>().expect("a number of components")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![2000, 10000];
    }
    println!(
        "| program | components | phase | floor | Cairn | Cairn / floor | CPU per registration: Cairn | floor's monitor |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for lang in langs {
        let project = project(lang);
        for &n in &sizes {
            let mut walls: HashMap<&str, [Vec<f64>; 4]> = HashMap::new();
            for _ in 0..runs {
                let mut state = Snapshot::empty(None);
                for phase in Phase::ALL {
                    let (floor_seconds, floor_cpu) = if phase == Phase::Destroy {
                        (f64::NAN, f64::NAN)
                    } else {
                        floor(&project, n, phase == Phase::Preview, phase.tag()).await
                    };
                    let (wall, cpu, next) = cairn(&project, n, state.clone(), phase).await;
                    if phase != Phase::Preview {
                        state = next;
                    }
                    // The registrations: the components and the stack.
                    let registrations = (n + 1) as f64;
                    let entry = walls.entry(phase.name()).or_default();
                    entry[0].push(floor_seconds);
                    entry[1].push(wall);
                    entry[2].push(cpu / registrations);
                    entry[3].push(floor_cpu / registrations);
                }
            }
            for phase in Phase::ALL {
                let [floors, cairns, cpus, floor_cpus] =
                    walls.get_mut(phase.name()).expect("measured");
                let floor = median(floors);
                let cairn = median(cairns);
                let cpu = median(cpus) * 1000.0;
                let (floor_text, ratio, floor_cpu) = if floor.is_nan() {
                    ("—".to_owned(), "—".to_owned(), "—".to_owned())
                } else {
                    (
                        format!("{floor:.2} s"),
                        format!("{:.3}", cairn / floor),
                        format!("{:.3} ms", median(floor_cpus) * 1000.0),
                    )
                };
                println!(
                    "| {} | {n} | {} | {floor_text} | {cairn:.2} s | {ratio} | {cpu:.3} ms | {floor_cpu} |",
                    lang.name(),
                    phase.name(),
                );
            }
        }
    }
}
