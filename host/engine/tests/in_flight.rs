//! A program that declares thousands of resources at once: registrations beyond the engine's
//! gate wait in the program's own futures, not as tasks of the engine, and every one of them is
//! still deployed.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use cairn_engine::deploy::events::NullSink;
use cairn_engine::deploy::journal::SnapshotManager;
use cairn_engine::deploy::{Deployment, DeploymentOptions};
use cairn_engine::state::{Manifest, Snapshot};
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
