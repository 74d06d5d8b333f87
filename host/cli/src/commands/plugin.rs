//! `cairn plugin`: install, list, inspect and remove provider components.

use std::path::Path;

use anyhow::Result;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::providers;
use crate::workspace::Context;

#[derive(Debug, Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Verify a provider component and store it under the Cairn home by name and version.
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
        plugin_version: Option<semver::Version>,
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
            println!("Wrote {}", launcher.display());
        }
        PluginCommand::Install { file } => {
            let installed = store.install(context.cwd.join(&file))?;
            println!(
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
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else if installed.is_empty() {
                println!(
                    "No providers installed; install one with `cairn plugin install FILE.wasm`."
                );
            } else {
                println!("{:<20} {:<12} SHA-256", "NAME", "VERSION");
                for i in installed {
                    println!("{:<20} {:<12} {}", i.name, i.version, i.sha256);
                }
            }
        }
        PluginCommand::Inspect { name_or_file, json } => {
            let target = if Path::new(&name_or_file)
                .extension()
                .is_some_and(|e| e == "wasm")
            {
                context.cwd.join(&name_or_file).display().to_string()
            } else {
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
                        "directories": i.capabilities.directories.iter().map(|d| json!({"guest": d.guest, "write": d.write})).collect::<Vec<_>>(),
                        "env": i.capabilities.env,
                    },
                });
                println!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                println!("{}@{}", i.name, i.version);
                println!("  sha256:     {}", i.sha256);
                if let Some(path) = &i.path {
                    println!("  path:       {}", path.display());
                }
                println!("  wit:        cairn:deploy@{}", i.wit);
                println!("  resources:  {}", list(&i.schema.resources));
                println!("  functions:  {}", list(&i.schema.functions));
                println!("  config:     {}", list(&i.schema.config));
                println!("  requests (granted only through cairn:grants.{}):", i.name);
                println!("    http:        {}", list(&i.capabilities.http));
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
                println!("    directories: {}", list(&dirs));
                println!("    env:         {}", list(&i.capabilities.env));
            }
        }
        PluginCommand::Rm {
            name,
            plugin_version,
        } => {
            for removed in store.remove(&name, plugin_version.as_ref())? {
                println!("Removed {}@{}", removed.name, removed.version);
            }
        }
    }
    Ok(())
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}
