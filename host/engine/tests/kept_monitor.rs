//! A program (or its transport) that keeps its monitor past the deployment's end: the monitor
//! does not keep the engine alive, so the deployment still ends by moving its recorded state
//! into the final snapshot, and a request sent afterwards is refused, not acted on.

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::deploy::events::NullSink;
use cairn_engine::deploy::journal::SnapshotManager;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::deploy::{Deployment, DeploymentOptions};
use cairn_engine::state::{Manifest, Snapshot};
use cairn_engine::{TypeToken, props};
use support::{Fleet, Hooked, Loader, Plain};

/// Runs [`Fleet`] and keeps a copy of the monitor it was given.
struct Keeper {
    fleet: Fleet,
    kept: Mutex<Option<Monitor>>,
}

#[async_trait]
impl Program for Keeper {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        *self.kept.lock().unwrap() = Some(monitor.clone());
        self.fleet.run(monitor).await
    }
}

#[tokio::test]
async fn a_monitor_kept_past_the_end_neither_holds_the_deployment_nor_acts() {
    let provider = Arc::new(Hooked {
        hook: Box::new(|| Box::pin(async {})),
    });
    let journal = Arc::new(
        SnapshotManager::new(
            Snapshot::empty(None),
            Manifest::new(),
            None,
            Arc::new(Plain),
        )
        .unwrap(),
    );
    let watched = Arc::downgrade(&journal);
    let deployment = Deployment::new(
        DeploymentOptions::new("p", "dev"),
        Arc::new(Loader(provider)),
        Arc::new(NullSink),
        journal,
    )
    .unwrap();
    let program = Arc::new(Keeper {
        fleet: Fleet(3),
        kept: Mutex::new(None),
    });
    let outcome = deployment.update(program.clone()).await.unwrap();
    assert_eq!(
        outcome.snapshot.resources.len(),
        5,
        "the stack, its default provider and three resources"
    );
    // The journal's last owner was the deployment, which consumed it to build the snapshot.
    assert!(
        watched.upgrade().is_none(),
        "the kept monitor held the journal past the deployment's end"
    );

    let kept = program.kept.lock().unwrap().take().unwrap();
    assert_eq!(kept.project(), "p", "what the monitor knows stays readable");
    assert_eq!(kept.stack(), "dev");
    let late = RegisterResourceRequest::custom(
        TypeToken::parse("test:index:Thing").unwrap(),
        "late",
        props! {},
    );
    let refused = kept.register_resource(late).await.unwrap_err();
    assert_eq!(refused.message, "the deployment has ended");
}
