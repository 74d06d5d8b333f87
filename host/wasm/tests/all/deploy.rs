//! The real engine driving wasm providers: a deployment that creates a `random` resource through
//! its default provider and a remote `probe` component whose `construct` registers a child
//! through the engine callbacks; a second deployment of the same program changes nothing.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::deploy::events::{EngineEvent, EventSink, StepOp};
use cairn_engine::deploy::journal::{PersistError, Persister, SnapshotManager};
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::deploy::{Deployment, DeploymentOptions, Outcome};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::{Manifest, Snapshot};
use cairn_engine::{PropertyValue, TypeToken};
use cairn_wasm::{Grants, WasmLoader, events_log_sink};

use crate::support::*;

struct Discard;

impl Persister for Discard {
    fn append(&self, _lines: &[u8]) -> Result<(), PersistError> {
        Ok(())
    }
    fn save(&self, _deployment: &[u8]) -> Result<(), PersistError> {
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

#[derive(Default)]
struct Events(std::sync::Mutex<Vec<EngineEvent>>);

impl EventSink for Events {
    fn emit(&self, event: EngineEvent) {
        self.0.lock().unwrap().push(event);
    }
}

struct TwoResources;

#[async_trait]
impl Program for TwoResources {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let pet = RegisterResourceRequest::custom(
            TypeToken::parse("random:index/randomPet:RandomPet").unwrap(),
            "pet",
            map(serde_json::json!({"length": 3, "separator": "_"})),
        );
        let widget = RegisterResourceRequest {
            remote: true,
            inputs: map(serde_json::json!({"color": "blue"})),
            ..RegisterResourceRequest::component(
                TypeToken::parse("probe:index:Widget").unwrap(),
                "w",
            )
        };
        let (pet, widget) = futures::join!(
            monitor.register_resource(pet),
            monitor.register_resource(widget)
        );
        let pet = pet?;
        assert_eq!(pet.id.as_deref().map(|s| s.split('_').count()), Some(3));
        let widget = widget?;
        assert_eq!(widget.urn.resource_type(), "probe:index:Widget");
        assert_eq!(
            widget.outputs["childId"],
            PropertyValue::from("thing-w-child")
        );
        Ok(())
    }
}

async fn deploy(base: Snapshot, events: Arc<Events>) -> Outcome {
    let loader = WasmLoader::new(
        runtime().clone(),
        Grants::none(),
        events_log_sink(events.clone()),
    )
    .with_local_plugin(wasm("random"))
    .unwrap()
    .with_local_plugin(wasm("probe"))
    .unwrap();
    let mut manifest = Manifest::new();
    manifest.time = format!("{}-{}", manifest.time, base.resources.len());
    let journal = Arc::new(
        SnapshotManager::new(base, manifest, Some(Arc::new(Discard)), Arc::new(Plain)).unwrap(),
    );
    let deployment = Deployment::new(
        DeploymentOptions::new("proj", "test"),
        Arc::new(loader),
        events,
        journal,
    )
    .unwrap();
    deployment
        .update(Arc::new(TwoResources))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_deploys_with_wasm_providers() {
    let events = Arc::new(Events::default());
    let first = deploy(Snapshot::empty(None), events.clone()).await;
    let types: Vec<String> = first
        .snapshot
        .resources
        .iter()
        .map(|r| format!("{}::{}", r.resource_type, r.urn.name()))
        .collect();
    for expected in [
        "random:index/randomPet:RandomPet::pet",
        "probe:index:Widget::w",
        "probe:index:Thing::w-child",
        "pulumi:providers:random::default",
        "pulumi:providers:probe::default",
    ] {
        assert!(
            types.iter().any(|t| t.starts_with(expected)),
            "{expected} missing from {types:?}"
        );
    }
    let creates = first.changes.get(&StepOp::Create).copied().unwrap_or(0);
    assert!(creates >= 3, "{:?}", first.changes);
    let child = first
        .snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == "w-child")
        .unwrap();
    assert_eq!(child.outputs["color"], PropertyValue::from("blue"));

    // Again, from the recorded state: nothing changes.
    let events = Arc::new(Events::default());
    let second = deploy(first.snapshot, events).await;
    let changed: usize = second.changes.values().sum();
    assert_eq!(changed, 0, "{:?}", second.changes);
}
