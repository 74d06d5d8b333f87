//! Deployment benchmark: N independent resources with an instant in-process provider.
//!
//! `cargo bench -p cairn-engine --bench deploy [-- N...]` (default N = 1000 10000 100000). Each N
//! phase runs in a child process (with its starting state built directly) so its peak RSS is its
//! own. Phases: `preview` with no changes, `up` creating all, `up` with all same, `destroy`.
//! Reported: wall time, peak RSS, bytes written to state (journal + checkpoint), and the size of
//! the checkpoint written at the end.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use async_trait::async_trait;
use cairn_engine::deploy::events::NullSink;
use cairn_engine::deploy::journal::{PersistError, Persister, SnapshotManager};
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::deploy::provider::{
    CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest, DiffChanges,
    DiffRequest, DiffResult, LoadError, NativePlugins, Provider, ProviderError, ProviderLoader,
    ReadRequest, ReadResult, UpdateRequest, UpdateResult,
};
use cairn_engine::deploy::{Deployment, DeploymentOptions, Outcome};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::{DeploymentV3, Manifest, ProviderReference, ResourceState, Snapshot};
use cairn_engine::value::{PropertyMap, PropertyValue};
use cairn_engine::{TypeToken, Urn, props};
use futures::StreamExt;
use futures::stream::FuturesUnordered;

/// The allocator `cairn` ships with, so figures measure what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A provider whose operations complete at once.
struct Instant_;

#[async_trait]
impl Provider for Instant_ {
    fn package(&self) -> &str {
        "bench"
    }
    async fn configure(&self, _: PropertyMap, _: bool) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn check(&self, r: CheckRequest) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: r.news,
            failures: vec![],
        })
    }
    async fn diff(&self, r: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        Ok(DiffResult {
            changes: if r.old_inputs == r.news {
                DiffChanges::None
            } else {
                DiffChanges::Some
            },
            ..DiffResult::default()
        })
    }
    async fn create(&self, r: CreateRequest) -> Result<CreateResult, ProviderError> {
        let mut outputs = r.properties;
        outputs.insert(
            "arn".into(),
            PropertyValue::String(format!("arn:{}", r.urn.name())),
        );
        Ok(CreateResult {
            id: r.urn.name().to_owned(),
            outputs,
        })
    }
    async fn read(&self, r: ReadRequest) -> Result<ReadResult, ProviderError> {
        Ok(ReadResult {
            id: r.id,
            inputs: r.inputs,
            outputs: r.state,
        })
    }
    async fn update(&self, r: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        Ok(UpdateResult { outputs: r.news })
    }
    async fn delete(&self, _: DeleteRequest) -> Result<(), ProviderError> {
        Ok(())
    }
}

struct Loader;

#[async_trait]
impl ProviderLoader for Loader {
    async fn load(
        &self,
        _: &str,
        _: Option<&semver::Version>,
        _: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        Ok(Arc::new(Instant_))
    }
}

/// The inputs of resource `i`.
fn inputs(i: usize) -> PropertyMap {
    props! {
        "name" => format!("thing-{i}"),
        "size" => (i % 7) as i64,
        "tags" => PropertyValue::Object(props! {"team" => "platform", "env" => "bench"}),
    }
}

/// Registers N independent resources at once.
struct Fleet(usize);

#[async_trait]
impl Program for Fleet {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let token =
            TypeToken::parse("bench:index:Thing").map_err(|e| ProgramError::new(e.to_string()))?;
        let registrations = (0..self.0).map(|i| {
            let monitor = monitor.clone();
            let request =
                RegisterResourceRequest::custom(token.clone(), format!("thing-{i}"), inputs(i));
            async move { monitor.register_resource(request).await }
        });
        // Like a program that only keeps what it uses: responses are dropped as they arrive.
        let mut pending: FuturesUnordered<_> = registrations.collect();
        while let Some(result) = pending.next().await {
            result?;
        }
        Ok(())
    }
}

/// Counts the bytes a file backend would write.
#[derive(Default)]
struct Counter {
    bytes: AtomicU64,
    last_checkpoint: AtomicU64,
}

impl Persister for Counter {
    fn append(&self, line: &[u8]) -> Result<(), PersistError> {
        self.bytes.fetch_add(line.len() as u64, Ordering::Relaxed);
        Ok(())
    }
    fn save(&self, deployment: &DeploymentV3) -> Result<(), PersistError> {
        let bytes = serde_json::to_vec(deployment).map_err(|e| PersistError::new(e.to_string()))?;
        self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.last_checkpoint
            .store(bytes.len() as u64, Ordering::Relaxed);
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

enum Phase {
    Up,
    Preview,
    Destroy,
}

async fn phase(n: usize, base: Snapshot, phase: Phase) -> (Outcome, f64, u64, u64) {
    let counter = Arc::new(Counter::default());
    let preview = matches!(phase, Phase::Preview);
    let persister: Option<Arc<dyn Persister>> = if preview { None } else { Some(counter.clone()) };
    let journal = Arc::new(
        SnapshotManager::new(base, Manifest::new(), persister, Arc::new(Plain)).expect("journal"),
    );
    let mut options = DeploymentOptions::new("bench", "dev");
    options.preview = preview;
    let deployment = Deployment::new(options, Arc::new(Loader), Arc::new(NullSink), journal)
        .expect("deployment");
    let started = Instant::now();
    let outcome = match phase {
        Phase::Up | Phase::Preview => deployment.update(Arc::new(Fleet(n))).await,
        Phase::Destroy => deployment.destroy().await,
    }
    .expect("deployment succeeds");
    let seconds = started.elapsed().as_secs_f64();
    (
        outcome,
        seconds,
        counter.bytes.load(Ordering::Relaxed),
        counter.last_checkpoint.load(Ordering::Relaxed),
    )
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The state `up` would leave for N resources: the root, the default provider, N resources.
fn created_state(n: usize) -> Snapshot {
    let root = Urn::parse("urn:pulumi:dev::bench::pulumi:pulumi:Stack::bench-dev").expect("urn");
    let provider_urn =
        Urn::parse("urn:pulumi:dev::bench::pulumi:providers:bench::default").expect("urn");
    let provider_type = TypeToken::parse("pulumi:providers:bench").expect("type");
    let thing = TypeToken::parse("bench:index:Thing").expect("type");
    let mut resources = vec![ResourceState::new(
        root.clone(),
        TypeToken::parse("pulumi:pulumi:Stack").expect("type"),
        false,
    )];
    let mut provider = ResourceState::new(provider_urn.clone(), provider_type, true);
    provider.id = Some("provider-id".into());
    resources.push(provider);
    let reference = ProviderReference {
        urn: provider_urn,
        id: "provider-id".into(),
    };
    for i in 0..n {
        let name = format!("thing-{i}");
        let urn =
            Urn::parse(&format!("urn:pulumi:dev::bench::bench:index:Thing::{name}")).expect("urn");
        let mut r = ResourceState::new(urn, thing.clone(), true);
        r.id = Some(name.clone());
        r.parent = Some(root.clone());
        r.provider = Some(reference.clone());
        r.inputs = inputs(i);
        r.outputs = inputs(i);
        r.outputs
            .insert("arn".into(), PropertyValue::String(format!("arn:{name}")));
        resources.push(r);
    }
    Snapshot {
        resources,
        ..Snapshot::empty(None)
    }
}

fn child(n: usize, which: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (base, kind, expected_changes) = match which {
            "create" => (Snapshot::empty(None), Phase::Up, n + 2),
            "preview" => (created_state(n), Phase::Preview, 0),
            "same" => (created_state(n), Phase::Up, 0),
            "destroy" => (created_state(n), Phase::Destroy, n + 2),
            other => panic!("unknown phase {other}"),
        };
        let (outcome, seconds, written, checkpoint) = phase(n, base, kind).await;
        assert_eq!(
            outcome.changes.values().sum::<usize>(),
            expected_changes,
            "{which}"
        );
        println!(
            "{n:>7} | {which:<8} | {seconds:>8.3} | {:>8.1} | {written:>11} | {checkpoint:>11}",
            peak_rss_mb()
        );
    });
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        let n = args.get(1).and_then(|s| s.parse().ok()).expect("N");
        child(n, args.get(2).map_or("create", String::as_str));
        return;
    }
    let sizes: Vec<usize> = if args.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        args.iter().filter_map(|a| a.parse().ok()).collect()
    };
    println!("      N | phase    |   wall s |  peak MB | written B   | state B");
    let exe = std::env::current_exe().expect("current exe");
    for n in sizes {
        for which in ["preview", "create", "same", "destroy"] {
            let status = Command::new(&exe)
                .args(["--child", &n.to_string(), which])
                .status()
                .expect("run child");
            assert!(status.success(), "benchmark {which} for N={n} failed");
        }
    }
}
