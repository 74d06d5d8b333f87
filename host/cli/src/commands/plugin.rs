//! `cairn plugin`: install, list, inspect and remove provider components.

use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_wasm::store::{PLUGIN_NAME_RULE, is_plugin_name};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::terminal::{field, json_pretty, outln, quoted};
use crate::workspace::Context;
use crate::{providers, registry};

#[derive(Debug, Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Verify a provider component (its package schema too, when it has one) and store it
    /// under the Cairn home by name and version: from a `.wasm` file, a registry
    /// (`oci://HOST[:PORT]/REPO:TAG` or `…@sha256:DIGEST`) or a URL (`https://…/F.wasm` with
    /// `--checksum`). Nothing is stored unless every check passes.
    Install {
        /// A `.wasm` file, an `oci://` reference or an `https://` URL.
        source: String,
        /// The SHA-256 a URL's file must have (`sha256:HEX`).
        #[arg(long, value_name = "sha256:HEX")]
        checksum: Option<String>,
        /// Speak plain HTTP to the registry even if it is not on a loopback address.
        #[arg(long)]
        plain_http: bool,
    },
    /// Build a provider's source directory (`cairn.json` beside `Cargo.toml`, `app.py`,
    /// `package.json` or `go.mod`) into a component, as `cairn up` builds one named in
    /// `plugins.providers`, and write it to OUT (default `NAME-VERSION.wasm` here) to install,
    /// sign or publish.
    Build {
        /// The provider's source directory.
        #[arg(default_value = ".")]
        dir: String,
        /// Where to write the component.
        #[arg(short, long, value_name = "OUT")]
        output: Option<String>,
    },
    /// Push a provider component to an OCI registry in the Wasm artifact layout (tag defaults
    /// to the component's version, `+` written `_`).
    Publish {
        /// The `.wasm` file.
        file: String,
        /// `oci://HOST[:PORT]/REPO[:TAG]`.
        reference: String,
        /// Speak plain HTTP to the registry even if it is not on a loopback address.
        #[arg(long)]
        plain_http: bool,
    },
    /// Registries (where providers are found by name) and their credentials.
    Registry {
        #[command(subcommand)]
        command: RegistryCommand,
    },
    /// Pin the project's registry providers in `cairn.lock`: with no arguments, fetch and
    /// check every locked digest; `NAME[@REQUIREMENT]` adds (or re-resolves) a provider;
    /// `--update [NAME]` re-resolves every entry (or NAME's) within its requirement.
    Lock {
        /// Providers to lock: `NAME` or `NAME@REQUIREMENT` (`random@^4.16`).
        providers: Vec<String>,
        /// Re-resolve locked providers (all, or the one named) to the newest version their
        /// requirement allows.
        #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
        update: Option<String>,
    },
    /// Copy every provider `cairn.lock` names to a directory (for an air-gapped network; add it
    /// there with `cairn plugin registry add file:///DIR --mirror-of SOURCE`) or to a registry
    /// (`oci://HOST/PREFIX`, the repository path under the source's prefix kept).
    Mirror {
        /// `DIR` or `oci://HOST[:PORT]/PREFIX`.
        #[arg(long)]
        to: String,
        /// The prefix of the sources being mirrored (default: each source's repository parent).
        #[arg(long, value_name = "oci://HOST/PREFIX")]
        from: Option<String>,
        /// Speak plain HTTP to the target registry even if it is not on a loopback address.
        #[arg(long)]
        plain_http: bool,
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
    /// Sign a provider component with an Ed25519 key (wasmsign2's format; other signatures
    /// are kept). The signature covers everything after it, the manifest included: strip or
    /// rewrite the component before signing, never after.
    Sign {
        /// The `.wasm` file.
        file: String,
        /// The secret key: wasmsign2's raw format, PEM, DER or an unencrypted OpenSSH key.
        #[arg(long)]
        key: String,
        /// Where to write the signed component (default: over FILE, atomically).
        #[arg(short, long, value_name = "OUT")]
        output: Option<String>,
    },
    /// Check that a component carries a valid signature by one of the given keys.
    Verify {
        /// The `.wasm` file.
        file: String,
        /// A public key (file, or fingerprint `ed25519:HEX`); repeat for several.
        #[arg(long, required = true)]
        key: Vec<String>,
    },
    /// The keys trusted to sign the components of registry prefixes (`trust.json` in the
    /// Cairn home).
    Trust {
        #[command(subcommand)]
        command: crate::commands::signing::TrustCommand,
    },
}

#[derive(Debug, Subcommand)]
enum RegistryCommand {
    /// Store credentials for a registry (`HOST[:PORT]`) in the Cairn home (readable by you
    /// only; Docker's `config.json` is read too).
    Login {
        registry: String,
        #[arg(short, long)]
        username: String,
        /// Read the password (or token) from standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Forget the credentials stored for a registry.
    Logout { registry: String },
    /// Add a registry to look providers up in by name (`oci://HOST[:PORT]/PREFIX`; the
    /// package's repository is `PREFIX/NAME`), after those already listed; or a mirror of
    /// another source (`--mirror-of`), tried before it: a registry, or a directory
    /// `cairn plugin mirror` filled (`file:///DIR`).
    Add {
        url: String,
        #[arg(long, value_name = "oci://HOST/PREFIX")]
        mirror_of: Option<String>,
    },
    /// List the registries, in the order they are consulted.
    Ls {
        #[arg(long)]
        json: bool,
    },
    /// Remove a registry from the list.
    Rm { url: String },
}

pub fn run(context: &Context, args: PluginArgs) -> Result<()> {
    let store = providers::store(&context.home).with_runtime(providers::runtime(&context.home)?);
    match args.command {
        PluginCommand::Build { dir, output } => {
            let source = context.cwd.join(&dir);
            let Some(language) = cairn_guest_build::provider_language(&source) else {
                bail!(
                    "{} is not a provider's source directory: it needs cairn.json beside Cargo.toml (Rust), app.py (Python), package.json (TypeScript) or go.mod (Go)",
                    source.display()
                );
            };
            let built = crate::program::builder(&context.home).build(
                &source,
                language,
                cairn_guest_build::World::Provider,
            )?;
            let plugin = cairn_wasm::WasmPlugin::from_file(&built)?;
            let manifest = plugin.manifest();
            // The name becomes part of a file name: the store's rule keeps it a plain one.
            if !is_plugin_name(&manifest.name) {
                bail!(
                    "{}/cairn.json: the provider's name {} is not a valid package name ({PLUGIN_NAME_RULE})",
                    source.display(),
                    quoted(&manifest.name)
                );
            }
            let out = match output {
                Some(out) => context.cwd.join(out),
                None => context
                    .cwd
                    .join(format!("{}-{}.wasm", manifest.name, manifest.version)),
            };
            let partial = out.with_extension("wasm.partial");
            std::fs::write(&partial, plugin.bytes())
                .with_context(|| format!("writing {}", partial.display()))?;
            std::fs::rename(&partial, &out)
                .with_context(|| format!("writing {}", out.display()))?;
            outln!(
                "Built {}@{} (sha256 {}) into {}",
                manifest.name,
                manifest.version,
                plugin.sha256(),
                out.display()
            );
        }
        PluginCommand::ExportGrpc { file, output } => {
            let launcher = crate::commands::provider::export_grpc(
                &context.cwd.join(&file),
                &context.cwd.join(&output),
            )?;
            outln!("Wrote {}", launcher.display());
        }
        PluginCommand::Install {
            source,
            checksum,
            plain_http,
        } => {
            let (plugin, from) = if source.starts_with(cairn_registry::reference::SCHEME) {
                let reference = cairn_registry::Reference::parse(&source)?;
                let client = registry::client(&context.home, plain_http)?;
                let fetched =
                    registry::block_on(registry::fetch_oci(&context.home, &client, &reference))?;
                (fetched.plugin, Some(fetched.source))
            } else if source.starts_with("https://") || source.starts_with("http://") {
                let Some(checksum) = checksum else {
                    bail!(
                        "installing from {} needs --checksum sha256:HEX (the file's SHA-256), so what is installed is what you meant",
                        field(&source)
                    );
                };
                let client = registry::client(&context.home, plain_http)?;
                let fetched = registry::block_on(registry::fetch_url(
                    &context.home,
                    &client,
                    &source,
                    &checksum,
                ))?;
                (fetched.plugin, Some(fetched.source))
            } else if !context.cwd.join(&source).exists()
                && let Some((name, requirement)) = name_and_requirement(&source)?
            {
                let registries = registry::registries(&context.home, project_registries(context))?;
                let client = registry::client(&context.home, plain_http)?;
                let (plugin, entry) = registry::block_on(registry::fetch_by_name(
                    &context.home,
                    &client,
                    &registries,
                    &name,
                    &requirement,
                ))?;
                let from = format!(
                    "{}:{}",
                    entry.source,
                    cairn_registry::reference::tag_for_version(&entry.version)
                );
                (plugin, Some(from))
            } else {
                (
                    cairn_wasm::WasmPlugin::from_file(context.cwd.join(&source))?,
                    None,
                )
            };
            crate::commands::package::check_before_install(&plugin, &source)?;
            let installed = store.install_plugin(&plugin)?;
            outln!(
                "Installed {}@{} (sha256 {}) at {}",
                installed.name,
                installed.version,
                installed.sha256,
                installed.path.display()
            );
            if let Some(from) = from {
                outln!("  from {}", field(&from));
            }
        }
        PluginCommand::Publish {
            file,
            reference,
            plain_http,
        } => {
            let path = context.cwd.join(&file);
            let plugin = cairn_wasm::WasmPlugin::from_file(&path)?;
            crate::commands::package::check_before_install(&plugin, &file)?;
            let manifest = plugin.manifest();
            let mut reference = cairn_registry::Reference::parse(&reference)?;
            match &reference.target {
                None => {
                    reference = reference.with_target(cairn_registry::Target::Tag(
                        cairn_registry::reference::tag_for_version(&manifest.version),
                    ))
                }
                Some(cairn_registry::Target::Digest(_)) => {
                    bail!("{reference}: publish to a tag (oci://HOST/REPO[:TAG]), not a digest")
                }
                Some(cairn_registry::Target::Tag(_)) => {}
            }
            let title = format!("{}-{}.wasm", manifest.name, manifest.version);
            let artifact = cairn_registry::layout::artifact(
                plugin.bytes(),
                &title,
                &manifest.version,
                chrono::Utc::now(),
            );
            let client = registry::client(&context.home, plain_http)?;
            let digest = registry::block_on(async {
                Ok(client.push(&reference, &artifact, plugin.bytes()).await?)
            })?;
            outln!(
                "Published {}@{} to {reference}",
                field(&manifest.name),
                manifest.version
            );
            outln!("  manifest {digest}");
            outln!("  component sha256:{}", plugin.sha256());
        }
        PluginCommand::Lock { providers, update } => {
            crate::commands::plugin_lock::lock(context, &store, providers, update)?
        }
        PluginCommand::Mirror {
            to,
            from,
            plain_http,
        } => crate::commands::plugin_lock::mirror(context, &to, from.as_deref(), plain_http)?,
        PluginCommand::Registry { command } => match command {
            RegistryCommand::Login {
                registry: host,
                username,
                password_stdin,
            } => {
                check_registry_host(&host)?;
                if !password_stdin {
                    bail!(
                        "give the password on standard input with --password-stdin (it is never taken as an argument, where other users could see it)"
                    );
                }
                let mut password = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut password)
                    .context("reading the password from standard input")?;
                let password = password.trim_end_matches(['\n', '\r']).to_owned();
                if password.is_empty() {
                    bail!("no password on standard input");
                }
                let file = registry::auth_file(&context.home);
                cairn_registry::Credentials::save(
                    &file,
                    &host,
                    &cairn_registry::Credential { username, password },
                )?;
                outln!(
                    "Stored credentials for {} in {}",
                    field(&host),
                    file.display()
                );
            }
            RegistryCommand::Add { url, mirror_of } => {
                let entry = cairn_registry::sources::RegistryEntry { url, mirror_of };
                entry.check().map_err(|why| anyhow!(why))?;
                let file = registry::registries_file(&context.home);
                let mut list = cairn_registry::sources::RegistryList::load(&file)?;
                if list.registries.iter().any(|e| e.url == entry.url) {
                    bail!(
                        "{} is already listed (`cairn plugin registry rm` it first)",
                        field(&entry.url)
                    );
                }
                outln!(
                    "Added {}{}",
                    field(&entry.url),
                    entry
                        .mirror_of
                        .as_deref()
                        .map(|o| format!(" (a mirror of {o})"))
                        .unwrap_or_default()
                );
                list.registries.push(entry);
                list.save(&file)?;
            }
            RegistryCommand::Ls { json } => {
                let list = cairn_registry::sources::RegistryList::load(
                    &registry::registries_file(&context.home),
                )?;
                let project = registry::registries(&context.home, project_registries(context))?;
                if json {
                    outln!("{}", json_pretty(&project)?);
                } else if project.is_empty() {
                    outln!(
                        "No registries; add one with `cairn plugin registry add oci://HOST/PREFIX`."
                    );
                } else {
                    for entry in &project {
                        let whose = if list.registries.contains(entry) {
                            ""
                        } else {
                            " (project)"
                        };
                        match &entry.mirror_of {
                            Some(origin) => {
                                outln!("{}  mirror of {}{whose}", field(&entry.url), field(origin))
                            }
                            None => outln!("{}{whose}", field(&entry.url)),
                        }
                    }
                }
            }
            RegistryCommand::Rm { url } => {
                let file = registry::registries_file(&context.home);
                let mut list = cairn_registry::sources::RegistryList::load(&file)?;
                let before = list.registries.len();
                list.registries.retain(|e| e.url != url);
                if list.registries.len() == before {
                    bail!("{} is not listed (`cairn plugin registry ls`)", field(&url));
                }
                list.save(&file)?;
                outln!("Removed {}", field(&url));
            }
            RegistryCommand::Logout { registry: host } => {
                check_registry_host(&host)?;
                if cairn_registry::Credentials::forget(&registry::auth_file(&context.home), &host)?
                {
                    outln!("Forgot the credentials for {}", field(&host));
                } else {
                    outln!("No credentials were stored for {}", field(&host));
                }
            }
        },
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
        PluginCommand::Sign { file, key, output } => {
            crate::commands::signing::sign(context, &file, &key, output.as_deref())?
        }
        PluginCommand::Verify { file, key } => {
            crate::commands::signing::verify(context, &file, &key)?
        }
        PluginCommand::Trust { command } => crate::commands::signing::trust(context, command)?,
    }
    Ok(())
}

/// `NAME` or `NAME@REQUIREMENT` (`None` if it is neither, e.g. a missing file's path).
pub fn name_and_requirement(text: &str) -> Result<Option<(String, semver::VersionReq)>> {
    let (name, requirement) = match text.split_once('@') {
        Some((name, req)) => (name, Some(req)),
        None => (text, None),
    };
    if !is_plugin_name(name) {
        return Ok(None);
    }
    let requirement = match requirement {
        None => semver::VersionReq::STAR,
        Some(req) => semver::VersionReq::parse(req).map_err(|e| {
            anyhow!(
                "{}: {} is not a version requirement (1.2.3, ^1.2, >=1, <2): {e}",
                quoted(text),
                quoted(req)
            )
        })?,
    };
    Ok(Some((name.to_owned(), requirement)))
}

/// The project's `cairn:registries` (Pulumi.yaml `config:`), when run inside a project.
pub fn project_registries(context: &Context) -> Option<serde_json::Value> {
    let workspace = context.project().ok()?;
    workspace
        .project
        .config
        .get(registry::PROJECT_REGISTRIES_KEY)
        .and_then(|d| d.value.clone().or_else(|| d.default.clone()))
}

/// Checks a registry given to `cairn plugin registry` (`HOST[:PORT]`).
fn check_registry_host(host: &str) -> Result<()> {
    cairn_registry::Reference::parse(&format!("oci://{host}/x"))
        .map(|_| ())
        .map_err(|_| anyhow!("{} is not a registry (HOST or HOST:PORT)", quoted(host)))
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
