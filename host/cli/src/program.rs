//! Where the CLI finds the project's program: `runtime: wasm` with `main` naming a component
//! (`.wasm`) or a cargo package (a directory with `Cargo.toml`, default: the project directory)
//! that is built for `wasm32-wasip2` first. The program is sandboxed by the stack's
//! `cairn:program` grant.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use cairn_engine::config::{ConfigKey, ResolvedConfig};
use cairn_engine::deploy::events::EventSink;
use cairn_engine::deploy::program::Program;
use cairn_engine::project::Project;
use cairn_wasm::{Grants, PROGRAM_KEY, PackageGrant, ProgramFile, WasmRuntime, events_log_sink};
use indexmap::IndexMap;

/// The runtime name of Cairn's own wasm programs.
pub const WASM_RUNTIME: &str = "wasm";

/// A program located, built and checked, ready to load for each deployment.
pub struct ProgramSource {
    file: ProgramFile,
    grant: PackageGrant,
}

impl ProgramSource {
    /// Finds (and builds) the project's program and checks that it compiles as a program.
    pub fn prepare(
        runtime: &WasmRuntime,
        project_dir: &Path,
        project: &Project,
        config: &IndexMap<ConfigKey, ResolvedConfig>,
    ) -> Result<ProgramSource> {
        if project.runtime.name != WASM_RUNTIME {
            bail!(
                "Pulumi.yaml: runtime {:?} is not supported yet; Cairn runs `runtime: {WASM_RUNTIME}` programs (main: a .wasm component or a cargo package)",
                project.runtime.name
            );
        }
        let main = project_dir.join(project.main.as_deref().unwrap_or("."));
        let wasm = if main.is_dir() {
            build(&main)?
        } else if main.extension().is_some_and(|e| e == "wasm") {
            if !main.is_file() {
                bail!("Pulumi.yaml: main {} does not exist", main.display());
            }
            main
        } else {
            bail!(
                "Pulumi.yaml: main {} is neither a .wasm component nor a directory with a Cargo.toml",
                main.display()
            );
        };
        let file = ProgramFile::from_file(&project.name, &wasm)?;
        let grant = match crate::providers::structured(config, PROGRAM_KEY)? {
            None => PackageGrant::default(),
            Some(json) => Grants::parse_program(&json, project_dir)?,
        };
        // Compile now (cached by content), so errors show before the deployment starts.
        runtime.load_program(&file, &grant, Arc::new(|_| {}))?;
        Ok(ProgramSource { file, grant })
    }

    /// The program for one deployment; its logs go to `events`.
    pub fn load(
        &self,
        runtime: &WasmRuntime,
        events: Arc<dyn EventSink>,
    ) -> Result<Arc<dyn Program>> {
        Ok(Arc::new(runtime.load_program(
            &self.file,
            &self.grant,
            events_log_sink(events),
        )?))
    }
}

/// Builds the cargo package in `dir` for `wasm32-wasip2` and returns its component.
fn build(dir: &Path) -> Result<PathBuf> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        bail!(
            "Pulumi.yaml: main {} has no Cargo.toml (point main at a cargo package or a .wasm file)",
            dir.display()
        );
    }
    let manifest = manifest
        .canonicalize()
        .with_context(|| format!("resolving {}", manifest.display()))?;
    eprintln!(
        "Building the program ({}) for wasm32-wasip2 with cargo…",
        manifest.display()
    );
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .args([
            "--message-format",
            "json-render-diagnostics",
            "--manifest-path",
        ])
        .arg(&manifest)
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo (is Rust installed?)")?;
    if !output.status.success() {
        bail!(
            "building the program failed (see cargo's messages above; `rustup target add wasm32-wasip2` installs the target if it is missing)"
        );
    }
    let mut found = None;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact"
            || message["manifest_path"].as_str().map(Path::new) != Some(manifest.as_path())
        {
            continue;
        }
        if let Some(files) = message["filenames"].as_array() {
            found = files
                .iter()
                .filter_map(|f| f.as_str())
                .find(|f| f.ends_with(".wasm"))
                .map(PathBuf::from)
                .or(found);
        }
    }
    found.ok_or_else(|| {
        anyhow::anyhow!(
            "building {} produced no .wasm component (its [lib] needs crate-type = [\"cdylib\"])",
            manifest.display()
        )
    })
}
