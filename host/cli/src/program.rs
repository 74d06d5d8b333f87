//! Where the CLI finds the project's program:
//! * `runtime: wasm` — `main` names a component (`.wasm`) or a project directory (default: the
//!   project's own) in Rust, Python, TypeScript or Go, built into a component first
//!   (`crate::guest_build`); the program is sandboxed by the stack's `cairn:program` grant.
//! * `runtime: python` — the Pulumi Python SDK, run with `options.virtualenv`'s interpreter (else
//!   `python3`); `main` is a file or a directory with `__main__.py` (default: the project).
//! * `runtime: nodejs` — the Pulumi Node.js SDK's `cmd/run` from the project's `node_modules`.
//!
//! Python and Node.js projects also get their SDK's dynamic-provider plugin for the
//! `pulumi-python` / `pulumi-nodejs` packages.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use cairn_engine::config::{ConfigKey, ResolvedConfig};
use cairn_engine::deploy::events::EventSink;
use cairn_engine::deploy::program::Program;
use cairn_engine::deploy::provider::NativePlugins;
use cairn_engine::project::Project;
use cairn_grpc::{Language, LanguageProgram, PluginCommand};
use cairn_wasm::{Grants, PROGRAM_KEY, PackageGrant, ProgramFile, WasmRuntime, events_log_sink};
use indexmap::IndexMap;

/// The runtime name of Cairn's own wasm programs.
pub const WASM_RUNTIME: &str = "wasm";

/// A program located, built and checked, ready to load for each deployment.
pub enum ProgramSource {
    Wasm {
        file: ProgramFile,
        grant: PackageGrant,
    },
    Language {
        language: Language,
        dir: PathBuf,
        main: Option<String>,
    },
}

impl ProgramSource {
    /// Finds (and builds) the project's program and checks that it compiles as a program.
    pub fn prepare(
        runtime: &WasmRuntime,
        home: &Path,
        project_dir: &Path,
        project: &Project,
        config: &IndexMap<ConfigKey, ResolvedConfig>,
    ) -> Result<ProgramSource> {
        match project.runtime.name.as_str() {
            WASM_RUNTIME => {}
            "python" | "nodejs" => {
                return Ok(ProgramSource::Language {
                    language: language(project_dir, project)?,
                    dir: project_dir.to_owned(),
                    main: project.main.clone(),
                });
            }
            other => bail!(
                "Pulumi.yaml: runtime {other:?} is not supported; Cairn runs `wasm`, `python` and `nodejs` programs"
            ),
        }
        let main = project_dir.join(project.main.as_deref().unwrap_or("."));
        let wasm = if main.is_dir() {
            build(home, &main)?
        } else if main.extension().is_some_and(|e| e == "wasm") {
            if !main.is_file() {
                bail!("Pulumi.yaml: main {} does not exist", main.display());
            }
            main
        } else {
            bail!(
                "Pulumi.yaml: main {} is neither a .wasm component nor a program project directory",
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
        Ok(ProgramSource::Wasm { file, grant })
    }

    /// The program for one deployment; its logs go to `events`.
    pub fn load(
        &self,
        runtime: &WasmRuntime,
        events: Arc<dyn EventSink>,
        parallel: usize,
    ) -> Result<Arc<dyn Program>> {
        Ok(match self {
            ProgramSource::Wasm { file, grant } => {
                Arc::new(runtime.load_program(file, grant, events_log_sink(events))?)
            }
            ProgramSource::Language {
                language,
                dir,
                main,
            } => Arc::new(LanguageProgram {
                language: language.clone(),
                dir: dir.clone(),
                main: main.clone(),
                parallel,
                events,
            }),
        })
    }
}

/// The SDK plugins a language project's dynamic resources need: `(package, command)`.
pub fn dynamic_providers(project_dir: &Path, project: &Project) -> Vec<(String, PluginCommand)> {
    let Ok(language) = language(project_dir, project) else {
        return Vec::new();
    };
    let (package, mut command) = match language {
        Language::Python { python } => {
            let mut command = PluginCommand::new("python dynamic provider", python);
            command.args = vec!["-u".into(), "-m".into(), "pulumi.dynamic".into()];
            command.env = vec![("PYTHONUNBUFFERED".into(), "1".into())];
            ("pulumi-python", command)
        }
        Language::Node {
            node, run_script, ..
        } => {
            // `.../@pulumi/pulumi/cmd/run` → `.../@pulumi/pulumi/cmd/dynamic-provider`.
            let script = run_script.with_file_name("dynamic-provider");
            let mut command = PluginCommand::new("nodejs dynamic provider", node);
            command.args = vec![script.display().to_string()];
            ("pulumi-nodejs", command)
        }
    };
    command.dir = Some(project_dir.to_owned());
    // The SDKs read the project's name from the environment (Pulumi sets these for every
    // plugin): a dynamic provider's `configure` resolves keys without a namespace with it.
    command
        .env
        .push(("PULUMI_PROJECT".into(), project.name.clone()));
    if package == "pulumi-nodejs" {
        command
            .env
            .push(("PULUMI_NODEJS_PROJECT".into(), project.name.clone()));
    }
    vec![(package.to_owned(), command)]
}

/// Which native plugins the project's packages may resolve to: any for Python and Node.js
/// programs (which run native code of their own, as with Pulumi); for wasm programs (and any
/// other runtime) only those the project names, so a sandboxed program never starts native
/// code implicitly.
pub fn native_plugins(project: &Project) -> NativePlugins {
    match project.runtime.name.as_str() {
        "python" | "nodejs" => NativePlugins::Any,
        _ => NativePlugins::ProjectNamed,
    }
}

/// A provider plugin directory (`PulumiPlugin.yaml` with `runtime: python` or `nodejs`) as the
/// command that starts it: the directory run by its interpreter (`options.virtualenv`'s for
/// Python), as Pulumi's language hosts run plugins. `None` when `path` is no such directory.
pub fn plugin_directory(name: &str, path: &Path) -> Result<Option<PluginCommand>> {
    let manifest = path.join("PulumiPlugin.yaml");
    if !path.is_dir() || !manifest.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&manifest)
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
    let program = match runtime.as_str() {
        "python" => match options["virtualenv"].as_str() {
            Some(venv) => {
                let venv = Path::new(venv);
                let venv = if venv.is_absolute() {
                    venv.to_owned()
                } else {
                    path.join(venv)
                };
                venv.join("bin/python")
            }
            None => PathBuf::from("python3"),
        },
        "nodejs" => PathBuf::from("node"),
        other => bail!(
            "{}: runtime {other:?} is not one Cairn can run a plugin with (python, nodejs)",
            manifest.display()
        ),
    };
    let mut command = PluginCommand::new(format!("{name} plugin ({runtime})"), program);
    command.args = match runtime.as_str() {
        "python" => vec!["-u".into(), path.display().to_string()],
        _ => vec![path.display().to_string()],
    };
    command.dir = Some(path.to_owned());
    command.env = vec![("PYTHONUNBUFFERED".into(), "1".into())];
    Ok(Some(command))
}

/// The interpreter (and for Node.js the SDK's run script) of a python / nodejs project.
fn language(project_dir: &Path, project: &Project) -> Result<Language> {
    match project.runtime.name.as_str() {
        "python" => {
            let python = match project.runtime.option_str("virtualenv") {
                Some(venv) => {
                    let python = project_dir.join(venv).join("bin/python");
                    if !python.is_file() {
                        bail!(
                            "Pulumi.yaml: runtime.options.virtualenv {venv:?} has no bin/python; create it with `python3 -m venv {venv} && {venv}/bin/pip install -r requirements.txt`"
                        );
                    }
                    python
                }
                None => PathBuf::from("python3"),
            };
            Ok(Language::Python { python })
        }
        "nodejs" => {
            let run_script = project_dir.join("node_modules/@pulumi/pulumi/cmd/run");
            if !run_script.exists() {
                bail!(
                    "{} is missing: run `npm install` in the project (it needs @pulumi/pulumi)",
                    run_script.display()
                );
            }
            let typescript = match project.runtime.options.get("typescript") {
                None => true,
                Some(serde_json::Value::Bool(typescript)) => *typescript,
                Some(other) => bail!(
                    "Pulumi.yaml: runtime.options.typescript must be true or false, not {other}"
                ),
            };
            Ok(Language::Node {
                node: PathBuf::from("node"),
                run_script,
                typescript,
                tsconfig: project.runtime.option_str("tsconfig").map(str::to_owned),
            })
        }
        other => bail!("runtime {other:?} has no language host"),
    }
}

/// Builds the program project in `dir` (Rust, Python, TypeScript or Go) and returns its
/// component.
fn build(home: &Path, dir: &Path) -> Result<PathBuf> {
    use cairn_guest_build::{World, language};
    match language(dir) {
        Some(language) => Ok(builder(home).build(dir, language, World::Program)?),
        None => bail!(
            "Pulumi.yaml: main {} is not a program project: it has no Cargo.toml (Rust), app.py (Python), package.json (TypeScript) or go.mod (Go); point main at one, or at a .wasm component",
            dir.display()
        ),
    }
}

/// The guest builder of this `$CAIRN_HOME`, telling its progress on the terminal.
pub fn builder(home: &Path) -> cairn_guest_build::Builder {
    cairn_guest_build::Builder {
        progress: Box::new(|line| crate::terminal::errln!("{line}")),
        ..cairn_guest_build::Builder::new(home)
    }
}
