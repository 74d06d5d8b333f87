//! An instance that dies during a `create`, `update` or `delete` may have acted before it died,
//! so the engine must leave the operation pending rather than record a failure. Driven through
//! the real engine with a journal, against `side-effects`, whose every act leaves a file in its
//! granted directory: each case shows the act happened and the state says it is unresolved.
//! An error the provider returns stays a plain failure.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::TypeToken;
use cairn_engine::deploy::journal::{PersistError, Persister, SnapshotManager, replay};
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::deploy::{DeployError, Deployment, DeploymentOptions, Outcome};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::{
    DeploymentV3, Manifest, OperationKind, SecretsMode, Snapshot, decode_deployment,
    encode_deployment, verify_integrity,
};
use cairn_wasm::{Grants, WasmLoader};

use crate::support::*;

const MARK: &str = "side-effects:index:Mark";

/// A backend in memory: the checkpoint and the journal written since it was saved.
struct Backend {
    checkpoint: Mutex<DeploymentV3>,
    journal: Mutex<Vec<u8>>,
}

impl Persister for Backend {
    fn append(&self, lines: &[u8]) -> Result<(), PersistError> {
        self.journal.lock().unwrap().extend_from_slice(lines);
        Ok(())
    }
    fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
        *self.checkpoint.lock().unwrap() = serde_json::from_slice(deployment).unwrap();
        self.journal.lock().unwrap().clear();
        Ok(())
    }
}

impl Backend {
    fn new() -> Backend {
        let empty = encode_deployment(&Snapshot::empty(None), SecretsMode::Encrypt(&Plain))
            .expect("an empty snapshot encodes");
        Backend {
            checkpoint: Mutex::new(empty),
            journal: Mutex::new(Vec::new()),
        }
    }

    /// The state as the next command would load it: the checkpoint with the journal replayed,
    /// checked for integrity.
    fn state(&self) -> Snapshot {
        let replayed = replay(
            &self.checkpoint.lock().unwrap(),
            &self.journal.lock().unwrap(),
        )
        .unwrap_or_else(|e| panic!("the journal does not replay: {e}"));
        let snapshot = decode_deployment(replayed, Some(&Plain)).unwrap();
        verify_integrity(&snapshot).unwrap_or_else(|e| panic!("{e}"));
        snapshot
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

/// Declares `side-effects` marks by name with their inputs.
struct Marks(Vec<(&'static str, serde_json::Value)>);

#[async_trait]
impl Program for Marks {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let requests = self.0.iter().map(|(name, inputs)| {
            monitor.register_resource(RegisterResourceRequest::custom(
                TypeToken::parse(MARK).unwrap(),
                *name,
                map(inputs.clone()),
            ))
        });
        for result in futures::future::join_all(requests).await {
            result?;
        }
        Ok(())
    }
}

/// Runs `program` (an update, or its preview) against `backend`, the provider granted `dir` at
/// `/out` with a 1 s deadline and 64 MiB of memory.
async fn deploy(
    backend: &Arc<Backend>,
    dir: &Path,
    program: Marks,
    preview: bool,
) -> Result<Outcome, DeployError> {
    let grants = Grants::parse(
        &serde_json::json!({"side-effects": {
            "directories": [{"host": dir, "guest": "/out", "write": true}],
            "timeoutSeconds": 1,
            "memoryMiB": 64,
        }}),
        &repo(),
    )
    .unwrap();
    let logs = Logs::default();
    let loader = WasmLoader::new(runtime().clone(), grants, logs.sink())
        .with_local_plugin(wasm("side-effects"))
        .unwrap();
    let persister: Option<Arc<dyn Persister>> = (!preview).then(|| backend.clone() as _);
    let journal = Arc::new(
        SnapshotManager::new(backend.state(), Manifest::new(), persister, Arc::new(Plain)).unwrap(),
    );
    let mut options = DeploymentOptions::new("proj", "test");
    options.preview = preview;
    let deployment = Deployment::new(
        options,
        Arc::new(loader),
        Arc::new(cairn_engine::deploy::events::NullSink),
        journal,
    )
    .unwrap();
    deployment.update(Arc::new(program)).await
}

/// `(kind, resource name)` of the state's pending operations.
fn pending(state: &Snapshot) -> Vec<(OperationKind, String)> {
    state
        .pending_operations
        .iter()
        .map(|op| (op.kind, op.resource.urn.name().to_owned()))
        .collect()
}

fn has_resource(state: &Snapshot, name: &str) -> bool {
    state
        .resources
        .iter()
        .any(|r| r.urn.name() == name && !r.delete)
}

fn error_of(result: Result<Outcome, DeployError>) -> String {
    match result {
        Ok(_) => panic!("the deployment succeeded"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_whose_instance_dies_after_acting_is_left_pending() {
    for (trap, cause) in [
        (
            "panic",
            "wasm trap: unreachable instruction executed (the provider panicked or aborted)",
        ),
        ("spin", "deadline of 1 s exceeded"),
        ("memory", "exceeded its 64 MiB memory limit"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let backend = Arc::new(Backend::new());
        let program = Marks(vec![(
            "m",
            serde_json::json!({"content": "made", "trap": trap}),
        )]);
        let error = error_of(deploy(&backend, dir.path(), program, false).await);
        assert_contains(
            &error,
            &[
                "side-effects@0.1.0 create urn:pulumi:test::proj::side-effects:index:Mark::m",
                cause,
                "whether the operation took effect is unknown",
                "pending operation",
            ],
        );
        // It acted: the file is there. The state does not claim the resource, and says the
        // create is unresolved.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("m")).unwrap(),
            "made",
            "{trap}"
        );
        let state = backend.state();
        assert_eq!(
            pending(&state),
            [(OperationKind::Creating, "m".into())],
            "{trap}"
        );
        assert!(!has_resource(&state, "m"), "{trap}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_and_deletes_whose_instance_dies_are_left_pending() {
    // An update that acts, then panics.
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(Backend::new());
    let v1 = Marks(vec![("m", serde_json::json!({"content": "v1"}))]);
    deploy(&backend, dir.path(), v1, false).await.unwrap();
    let v2 = Marks(vec![(
        "m",
        serde_json::json!({"content": "v2", "trap": "panic"}),
    )]);
    let error = error_of(deploy(&backend, dir.path(), v2, false).await);
    assert_contains(&error, &["update", "pending operation"]);
    assert_eq!(std::fs::read_to_string(dir.path().join("m")).unwrap(), "v2");
    let state = backend.state();
    assert_eq!(pending(&state), [(OperationKind::Updating, "m".into())]);
    assert!(has_resource(&state, "m"), "the resource stays recorded");

    // A delete that acts, then panics.
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(Backend::new());
    let doomed = Marks(vec![(
        "m",
        serde_json::json!({"content": "x", "trapOnDelete": "panic"}),
    )]);
    deploy(&backend, dir.path(), doomed, false).await.unwrap();
    assert!(dir.path().join("m").exists());
    let error = error_of(deploy(&backend, dir.path(), Marks(vec![]), false).await);
    assert_contains(&error, &["delete", "pending operation"]);
    assert!(!dir.path().join("m").exists(), "the delete acted");
    let state = backend.state();
    assert_eq!(pending(&state), [(OperationKind::Deleting, "m".into())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_the_provider_returns_is_a_failure_not_pending() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(Backend::new());
    let program = Marks(vec![("m", serde_json::json!({"trap": "error"}))]);
    let error = error_of(deploy(&backend, dir.path(), program, false).await);
    assert_contains(&error, &["side-effects: told to fail after acting"]);
    assert!(!error.contains("pending"), "{error}");
    let state = backend.state();
    assert_eq!(pending(&state), []);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_through_the_engine_acts_on_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(Backend::new());
    // A create that would act and then die is only described in a preview.
    let program = Marks(vec![(
        "m",
        serde_json::json!({"content": "v1", "trap": "panic"}),
    )]);
    let outcome = deploy(&backend, dir.path(), program, true).await.unwrap();
    assert!(
        outcome
            .snapshot
            .resources
            .iter()
            .any(|r| r.urn.name() == "m"),
        "the preview plans the resource"
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    assert_eq!(pending(&backend.state()), []);

    // An update's preview leaves the file as the last real update wrote it.
    let v1 = Marks(vec![("m", serde_json::json!({"content": "v1"}))]);
    deploy(&backend, dir.path(), v1, false).await.unwrap();
    let v2 = Marks(vec![(
        "m",
        serde_json::json!({"content": "v2", "trap": "panic"}),
    )]);
    deploy(&backend, dir.path(), v2, true).await.unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("m")).unwrap(), "v1");
}

/// The README's promise: pending updates and deletes are settled by the next successful `up`.
/// A delete that overran its deadline is left pending; the `up` that declares the resource
/// again succeeds and leaves nothing pending (the resource is still recorded, as Pulumi keeps
/// it; a refresh would find its file gone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_that_timed_out_is_settled_by_the_next_successful_up() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(Backend::new());
    let declared = || {
        Marks(vec![(
            "m",
            serde_json::json!({"content": "x", "trapOnDelete": "spin"}),
        )])
    };
    deploy(&backend, dir.path(), declared(), false)
        .await
        .unwrap();
    let error = error_of(deploy(&backend, dir.path(), Marks(vec![]), false).await);
    assert_contains(
        &error,
        &["delete", "deadline of 1 s exceeded", "pending operation"],
    );
    assert_eq!(
        pending(&backend.state()),
        [(OperationKind::Deleting, "m".into())]
    );

    deploy(&backend, dir.path(), declared(), false)
        .await
        .unwrap();
    let state = backend.state();
    assert_eq!(pending(&state), [], "the successful up settled the delete");
    assert!(has_resource(&state, "m"));
}
