//! Cairn's lifecycle scenario suite.
//!
//! Every data-driven scenario in `scenarios/` (one YAML file each; the format is described in
//! `scenarios/README.md`) runs against the engine with the test provider (package `test`) on a
//! chosen [`BackendKind`]: in process, or as a test provider component sandboxed by cairn-wasm
//! (the `lifecycle-test` guest, written once in each guest language: [`Guest`]). The same expectations hold for both. Set `SCENARIO=<substring>` to run only the
//! scenarios whose file name contains it.
//!
//! Besides each scenario's own expectations, every deployment is checked against invariants:
//! every state the journal can replay to passes the integrity check (`persist`), a preview
//! changes neither the state nor the cloud, and no plaintext of a value the scenario marks
//! secret appears in the checkpoint, the journal lines written or the rendered events
//! (`secrets`).

mod persist;
mod program;
mod provider;
mod runner;
mod scenario;
mod secrets;
mod values;
mod wasm;

use std::path::{Path, PathBuf};

/// Where the test provider's logic runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    InProcess,
    /// The test provider as a sandboxed component, written in one of the guest languages.
    Wasm(Guest),
}

/// The language a wasm test provider is written in: the same provider (the behaviour of
/// cairn-test-provider, the same `/cloud` layout) in each SDK, so the whole suite checks each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guest {
    /// tests/guests/lifecycle-test (the Rust SDK).
    Rust,
    /// tests/guests/lifecycle-test-python.
    Python,
    /// tests/guests/lifecycle-test-typescript.
    TypeScript,
    /// tests/guests/lifecycle-test-go.
    Go,
}

fn scenario_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// Runs every (matching) scenario on `backend` and panics listing all that failed.
pub fn run_all(backend: BackendKind) {
    let filter = std::env::var("SCENARIO").ok();
    let files = scenario_files();
    assert!(!files.is_empty(), "no scenarios found");
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in &files {
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        ran += 1;
        let started = std::time::Instant::now();
        let outcome = std::panic::catch_unwind(|| runner::run_file(file, backend));
        let outcome = match outcome {
            Ok(result) => result,
            Err(payload) => Err(format!(
                "the harness panicked: {}",
                payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            )),
        };
        match outcome {
            Ok(()) => eprintln!("PASS {name} ({:.2?})", started.elapsed()),
            Err(message) => {
                eprintln!("FAIL {name}");
                failures.push(format!("== {name}\n{message}"));
            }
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of {ran} scenarios failed ({backend:?}):\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }
}
