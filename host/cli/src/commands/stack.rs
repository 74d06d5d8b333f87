//! `cairn stack`: create, list, select, remove, export and import stacks.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_engine::state::{
    DEPLOYMENT_VERSION, SecretsMode, Snapshot, UntypedDeployment, codec, decode_deployment,
    decode_untyped_deployment, encode_deployment, verify_integrity,
};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::stack::Stack;
use crate::terminal::{field, json_pretty, outln, prompt, quoted};
use crate::workspace::{Context, Workspace};

#[derive(Debug, Args)]
pub struct StackArgs {
    #[command(subcommand)]
    command: Option<StackCommand>,
    /// `cairn stack`: also print each resource's URN.
    #[arg(long)]
    show_urns: bool,
}

#[derive(Debug, Subcommand)]
enum StackCommand {
    /// Create a new stack and select it.
    Init {
        /// The stack's name, e.g. `dev`.
        name: String,
    },
    /// List the project's stacks.
    Ls {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Select the stack later commands act on.
    Select {
        name: String,
        /// Create the stack if it does not exist.
        #[arg(short, long)]
        create: bool,
    },
    /// Remove a stack and its settings file.
    Rm {
        /// The stack to remove (default: the selected one).
        name: Option<String>,
        /// Remove the stack even if it still records resources.
        #[arg(short, long)]
        force: bool,
        /// Keep the stack's Pulumi.<stack>.yaml settings file.
        #[arg(long)]
        preserve_config: bool,
        /// Do not ask for confirmation.
        #[arg(short, long)]
        yes: bool,
    },
    /// Print the stack's outputs (secrets masked unless --show-secrets).
    Output {
        /// Print only this output's value.
        name: Option<String>,
        /// Print JSON.
        #[arg(long, conflicts_with = "shell")]
        json: bool,
        /// Print `NAME=VALUE` lines a POSIX shell can `eval` (values quoted).
        #[arg(long)]
        shell: bool,
        /// Show secret values (asks for the passphrase).
        #[arg(long)]
        show_secrets: bool,
    },
    /// Print the stack's deployment state as JSON.
    Export {
        /// Write to FILE instead of standard output.
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// Decrypt secrets and show them in plaintext.
        #[arg(long)]
        show_secrets: bool,
    },
    /// Replace the stack's deployment state with an edited or exported one.
    Import {
        /// The deployment to import (`{"version": 3, "deployment": …}`); standard input if absent.
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// Rename the stack: its state (every URN), history, tags and settings file.
    Rename {
        /// The new name.
        new_name: String,
    },
    /// Show the stack's updates, newest first.
    History(crate::commands::stack_info::HistoryArgs),
    /// Write the stack's resource graph (dependencies and parents) as DOT or SVG.
    Graph(crate::commands::stack_graph::GraphArgs),
    /// Set, get, list and remove the stack's tags.
    Tag(crate::commands::stack_info::TagArgs),
    /// Forget the operations an interrupted deployment left pending.
    ClearPending {
        /// Do not ask for confirmation.
        #[arg(short, long)]
        yes: bool,
    },
}

pub fn run(context: &Context, args: StackArgs) -> Result<()> {
    let workspace = context.project()?;
    match args.command {
        None => show(&workspace, args.show_urns),
        Some(StackCommand::Init { name }) => init(&workspace, &name),
        Some(StackCommand::Ls { json }) => ls(&workspace, json),
        Some(StackCommand::Select { name, create }) => select(&workspace, &name, create),
        Some(StackCommand::Rm {
            name,
            force,
            preserve_config,
            yes,
        }) => rm(&workspace, name, force, preserve_config, yes),
        Some(StackCommand::Export { file, show_secrets }) => export(&workspace, file, show_secrets),
        Some(StackCommand::Output {
            name,
            json,
            shell,
            show_secrets,
        }) => {
            let format = match (json, shell) {
                (true, _) => OutputFormat::Json,
                (_, true) => OutputFormat::Shell,
                _ => OutputFormat::Text,
            };
            output(&workspace, name.as_deref(), format, show_secrets)
        }
        Some(StackCommand::Import { file }) => import(&workspace, file),
        Some(StackCommand::Rename { new_name }) => rename(&workspace, &new_name),
        Some(StackCommand::History(args)) => {
            let stack = Stack::current(&workspace)?;
            crate::commands::stack_info::history(&workspace, &stack.name, args)
        }
        Some(StackCommand::Graph(args)) => crate::commands::stack_graph::run(&workspace, args),
        Some(StackCommand::Tag(args)) => {
            let stack = Stack::current(&workspace)?;
            crate::commands::stack_info::tag(&workspace, &stack.name, args)
        }
        Some(StackCommand::ClearPending { yes }) => {
            crate::commands::state::clear_pending(&workspace, yes)
        }
    }
}

/// `cairn stack`: what the current stack holds.
fn show(workspace: &Workspace, show_urns: bool) -> Result<()> {
    let stack = Stack::current(workspace)?;
    let deployment = workspace.backend.latest(stack.project(), &stack.name)?;
    outln!("Current stack is {}:", stack.name);
    outln!("    Backend: {}", workspace.backend.url());
    match &deployment {
        Some(d) if !d.resources.is_empty() => {
            outln!("    Last update: {}", field(&d.manifest.time));
            outln!("    Resources: {}", d.resources.len());
            for resource in &d.resources {
                outln!(
                    "        {:<40} {}",
                    field(resource.resource_type.as_str()),
                    field(resource.urn.name())
                );
                if show_urns {
                    outln!("            URN: {}", field(resource.urn.as_str()));
                }
            }
        }
        _ => outln!("    The stack has no resources."),
    }
    if let Some(d) = &deployment
        && !d.pending_operations.is_empty()
    {
        outln!(
            "    Pending operations: {} (interrupted; run `cairn refresh`)",
            d.pending_operations.len()
        );
    }
    Ok(())
}

/// `cairn stack init` (also `cairn new`'s stack): create the stack and select it.
pub fn init(workspace: &Workspace, name: &str) -> Result<()> {
    let name = workspace.parse_stack_name(name, "given to `cairn stack init`")?;
    let project = workspace.name();
    if workspace.backend.stack_exists(project, &name)? {
        bail!("stack {name:?} already exists");
    }
    let stack = Stack {
        workspace,
        name: name.clone(),
    };
    let lock = workspace.backend.lock(project, &name, "cairn stack init")?;
    // Keep a settings file that already exists (e.g. committed config), adding a secrets
    // provider if it has none.
    let mut config = stack.load_config()?;
    stack.secrets_or_create(&mut config)?;
    let snapshot = Snapshot::empty(stack.secrets_provider(&config)?);
    let deployment = encode_deployment(&snapshot, SecretsMode::Plaintext)?;
    stack.save_config(&config)?;
    workspace
        .backend
        .create(&lock, project, &name, deployment)?;
    workspace.select_stack(Some(&name))?;
    outln!("Created stack {name:?}.");
    Ok(())
}

fn ls(workspace: &Workspace, json: bool) -> Result<()> {
    let stacks = workspace.backend.list_stacks(workspace.name())?;
    let current = workspace.selected_stack()?;
    if json {
        let rows: Vec<_> = stacks
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "current": current.as_deref() == Some(s.name.as_str()),
                    "lastUpdate": s.last_update,
                    "resourceCount": s.resource_count,
                })
            })
            .collect();
        outln!("{}", json_pretty(&rows)?);
        return Ok(());
    }
    if stacks.is_empty() {
        outln!(
            "No stacks for project {:?}; create one with `cairn stack init <name>`.",
            workspace.name()
        );
        return Ok(());
    }
    outln!("{:<24} {:<32} RESOURCE COUNT", "NAME", "LAST UPDATE");
    for s in stacks {
        let marker = if current.as_deref() == Some(s.name.as_str()) {
            "*"
        } else {
            ""
        };
        outln!(
            "{:<24} {:<32} {}",
            format!("{}{marker}", s.name),
            field(s.last_update.as_deref().unwrap_or("never")),
            s.resource_count
        );
    }
    Ok(())
}

fn select(workspace: &Workspace, name: &str, create: bool) -> Result<()> {
    let name = workspace.parse_stack_name(name, "given to `cairn stack select`")?;
    if !workspace.backend.stack_exists(workspace.name(), &name)? {
        if create {
            return init(workspace, &name);
        }
        bail!("stack {name:?} does not exist; create it with `cairn stack init {name}`");
    }
    workspace.select_stack(Some(&name))?;
    outln!("Selected stack {name:?}.");
    Ok(())
}

fn rm(
    workspace: &Workspace,
    name: Option<String>,
    force: bool,
    preserve_config: bool,
    yes: bool,
) -> Result<()> {
    let name = match name {
        Some(name) => workspace.parse_stack_name(&name, "given to `cairn stack rm`")?,
        None => workspace.current_stack()?,
    };
    let project = workspace.name();
    let lock = workspace.backend.lock(project, &name, "cairn stack rm")?;
    let deployment = workspace.backend.latest_as_stored(project, &name)?;
    let count = deployment.as_ref().map_or(0, |d| d.resources.len());
    if count > 0 && !force {
        bail!(
            "stack {name:?} still has {count} resource{}; destroy them first (`cairn destroy`) or pass --force to forget them",
            if count == 1 { "" } else { "s" }
        );
    }
    if !yes {
        confirm(workspace, &name)?;
    }
    // The state, the settings file and the selection go together: Ctrl-C waits for all three.
    let _writing = cairn_backend::writes::section();
    workspace.backend.remove(&lock, project, &name)?;
    let stack = Stack {
        workspace,
        name: name.clone(),
    };
    let config_path = stack.config_path()?;
    if !preserve_config && config_path.exists() {
        std::fs::remove_file(&config_path)
            .with_context(|| format!("removing {}", config_path.display()))?;
    }
    if workspace.selected_stack()?.is_none() {
        workspace.select_stack(None)?;
    }
    outln!("Removed stack {name:?}.");
    Ok(())
}

/// `cairn stack rename`: the state with its URNs rewritten moves to the new name with its
/// history and tags (one transaction on PostgreSQL), then the settings file follows.
fn rename(workspace: &Workspace, new_name: &str) -> Result<()> {
    use cairn_engine::state::moves::{StackId, rename_stack};

    let stack = Stack::current(workspace)?;
    let new = workspace.parse_stack_name(new_name, "given to `cairn stack rename`")?;
    let project = stack.project();
    if new == stack.name {
        bail!("stack {new:?} already has that name");
    }
    let backend = &workspace.backend;
    if backend.stack_exists(project, &new)? {
        bail!("stack {new:?} already exists");
    }
    let old_settings = stack.config_path()?;
    let new_settings = workspace.stack_config_path(&new)?;
    if new_settings.exists() {
        bail!(
            "{} already exists: move it away first (it would become the renamed stack's settings)",
            workspace.display_path(&new_settings)
        );
    }
    let old_lock = backend.lock(project, &stack.name, "cairn stack rename")?;
    let new_lock = backend.lock(project, &new, "cairn stack rename")?;
    let config = stack.load_config()?;
    let crypter = stack.secrets(&config)?;
    let mut snapshot = backend
        .recover_snapshot(&old_lock, project, &stack.name, &crypter)?
        .ok_or_else(|| anyhow!("stack {:?} has no state", stack.name))?;
    rename_stack(
        &mut snapshot,
        StackId {
            project,
            stack: &stack.name,
        },
        &new,
        None,
    )?;
    verify_integrity(&snapshot)
        .context("the renamed state is inconsistent; nothing was changed")?;
    let stored = encode_deployment(&snapshot, SecretsMode::Encrypt(&crypter))?;
    // The state, the settings file and the selection move together: Ctrl-C waits for all.
    let _writing = cairn_backend::writes::section();
    backend.rename(&old_lock, &new_lock, project, &stack.name, &new, &stored)?;
    if old_settings.exists() {
        std::fs::rename(&old_settings, &new_settings).with_context(|| {
            format!(
                "the stack was renamed, but moving {} to {} failed: move it by hand",
                old_settings.display(),
                new_settings.display()
            )
        })?;
    }
    if workspace.selected_stack().ok().flatten().is_none() {
        workspace.select_stack(Some(&new))?;
    }
    outln!("Renamed stack {:?} to {new:?}.", stack.name);
    Ok(())
}

/// Asks the user to type the stack's name before a destructive change.
fn confirm(workspace: &Workspace, name: &str) -> Result<()> {
    if !workspace.context.interactive {
        bail!("removing stack {name:?} needs confirmation: pass --yes");
    }
    prompt(&format!(
        "This removes stack {name:?} and its state. Type its name to confirm: "
    ));
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if answer.trim() != name {
        bail!("confirmation did not match; nothing was removed");
    }
    Ok(())
}

/// Decrypts nothing: secrets decode as a masked placeholder (for reading without a passphrase).
struct Masked;

impl cairn_engine::secrets::Crypter for Masked {
    fn encrypt(&self, _: &str) -> Result<String, cairn_engine::secrets::SecretsError> {
        Err(cairn_engine::secrets::SecretsError::Decrypt)
    }
    fn decrypt(&self, _: &str) -> Result<String, cairn_engine::secrets::SecretsError> {
        Ok("null".to_owned())
    }
}

/// `cairn stack output`: the root stack resource's outputs.
/// How `stack output` prints.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OutputFormat {
    Text,
    Json,
    Shell,
}

/// One output as a `NAME=VALUE` shell line, as Pulumi's `--shell` writes it: strings as they
/// are, other values as JSON, secrets masked unless shown, the value quoted.
fn shell_line(
    name: &str,
    value: &cairn_engine::value::PropertyValue,
    show_secrets: bool,
) -> String {
    let json = crate::display::json::value_to_json(value, show_secrets);
    let text = match json {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    };
    format!(
        "{}={}",
        crate::terminal::field(name),
        crate::shell::quote(&text)
    )
}

fn output(
    workspace: &Workspace,
    name: Option<&str>,
    format: OutputFormat,
    show_secrets: bool,
) -> Result<()> {
    let json = format == OutputFormat::Json;
    use crate::display::format::format_value;
    use crate::display::json::value_to_json;
    let stack = Stack::current(workspace)?;
    let deployment = workspace.backend.latest(stack.project(), &stack.name)?;
    let outputs = match deployment {
        None => cairn_engine::value::PropertyMap::new(),
        Some(deployment) => {
            let snapshot = if show_secrets {
                let config = stack.load_config()?;
                let crypter = stack.secrets(&config)?;
                decode_deployment(deployment, Some(&crypter))?
            } else {
                decode_deployment(deployment, Some(&Masked))?
            };
            snapshot
                .resources
                .into_iter()
                .find(|r| r.parent.is_none() && r.resource_type.as_str() == "pulumi:pulumi:Stack")
                .map(|r| r.outputs)
                .unwrap_or_default()
        }
    };
    if let Some(name) = name {
        let value = outputs.get(name).ok_or_else(|| {
            anyhow!(
                "stack {:?} has no output {} (it has: {})",
                stack.name,
                quoted(name),
                outputs
                    .keys()
                    .map(|k| field(k).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        if format == OutputFormat::Shell {
            outln!("{}", shell_line(name, value, show_secrets));
        } else if json {
            outln!("{}", json_pretty(&value_to_json(value, show_secrets))?);
        } else {
            // One value alone: a multi-line string keeps its lines.
            match value {
                cairn_engine::value::PropertyValue::String(s) => outln!("{s}"),
                other => outln!("{}", format_value(other, show_secrets)),
            }
        }
        return Ok(());
    }
    if format == OutputFormat::Shell {
        let mut names: Vec<&String> = outputs.keys().collect();
        names.sort();
        for name in names {
            outln!(
                "{}",
                shell_line(name, &outputs[name.as_str()], show_secrets)
            );
        }
        return Ok(());
    }
    if json {
        let map: serde_json::Map<String, serde_json::Value> = outputs
            .iter()
            .map(|(k, v)| (k.clone(), value_to_json(v, show_secrets)))
            .collect();
        outln!("{}", json_pretty(&map)?);
        return Ok(());
    }
    if outputs.is_empty() {
        outln!("The stack has no outputs.");
        return Ok(());
    }
    outln!("Current stack outputs ({}):", outputs.len());
    // One row per output: keys and string values with their line breaks escaped.
    let rows: Vec<(String, String)> = outputs
        .iter()
        .map(|(key, value)| {
            let text = match value {
                cairn_engine::value::PropertyValue::String(s) => field(s).into_owned(),
                other => format_value(other, show_secrets),
            };
            (field(key).into_owned(), text)
        })
        .collect();
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    outln!("    {:<width$}  VALUE", "OUTPUT");
    for (key, text) in rows {
        outln!("    {key:<width$}  {text}");
    }
    Ok(())
}

fn export(workspace: &Workspace, file: Option<PathBuf>, show_secrets: bool) -> Result<()> {
    let stack = Stack::current(workspace)?;
    let deployment = workspace
        .backend
        .latest_as_stored(stack.project(), &stack.name)?
        .ok_or_else(|| anyhow!("stack {:?} has no deployment to export", stack.name))?;
    let deployment = if show_secrets {
        let config = stack.load_config()?;
        let crypter = stack.secrets(&config)?;
        let snapshot = decode_deployment(deployment, Some(&crypter))?;
        encode_deployment(&snapshot, SecretsMode::Plaintext)?
    } else {
        // Stored form: secrets stay ciphertext, no passphrase needed.
        deployment
    };
    let untyped = UntypedDeployment {
        version: DEPLOYMENT_VERSION,
        deployment: serde_json::to_value(deployment)?,
    };
    // Control characters in strings are escaped (losslessly), so the document is safe to
    // print and reads back the same.
    let mut text = json_pretty(&untyped)?;
    text.push('\n');
    match file {
        Some(path) => {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(())
}

fn import(workspace: &Workspace, file: Option<PathBuf>) -> Result<()> {
    let stack = Stack::current(workspace)?;
    let (source, text) = match &file {
        Some(path) => (
            path.display().to_string(),
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?,
        ),
        None => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
            ("standard input".to_owned(), text)
        }
    };
    let refuse = |what: String| {
        anyhow!("refusing to import {source} (the stack's state is unchanged): {what}")
    };
    let untyped: UntypedDeployment = serde_json::from_str(&text).map_err(|e| {
        refuse(format!(
            "it is not a {{\"version\", \"deployment\"}} document ({e})"
        ))
    })?;
    let deployment = decode_untyped_deployment(untyped).map_err(|e| refuse(e.to_string()))?;

    let config = stack.load_config()?;
    let stack_crypter = stack.secrets(&config)?;
    // Secrets encrypted by another stack's passphrase provider are opened with that provider's
    // salt; the passphrase is the one in the environment or prompt.
    let foreign_salt = deployment
        .secrets_providers
        .as_ref()
        .and_then(|p| p.state.as_ref())
        .and_then(|state| cairn_engine::secrets::salt_from_provider_state(state).ok())
        .filter(|salt| Some(*salt) != config.encryption_salt.as_deref())
        .map(str::to_owned);
    let snapshot = match foreign_salt {
        Some(salt) if codec::contains_ciphertext(&deployment) => {
            let interactive = workspace.context.interactive;
            let passphrase =
                crate::passphrase::passphrase(interactive, crate::passphrase::Purpose::Open)?;
            let crypter = cairn_engine::secrets::PassphraseCrypter::from_salt(&passphrase, &salt)
                .map_err(|e| refuse(format!("its secrets cannot be decrypted: {e}")))?;
            decode_deployment(deployment, Some(&crypter))
        }
        _ => decode_deployment(deployment, Some(&stack_crypter)),
    }
    .map_err(|e| refuse(e.to_string()))?;
    verify_integrity(&snapshot).map_err(|e| refuse(e.to_string()))?;

    let snapshot = Snapshot {
        secrets_providers: stack.secrets_provider(&config)?,
        ..snapshot
    };
    let stored = encode_deployment(&snapshot, SecretsMode::Encrypt(&stack_crypter))?;
    let lock = workspace
        .backend
        .lock(stack.project(), &stack.name, "cairn stack import")?;
    workspace
        .backend
        .save(&lock, stack.project(), &stack.name, stored)?;
    outln!(
        "Imported {} resource{} into stack {:?}.",
        snapshot.resources.len(),
        if snapshot.resources.len() == 1 {
            ""
        } else {
            "s"
        },
        stack.name
    );
    Ok(())
}
