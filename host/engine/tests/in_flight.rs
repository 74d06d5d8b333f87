//! A program that declares thousands of resources at once: registrations beyond the engine's
//! gate wait in the program's own futures, not as tasks of the engine, and every one of them is
//! still deployed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use cairn_engine::deploy::events::NullSink;
use cairn_engine::deploy::journal::SnapshotManager;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::deploy::provider::{
    CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest, DiffChanges,
    DiffRequest, DiffResult, LoadError, NativePlugins, Provider, ProviderError, ProviderLoader,
    ReadRequest, ReadResult, UpdateRequest, UpdateResult,
};
use cairn_engine::deploy::{Deployment, DeploymentOptions};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::{Manifest, Snapshot};
use cairn_engine::value::PropertyMap;
use cairn_engine::{TypeToken, props};
use futures::future::try_join_all;

/// A provider that notes the most tasks alive in the runtime while it creates.
#[derive(Default)]
struct Watching {
    most_tasks: AtomicUsize,
}

#[async_trait]
impl Provider for Watching {
    fn package(&self) -> &str {
        "test"
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
    async fn diff(&self, _: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        Ok(DiffResult {
            changes: DiffChanges::None,
            ..DiffResult::default()
        })
    }
    async fn create(&self, r: CreateRequest) -> Result<CreateResult, ProviderError> {
        // Let every registration the program sent reach the engine first.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        let alive = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        self.most_tasks.fetch_max(alive, Ordering::Relaxed);
        Ok(CreateResult {
            id: r.urn.name().to_owned(),
            outputs: r.properties,
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

struct Loader(Arc<Watching>);

#[async_trait]
impl ProviderLoader for Loader {
    async fn load(
        &self,
        _: &str,
        _: Option<&semver::Version>,
        _: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        Ok(self.0.clone())
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

/// Declares `n` independent resources at once.
struct Fleet(usize);

#[async_trait]
impl Program for Fleet {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let token = TypeToken::parse("test:index:Thing").unwrap();
        try_join_all((0..self.0).map(|i| {
            let request = RegisterResourceRequest::custom(
                token.clone(),
                format!("thing-{i}"),
                props! { "n" => i as i64 },
            );
            let monitor = monitor.clone();
            async move { monitor.register_resource(request).await }
        }))
        .await?;
        Ok(())
    }
}

const RESOURCES: usize = 3000;

#[test]
fn registrations_beyond_the_gate_wait_in_the_program_not_as_engine_tasks() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let provider = Arc::new(Watching::default());
    let journal = SnapshotManager::new(
        Snapshot::empty(None),
        Manifest::new(),
        None,
        Arc::new(Plain),
    )
    .unwrap();
    let mut options = DeploymentOptions::new("p", "dev");
    options.parallel = 4;
    let deployment = Deployment::new(
        options,
        Arc::new(Loader(provider.clone())),
        Arc::new(NullSink),
        Arc::new(journal),
    )
    .unwrap();
    let outcome = runtime
        .block_on(deployment.update(Arc::new(Fleet(RESOURCES))))
        .unwrap();
    let created = outcome
        .snapshot
        .resources
        .iter()
        .filter(|r| r.id.is_some() && !r.is_provider())
        .count();
    assert_eq!(created, RESOURCES, "every resource is created");
    // The gate admits max(16 × 4, 256) registrations at once; a few more tasks are the
    // deployment's own. Spawning each registration on arrival made this about 3,000.
    let most = provider.most_tasks.load(Ordering::Relaxed);
    assert!(
        most <= 256 + 16,
        "{most} tasks were alive at once for {RESOURCES} registrations"
    );
}
