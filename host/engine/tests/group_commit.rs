//! Group commit through the whole engine: steps waiting for their journal records to become
//! durable hold no `--parallel` permit, so the records of many steps share one write even when
//! provider operations run one at a time.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_engine::deploy::events::NullSink;
use cairn_engine::deploy::journal::{PersistError, Persister, SnapshotManager};
use cairn_engine::deploy::{Deployment, DeploymentOptions};
use cairn_engine::state::{Manifest, Snapshot};
use support::{Fleet, Hooked, Loader, Plain};

/// Provider operations running now, and the most that ever ran at once.
#[derive(Default)]
struct Overlap(Mutex<(usize, usize)>);

impl Overlap {
    async fn operation(&self) {
        {
            let mut running = self.0.lock().unwrap();
            running.0 += 1;
            running.1 = running.1.max(running.0);
        }
        tokio::task::yield_now().await;
        self.0.lock().unwrap().0 -= 1;
    }

    fn most_at_once(&self) -> usize {
        self.0.lock().unwrap().1
    }
}

/// A slow disk: every append takes a while, and each is recorded.
#[derive(Default)]
struct SlowDisk {
    appends: Mutex<Vec<Vec<u8>>>,
}

impl Persister for SlowDisk {
    fn append(&self, lines: &[u8]) -> Result<(), PersistError> {
        std::thread::sleep(Duration::from_millis(5));
        self.appends.lock().unwrap().push(lines.to_vec());
        Ok(())
    }
    fn save(&self, _: &[u8]) -> Result<(), PersistError> {
        Ok(())
    }
}

const RESOURCES: usize = 40;

/// Deploys (or with `base`, destroys) with `--parallel 1` on a slow disk; returns the outcome's
/// snapshot, the appends after the header, and the provider's most overlapping operations.
fn run(base: Option<Snapshot>) -> (Snapshot, Vec<Vec<u8>>, usize) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let disk = Arc::new(SlowDisk::default());
    let overlap = Arc::new(Overlap::default());
    let watched = overlap.clone();
    let provider = Arc::new(Hooked {
        hook: Box::new(move || {
            let overlap = watched.clone();
            Box::pin(async move { overlap.operation().await })
        }),
    });
    let destroying = base.is_some();
    let journal = SnapshotManager::new(
        base.unwrap_or_else(|| Snapshot::empty(None)),
        Manifest::new(),
        Some(disk.clone() as Arc<dyn Persister>),
        Arc::new(Plain),
    )
    .unwrap();
    let mut options = DeploymentOptions::new("p", "dev");
    options.parallel = 1;
    let deployment = Deployment::new(
        options,
        Arc::new(Loader(provider)),
        Arc::new(NullSink),
        Arc::new(journal),
    )
    .unwrap();
    let outcome = runtime
        .block_on(async {
            if destroying {
                deployment.destroy().await
            } else {
                deployment.update(Arc::new(Fleet(RESOURCES))).await
            }
        })
        .unwrap();
    let mut appends = disk.appends.lock().unwrap().clone();
    appends.remove(0); // the header
    (outcome.snapshot, appends, overlap.most_at_once())
}

fn records(appends: &[Vec<u8>]) -> usize {
    appends
        .iter()
        .map(|a| a.iter().filter(|b| **b == b'\n').count())
        .sum()
}

#[test]
fn steps_share_journal_writes_while_provider_operations_run_one_at_a_time() {
    let (created, appends, most) = run(None);
    let custom = |s: &Snapshot| {
        s.resources
            .iter()
            .filter(|r| r.id.is_some() && !r.is_provider())
            .count()
    };
    assert_eq!(custom(&created), RESOURCES, "every resource is created");
    assert_eq!(
        most, 1,
        "--parallel 1 runs one provider operation at a time"
    );
    // A begin and an end per create (the default provider's registration adds its own).
    assert!(records(&appends) >= 2 * RESOURCES);
    // Holding the permit across the journal waits gave one record per write (80 or more);
    // with it held for the provider call only, the begins queued behind one write share the
    // next one.
    assert!(
        appends.len() <= RESOURCES,
        "{} records went out in {} writes: steps waiting for the journal held the parallelism permit",
        records(&appends),
        appends.len()
    );

    let (destroyed, appends, most) = run(Some(created));
    assert_eq!(custom(&destroyed), 0, "every resource is deleted");
    assert_eq!(most, 1);
    assert!(records(&appends) >= 2 * RESOURCES);
    assert!(
        appends.len() <= RESOURCES,
        "{} records went out in {} writes",
        records(&appends),
        appends.len()
    );
}
