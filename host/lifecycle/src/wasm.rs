//! The wasm backend: the test provider's logic as a `lifecycle-test` component (in Rust:
//! tests/guests/lifecycle-test; in another guest language: tests/guests/lifecycle-test-LANG),
//! sandboxed by cairn-wasm, its "cloud" a granted directory.
//!
//! Between deployments the harness owns the cloud ([`Cloud::cloud`](crate::provider::World::cloud)): [`WasmBackend::push`]
//! writes it and the deployment's behaviour into the directory, [`WasmBackend::pull`] reads back
//! what the provider left there, so every expectation and invariant checks the same data for
//! both backends.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use cairn_engine::deploy::provider::LoadError;
use cairn_guest_build::{Builder, Language, World};
use cairn_wasm::{
    DirGrant, LogRecord, LogSink, PackageGrant, RuntimeOptions, WasmPlugin, WasmProvider,
    WasmRuntime,
};
use serde_json::{Value as Json, json};
use serde_yaml_ng::Value as Yaml;

use crate::Guest;
use crate::provider::{CloudEntry, World as Cloud, lock};
use crate::values::{canon_map, from_yaml};

/// Where the guest directory (`/cloud`) is mounted in the component.
const GUEST_DIR: &str = "/cloud";

/// The compiled component, shared by every scenario of the process.
struct Component {
    runtime: WasmRuntime,
    plugin: WasmPlugin,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `lifecycle-test` component in `guest`'s language: built (once per process, the way `cairn
/// up` builds a provider source) and compiled (once; cached on disk).
fn component(guest: Guest) -> Result<&'static Component, String> {
    static COMPONENTS: [OnceLock<Result<Component, String>>; 4] = [const { OnceLock::new() }; 4];
    let slot = match guest {
        Guest::Rust => 0,
        Guest::Python => 1,
        Guest::TypeScript => 2,
        Guest::Go => 3,
    };
    COMPONENTS[slot]
        .get_or_init(|| {
            let target = repo().join("target/guests");
            let file = match guest {
                Guest::Rust => build_rust(&target)?,
                Guest::Python => build_guest("lifecycle-test-python", Language::Python)?,
                Guest::TypeScript => {
                    build_guest("lifecycle-test-typescript", Language::TypeScript)?
                }
                Guest::Go => build_guest("lifecycle-test-go", Language::Go)?,
            };
            let plugin = WasmPlugin::from_file(&file).map_err(|e| e.to_string())?;
            let runtime = WasmRuntime::new(RuntimeOptions {
                cache_dir: Some(target.join("cwasm-cache")),
                pool_size: None,
            })
            .map_err(|e| e.to_string())?;
            runtime.prepare(&plugin).map_err(|e| e.to_string())?;
            Ok(Component { runtime, plugin })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// tests/guests/lifecycle-test, built with cargo into the shared guest target directory.
fn build_rust(target: &Path) -> Result<PathBuf, String> {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(["build", "--release", "--target", "wasm32-wasip2"])
        .args(["-p", "lifecycle-test", "--manifest-path"])
        .arg(repo().join("tests/guests/Cargo.toml"));
    // Variables the outer `cargo test` set for this crate must not leak into the build
    // (cleared before the target directory is set, so an exported one does not win).
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if (key.starts_with("CARGO_") && key != "CARGO_HOME") || key == "RUSTFLAGS" {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.env("CARGO_TARGET_DIR", target);
    let out = cmd
        .output()
        .map_err(|e| format!("running cargo to build lifecycle-test: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building lifecycle-test failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(target.join("wasm32-wasip2/release/lifecycle_test.wasm"))
}

/// tests/guests/NAME, built by cairn-guest-build as `cairn up` builds a provider source, with
/// the toolchains the other tests share (`target/toolchains`).
fn build_guest(name: &str, language: Language) -> Result<PathBuf, String> {
    let builder = Builder {
        home: repo().join("target/guests/home"),
        toolchains: repo().join("target/toolchains"),
        progress: Box::new(|line| eprintln!("{line}")),
    };
    builder
        .build(
            &repo().join("tests/guests").join(name),
            language,
            World::Provider,
        )
        .map_err(|e| format!("building tests/guests/{name}: {e}"))
}

/// One scenario's wasm provider: the shared component and the scenario's cloud directory.
pub struct WasmBackend {
    component: &'static Component,
    dir: tempfile::TempDir,
}

/// Guest logs are not part of any expectation; dropped.
fn quiet() -> LogSink {
    Arc::new(|_: LogRecord| {})
}

impl WasmBackend {
    pub fn new(guest: Guest) -> Result<WasmBackend, String> {
        Ok(WasmBackend {
            component: component(guest)?,
            dir: tempfile::tempdir().map_err(|e| format!("creating the cloud directory: {e}"))?,
        })
    }

    fn resources(&self) -> PathBuf {
        self.dir.path().join("resources")
    }

    /// A provider instance with the cloud directory granted read-write at `/cloud`.
    pub async fn instantiate(&self) -> Result<WasmProvider, LoadError> {
        let grant = PackageGrant {
            directories: vec![DirGrant {
                host: self.dir.path().to_owned(),
                guest: GUEST_DIR.to_owned(),
                write: true,
            }],
            ..PackageGrant::default()
        };
        let component = self.component;
        tokio::task::spawn_blocking(move || {
            component
                .runtime
                .instantiate(&component.plugin, &grant, quiet())
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()))
        .map_err(|message| LoadError::Failed {
            package: "test".into(),
            message,
        })
    }

    /// Writes the cloud and the deployment's behaviour into the directory.
    pub fn push(&self, world: &Cloud) -> Result<(), String> {
        let behaviour =
            serde_json::to_value(&*lock(&world.behaviour)).map_err(|e| e.to_string())?;
        write(&self.dir.path().join("behaviour.json"), &behaviour)?;

        let dir = self.resources();
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(|e| format!("clearing {}: {e}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        for (id, entry) in lock(&world.cloud).iter() {
            let json = json!({
                "name": entry.name,
                "type": entry.resource_type,
                "inputs": canon_map(&entry.inputs),
                "outputs": canon_map(&entry.outputs),
            });
            write(&dir.join(format!("{id}.json")), &json)?;
        }
        Ok(())
    }

    /// Replaces [`Cloud::cloud`](crate::provider::World::cloud) with what the provider left in the directory.
    pub fn pull(&self, world: &Cloud) -> Result<(), String> {
        let dir = self.resources();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("listing {}: {e}", dir.display()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .collect();
        files.sort();
        let mut cloud = lock(&world.cloud);
        cloud.clear();
        for file in files {
            let id = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("reading {}: {e}", file.display()))?;
            let entry: Yaml = serde_json::from_str(&text)
                .map_err(|e| format!("{} is malformed: {e}", file.display()))?;
            let map = |key: &str| match entry.get(key).map(from_yaml).transpose()? {
                Some(cairn_engine::value::PropertyValue::Object(m)) => Ok(m),
                None => Ok(Default::default()),
                Some(other) => Err(format!(
                    "{}: {key} is not an object: {other:?}",
                    file.display()
                )),
            };
            let text_of = |key: &str| {
                entry
                    .get(key)
                    .and_then(Yaml::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            cloud.insert(
                id,
                CloudEntry {
                    name: text_of("name"),
                    resource_type: text_of("type"),
                    inputs: crate::provider::to_cloud(&*map("inputs")?),
                    outputs: crate::provider::to_cloud(&*map("outputs")?),
                },
            );
        }
        Ok(())
    }
}

fn write(path: &Path, json: &Json) -> Result<(), String> {
    std::fs::write(path, json.to_string()).map_err(|e| format!("writing {}: {e}", path.display()))
}
