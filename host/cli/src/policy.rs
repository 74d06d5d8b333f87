//! `--policy-pack` and `--policy-pack-config`: the policy packs a deployment runs, found,
//! started and configured as Pulumi does it.
//!
//! A pack is a directory with a `PulumiPolicy.yaml` (`runtime: python` with
//! `options.virtualenv`, else `python3`; `runtime: nodejs` with `@pulumi/pulumi` in its
//! `node_modules`), run over the gRPC `Analyzer` protocol ([`cairn_grpc::analyzer`]), or a
//! policy component (`.wasm`, or a directory holding one), run sandboxed
//! ([`cairn_wasm::policy`]). Each
//! `--policy-pack-config FILE` belongs to the `--policy-pack` in the same position; the pack's
//! configuration is reconciled (`cairn_engine::deploy::analyzer::config`) and checked against
//! its policies' schemas before anything runs.
//!
//! # Policy components: a `.wasm` file, not a manifest
//!
//! `--policy-pack` takes the component itself (or a directory holding exactly one `.wasm` and no
//! `PulumiPolicy.yaml`). A component describes itself through `info` (name, version, policies,
//! schemas), so a `PulumiPolicy.yaml` naming it would only repeat that or disagree with it; a
//! directory with a `PulumiPolicy.yaml` stays a Pulumi pack. Components have no remediation (no WIT
//! call for it): a remediate level in the configuration counts as mandatory, as an unremediated
//! violation does in Pulumi. The pack keeps its configuration in its one instance; calls are serial
//! (one mutex), which costs nothing measurable next to the providers' round trips.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use cairn_engine::deploy::analyzer::{Analyzer, Analyzers, PolicyConfigs, config};
use cairn_engine::deploy::events::{EngineEvent, EventSink, Severity};
use cairn_grpc::analyzer::{GrpcAnalyzer, PackRuntime, PackSource, StackContext};

/// One `--policy-pack`, located and read, with its configuration file (parsed).
pub struct PolicyPack {
    source: Source,
    config: Option<(PathBuf, PolicyConfigs)>,
}

/// Where a pack comes from.
enum Source {
    /// A Pulumi policy pack directory, run over gRPC.
    Grpc(PackSource),
    /// A policy component, run sandboxed in wasmtime.
    Wasm { file: PathBuf, location: String },
}

impl Source {
    fn location(&self) -> &str {
        match self {
            Source::Grpc(source) => &source.location,
            Source::Wasm { location, .. } => location,
        }
    }
}

/// The sandbox limits of policy components: `CAIRN_POLICY_TIMEOUT` (seconds per call, default
/// 60) and `CAIRN_POLICY_MEMORY_MIB` (default 256); a value that is not one is an error.
fn wasm_limits() -> Result<cairn_wasm::policy::PolicyLimits, String> {
    let mut limits = cairn_wasm::policy::PolicyLimits::default();
    if let Ok(text) = std::env::var("CAIRN_POLICY_TIMEOUT") {
        let seconds = text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
            .ok_or_else(|| {
                format!(
                    "CAIRN_POLICY_TIMEOUT is {:?}, not a number of seconds (0 to 86400)",
                    cairn_engine::text::shown(&text, 40)
                )
            })?;
        limits.timeout = std::time::Duration::from_secs_f64(seconds);
    }
    if let Ok(text) = std::env::var("CAIRN_POLICY_MEMORY_MIB") {
        limits.memory_mib = text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|m| (1..=65_536).contains(m))
            .ok_or_else(|| {
                format!(
                    "CAIRN_POLICY_MEMORY_MIB is {:?}, not a number of MiB (1 to 65536)",
                    cairn_engine::text::shown(&text, 40)
                )
            })?;
    }
    Ok(limits)
}

/// The packs named on the command line, checked before anything runs.
pub fn locate(paths: &[PathBuf], configs: &[PathBuf]) -> Result<Vec<PolicyPack>> {
    if !configs.is_empty() && paths.is_empty() {
        bail!("\"--policy-pack-config\" must be specified with \"--policy-pack\"");
    }
    if !configs.is_empty() && configs.len() != paths.len() {
        bail!(
            "the number of \"--policy-pack-config\" flags must match the number of \"--policy-pack\" flags"
        );
    }
    paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let config = match configs.get(i) {
                None => None,
                Some(file) => {
                    let text = std::fs::read_to_string(file).with_context(|| {
                        format!("reading the policy pack config {}", file.display())
                    })?;
                    let parsed = config::parse_file(&text).map_err(|e| {
                        anyhow::anyhow!("the policy pack config {}: {e}", file.display())
                    })?;
                    Some((file.clone(), parsed))
                }
            };
            Ok(PolicyPack {
                source: source(path)?,
                config,
            })
        })
        .collect()
}

/// A pack: a policy component (`.wasm`, or a directory holding exactly one and no
/// `PulumiPolicy.yaml`), else a Pulumi pack directory as the command that starts it.
fn source(path: &Path) -> Result<Source> {
    let location = path.display().to_string();
    let dir = std::fs::canonicalize(path)
        .with_context(|| format!("policy pack not found at {location:?}"))?;
    if dir.is_file() {
        if dir.extension().is_some_and(|e| e == "wasm") {
            return Ok(Source::Wasm {
                file: dir,
                location,
            });
        }
        bail!(
            "policy pack {location:?} is a file but not a .wasm component (a policy pack is a directory with a PulumiPolicy.yaml, or a policy component)"
        );
    }
    let manifest = dir.join("PulumiPolicy.yaml");
    if !manifest.is_file() {
        let components: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| format!("reading policy pack {location:?}"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "wasm"))
            .collect();
        return match components.as_slice() {
            [file] => Ok(Source::Wasm {
                file: file.clone(),
                location,
            }),
            [] => bail!(
                "policy pack {location:?} has no PulumiPolicy.yaml and no .wasm component (a policy pack is a directory with a PulumiPolicy.yaml, or a policy component)"
            ),
            _ => bail!(
                "policy pack {location:?} holds {} .wasm files; name the component itself",
                components.len()
            ),
        };
    }
    grpc_source(&dir, &manifest, location).map(Source::Grpc)
}

/// A Pulumi pack directory as the command that starts it.
fn grpc_source(dir: &Path, manifest: &Path, location: String) -> Result<PackSource> {
    let dir = dir.to_owned();
    let text = std::fs::read_to_string(manifest)
        .with_context(|| format!("reading {}", manifest.display()))?;
    crate::yaml::check_nesting(&text, &manifest.display().to_string())?;
    let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text)
        .with_context(|| format!("{} is not valid YAML", manifest.display()))?;
    let (runtime, options) = match &yaml["runtime"] {
        serde_yaml_ng::Value::String(s) => (s.clone(), serde_yaml_ng::Value::Null),
        other => (
            other["name"].as_str().unwrap_or_default().to_owned(),
            other["options"].clone(),
        ),
    };
    let runtime = match runtime.as_str() {
        "python" => PackRuntime::Python {
            python: match options["virtualenv"].as_str() {
                Some(venv) => {
                    let python = dir.join(venv).join("bin/python");
                    if !python.is_file() {
                        bail!(
                            "{}: runtime.options.virtualenv {venv:?} has no bin/python; create it with `python3 -m venv {venv} && {venv}/bin/pip install -r requirements.txt` in {}",
                            manifest.display(),
                            dir.display()
                        );
                    }
                    python
                }
                None => PathBuf::from("python3"),
            },
        },
        "nodejs" => {
            let run_script = dir.join("node_modules/@pulumi/pulumi/cmd/run-policy-pack");
            if !run_script.exists() {
                bail!(
                    "it looks like the policy pack's dependencies are not installed; try running npm install or yarn install in {:?}",
                    dir.display().to_string()
                );
            }
            PackRuntime::Node {
                node: PathBuf::from("node"),
                run_script,
            }
        }
        other => bail!(
            "{}: runtime {other:?} is not one Cairn runs policy packs with (python, nodejs)",
            manifest.display()
        ),
    };
    let version = match &yaml["version"] {
        serde_yaml_ng::Value::String(v) => Some(v.clone()),
        serde_yaml_ng::Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    Ok(PackSource {
        dir,
        runtime,
        version,
        location,
    })
}

/// Starts and configures the packs for one deployment; their output goes to `events`.
pub async fn start(
    packs: &[PolicyPack],
    stack: &StackContext,
    runtime: &cairn_wasm::WasmRuntime,
    events: Arc<dyn EventSink>,
) -> Result<(Analyzers, Option<cairn_grpc::Served>)> {
    if packs.is_empty() {
        return Ok((Analyzers::default(), None));
    }
    let engine = cairn_grpc::serve_engine(events.clone(), None).await?;
    let address = engine.target();
    let started = futures::future::join_all(
        packs
            .iter()
            .map(|pack| start_one(pack, stack, runtime, &address, events.clone())),
    )
    .await;
    let mut analyzers: Vec<Arc<dyn Analyzer>> = Vec::new();
    for (pack, analyzer) in packs.iter().zip(started) {
        let analyzer = analyzer.map_err(|e| {
            anyhow::anyhow!(
                "policy pack {:?} failed to start: {e}",
                pack.source.location()
            )
        })?;
        configure(analyzer.as_ref(), pack).await?;
        analyzers.push(analyzer);
    }
    Ok((Analyzers(analyzers), Some(engine)))
}

async fn start_one(
    pack: &PolicyPack,
    stack: &StackContext,
    runtime: &cairn_wasm::WasmRuntime,
    address: &str,
    events: Arc<dyn EventSink>,
) -> Result<Arc<dyn Analyzer>, String> {
    match &pack.source {
        Source::Grpc(source) => {
            let name = format!("policy pack {}", source.location);
            let output: cairn_grpc::plugin::OutputSink = Arc::new(move |stderr, line| {
                events.emit(EngineEvent::Diagnostic {
                    severity: Severity::Debug,
                    urn: None,
                    message: format!("{name}{}: {line}", if stderr { " (stderr)" } else { "" }),
                });
            });
            GrpcAnalyzer::start(
                source,
                stack,
                address,
                cairn_grpc::plugin::DEFAULT_START_TIMEOUT,
                output,
            )
            .await
            .map(|a| Arc::new(a) as Arc<dyn Analyzer>)
            .map_err(|e| e.to_string())
        }
        Source::Wasm { file, location } => {
            let name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "policy".to_owned());
            let component =
                cairn_wasm::ProgramFile::from_file(name, file).map_err(|e| e.to_string())?;
            runtime
                .load_policy_pack(
                    &component,
                    wasm_limits()?,
                    cairn_wasm::events_log_sink(events),
                )
                .await
                .map(|p| Arc::new(p.with_location(location.clone())) as Arc<dyn Analyzer>)
                .map_err(|e| e.to_string())
        }
    }
}

/// Reconciles a pack's configuration and hands it over, as Pulumi's engine does.
async fn configure(analyzer: &dyn Analyzer, pack: &PolicyPack) -> Result<()> {
    let info = analyzer.info();
    if !info.supports_config {
        if let Some((file, _)) = &pack.config {
            bail!(
                "policy pack {:?} at {:?} does not support config ({})",
                info.name,
                pack.source.location(),
                file.display()
            );
        }
        return Ok(());
    }
    let empty = PolicyConfigs::new();
    let given = pack.config.as_ref().map_or(&empty, |(_, c)| c);
    let reconciled = config::reconcile(info, given).map_err(|errors| {
        anyhow::anyhow!(
            "validating policy config for {:?}: {}",
            info.name,
            errors.join("; ")
        )
    })?;
    analyzer
        .configure(&reconciled)
        .await
        .with_context(|| format!("configuring policy pack {:?}", info.name))
}
