//! A program that declares thousands of resources at once: registrations beyond the engine's
//! gate wait in the program's own futures, not as tasks of the engine, and every one of them is
//! still deployed, and each waiting registration is small.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use cairn_engine::deploy::events::NullSink;
use cairn_engine::deploy::journal::SnapshotManager;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::deploy::{Deployment, DeploymentOptions};
use cairn_engine::state::{Manifest, Snapshot};
use cairn_engine::{TypeToken, props};
use support::{Fleet, Hooked, Loader, Plain};

const RESOURCES: usize = 3000;

#[test]
fn registrations_beyond_the_gate_wait_in_the_program_not_as_engine_tasks() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Each create notes the most tasks alive in the runtime, once every registration the
    // program sent has had the chance to reach the engine.
    let most_tasks = Arc::new(AtomicUsize::new(0));
    let noted = most_tasks.clone();
    let provider = Arc::new(Hooked {
        hook: Box::new(move || {
            let noted = noted.clone();
            Box::pin(async move {
                for _ in 0..4 {
                    tokio::task::yield_now().await;
                }
                let alive = tokio::runtime::Handle::current()
                    .metrics()
                    .num_alive_tasks();
                noted.fetch_max(alive, Ordering::Relaxed);
            })
        }),
    });
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
        Arc::new(Loader(provider)),
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
    let most = most_tasks.load(Ordering::Relaxed);
    assert!(
        most <= 256 + 16,
        "{most} tasks were alive at once for {RESOURCES} registrations"
    );
}

/// Registers one resource and notes how large its registration's future is while it waits.
struct Measure(Arc<AtomicUsize>);

#[async_trait]
impl Program for Measure {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let request = RegisterResourceRequest::custom(
            TypeToken::parse("test:index:Thing").unwrap(),
            "measured",
            props! { "n" => 1i64 },
        );
        let registration = monitor.register_resource(request);
        self.0
            .store(std::mem::size_of_val(&registration), Ordering::Relaxed);
        registration
            .await
            .map(|_| ())
            .map_err(|e| ProgramError::new(e.message))
    }
}

/// A program holds one such future per resource it declares at once; the request is boxed
/// first, so the future is not as large as the request and every later state of the
/// registration (it was 1,840 bytes: 184 MB for 100,000 waiting registrations).
#[tokio::test]
async fn a_waiting_registration_is_small() {
    let size = Arc::new(AtomicUsize::new(0));
    let provider = Arc::new(Hooked {
        hook: Box::new(|| Box::pin(async {})),
    });
    let journal = SnapshotManager::new(
        Snapshot::empty(None),
        Manifest::new(),
        None,
        Arc::new(Plain),
    )
    .unwrap();
    let deployment = Deployment::new(
        DeploymentOptions::new("p", "dev"),
        Arc::new(Loader(provider)),
        Arc::new(NullSink),
        Arc::new(journal),
    )
    .unwrap();
    deployment
        .update(Arc::new(Measure(size.clone())))
        .await
        .unwrap();
    let size = size.load(Ordering::Relaxed);
    assert!(
        size > 0 && size <= 256,
        "a registration's future is {size} bytes"
    );
}
