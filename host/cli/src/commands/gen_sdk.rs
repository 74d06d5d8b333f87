//! `cairn package gen-sdk`: reads a package schema (a schema file, a provider manifest, a
//! `.wasm` provider or an installed provider) and writes the typed Rust crate
//! `cairn_codegen::sdk` generates for it.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_codegen::sdk::{self, SdkDependency, SdkOptions};
use cairn_schema::PackageSpec;
use cairn_wasm::plugin::WasmPlugin;
use cairn_wasm::store::{PLUGIN_NAME_RULE, is_plugin_name};
use clap::Args;

use crate::providers;
use crate::terminal::{outln, quoted};
use crate::workspace::Context;

/// The languages `gen-sdk` writes.
const LANGUAGES: &[&str] = &["rust"];

#[derive(Debug, Args)]
pub struct GenSdkArgs {
    /// A schema file (JSON or YAML), a provider manifest (`cairn.json` with a `schema`), a
    /// `.wasm` provider, or an installed provider's `name[@version]`.
    source: String,
    /// The SDK's language (only `rust`: a crate for Cairn wasm programs).
    #[arg(long, default_value = "rust")]
    language: String,
    /// The directory to write the crate into (created if missing).
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// Depend on the guest SDK (`cairn-sdk`) at this path, relative to DIR (or absolute),
    /// instead of the registry version matching this cairn.
    #[arg(long, value_name = "PATH", conflicts_with = "sdk_version")]
    sdk_path: Option<String>,
    /// The `cairn-sdk` version requirement to depend on (default: this cairn's version).
    #[arg(long, value_name = "VERSION")]
    sdk_version: Option<String>,
}

pub fn run(context: &Context, args: GenSdkArgs) -> Result<()> {
    if !LANGUAGES.contains(&args.language.as_str()) {
        bail!(
            "unsupported language {} for `cairn package gen-sdk`: the languages are {}",
            quoted(&args.language),
            LANGUAGES.join(", ")
        );
    }
    let (schema, provider_version, described) = load(context, &args.source)?;
    let spec = PackageSpec::from_value(schema)
        .map_err(|e| anyhow!("{described} is not a package schema: {e}"))?;
    let sdk = match (args.sdk_path, args.sdk_version) {
        (Some(path), _) => SdkDependency::Path(path),
        (None, Some(version)) => SdkDependency::Version(version),
        (None, None) => SdkDependency::Version(env!("CARGO_PKG_VERSION").to_owned()),
    };
    let options = SdkOptions {
        version: provider_version,
        sdk,
    };
    let files = sdk::generate(&spec, &options).with_context(|| format!("reading {described}"))?;
    let out = context.cwd.join(&args.out);
    write(&out, &files)?;
    outln!(
        "Wrote the Rust SDK of package {} ({} files) to {}",
        spec.name,
        files.len(),
        out.display()
    );
    Ok(())
}

/// The schema (as JSON), the provider's version when the source names one, and how to name
/// the source in errors.
fn load(context: &Context, source: &str) -> Result<(serde_json::Value, Option<String>, String)> {
    let path = context.cwd.join(source);
    if source.ends_with(".wasm") {
        let plugin = WasmPlugin::from_file(&path)?;
        let manifest = plugin.manifest();
        let described = format!("the schema of provider {}", path.display());
        return Ok((
            manifest.schema.clone(),
            Some(manifest.version.to_string()),
            described,
        ));
    }
    if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let value = parse_document(&text, &path)?;
        let described = path.display().to_string();
        // A provider manifest holds the schema under `schema`; its version (or, as when the
        // provider is built, its crate's) is the SDK's unless the schema has one.
        if let Some(schema) = value.get("schema").filter(|s| s.is_object()) {
            let version = value
                .get("version")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
                .or_else(|| path.parent().and_then(crate_version));
            return Ok((
                schema.clone(),
                version,
                format!("the schema in {described}"),
            ));
        }
        return Ok((value, None, described));
    }
    let looks_like_a_file = [".json", ".yaml", ".yml"]
        .iter()
        .any(|e| source.ends_with(e));
    if looks_like_a_file || source.contains('/') || source.contains(std::path::MAIN_SEPARATOR) {
        bail!("{} does not exist", path.display());
    }
    let (name, requirement) = match source.split_once('@') {
        Some((name, version)) => {
            let version = semver::Version::parse(version).map_err(|e| {
                anyhow!(
                    "invalid provider version {} in {}: versions are semantic versions such as 1.2.3 ({e})",
                    quoted(version),
                    quoted(source)
                )
            })?;
            (name, Some(cairn_wasm::store::exact(&version)))
        }
        None => (source, None),
    };
    if !is_plugin_name(name) {
        bail!(
            "{} is neither a file nor a provider name: {PLUGIN_NAME_RULE}",
            quoted(source)
        );
    }
    let store = providers::store(&context.home);
    let installed = store.lookup(name, requirement.as_ref())?.ok_or_else(|| {
        anyhow!(
            "no file {} and no installed provider {} (`cairn plugin ls` lists the installed ones)",
            path.display(),
            quoted(source)
        )
    })?;
    let plugin = store.load(&installed)?;
    let manifest = plugin.manifest();
    Ok((
        manifest.schema.clone(),
        Some(manifest.version.to_string()),
        format!(
            "the schema of provider {}@{}",
            manifest.name, manifest.version
        ),
    ))
}

/// JSON, or YAML for `.yaml` / `.yml` files.
fn parse_document(text: &str, path: &Path) -> Result<serde_json::Value> {
    let yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
    if yaml {
        let file = path.display().to_string();
        crate::yaml::check_nesting(text, &file)?;
        serde_yaml_ng::from_str(text).map_err(|e| anyhow!("{file} is not valid YAML: {e}"))
    } else {
        serde_json::from_str(text).map_err(|e| anyhow!("{} is not valid JSON: {e}", path.display()))
    }
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

/// Writes the crate's files, and removes files an earlier generation wrote that this one no
/// longer has (a module the schema dropped).
fn write(out: &Path, files: &[sdk::GeneratedFile]) -> Result<()> {
    let src = out.join("src");
    if let Ok(entries) = std::fs::read_dir(&src) {
        for entry in entries.flatten() {
            let path = entry.path();
            let relative = format!("src/{}", entry.file_name().to_string_lossy());
            let generated_before = path.extension().is_some_and(|e| e == "rs")
                && std::fs::read_to_string(&path)
                    .is_ok_and(|text| text.contains("generated by `cairn package gen-sdk`"));
            if generated_before && !files.iter().any(|f| f.path == relative) {
                std::fs::remove_file(&path)
                    .with_context(|| format!("removing {}", path.display()))?;
            }
        }
    }
    for file in files {
        let path = out.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, &file.text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
