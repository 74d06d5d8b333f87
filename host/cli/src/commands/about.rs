//! `cairn about [--json]`: what a bug report needs, as `pulumi about` gathers it: the CLI and
//! what it embeds (Rust, wasmtime, the guest SDK and its WIT), the host, installed providers,
//! the language tools found, and — inside a project — the project, its runtime and
//! dependencies, the current stack and the backend. A section that cannot be read is left out
//! and its error listed; nothing secret is shown (backend URLs without passwords, secret
//! environment variables as `[secret]`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Result;
use cairn_backend::pgconfig::redact;
use clap::Args;
use serde::Serialize;

use crate::terminal::{errln, field, json_pretty, outln};
use crate::workspace::{Context, Workspace};

#[derive(Debug, Args)]
pub struct AboutArgs {
    /// Print the information as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct About {
    cli: Cli,
    host: Host,
    plugins: Vec<Plugin>,
    runtimes: Vec<Tool>,
    project: Option<ProjectAbout>,
    dependencies: Vec<Dependency>,
    current_stack: Option<CurrentStack>,
    backend: Option<BackendAbout>,
    environment: Vec<EnvVar>,
    errors: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Cli {
    version: String,
    rust_version: String,
    wasmtime_version: String,
    sdk_version: String,
    wit: String,
    /// Where `cairn new` writes the guest SDK for Rust projects.
    sdk_path: PathBuf,
    home: PathBuf,
}

#[derive(Debug, Serialize)]
struct Host {
    os: String,
    version: Option<String>,
    arch: String,
}

#[derive(Debug, Serialize)]
struct Plugin {
    name: String,
    version: String,
    kind: &'static str,
}

/// A program found on the PATH and its version.
#[derive(Debug, Serialize)]
struct Tool {
    name: String,
    executable: String,
    version: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProjectAbout {
    name: String,
    runtime: String,
    main: Option<String>,
    directory: PathBuf,
    /// The interpreter or toolchain the project runs with.
    executable: Option<Tool>,
}

#[derive(Debug, Serialize)]
struct Dependency {
    name: String,
    version: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CurrentStack {
    name: String,
    resources: usize,
    pending_operations: usize,
    last_update: Option<String>,
}

#[derive(Debug, Serialize)]
struct BackendAbout {
    url: String,
    kind: &'static str,
    user: Option<String>,
}

#[derive(Debug, Serialize)]
struct EnvVar {
    name: &'static str,
    value: String,
}

/// The environment variables Cairn reads, and whether each one's value is secret.
const VARIABLES: &[(&str, Shown)] = &[
    ("CAIRN_HOME", Shown::Plain),
    ("PULUMI_HOME", Shown::Plain),
    ("CAIRN_STACK", Shown::Plain),
    ("PULUMI_STACK", Shown::Plain),
    ("CAIRN_BACKEND_URL", Shown::Url),
    ("PULUMI_BACKEND_URL", Shown::Url),
    ("CAIRN_CONFIG_PASSPHRASE", Shown::Secret),
    ("PULUMI_CONFIG_PASSPHRASE", Shown::Secret),
    ("CAIRN_CONFIG_PASSPHRASE_FILE", Shown::Plain),
    ("PULUMI_CONFIG_PASSPHRASE_FILE", Shown::Plain),
    ("CAIRN_LOG", Shown::Plain),
    ("CAIRN_STATE_HISTORY", Shown::Plain),
    ("CAIRN_POLICY_TIMEOUT", Shown::Plain),
    ("CAIRN_POLICY_MEMORY_MIB", Shown::Plain),
    ("CAIRN_GRANTS", Shown::Plain),
    ("PGHOST", Shown::Plain),
    ("PGPORT", Shown::Plain),
    ("PGUSER", Shown::Plain),
    ("PGDATABASE", Shown::Plain),
    ("PGPASSWORD", Shown::Secret),
    ("PGPASSFILE", Shown::Plain),
    ("PGCONNECT_TIMEOUT", Shown::Plain),
    ("PGSSLMODE", Shown::Plain),
    ("PGSSLROOTCERT", Shown::Plain),
    ("PGAPPNAME", Shown::Plain),
];

#[derive(Debug, Clone, Copy)]
enum Shown {
    Plain,
    Url,
    Secret,
}

pub fn run(context: &Context, args: AboutArgs) -> Result<()> {
    let mut errors = Vec::new();
    let about = gather(context, &mut errors);
    if args.json {
        outln!("{}", json_pretty(&about)?);
    } else {
        print(&about);
    }
    for error in &about.errors {
        errln!("warning: {error}");
    }
    Ok(())
}

fn gather(context: &Context, errors: &mut Vec<String>) -> About {
    let cli = Cli {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        rust_version: env!("CAIRN_RUSTC_VERSION").to_owned(),
        wasmtime_version: env!("CAIRN_WASMTIME_VERSION").to_owned(),
        sdk_version: crate::guest_sdk::version().to_owned(),
        wit: format!("cairn:deploy@{}", cairn_wasm::manifest::SUPPORTED_WIT),
        sdk_path: crate::guest_sdk::location(&context.home),
        home: context.home.clone(),
    };
    let plugins = match crate::providers::store(&context.home).list() {
        Ok(installed) => installed
            .into_iter()
            .map(|i| Plugin {
                name: i.name,
                version: i.version.to_string(),
                kind: "resource (wasm)",
            })
            .collect(),
        Err(e) => {
            errors.push(format!("Failed to list the installed providers: {e:#}"));
            Vec::new()
        }
    };
    let runtimes = [
        ("python3", &["--version"][..]),
        ("node", &["--version"][..]),
        ("npm", &["--version"][..]),
        ("cargo", &["--version"][..]),
    ]
    .into_iter()
    .filter_map(|(name, args)| tool(name, Path::new(name), args))
    .chain(wasm_target())
    .collect();

    let mut about = About {
        cli,
        host: host(),
        plugins,
        runtimes,
        project: None,
        dependencies: Vec::new(),
        current_stack: None,
        backend: None,
        environment: environment(),
        errors: Vec::new(),
    };
    match context.project() {
        Ok(workspace) => project(&workspace, &mut about, errors),
        Err(e) => {
            errors.push(format!("Failed to read the project: {e:#}"));
            // Outside a project: the backend commands would use.
            match context.backend_url(None) {
                Ok(url) => {
                    let user = crate::workspace::open_backend(&url, &context.cwd)
                        .and_then(|b| Ok(b.user()?))
                        .map_err(|e| errors.push(format!("Could not access the backend: {e:#}")))
                        .ok();
                    about.backend = Some(BackendAbout {
                        kind: backend_kind(&url),
                        url: redact(&url),
                        user,
                    });
                }
                Err(e) => errors.push(format!("Could not choose a backend: {e:#}")),
            }
        }
    }
    // Errors quote URLs and paths; any password in them is redacted as in URLs.
    about.errors = errors.iter().map(|e| redact_all(e)).collect();
    about
}

/// The project's part: the project, its runtime and dependencies, the current stack, the
/// backend.
fn project(workspace: &Workspace, about: &mut About, errors: &mut Vec<String>) {
    let project = &workspace.project;
    let runtime = project.runtime.name.clone();
    let executable = match runtime.as_str() {
        "python" => {
            let python = match project.runtime.option_str("virtualenv") {
                Some(venv) => workspace.dir.join(venv).join("bin/python"),
                None => PathBuf::from("python3"),
            };
            tool("python", &python, &["--version"])
        }
        "nodejs" => tool("node", Path::new("node"), &["--version"]),
        _ => tool("cargo", Path::new("cargo"), &["--version"]),
    };
    about.project = Some(ProjectAbout {
        name: project.name.clone(),
        runtime: runtime.clone(),
        main: project.main.clone(),
        directory: workspace.dir.clone(),
        executable,
    });
    about.dependencies = dependencies(workspace, &runtime);

    let url = workspace.backend.url();
    let user = workspace
        .backend
        .user()
        .map_err(anyhow::Error::from)
        .map_err(|e| errors.push(format!("Could not access the backend: {e:#}")))
        .ok();
    about.backend = Some(BackendAbout {
        kind: backend_kind(&url),
        url: redact(&url),
        user,
    });
    match workspace.current_stack() {
        Ok(name) => match workspace
            .backend
            .latest(workspace.name(), &name)
            .map_err(anyhow::Error::from)
        {
            Ok(deployment) => {
                about.current_stack = Some(CurrentStack {
                    resources: deployment.as_ref().map_or(0, |d| d.resources.len()),
                    pending_operations: deployment
                        .as_ref()
                        .map_or(0, |d| d.pending_operations.len()),
                    last_update: deployment.map(|d| d.manifest.time),
                    name,
                })
            }
            Err(e) => errors.push(format!(
                "Failed to get information about the current stack: {e:#}"
            )),
        },
        Err(e) => errors.push(format!("No current stack: {e:#}")),
    }
}

/// The project's Pulumi packages (Python, Node.js) or guest SDK (Rust), as installed.
fn dependencies(workspace: &Workspace, runtime: &str) -> Vec<Dependency> {
    let mut found = Vec::new();
    match runtime {
        "python" => {
            let venv = workspace
                .project
                .runtime
                .option_str("virtualenv")
                .map(|v| workspace.dir.join(v));
            let lib = venv.map(|v| v.join("lib"));
            let site_packages = lib
                .and_then(|lib| std::fs::read_dir(lib).ok())
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path().join("site-packages"));
            for dir in site_packages {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if let Some(stem) = name.strip_suffix(".dist-info")
                        && let Some((package, version)) = stem.split_once('-')
                        && package.to_ascii_lowercase().starts_with("pulumi")
                    {
                        found.push(Dependency {
                            name: package.replace('_', "-"),
                            version: version.to_owned(),
                        });
                    }
                }
            }
        }
        "nodejs" => {
            let scope = workspace.dir.join("node_modules/@pulumi");
            for entry in std::fs::read_dir(scope).into_iter().flatten().flatten() {
                let package = entry.path().join("package.json");
                let Ok(text) = std::fs::read_to_string(&package) else {
                    continue;
                };
                let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
                    continue;
                };
                if let (Some(name), Some(version)) =
                    (json["name"].as_str(), json["version"].as_str())
                {
                    found.push(Dependency {
                        name: name.to_owned(),
                        version: version.to_owned(),
                    });
                }
            }
        }
        _ => {
            // The guest SDK's version as the program's Cargo.lock pins it.
            let main = workspace
                .dir
                .join(workspace.project.main.as_deref().unwrap_or("."));
            let lock = main
                .ancestors()
                .take(3)
                .map(|d| d.join("Cargo.lock"))
                .find(|l| l.is_file());
            if let Some(text) = lock.and_then(|l| std::fs::read_to_string(l).ok()) {
                let mut lines = text.lines();
                while let Some(line) = lines.next() {
                    if line == "name = \"cairn-sdk\""
                        && let Some(version) = lines
                            .next()
                            .and_then(|l| l.strip_prefix("version = \""))
                            .and_then(|v| v.strip_suffix('"'))
                    {
                        found.push(Dependency {
                            name: "cairn-sdk".to_owned(),
                            version: version.to_owned(),
                        });
                    }
                }
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

fn backend_kind(url: &str) -> &'static str {
    if url.starts_with("file://") {
        "file"
    } else if cairn_backend::pgconfig::is_postgres_url(url) {
        "postgres"
    } else {
        "unknown"
    }
}

/// Every `scheme://…` word of `text` redacted as a backend URL.
fn redact_all(text: &str) -> String {
    text.split_inclusive(char::is_whitespace)
        .map(|word| {
            if word.contains("://") {
                let start = word.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(0);
                let (before, url) = word.split_at(start);
                format!("{before}{}", redact(url))
            } else {
                word.to_owned()
            }
        })
        .collect()
}

fn host() -> Host {
    let os_release = std::fs::read_to_string("/etc/os-release").ok();
    let pretty = os_release.as_deref().and_then(|text| {
        text.lines().find_map(|l| {
            l.strip_prefix("PRETTY_NAME=")
                .map(|v| v.trim_matches('"').to_owned())
        })
    });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|k| k.trim().to_owned());
    let version = match (pretty, kernel) {
        (Some(p), Some(k)) => Some(format!("{p} (kernel {k})")),
        (p, k) => p.or(k),
    };
    Host {
        os: std::env::consts::OS.to_owned(),
        version,
        arch: std::env::consts::ARCH.to_owned(),
    }
}

/// `program args` run, its first line of output as the version; `None` if it does not run.
fn tool(name: &str, program: &Path, args: &[&str]) -> Option<Tool> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = if output.stdout.is_empty() {
        output.stderr
    } else {
        output.stdout
    };
    let version = String::from_utf8_lossy(&text)
        .lines()
        .next()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty() && output.status.success());
    Some(Tool {
        name: name.to_owned(),
        executable: program.display().to_string(),
        version,
    })
}

/// Whether the Rust toolchain can build components (its sysroot has `wasm32-wasip2`).
fn wasm_target() -> Option<Tool> {
    let output = Command::new("rustc")
        .args(["--print", "sysroot"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let installed = Path::new(&sysroot)
        .join("lib/rustlib/wasm32-wasip2")
        .is_dir();
    Some(Tool {
        name: "wasm32-wasip2".to_owned(),
        executable: "rustc --target wasm32-wasip2".to_owned(),
        version: Some(
            if installed {
                "installed"
            } else {
                "missing (rustup target add wasm32-wasip2)"
            }
            .to_owned(),
        ),
    })
}

/// The variables Cairn reads that are set; secret ones as `[secret]`, URLs redacted.
fn environment() -> Vec<EnvVar> {
    VARIABLES
        .iter()
        .filter_map(|(name, shown)| {
            let value = std::env::var_os(name)?;
            let value = value.to_string_lossy();
            Some(EnvVar {
                name,
                value: match shown {
                    Shown::Plain => value.into_owned(),
                    Shown::Url => redact(&value),
                    Shown::Secret => "[secret]".to_owned(),
                },
            })
        })
        .collect()
}

fn print(about: &About) {
    let cli = &about.cli;
    outln!("CLI");
    outln!("Version      {}", cli.version);
    outln!("Rust         {}", field(&cli.rust_version));
    outln!("wasmtime     {}", cli.wasmtime_version);
    outln!("Guest SDK    cairn-sdk {} ({})", cli.sdk_version, cli.wit);
    outln!(
        "SDK path     {}",
        field(&cli.sdk_path.display().to_string())
    );
    outln!("Home         {}", field(&cli.home.display().to_string()));
    outln!("");
    outln!("Host");
    outln!("OS       {}", about.host.os);
    if let Some(version) = &about.host.version {
        outln!("Version  {}", field(version));
    }
    outln!("Arch     {}", about.host.arch);
    outln!("");
    outln!("Plugins");
    if about.plugins.is_empty() {
        outln!("No providers installed (`cairn plugin install FILE.wasm`)");
    } else {
        outln!("{:<20} {:<12} KIND", "NAME", "VERSION");
        for plugin in &about.plugins {
            outln!(
                "{:<20} {:<12} {}",
                field(&plugin.name),
                plugin.version,
                plugin.kind
            );
        }
    }
    outln!("");
    outln!("Language tools");
    for tool in &about.runtimes {
        outln!(
            "{:<14} {}",
            tool.name,
            field(tool.version.as_deref().unwrap_or("(no version)"))
        );
    }
    if about.runtimes.is_empty() {
        outln!("None found (python3, node, npm, cargo)");
    }
    outln!("");
    match &about.project {
        Some(project) => {
            outln!("Project");
            outln!("Name       {}", field(&project.name));
            outln!("Runtime    {}", field(&project.runtime));
            if let Some(main) = &project.main {
                outln!("Main       {}", field(main));
            }
            outln!(
                "Directory  {}",
                field(&project.directory.display().to_string())
            );
            if let Some(executable) = &project.executable {
                outln!(
                    "This project is written in {}: executable='{}' version='{}'",
                    field(&project.runtime),
                    field(&executable.executable),
                    field(executable.version.as_deref().unwrap_or("unknown"))
                );
            }
            outln!("");
        }
        None => {
            outln!("No current project (no Pulumi.yaml here or in a parent directory)");
            outln!("");
        }
    }
    if let Some(stack) = &about.current_stack {
        outln!("Current Stack: {}", field(&stack.name));
        outln!("Resources          {}", stack.resources);
        outln!("Pending operations {}", stack.pending_operations);
        outln!(
            "Last update        {}",
            field(stack.last_update.as_deref().unwrap_or("never"))
        );
        outln!("");
    }
    if let Some(backend) = &about.backend {
        outln!("Backend");
        outln!("URL   {}", field(&backend.url));
        outln!("Kind  {}", backend.kind);
        if let Some(user) = &backend.user {
            outln!("User  {}", field(user));
        }
        outln!("");
    }
    if !about.dependencies.is_empty() {
        outln!("Dependencies:");
        outln!("{:<32} VERSION", "NAME");
        for dependency in &about.dependencies {
            outln!(
                "{:<32} {}",
                field(&dependency.name),
                field(&dependency.version)
            );
        }
        outln!("");
    }
    if !about.environment.is_empty() {
        outln!("Environment Variables:");
        for var in &about.environment {
            outln!("{:<30} {}", var.name, field(&var.value));
        }
        outln!("");
    }
    outln!("Cairn writes logs to stderr; set CAIRN_LOG=debug for more");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_errors_lose_their_passwords() {
        assert_eq!(
            redact_all("connecting to \"postgres://u:hunter2@db/x\" failed"),
            "connecting to \"postgres://u:****@db/x\" failed"
        );
        assert_eq!(redact_all("no url here"), "no url here");
    }
}
