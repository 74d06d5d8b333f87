//! `cairn import TYPE NAME ID` and `cairn import --file FILE`: adopts existing resources into
//! the current stack as Pulumi's `pulumi import` does — a preview first (`= import` steps), a
//! confirmation (`--yes`, `--skip-preview`, `--preview-only`), then the import, journaled like
//! `up` ([`super::deploy::run_import`]); every other resource of the stack stays as it is. The
//! imported resources are protected unless `--protect=false`. Afterwards it prints (or writes
//! with `--out`) program code declaring them, in the project's language
//! (`cairn_codegen::program`).
//!
//! # `cairn import` is a program, not a second engine
//!
//! Pulumi runs `pulumi import` as a deployment of its own (every existing resource stepped as
//! `same`, providers created by hand, then import steps). Cairn runs the engine's ordinary
//! deployment with a program the CLI writes (`commands/import/program.rs`): it registers what the
//! imports refer to as recorded (parents, explicit providers — registration is how a reference
//! becomes valid), then the file's components, providers and resources with the `import` option,
//! and `Deployment::import` deletes nothing, so what the program does not register stays as it is.
//! A registration named in `DeploymentOptions::planned_imports` is imported as Pulumi's planned
//! imports are: the read inputs (or `--properties` of them) become the inputs, Check's failures are
//! warnings, no Diff is taken (the spec's §5.2 describes an older Diff-driven algorithm; Pulumi's
//! current engine does this), and no import ID is recorded. Previews, confirmation, journaling,
//! interruption and the display are `up`'s.

mod file;
mod program;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use cairn_codegen::program::{self as codegen, Language};
use cairn_engine::deploy::Outcome;
use cairn_engine::deploy::events::NullSink;
use cairn_engine::deploy::provider::ProviderLoader;
use cairn_engine::state::ResourceState;
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyValue;
use cairn_schema::PackageSpec;
use clap::{ArgAction, Args};
use indexmap::IndexMap;

use super::deploy::{DeployArgs, ImportPlan, Kind};
use crate::stack::Stack;
use crate::terminal::{errln, outln};
use crate::workspace::Context;
use file::{ImportFile, Resolved, Spec};

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The resource to import: its type token, name and ID.
    #[arg(value_names = ["TYPE", "NAME", "ID"], num_args = 0..=3)]
    resource: Vec<String>,
    /// A JSON file of resources to import (Pulumi's format: `nameTable`, `resources`).
    #[arg(short = 'f', long, value_name = "FILE")]
    file: Option<PathBuf>,
    /// Write the generated code to FILE instead of printing it.
    #[arg(short = 'o', long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Protect the imported resources from deletion (`--protect=false` to not).
    #[arg(long, action = ArgAction::Set, default_value_t = true, num_args = 0..=1,
          require_equals = true, default_missing_value = "true")]
    protect: bool,
    /// The parent: `NAME=URN` (NAME is its variable in the generated code) or a URN.
    #[arg(long, value_name = "NAME=URN")]
    parent: Option<String>,
    /// The explicit provider: `NAME=URN` or a URN.
    #[arg(long, value_name = "NAME=URN")]
    provider: Option<String>,
    /// Keep only these input properties (comma-separated) of what the provider reads.
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    properties: Vec<String>,
    /// Generate code declaring the imported resources (`--generate-code=false` to not).
    #[arg(long, action = ArgAction::Set, default_value_t = true, num_args = 0..=1,
          require_equals = true, default_missing_value = "true")]
    generate_code: bool,
    /// Only preview the import; record nothing.
    #[arg(long)]
    preview_only: bool,
    /// Import without a preview and a confirmation.
    #[arg(short, long)]
    yes: bool,
    /// Do not preview first (implies --yes).
    #[arg(long)]
    skip_preview: bool,
    /// Accepted for Pulumi's scripts: Cairn keeps no update messages.
    #[arg(short, long, value_name = "MESSAGE")]
    message: Option<String>,
    /// Provider operations to run at once (default: 4 × cores).
    #[arg(short, long, value_name = "N")]
    parallel: Option<usize>,
    /// Print Pulumi's machine-readable output instead of the progress view: a preview's
    /// digest (one JSON document), or one engine event per line.
    #[arg(long)]
    json: bool,
    /// Show secret values in the preview and the generated code's messages.
    #[arg(long)]
    show_secrets: bool,
    /// Also write every engine event to FILE, one JSON object per line (Pulumi's event log).
    #[arg(long, value_name = "FILE")]
    event_log: Option<std::path::PathBuf>,
}

pub fn run(context: &Context, args: ImportArgs) -> Result<()> {
    let (path, import_file) = import_file(context, &args)?;
    if !args.generate_code && args.out.is_some() {
        errln!("Output file will not be used as --generate-code is false.");
    }
    if args.preview_only && (args.yes || args.skip_preview) {
        bail!("--preview-only cannot be combined with --yes or --skip-preview");
    }
    let workspace = context.project()?;
    let stack = Stack::current(&workspace)?;
    let project = stack.project().to_owned();
    let stack_name = stack.name.clone();
    // Resolved under the stack's lock, against the state the import starts from.
    let resolved: std::sync::Mutex<Option<Resolved>> = std::sync::Mutex::new(None);
    let planner = |snapshot: &cairn_engine::state::Snapshot| -> Result<ImportPlan> {
        let entries = file::resolve(&path, import_file.clone(), snapshot, &stack_name, &project)?;
        let (program, planned) = program::ImportProgram::new(&entries, snapshot, args.protect);
        *resolved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(entries);
        Ok(ImportPlan {
            program: Arc::new(program),
            planned,
        })
    };
    let kind = if args.preview_only {
        Kind::ImportPreview
    } else {
        Kind::Import
    };
    let deploy_args = DeployArgs::for_import(
        args.yes || args.skip_preview,
        args.skip_preview,
        args.parallel,
        args.json,
        args.show_secrets,
        args.event_log.clone(),
    );
    let outcome = super::deploy::run_import(context, kind, deploy_args, &planner)?;
    let (Some(outcome), true) = (outcome, args.generate_code) else {
        return Ok(());
    };
    let Some(resolved) = resolved
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    else {
        return Ok(());
    };
    if resolved.resources.is_empty() {
        return Ok(());
    }
    let language = match workspace.project.runtime.name.as_str() {
        "python" => Language::Python,
        "nodejs" => Language::TypeScript,
        _ => Language::Rust,
    };
    let code = match generate(context, &workspace, &resolved, &outcome, language) {
        Ok(code) => code,
        Err(e) => {
            errln!(
                "Your resources have been imported into the stack, but there was an error generating the import code:\n{e:#}"
            );
            return Ok(());
        }
    };
    match &args.out {
        Some(out) => {
            std::fs::write(context.cwd.join(out), &code)
                .with_context(|| format!("writing {}", out.display()))?;
            if !args.json {
                outln!(
                    "The code declaring the imported resources is in {}.",
                    out.display()
                );
            }
        }
        None if args.json => {}
        None => {
            outln!(
                "\nPlease copy the following code into your program. Not doing so will cause \
                 Cairn to report that an update will happen on the next update command.\n"
            );
            if args.protect {
                outln!(
                    "Please note that the imported resources are marked as protected. To \
                     destroy them you will need to remove the `protect` option and run `cairn \
                     up` *before* the destroy will take effect.\n"
                );
            }
            outln!("{code}");
        }
    }
    Ok(())
}

/// The import file: `--file`, or the one resource of the arguments (`--parent`,
/// `--provider`, `--properties` belong to it); and the name errors give it.
fn import_file(context: &Context, args: &ImportArgs) -> Result<(String, ImportFile)> {
    if let Some(path) = &args.file {
        if !args.resource.is_empty()
            || args.parent.is_some()
            || args.provider.is_some()
            || !args.properties.is_empty()
        {
            bail!("an inline resource may not be specified in conjunction with an import file");
        }
        // Relative to the directory cairn runs in (`--cwd`).
        let text = std::fs::read_to_string(context.cwd.join(path))
            .with_context(|| format!("could not read import file {}", path.display()))?;
        let name = path.display().to_string();
        let parsed = file::parse(&name, &text)?;
        return Ok((name, parsed));
    }
    let missing = "an inline resource must be specified if no import file is used, missing";
    let [ty, name, id] = match args.resource.as_slice() {
        [] => bail!("{missing} type, name, and id"),
        [_] => bail!("{missing} name and id"),
        [_, _] => bail!("{missing} id"),
        [ty, name, id] => [ty, name, id],
        _ => bail!("only expected at most three arguments"),
    };
    let mut import = ImportFile::default();
    let mut spec = Spec {
        resource_type: ty.clone(),
        name: name.clone(),
        id: id.clone(),
        properties: args.properties.clone(),
        ..Spec::default()
    };
    if let Some(parent) = &args.parent {
        let (name, urn) = file::name_and_urn("--parent", parent, "parent")?;
        import.name_table.insert(name.clone(), urn);
        spec.parent = Some(name);
    }
    if let Some(provider) = &args.provider {
        let (name, urn) = file::name_and_urn("--provider", provider, "provider")?;
        if import.name_table.contains_key(&name) {
            bail!("provider and parent must have distinct names, both were '{name}'");
        }
        import.name_table.insert(name.clone(), urn);
        spec.provider = Some(name);
    }
    import.resources.push(spec);
    Ok(("the command line".to_owned(), import))
}

/// The program code declaring what `outcome` recorded for `resolved`'s resources.
fn generate(
    context: &Context,
    workspace: &crate::workspace::Workspace,
    resolved: &Resolved,
    outcome: &Outcome,
    language: Language,
) -> Result<String> {
    let states: IndexMap<&Urn, &ResourceState> = outcome
        .snapshot
        .resources
        .iter()
        .filter(|r| !r.delete)
        .map(|r| (&r.urn, r))
        .collect();
    let mut names: IndexMap<Urn, String> = resolved
        .name_table
        .iter()
        .map(|(name, urn)| (urn.clone(), name.clone()))
        .collect();
    for entry in &resolved.resources {
        names.insert(entry.urn.clone(), entry.spec.name.clone());
    }
    let mut resources = Vec::new();
    let mut packages: IndexMap<String, Option<semver::Version>> = IndexMap::new();
    for entry in &resolved.resources {
        let Some(state) = states.get(&entry.urn) else {
            continue;
        };
        let kind = if entry.spec.component {
            codegen::Kind::Component
        } else if entry.is_provider() {
            let package = state.resource_type.name().to_owned();
            packages
                .entry(package.clone())
                .or_insert(entry.spec.version.clone());
            codegen::Kind::Provider { package }
        } else {
            packages
                .entry(state.resource_type.package().to_owned())
                .or_insert(entry.spec.version.clone());
            codegen::Kind::Custom
        };
        let parent = state
            .parent
            .as_ref()
            .filter(|p| p.resource_type() != "pulumi:pulumi:Stack")
            .map(|p| names.get(p).cloned().unwrap_or_else(|| p.name().to_owned()));
        let provider = state
            .provider
            .as_ref()
            .filter(|p| entry.provider.as_ref() == Some(&p.urn))
            .map(|p| {
                names
                    .get(&p.urn)
                    .cloned()
                    .unwrap_or_else(|| p.urn.name().to_owned())
            });
        resources.push(codegen::Resource {
            name: entry.spec.name.clone(),
            logical_name: state.urn.name().to_owned(),
            resource_type: state.resource_type.to_string(),
            kind,
            inputs: state
                .inputs
                .iter()
                .map(|(k, v)| (k.clone(), code_value(v)))
                .collect(),
            parent,
            provider,
            protect: state.protect,
        });
    }
    let schemas = schemas(context, workspace, &packages)?;
    let known: Vec<String> = resolved.name_table.keys().cloned().collect();
    Ok(codegen::generate(language, &resources, &schemas, &known)?)
}

/// The schemas of `packages`, from their providers (wasm manifests or gRPC `GetSchema`).
fn schemas(
    context: &Context,
    workspace: &crate::workspace::Workspace,
    packages: &IndexMap<String, Option<semver::Version>>,
) -> Result<IndexMap<String, PackageSpec>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let stack = Stack::current(workspace)?;
    let config_file = stack.load_config()?;
    let crypter = stack.secrets(&config_file)?;
    let resolved = config_file.resolve(Some(&crypter), &workspace.project)?;
    let wasm = crate::providers::runtime(&context.home)?;
    let loader = crate::providers::loader(
        &wasm,
        &context.home,
        &workspace.backend,
        &workspace.dir,
        &workspace.project,
        &resolved,
        Arc::new(NullSink),
        false,
    )?;
    let native = crate::program::native_plugins(&workspace.project);
    let mut schemas = IndexMap::new();
    for (package, version) in packages {
        let text = runtime.block_on(async {
            let provider = loader
                .load(package, version.as_ref(), native)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            provider
                .get_schema()
                .await
                .map_err(|e| anyhow::anyhow!("getting the schema of package {package:?}: {e}"))
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let schema = PackageSpec::from_json(&text)
            .with_context(|| format!("reading the schema of package {package:?}"))?;
        schemas.insert(package.clone(), schema);
    }
    Ok(schemas)
}

/// A recorded value in code generation's terms.
fn code_value(value: &PropertyValue) -> codegen::Value {
    use cairn_engine::asset::{ArchiveMember, ArchiveSource, AssetSource};
    let asset = |a: &cairn_engine::asset::Asset| match &a.source {
        AssetSource::Text(t) => codegen::Asset::Text(t.clone()),
        AssetSource::Path(p) => codegen::Asset::Path(p.clone()),
        AssetSource::Uri(u) => codegen::Asset::Uri(u.clone()),
        _ => codegen::Asset::Text(String::new()),
    };
    fn archive(
        a: &cairn_engine::asset::Archive,
        asset: &dyn Fn(&cairn_engine::asset::Asset) -> codegen::Asset,
    ) -> codegen::Archive {
        match &a.source {
            ArchiveSource::Path(p) => codegen::Archive::Path(p.clone()),
            ArchiveSource::Uri(u) => codegen::Archive::Uri(u.clone()),
            ArchiveSource::Assets(members) => codegen::Archive::Assets(
                members
                    .iter()
                    .map(|(k, m)| {
                        let member = match m {
                            ArchiveMember::Asset(x) => codegen::ArchiveMember::Asset(asset(x)),
                            ArchiveMember::Archive(x) => {
                                codegen::ArchiveMember::Archive(archive(x, asset))
                            }
                        };
                        (k.clone(), member)
                    })
                    .collect(),
            ),
            _ => codegen::Archive::Assets(IndexMap::new()),
        }
    }
    match value {
        PropertyValue::Null => codegen::Value::Null,
        PropertyValue::Bool(b) => codegen::Value::Bool(*b),
        PropertyValue::Number(n) => codegen::Value::Number(*n),
        PropertyValue::String(s) => codegen::Value::String(s.clone()),
        PropertyValue::Array(items) => {
            codegen::Value::Array(items.iter().map(code_value).collect())
        }
        PropertyValue::Object(map) => codegen::Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), code_value(v)))
                .collect(),
        ),
        PropertyValue::Secret(inner) => codegen::Value::Secret(Box::new(code_value(inner))),
        PropertyValue::Asset(a) => codegen::Value::Asset(asset(a)),
        PropertyValue::Archive(a) => codegen::Value::Archive(archive(a, &asset)),
        PropertyValue::Output(o) => {
            let inner = o
                .value
                .as_deref()
                .map(code_value)
                .unwrap_or(codegen::Value::Unknown);
            if o.secret {
                codegen::Value::Secret(Box::new(inner))
            } else {
                inner
            }
        }
        _ => codegen::Value::Unknown,
    }
}
