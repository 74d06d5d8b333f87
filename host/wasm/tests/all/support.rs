//! Test support: real guest components built once per test binary, a shared runtime, captured
//! logs and request builders.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

use cairn_engine::deploy::provider::{CheckRequest, CreateRequest, ProviderError};
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyMap;
use cairn_wasm::{
    Grants, LogRecord, LogSink, PackageGrant, RuntimeOptions, WasmPlugin, WasmProvider, WasmRuntime,
};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where guests are built.
pub fn guest_target() -> PathBuf {
    repo().join("target/guests")
}

/// Builds the guest workspaces once (examples, hostile guests, the host's probe) and returns
/// the directory holding the `.wasm` files.
pub fn guests() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let repo = repo();
        for manifest in [
            "examples/Cargo.toml",
            "tests/guests/Cargo.toml",
            "host/wasm/tests/guest/Cargo.toml",
        ] {
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args([
                "build",
                "--release",
                "--target",
                "wasm32-wasip2",
                "--manifest-path",
            ])
            .arg(repo.join(manifest));
            // Variables the outer `cargo test` set for this crate must not leak into the build
            // (the target directory is set after, or an exported CARGO_TARGET_DIR would be
            // removed with the rest and the guests built elsewhere).
            for (key, _) in std::env::vars_os() {
                let key = key.to_string_lossy();
                if (key.starts_with("CARGO_") && key != "CARGO_HOME") || key == "RUSTFLAGS" {
                    cmd.env_remove(key.as_ref());
                }
            }
            cmd.env("CARGO_TARGET_DIR", guest_target());
            let out = cmd.output().expect("running cargo to build the guests");
            assert!(
                out.status.success(),
                "building {manifest} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        guest_target().join("wasm32-wasip2/release")
    })
}

/// The built component for a crate (`random`, `hostile-loop`, `probe`).
pub fn wasm(name: &str) -> PathBuf {
    guests().join(format!("{}.wasm", name.replace('-', "_")))
}

pub fn plugin(name: &str) -> WasmPlugin {
    WasmPlugin::from_file(wasm(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// One runtime for the whole test binary (each component compiles once), caching artifacts
/// under the guest target directory so reruns start fast.
pub fn runtime() -> &'static WasmRuntime {
    static RUNTIME: OnceLock<WasmRuntime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        WasmRuntime::new(RuntimeOptions {
            cache_dir: Some(guest_target().join("cwasm-cache")),
            pool_size: None,
        })
        .expect("creating the runtime")
    })
}

/// Captured provider logs.
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<LogRecord>>>);

impl Logs {
    pub fn sink(&self) -> LogSink {
        let records = self.0.clone();
        Arc::new(move |r: LogRecord| records.lock().unwrap().push(r))
    }

    pub fn records(&self) -> Vec<LogRecord> {
        self.0.lock().unwrap().clone()
    }

    pub fn messages(&self) -> Vec<String> {
        self.records().into_iter().map(|r| r.message).collect()
    }

    pub fn find(&self, needle: &str) -> Option<LogRecord> {
        self.records()
            .into_iter()
            .find(|r| r.message.contains(needle))
    }
}

/// A provider for a built crate with a grant (JSON, as in `cairn:grants.<pkg>`).
pub fn provider_with(name: &str, grant: serde_json::Value) -> (WasmProvider, Logs) {
    let plugin = plugin(name);
    let package = plugin.manifest().name.clone();
    let grants = Grants::parse(&serde_json::json!({ package.clone(): grant }), &repo())
        .unwrap_or_else(|e| panic!("{e}"));
    let logs = Logs::default();
    let provider = runtime()
        .instantiate(&plugin, &grants.package(&package), logs.sink())
        .unwrap_or_else(|e| panic!("{e}"));
    (provider, logs)
}

pub fn provider(name: &str) -> (WasmProvider, Logs) {
    let plugin = plugin(name);
    let logs = Logs::default();
    let provider = runtime()
        .instantiate(&plugin, &PackageGrant::default(), logs.sink())
        .unwrap_or_else(|e| panic!("{e}"));
    (provider, logs)
}

pub fn urn(resource_type: &str, name: &str) -> Urn {
    Urn::parse(&format!("urn:pulumi:test::proj::{resource_type}::{name}")).unwrap()
}

pub fn map(value: serde_json::Value) -> PropertyMap {
    fn convert(v: serde_json::Value) -> cairn_engine::PropertyValue {
        use cairn_engine::PropertyValue as P;
        match v {
            serde_json::Value::Null => P::Null,
            serde_json::Value::Bool(b) => P::Bool(b),
            serde_json::Value::Number(n) => P::Number(n.as_f64().unwrap()),
            serde_json::Value::String(s) => P::String(s),
            serde_json::Value::Array(a) => P::Array(a.into_iter().map(convert).collect()),
            serde_json::Value::Object(o) => P::Object(
                o.into_iter()
                    .map(|(k, v)| (k, convert(v)))
                    .collect::<cairn_engine::value::PropertyMap>()
                    .into(),
            ),
        }
    }
    match convert(value) {
        cairn_engine::PropertyValue::Object(m) => *m,
        other => panic!("not an object: {other:?}"),
    }
}

pub fn create(resource_type: &str, name: &str, properties: serde_json::Value) -> CreateRequest {
    CreateRequest {
        urn: urn(resource_type, name),
        properties: map(properties),
        timeout: 0.0,
        preview: false,
    }
}

/// What a check request lends, owned by the test.
pub struct Check {
    urn: Urn,
    olds: PropertyMap,
    news: PropertyMap,
}

impl Check {
    pub fn request(&self) -> CheckRequest<'_> {
        CheckRequest {
            urn: &self.urn,
            olds: &self.olds,
            news: &self.news,
            random_seed: &[1, 2, 3],
        }
    }
}

pub fn check(resource_type: &str, name: &str, news: serde_json::Value) -> Check {
    Check {
        urn: urn(resource_type, name),
        olds: PropertyMap::new(),
        news: map(news),
    }
}

/// The message of a `Failed` error (panics on other errors).
pub fn failure(e: ProviderError) -> String {
    match e {
        ProviderError::Failed { message, .. } => message,
        other => panic!("expected Failed, got {other:?}"),
    }
}

/// The message of an `OutcomeUnknown` error: an instance that died during a create, update or
/// delete (panics on other errors).
pub fn outcome_unknown(e: ProviderError) -> String {
    match e {
        ProviderError::OutcomeUnknown { message } => message,
        other => panic!("expected OutcomeUnknown, got {other:?}"),
    }
}

/// Asserts `text` contains every needle.
#[track_caller]
pub fn assert_contains(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(
            text.contains(needle),
            "{text:?}\n  does not contain {needle:?}"
        );
    }
}

/// What a deployment driven by the real engine left: its result and the snapshot it saved
/// (encoded as it would be written, and read back), or, when it saved none, the one its
/// journal holds.
pub struct Deployed {
    pub result: Result<cairn_engine::deploy::Outcome, cairn_engine::deploy::DeployError>,
    pub snapshot: cairn_engine::state::Snapshot,
}

impl Deployed {
    /// The deployment's error, as the CLI would print it.
    pub fn error(&self) -> String {
        match &self.result {
            Ok(_) => panic!("the deployment succeeded"),
            Err(e) => e.to_string(),
        }
    }
}

/// Keeps the last checkpoint saved; journal records are dropped.
#[derive(Default)]
struct LastSaved(Mutex<Option<cairn_engine::state::DeploymentV3>>);

impl cairn_engine::deploy::journal::Persister for LastSaved {
    fn append(&self, _lines: &[u8]) -> Result<(), cairn_engine::deploy::journal::PersistError> {
        Ok(())
    }
    fn save(&self, deployment: &[u8]) -> Result<(), cairn_engine::deploy::journal::PersistError> {
        *self.0.lock().unwrap() = Some(serde_json::from_slice(deployment).unwrap());
        Ok(())
    }
}

struct PlainText;

impl cairn_engine::secrets::Crypter for PlainText {
    fn encrypt(&self, plaintext: &str) -> Result<String, cairn_engine::secrets::SecretsError> {
        Ok(plaintext.to_owned())
    }
    fn decrypt(&self, ciphertext: &str) -> Result<String, cairn_engine::secrets::SecretsError> {
        Ok(ciphertext.to_owned())
    }
}

struct NoEvents;

impl cairn_engine::deploy::events::EventSink for NoEvents {
    fn emit(&self, _event: cairn_engine::deploy::events::EngineEvent) {}
}

/// Runs `program` as project `proj`, stack `test`, from `base`, with the stack configuration
/// `config` (`{"proj:mode": "x"}`), the wasm providers `random`, `probe` and `hostile-wire`
/// (sandboxed by `grants`, a `cairn:grants` value) and provider logs in `logs`.
pub async fn deploy_program(
    program: Arc<dyn cairn_engine::deploy::program::Program>,
    base: cairn_engine::state::Snapshot,
    config: serde_json::Value,
    grants: serde_json::Value,
    logs: &Logs,
) -> Deployed {
    use cairn_engine::deploy::journal::SnapshotManager;
    use cairn_engine::deploy::{Deployment, DeploymentOptions};
    let grants = Grants::parse(&grants, &repo()).unwrap_or_else(|e| panic!("{e}"));
    let loader = cairn_wasm::WasmLoader::new(runtime().clone(), grants, logs.sink())
        .with_local_plugin(wasm("random"))
        .unwrap()
        .with_local_plugin(wasm("probe"))
        .unwrap()
        .with_local_plugin(wasm("hostile-wire"))
        .unwrap();
    let saved = Arc::new(LastSaved::default());
    let journal = Arc::new(
        SnapshotManager::new(
            base,
            cairn_engine::state::Manifest::new(),
            Some(saved.clone()),
            Arc::new(PlainText),
        )
        .unwrap(),
    );
    let mut options = DeploymentOptions::new("proj", "test");
    for (key, value) in map(config) {
        options.config.insert(key, value);
    }
    let deployment = Deployment::new(
        options,
        Arc::new(loader),
        Arc::new(NoEvents),
        journal.clone(),
    )
    .unwrap();
    let result = deployment.update(program).await;
    let snapshot = match saved.0.lock().unwrap().take() {
        Some(written) => cairn_engine::state::decode_deployment(written, Some(&PlainText))
            .unwrap_or_else(|e| panic!("the saved checkpoint cannot be read back: {e}")),
        None => journal.current(),
    };
    Deployed { result, snapshot }
}

/// The hostile program (`tests/guests/hostile-program`), sandboxed by `grant` (a
/// `cairn:program` value).
pub fn hostile_program(grant: serde_json::Value, logs: &Logs) -> Arc<cairn_wasm::WasmProgram> {
    let file = cairn_wasm::ProgramFile::from_file("proj", wasm("hostile-program"))
        .unwrap_or_else(|e| panic!("{e}"));
    let grant = Grants::parse_program(&grant, &repo()).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(
        runtime()
            .load_program(&file, &grant, logs.sink())
            .unwrap_or_else(|e| panic!("{e}")),
    )
}
