//! Deployment benchmark: N independent resources (registered at most 1,024 at a time, as a
//! program's requests arrive) with an instant in-process provider, the state kept in memory (the
//! engine alone), a directory or a PostgreSQL database (Cairn's backends).
//!
//! `cargo bench -p cairn-cli --bench deploy [-- [--backend URL]... [--display MODE]...
//! [--runs K] N...]` (default N = 1000 10000 100000, backend `memory`; `--backend
//! file:///tmp/x --backend postgres://u@h/db` compares both, phase by phase). Each phase runs
//! in a child process (with its starting state built directly and, for a backend, stored
//! first, outside the timing) so its peak RSS is its own. Phases: `preview` with no changes,
//! `up` creating all, `up` with all same, `destroy`. `--display MODE` (repeatable) runs the
//! phases with Cairn's display receiving the events, writing to /dev/null: `live` (the
//! terminal view), `plain` (the piped lines), `suppressed` (`--suppress-progress`); the
//! default, `none`, sends events nowhere (the engine alone). The display's cost is `live`
//! against `suppressed`: `--display suppressed --display live --runs 21` runs each 21 times,
//! taking turns, prints each one's median run and the median of the run-by-run wall ratios.
//! Reported: wall time, peak RSS (MiB), the bytes handed to the backend (journal lines +
//! checkpoint), the bytes the backend wrote for them (a directory: bytes passed to `write`,
//! history copy included; PostgreSQL: the WAL the server generated), and the size of the
//! checkpoint.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use async_trait::async_trait;
use cairn_backend::{Backend, StackLock, pgconfig};
use cairn_cli::display::{Display, DisplayOptions};
use cairn_engine::deploy::events::{EventSink, NullSink};
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
use cairn_engine::state::{
    Manifest, ProviderReference, ResourceState, SecretsMode, Snapshot, encode_deployment,
};
use cairn_engine::value::{PropertyMap, PropertyValue};
use cairn_engine::{TypeToken, Urn, props};
use futures::StreamExt;

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
    async fn check(&self, r: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: r.news.clone(),
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
        "tags" => PropertyValue::from(props! {"team" => "platform", "env" => "bench"}),
    }
}

/// How many registrations the bench program keeps in flight. A real program's requests arrive
/// over a connection, paced by its SDK and the transport, and live in the program's process
/// until they do; building all N at once would measure this in-process program's own memory
/// (166 MB of requests and futures at 100,000) rather than the engine's. A window this wide
/// keeps the engine as busy as all-at-once does (it never waits for a request).
const IN_FLIGHT: usize = 1024;

/// Registers N independent resources, at most [`IN_FLIGHT`] at a time.
struct Fleet(usize);

#[async_trait]
impl Program for Fleet {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let token =
            TypeToken::parse("bench:index:Thing").map_err(|e| ProgramError::new(e.to_string()))?;
        let registrations = futures::stream::iter(0..self.0).map(|i| {
            let (monitor, token) = (monitor.clone(), token.clone());
            // Built inside the future, as a program's call site builds it: the request is then
            // held once, by the registration, not also by the program's future.
            async move {
                let request =
                    RegisterResourceRequest::custom(token, format!("thing-{i}"), inputs(i));
                monitor.register_resource(request).await
            }
        });
        // Like a program that only keeps what it uses: responses are dropped as they arrive.
        let mut pending = registrations.buffer_unordered(IN_FLIGHT);
        while let Some(result) = pending.next().await {
            result?;
        }
        Ok(())
    }
}

/// Counts the bytes handed to the backend (`inner`; none: the engine alone).
#[derive(Default)]
struct Counter {
    inner: Option<Arc<dyn Persister>>,
    bytes: AtomicU64,
    last_checkpoint: AtomicU64,
}

impl Persister for Counter {
    fn append(&self, line: &[u8]) -> Result<(), PersistError> {
        self.bytes.fetch_add(line.len() as u64, Ordering::Relaxed);
        match &self.inner {
            Some(inner) => inner.append(line),
            None => Ok(()),
        }
    }
    fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
        self.bytes
            .fetch_add(deployment.len() as u64, Ordering::Relaxed);
        self.last_checkpoint
            .store(deployment.len() as u64, Ordering::Relaxed);
        match &self.inner {
            Some(inner) => inner.save(deployment),
            None => Ok(()),
        }
    }
}

/// Where the state goes: `memory` (counted, not kept) or a backend URL.
struct Store {
    url: String,
    backend: Option<Backend>,
}

impl Store {
    fn open(url: &str) -> Store {
        let backend = (url != "memory").then(|| {
            Backend::from_url(url, &std::env::current_dir().expect("cwd")).expect("backend")
        });
        Store {
            url: url.to_owned(),
            backend,
        }
    }

    /// Stores `base` as stack bench/dev and returns its journal, under its lock (kept by the
    /// caller for the phase).
    fn seed(&self, base: &Snapshot) -> Option<(StackLock, Arc<dyn Persister>)> {
        let backend = self.backend.as_ref()?;
        let lock = backend.lock("bench", "dev", "cairn bench").expect("lock");
        if backend.stack_exists("bench", "dev").expect("read") {
            backend.recover(&lock, "bench", "dev").expect("recover");
            backend.remove(&lock, "bench", "dev").expect("remove");
        }
        let stored = encode_deployment(base, SecretsMode::Plaintext).expect("encode");
        backend.create(&lock, "bench", "dev", stored).expect("seed");
        let journal = backend.persister(&lock, "bench", "dev").expect("journal");
        Some((lock, journal))
    }

    /// What the backend has written so far: this process's `write` bytes for a directory,
    /// the server's WAL position for PostgreSQL.
    fn written(&self) -> u64 {
        if pgconfig::is_postgres_url(&self.url) {
            let target = pgconfig::resolve(&self.url, &pgconfig::ProcessEnv).expect("url");
            // The driver runs its own runtime: not from inside the benchmark's.
            std::thread::spawn(move || {
                let mut client = target.config.connect(postgres::NoTls).expect("connect");
                let row = client
                    .query_one(
                        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint",
                        &[],
                    )
                    .expect("wal position");
                row.get::<_, i64>(0) as u64
            })
            .join()
            .expect("wal thread")
        } else {
            std::fs::read_to_string("/proc/self/io")
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix("wchar: ")?.trim().parse().ok())
                })
                .unwrap_or(0)
        }
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

struct Measured {
    outcome: Outcome,
    seconds: f64,
    handed: u64,
    written: u64,
    checkpoint: u64,
}

async fn phase(n: usize, base: Snapshot, phase: Phase, store: &Store) -> Measured {
    let preview = matches!(phase, Phase::Preview);
    let seeded = if preview { None } else { store.seed(&base) };
    let counter = Arc::new(Counter {
        inner: seeded.as_ref().map(|(_, journal)| journal.clone()),
        ..Counter::default()
    });
    let persister: Option<Arc<dyn Persister>> = if preview { None } else { Some(counter.clone()) };
    let written_before = store.written();
    let journal = Arc::new(
        SnapshotManager::new(base, Manifest::new(), persister, Arc::new(Plain)).expect("journal"),
    );
    let mut options = DeploymentOptions::new("bench", "dev");
    options.preview = preview;
    let deployment =
        Deployment::new(options, Arc::new(Loader), display_sink(), journal).expect("deployment");
    let started = Instant::now();
    let outcome = match phase {
        Phase::Up | Phase::Preview => deployment.update(Arc::new(Fleet(n))).await,
        Phase::Destroy => deployment.destroy().await,
    }
    .expect("deployment succeeds");
    let seconds = started.elapsed().as_secs_f64();
    let handed = counter.bytes.load(Ordering::Relaxed);
    let written = if store.backend.is_some() {
        store.written().saturating_sub(written_before)
    } else {
        handed
    };
    drop(seeded);
    Measured {
        outcome,
        seconds,
        handed,
        written,
        checkpoint: counter.last_checkpoint.load(Ordering::Relaxed),
    }
}

/// Where the events go: the display mode `CAIRN_BENCH_DISPLAY` names, writing to /dev/null, or
/// nowhere.
fn display_sink() -> Arc<dyn EventSink> {
    let mode = std::env::var("CAIRN_BENCH_DISPLAY").unwrap_or_default();
    if mode.is_empty() || mode == "none" {
        return Arc::new(NullSink);
    }
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .expect("/dev/null");
    Arc::new(Display::new(DisplayOptions {
        json: false,
        interactive: mode == "live",
        show_secrets: false,
        show_sames: false,
        suppress_outputs: false,
        show_replacement_steps: false,
        show_diff: false,
        keep_details: false,
        suppress_progress: mode == "suppressed",
        colors: true,
        stack: Some("dev".into()),
        writer: Box::new(null),
        preview: false,
        events: Default::default(),
    }))
}

/// One line of the report (only figures and the backend's scheme: nothing to escape).
fn print_row(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
}

fn peak_rss_mib() -> f64 {
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
    // Sized once, as the state reader sizes it (a vector grown by doubling holds up to twice).
    let mut resources = Vec::with_capacity(n + 2);
    resources.push(ResourceState::new(
        root.clone(),
        TypeToken::parse("pulumi:pulumi:Stack").expect("type"),
        false,
    ));
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
        // Sized as the state reader sizes a map: exactly.
        r.outputs = PropertyMap::with_capacity(4);
        r.outputs.extend(inputs(i));
        r.outputs
            .insert("arn".into(), PropertyValue::String(format!("arn:{name}")));
        resources.push(r);
    }
    Snapshot {
        resources,
        ..Snapshot::empty(None)
    }
}

fn child(n: usize, which: &str, url: &str) {
    let store = Store::open(url);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (base, kind, expected_changes) = match which {
            "create" => (Snapshot::empty(None), Phase::Up, n + 1),
            "preview" => (created_state(n), Phase::Preview, 0),
            "same" => (created_state(n), Phase::Up, 0),
            "destroy" => (created_state(n), Phase::Destroy, n + 1),
            other => panic!("unknown phase {other}"),
        };
        let m = phase(n, base, kind, &store).await;
        assert_eq!(
            m.outcome.changes.values().sum::<usize>(),
            expected_changes,
            "{which}"
        );
        let backend = match std::env::var("CAIRN_BENCH_DISPLAY") {
            Ok(mode) if !mode.is_empty() && mode != "none" => mode,
            _ => url.split("://").next().unwrap_or(url).to_owned(),
        };
        print_row(&format!(
            "{n:>7} | {which:<8} | {backend:<15} | {:>8.3} | {:>8.1} | {:>11} | {:>11} | {:>11}",
            m.seconds,
            peak_rss_mib(),
            m.handed,
            m.written,
            m.checkpoint
        ));
    });
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        let n = args.get(1).and_then(|s| s.parse().ok()).expect("N");
        let which = args.get(2).map_or("create", String::as_str);
        child(n, which, args.get(3).map_or("memory", String::as_str));
        return;
    }
    let mut backends = Vec::new();
    let mut displays = Vec::new();
    let mut sizes = Vec::new();
    let mut runs = 1;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--backend" => backends.push(rest.next().expect("--backend URL").clone()),
            "--display" => displays.push(rest.next().expect("--display MODE").clone()),
            "--runs" => {
                runs = rest
                    .next()
                    .and_then(|k| k.parse::<usize>().ok())
                    .filter(|k| *k > 0)
                    .expect("--runs K (K > 0)");
            }
            other => sizes.push(other.parse::<usize>().expect("N")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 100_000];
    }
    if backends.is_empty() {
        backends.push("memory".to_owned());
    }
    if displays.is_empty() {
        displays.push("none".to_owned());
    }
    print_row(
        "      N | phase    | backend/display |   wall s | peak MiB | handed B    | written B   | state B",
    );
    let exe = std::env::current_exe().expect("current exe");
    for n in sizes {
        for which in ["preview", "create", "same", "destroy"] {
            for url in &backends {
                // The displays take turns (A B A B ...), so a drift of the machine's speed
                // weighs on each alike; each prints its median run.
                let mut rows: Vec<Vec<(f64, String)>> = vec![Vec::new(); displays.len()];
                for _ in 0..runs {
                    for (d, display) in displays.iter().enumerate() {
                        let output = Command::new(&exe)
                            .args(["--child", &n.to_string(), which, url])
                            .env("CAIRN_BENCH_DISPLAY", display)
                            .output()
                            .expect("run child");
                        assert!(
                            output.status.success(),
                            "benchmark {which} for N={n} on {url} ({display}) failed: {}",
                            String::from_utf8_lossy(&output.stderr)
                        );
                        let row = String::from_utf8_lossy(&output.stdout)
                            .trim_end()
                            .to_owned();
                        let wall = row
                            .split('|')
                            .nth(3)
                            .and_then(|w| w.trim().parse::<f64>().ok())
                            .expect("a row with the wall time");
                        rows[d].push((wall, row));
                    }
                }
                for of_display in &rows {
                    let mut by_wall: Vec<&(f64, String)> = of_display.iter().collect();
                    by_wall.sort_by(|a, b| a.0.total_cmp(&b.0));
                    print_row(&by_wall[by_wall.len() / 2].1);
                }
                // Each display against the first, run by run: the median of the wall ratios.
                for d in 1..displays.len() {
                    if runs > 1 {
                        let mut ratios: Vec<f64> = rows[d]
                            .iter()
                            .zip(&rows[0])
                            .map(|(a, b)| a.0 / b.0)
                            .collect();
                        ratios.sort_by(f64::total_cmp);
                        print_row(&format!(
                            "        {} / {}: wall ratio {:.3} (median of {runs} pairs)",
                            displays[d],
                            displays[0],
                            ratios[ratios.len() / 2]
                        ));
                    }
                }
            }
        }
    }
}
