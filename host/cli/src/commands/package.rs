//! `cairn package`: package schemas — `check-schema` (the metaschema and semantic checks of
//! `cairn-schema`) and `get-schema`, on a schema file, a provider manifest, a `.wasm` provider,
//! an installed provider or a `pulumi-resource-NAME` plugin. Further subcommands (`gen-sdk`)
//! join [`PackageCommand`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_wasm::WasmPlugin;
use cairn_wasm::store::{PLUGIN_NAME_RULE, exact, is_plugin_name};
use clap::{Args, Subcommand};
use serde_json::Value;

use crate::terminal::{field, json_pretty, outln, quoted};
use crate::workspace::Context;

/// The largest schema file read (the biggest published schemas are tens of megabytes).
const MAX_SCHEMA_FILE_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Debug, Args)]
pub struct PackageArgs {
    #[command(subcommand)]
    command: PackageCommand,
}

#[derive(Debug, Subcommand)]
enum PackageCommand {
    /// Check a package schema against the package metaschema and Pulumi's semantic rules;
    /// list every error (JSON path, rule, message) or print a one-line summary.
    CheckSchema {
        /// A schema file (JSON or YAML), a provider manifest (`cairn.json`), a `.wasm`
        /// provider, or an installed provider `NAME[@VERSION]` (else a `pulumi-resource-NAME`
        /// plugin in the Cairn plugin directory or on PATH).
        source: String,
    },
    /// Print a provider's package schema as JSON, as the provider serves it: a wasm
    /// provider is asked (its exported `get-schema`), and what it serves must agree with its
    /// manifest's schema.
    GetSchema {
        /// A `.wasm` provider, a provider manifest, or an installed provider
        /// `NAME[@VERSION]` (else a `pulumi-resource-NAME` plugin).
        provider: String,
    },
    /// Generate a typed SDK crate for wasm programs from a package schema.
    GenSdk(super::gen_sdk::GenSdkArgs),
}

pub fn run(context: &Context, args: PackageArgs) -> Result<()> {
    match args.command {
        PackageCommand::CheckSchema { source } => {
            let schema = load(context, &source)?;
            let spec = cairn_schema::check_schema(&schema.document)
                .map_err(|invalid| anyhow!("{}: {invalid}", schema.origin))?;
            outln!(
                "{}: valid package schema {}",
                schema.origin,
                cairn_schema::Summary::of(&spec)
            );
        }
        PackageCommand::GetSchema { provider } => {
            let schema = load(context, &provider)?;
            outln!("{}", json_pretty(&schema.document)?);
        }
        PackageCommand::GenSdk(args) => super::gen_sdk::run(context, args)?,
    }
    Ok(())
}

/// A schema document and where it came from (for messages).
pub struct LoadedSchema {
    pub document: Value,
    /// The file or provider, printable.
    pub origin: String,
}

/// Resolves `source`: an existing file (by extension: `.wasm`, `.yaml`/`.yml`, else JSON — a
/// manifest when it has a `schema` field), else an installed provider, else a gRPC plugin.
pub fn load(context: &Context, source: &str) -> Result<LoadedSchema> {
    let path = context.cwd.join(source);
    let looks_like_file = [".wasm", ".json", ".yaml", ".yml"]
        .iter()
        .any(|ext| source.ends_with(ext))
        || source.contains('/');
    if path.is_file() || looks_like_file {
        return load_file(context, &path, source);
    }
    load_provider(context, source)
}

fn load_file(context: &Context, path: &Path, shown: &str) -> Result<LoadedSchema> {
    let origin = field(shown).into_owned();
    if shown.ends_with(".wasm") {
        let plugin = WasmPlugin::from_file(path)?;
        let named = format!(
            "provider {}@{} ",
            quoted(&plugin.manifest().name),
            plugin.manifest().version
        );
        return served(context, &plugin, origin, &named);
    }
    let size = std::fs::metadata(path)
        .with_context(|| format!("reading {origin}"))?
        .len();
    if size > MAX_SCHEMA_FILE_BYTES {
        bail!("{origin}: {size} bytes; schema files are limited to {MAX_SCHEMA_FILE_BYTES} bytes");
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {origin}"))?;
    let document: Value = if shown.ends_with(".yaml") || shown.ends_with(".yml") {
        crate::yaml::check_nesting(&text, &origin)?;
        serde_yaml_ng::from_str(&text).map_err(|e| anyhow!("{origin}: not valid YAML: {e}"))?
    } else {
        serde_json::from_str(&text).map_err(|e| anyhow!("{origin}: not valid JSON: {e}"))?
    };
    // A provider manifest (`cairn.json`): the schema it carries, completed as it is served.
    if let Some(schema) = document.get("schema") {
        let mut schema = schema.clone();
        if let Value::Object(map) = &mut schema {
            // A manifest without a version takes its crate's when the provider is built.
            let crate_version = path.parent().and_then(crate_version).map(Value::String);
            for key in ["version", "name"] {
                let value = document
                    .get(key)
                    .cloned()
                    .or_else(|| crate_version.clone().filter(|_| key == "version"));
                if let Some(value) = value
                    && !map.contains_key(key)
                {
                    map.shift_insert(0, key.to_owned(), value);
                }
            }
        }
        return Ok(LoadedSchema {
            document: schema,
            origin: format!("{origin} (the manifest's schema)"),
        });
    }
    Ok(LoadedSchema { document, origin })
}

/// The schema a wasm provider serves: asked of the guest (its exported `get-schema`, run in
/// the sandbox with no grants), and checked against the copy its manifest carries, which
/// deployments and `plugin install` read without running the guest: the two must agree.
/// `named` names the provider in messages, when `origin` does not (`provider "x"@1.0.0 `).
fn served(
    context: &Context,
    plugin: &WasmPlugin,
    origin: String,
    named: &str,
) -> Result<LoadedSchema> {
    use cairn_engine::deploy::provider::{Provider as _, ProviderError};
    let manifest = plugin.manifest();
    let runtime = crate::providers::runtime(&context.home)?;
    let provider = runtime
        .instantiate(
            plugin,
            &cairn_wasm::PackageGrant::default(),
            cairn_wasm::tracing_log_sink(),
        )
        .with_context(|| format!("{origin}: starting the provider"))?;
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let answer = tokio.block_on(provider.get_schema());
    let in_manifest = manifest.served_schema();
    let text = match (answer, &in_manifest) {
        (Ok(text), _) => text,
        (Err(ProviderError::Unimplemented { .. }), None) => {
            bail!(
                "{origin}: {named}has no package schema in its manifest, and its get-schema \
                 serves none"
            )
        }
        (Err(e), None) => bail!(
            "{origin}: {named}has no package schema in its manifest, and its get-schema \
             failed: {e}"
        ),
        (Err(e), Some(_)) => bail!("{origin}: {named}get-schema failed: {e}"),
    };
    let document: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow!("{origin}: {named}the schema its get-schema returned is not valid JSON: {e}")
    })?;
    if let Some(in_manifest) = in_manifest {
        let differences = schema_differences(&in_manifest, &document);
        if !differences.is_empty() {
            bail!(
                "{origin}: {named}serves a schema (get-schema) that differs from its manifest's schema (which deployments read):\n  {}",
                differences.join("\n  ")
            );
        }
    }
    Ok(LoadedSchema { document, origin })
}

/// How many differences a mismatch reports.
const MAX_DIFFERENCES: usize = 10;

/// Where the manifest's schema and the served one differ, as `path: what` lines (at most
/// [`MAX_DIFFERENCES`], then a count of the rest).
fn schema_differences(manifest: &Value, served: &Value) -> Vec<String> {
    let mut found = Vec::new();
    differ(manifest, served, &mut String::new(), &mut found);
    if found.len() > MAX_DIFFERENCES {
        let rest = found.len() - MAX_DIFFERENCES;
        found.truncate(MAX_DIFFERENCES);
        found.push(format!("… and {rest} more"));
    }
    found
}

fn differ(manifest: &Value, served: &Value, path: &mut String, found: &mut Vec<String>) {
    let at = |path: &str| {
        if path.is_empty() {
            "the schema".to_owned()
        } else {
            path.to_owned()
        }
    };
    match (manifest, served) {
        (Value::Object(left), Value::Object(right)) => {
            for (key, value) in left {
                let len = path.len();
                path.push_str(&format!("/{}", key_shown(key)));
                match right.get(key) {
                    Some(other) => differ(value, other, path, found),
                    None => found.push(format!("{path}: only in the manifest")),
                }
                path.truncate(len);
            }
            for key in right.keys().filter(|k| !left.contains_key(*k)) {
                found.push(format!(
                    "{path}/{}: only in what get-schema serves",
                    key_shown(key)
                ));
            }
        }
        (Value::Array(left), Value::Array(right)) if left.len() == right.len() => {
            for (i, (a, b)) in left.iter().zip(right).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                differ(a, b, path, found);
                path.truncate(len);
            }
        }
        (left, right) if left != right => found.push(format!(
            "{}: {} in the manifest, {} from get-schema",
            at(path),
            brief(left),
            brief(right)
        )),
        _ => {}
    }
}

/// A key of the guest's JSON in a path of a message.
fn key_shown(key: &str) -> String {
    cairn_engine::text::shown(key, 80)
}

/// A JSON value in a line of a message (cut when long).
fn brief(value: &Value) -> String {
    cairn_engine::text::shown(&value.to_string(), 60)
}

/// An installed wasm provider `NAME[@VERSION]`, else (no version given) a gRPC plugin.
fn load_provider(context: &Context, source: &str) -> Result<LoadedSchema> {
    let (name, version) = match source.split_once('@') {
        Some((name, version)) => (name, Some(version)),
        None => (source, None),
    };
    if !is_plugin_name(name) {
        bail!(
            "{} is neither a file nor a provider name: {PLUGIN_NAME_RULE}",
            quoted(source)
        );
    }
    let version = version
        .map(|v| {
            semver::Version::parse(v).map_err(|e| {
                anyhow!(
                    "invalid provider version {}: versions are semantic versions such as 1.2.3 ({e})",
                    quoted(v)
                )
            })
        })
        .transpose()?;
    let store = crate::providers::store(&context.home);
    if let Some(installed) = store.lookup(name, version.as_ref().map(exact).as_ref())? {
        let plugin = store.load(&installed)?;
        let origin = format!(
            "provider {}@{} ({})",
            field(name),
            installed.version,
            field(&installed.path.display().to_string())
        );
        // The origin names the provider already.
        return served(context, &plugin, origin, "");
    }
    if version.is_none()
        && let Some(plugin) = grpc_plugin(&context.home, name)
    {
        let origin = format!("plugin {}", field(&plugin.program.display().to_string()));
        let text = grpc_schema(name, &plugin).with_context(|| format!("{origin}: GetSchema"))?;
        let document = serde_json::from_str(&text)
            .map_err(|e| anyhow!("{origin}: the schema it sent is not valid JSON: {e}"))?;
        return Ok(LoadedSchema { document, origin });
    }
    bail!(
        "no provider {}{} installed: install a wasm component (`cairn plugin install FILE.wasm`){}",
        quoted(name),
        version
            .map(|v| format!(" at version {v}"))
            .unwrap_or_default(),
        if version_requested(source) {
            String::new()
        } else {
            format!(", or put a pulumi-resource-{name} plugin on PATH")
        }
    )
}

fn version_requested(source: &str) -> bool {
    source.contains('@')
}

/// `pulumi-resource-NAME` in the Cairn plugin directory, then on PATH (as deployments find it).
fn grpc_plugin(home: &Path, name: &str) -> Option<cairn_grpc::PluginCommand> {
    let binary = format!("pulumi-resource-{name}");
    let mut dirs: Vec<PathBuf> = vec![home.join("plugins").join("bin")];
    dirs.extend(
        std::env::var_os("PATH").map_or_else(Vec::new, |p| std::env::split_paths(&p).collect()),
    );
    dirs.into_iter()
        .map(|dir| dir.join(&binary))
        .find(|candidate| candidate.is_file())
        .map(|path| cairn_grpc::PluginCommand::new(binary.clone(), path))
}

/// Starts the plugin, asks for its schema and stops it.
fn grpc_schema(name: &str, command: &cairn_grpc::PluginCommand) -> Result<String> {
    use cairn_engine::deploy::provider::Provider as _;
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    tokio.block_on(async {
        let engine =
            cairn_grpc::serve_engine(Arc::new(cairn_engine::deploy::events::NullSink), None)
                .await?;
        let output: cairn_grpc::plugin::OutputSink = Arc::new(|_stderr, line| {
            tracing::debug!(line = %line, "plugin output");
        });
        let provider = cairn_grpc::GrpcProvider::start(
            name,
            command,
            &engine.target(),
            cairn_grpc::plugin::DEFAULT_START_TIMEOUT,
            output,
        )
        .await?;
        let schema = provider.get_schema().await;
        provider.shutdown().await;
        Ok(schema?)
    })
}

/// The schema check `cairn plugin install` makes: a provider whose manifest carries a schema
/// installs only if that schema is valid.
pub fn check_before_install(plugin: &WasmPlugin, shown: &str) -> Result<()> {
    let manifest = plugin.manifest();
    let Some(schema) = manifest.served_schema() else {
        return Ok(());
    };
    cairn_schema::check_schema(&schema).map_err(|invalid| {
        anyhow!(
            "{}: not installing {}@{}: {invalid}",
            field(shown),
            quoted(&manifest.name),
            manifest.version
        )
    })?;
    Ok(())
}

/// `version` of the `[package]` of `dir/Cargo.toml`, when it states one.
fn crate_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    let mut in_package = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if let Some(rest) = line.strip_prefix("version").filter(|_| in_package) {
            let value = rest.trim_start().strip_prefix('=')?.trim();
            return value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_differences_name_each_path() {
        let manifest = json!({"name": "p", "resources": {"p:index:T": {"properties": {
            "size": {"type": "integer"}, "gone": {"type": "string"}}}}, "list": [1, 2]});
        let served = json!({"name": "p", "resources": {"p:index:T": {"properties": {
            "size": {"type": "string"}}}}, "functions": {}, "list": [1, 3]});
        assert_eq!(
            schema_differences(&manifest, &served),
            vec![
                "/resources/p:index:T/properties/size/type: \"integer\" in the manifest, \"string\" from get-schema",
                "/resources/p:index:T/properties/gone: only in the manifest",
                "/list/1: 2 in the manifest, 3 from get-schema",
                "/functions: only in what get-schema serves",
            ]
        );
        assert!(schema_differences(&manifest, &manifest).is_empty());
        assert_eq!(
            schema_differences(&json!(1), &json!("x")),
            vec!["the schema: 1 in the manifest, \"x\" from get-schema"]
        );
    }
}
