//! `cairn plugin`: install, list, inspect and remove provider components.

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use cairn_wasm::store::{PLUGIN_NAME_RULE, is_plugin_name};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::providers;
use crate::terminal::{field, json_pretty, outln, quoted};
use crate::workspace::Context;

#[derive(Debug, Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Verify a provider component (its package schema too, when it has one) and store it
    /// under the Cairn home by name and version.
    Install {
        /// The `.wasm` file.
        file: String,
    },
    /// List installed providers.
    Ls {
        #[arg(long)]
        json: bool,
    },
    /// Show a provider's name, version, hash, schema summary and requested capabilities.
    Inspect {
        /// An installed provider's name, or a `.wasm` file.
        name_or_file: String,
        #[arg(long)]
        json: bool,
    },
    /// Write `pulumi-resource-<name>` into DIR: a launcher that serves the component over the
    /// gRPC plugin protocol, so stock gRPC engines can load it like a native provider.
    ExportGrpc {
        /// The `.wasm` file.
        file: String,
        /// Where to write the launcher (and a copy of the component).
        #[arg(short, long, value_name = "DIR")]
        output: String,
    },
    /// Remove an installed provider (every version unless one is given).
    Rm {
        name: String,
        /// Only this version.
        #[arg(value_name = "VERSION")]
        plugin_version: Option<String>,
    },
}

pub fn run(context: &Context, args: PluginArgs) -> Result<()> {
    let store = providers::store(&context.home).with_runtime(providers::runtime(&context.home)?);
    match args.command {
        PluginCommand::ExportGrpc { file, output } => {
            let launcher = crate::commands::provider::export_grpc(
                &context.cwd.join(&file),
                &context.cwd.join(&output),
            )?;
            outln!("Wrote {}", launcher.display());
        }
        PluginCommand::Install { file } => {
            let plugin = cairn_wasm::WasmPlugin::from_file(context.cwd.join(&file))?;
            crate::commands::package::check_before_install(&plugin, &file)?;
            let installed = store.install_plugin(&plugin)?;
            outln!(
                "Installed {}@{} (sha256 {}) at {}",
                installed.name,
                installed.version,
                installed.sha256,
                installed.path.display()
            );
        }
        PluginCommand::Ls { json } => {
            let installed = store.list()?;
            if json {
                let rows: Vec<_> = installed
                    .iter()
                    .map(|i| json!({"name": i.name, "version": i.version.to_string(), "sha256": i.sha256, "path": i.path}))
                    .collect();
                outln!("{}", json_pretty(&rows)?);
            } else if installed.is_empty() {
                outln!(
                    "No providers installed; install one with `cairn plugin install FILE.wasm`."
                );
            } else {
                outln!("{:<20} {:<12} SHA-256", "NAME", "VERSION");
                for i in installed {
                    outln!(
                        "{:<20} {:<12} {}",
                        i.name,
                        i.version.to_string(),
                        field(&i.sha256)
                    );
                }
            }
        }
        PluginCommand::Inspect { name_or_file, json } => {
            // A `.wasm` file the user names, else an installed `name[@version]`.
            let target = if Path::new(&name_or_file)
                .extension()
                .is_some_and(|e| e == "wasm")
            {
                context.cwd.join(&name_or_file).display().to_string()
            } else {
                let (name, version) = match name_or_file.split_once('@') {
                    Some((name, version)) => (name, Some(version)),
                    None => (name_or_file.as_str(), None),
                };
                check_name(name, "inspect")?;
                if let Some(version) = version {
                    parse_version(version, "inspect")?;
                }
                name_or_file
            };
            let i = store.inspect(&target)?;
            if json {
                let out = json!({
                    "name": i.name,
                    "version": i.version.to_string(),
                    "sha256": i.sha256,
                    "path": i.path,
                    "wit": i.wit,
                    "resources": i.schema.resources,
                    "functions": i.schema.functions,
                    "config": i.schema.config,
                    "capabilities": {
                        "http": i.capabilities.http,
                        "tcp": i.capabilities.tcp,
                        "directories": i.capabilities.directories.iter().map(|d| json!({"guest": d.guest, "write": d.write})).collect::<Vec<_>>(),
                        "env": i.capabilities.env,
                    },
                });
                outln!("{}", json_pretty(&out)?);
            } else {
                // Manifest fields come from an untrusted file: each is shown on its own line.
                outln!("{}@{}", field(&i.name), i.version);
                outln!("  sha256:     {}", field(&i.sha256));
                if let Some(path) = &i.path {
                    outln!("  path:       {}", field(&path.display().to_string()));
                }
                outln!("  wit:        cairn:deploy@{}", field(&i.wit));
                outln!("  resources:  {}", list(&i.schema.resources));
                outln!("  functions:  {}", list(&i.schema.functions));
                outln!("  config:     {}", list(&i.schema.config));
                outln!(
                    "  requests (granted only through cairn:grants.{}):",
                    field(&i.name)
                );
                outln!("    http:        {}", list(&i.capabilities.http));
                outln!("    tcp:         {}", list(&i.capabilities.tcp));
                let dirs: Vec<String> = i
                    .capabilities
                    .directories
                    .iter()
                    .map(|d| {
                        format!(
                            "{} ({})",
                            d.guest,
                            if d.write { "read-write" } else { "read-only" }
                        )
                    })
                    .collect();
                outln!("    directories: {}", list(&dirs));
                outln!("    env:         {}", list(&i.capabilities.env));
            }
        }
        PluginCommand::Rm {
            name,
            plugin_version,
        } => {
            check_name(&name, "rm")?;
            let version = plugin_version
                .map(|v| parse_version(&v, "rm"))
                .transpose()?;
            for removed in store.remove(&name, version.as_ref())? {
                outln!("Removed {}@{}", removed.name, removed.version);
            }
        }
    }
    Ok(())
}

/// Checks a plugin name given to `cairn plugin <command>` before the store turns it into a
/// path (the store checks again).
fn check_name(name: &str, command: &str) -> Result<()> {
    if !is_plugin_name(name) {
        bail!(
            "invalid plugin name {} given to `cairn plugin {command}`: {PLUGIN_NAME_RULE}",
            quoted(name)
        );
    }
    Ok(())
}

/// Parses a plugin version given to `cairn plugin <command>`.
fn parse_version(version: &str, command: &str) -> Result<semver::Version> {
    semver::Version::parse(version).map_err(|e| {
        anyhow!(
            "invalid plugin version {} given to `cairn plugin {command}`: versions are semantic versions such as 1.2.3 ({e})",
            quoted(version)
        )
    })
}

/// Items of a manifest, each on one line, comma-separated.
fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items
            .iter()
            .map(|item| field(item).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
