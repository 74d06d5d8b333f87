//! `cairn state`: edit a stack's recorded state directly (delete, protect, unprotect, repair),
//! and `cairn stack clear-pending`. No provider is called: only the state changes.

use std::io::BufRead;

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_backend::operation_verb;
use cairn_engine::state::edit::{self, EditError};
use cairn_engine::state::{SecretsMode, Snapshot, encode_deployment, verify_integrity};
use cairn_engine::urn::Urn;
use clap::{Args, Subcommand};

use crate::stack::Stack;
use crate::terminal::{outln, prompt, quoted};
use crate::workspace::{Context, Workspace};

#[derive(Debug, Args)]
pub struct StateArgs {
    #[command(subcommand)]
    command: StateCommand,
}

#[derive(Debug, Subcommand)]
enum StateCommand {
    /// Remove a resource from the stack's state; the real resource is left alone.
    Delete {
        /// The URN of the resource.
        urn: String,
        /// Remove it even if it is protected.
        #[arg(long)]
        force: bool,
        /// Also remove the resources that depend on it.
        #[arg(long)]
        target_dependents: bool,
        /// Do not ask for confirmation.
        #[arg(short, long)]
        yes: bool,
    },
    /// Protect a resource (or all) from deletion.
    Protect(ProtectArgs),
    /// Remove the protection of a resource (or all).
    Unprotect(ProtectArgs),
    /// Mark resources to be replaced by the next update.
    Taint {
        /// The URNs of the resources.
        #[arg(required = true)]
        urns: Vec<String>,
        /// Accepted for Pulumi's scripts (the edit asks nothing).
        #[arg(short, long)]
        yes: bool,
    },
    /// Clear the taint of resources (or all).
    Untaint {
        /// The URNs of the resources.
        #[arg(required_unless_present = "all")]
        urns: Vec<String>,
        /// Every resource of the stack.
        #[arg(long, conflicts_with = "urns")]
        all: bool,
        /// Accepted for Pulumi's scripts (the edit asks nothing).
        #[arg(short, long)]
        yes: bool,
    },
    /// Move resources (and their children) to another stack of the project.
    Move(crate::commands::state_move::MoveArgs),
    /// Fix the integrity problems of the stack's state that can be fixed safely (order,
    /// references to resources that are not in the state, identical duplicate entries),
    /// showing the changes first.
    Repair {
        /// Do not ask for confirmation.
        #[arg(short, long)]
        yes: bool,
    },
}

#[derive(Debug, Args)]
struct ProtectArgs {
    /// The URN of the resource.
    #[arg(required_unless_present = "all")]
    urn: Option<String>,
    /// Every resource of the stack.
    #[arg(long, conflicts_with = "urn")]
    all: bool,
}

pub fn run(context: &Context, args: StateArgs) -> Result<()> {
    let workspace = context.project()?;
    match args.command {
        StateCommand::Delete {
            urn,
            force,
            target_dependents,
            yes,
        } => delete(&workspace, &urn, force, target_dependents, yes),
        StateCommand::Protect(args) => protect(&workspace, args, true),
        StateCommand::Unprotect(args) => protect(&workspace, args, false),
        StateCommand::Taint { urns, yes: _ } => taint(&workspace, Some(&urns), true),
        StateCommand::Untaint { urns, all, yes: _ } => {
            taint(&workspace, (!all).then_some(&urns[..]), false)
        }
        StateCommand::Repair { yes } => repair(&workspace, yes),
        StateCommand::Move(args) => crate::commands::state_move::run(&workspace, args),
    }
}

fn parse_urn(urn: &str) -> Result<Urn> {
    Urn::parse(urn).with_context(|| format!("{} is not a resource URN", quoted(urn)))
}

/// Loads the current stack's state under its lock (recovering an interrupted deployment's
/// journal first), lets `change` edit it, checks it, and saves it. Nothing is saved if `change`
/// fails or returns `false`.
fn edit_state(
    workspace: &Workspace,
    command: &str,
    change: impl FnOnce(&Stack, &mut Snapshot) -> Result<bool>,
) -> Result<()> {
    let stack = Stack::current(workspace)?;
    let project = stack.project();
    let backend = &workspace.backend;
    let lock = backend.lock(project, &stack.name, command)?;
    let config = stack.load_config()?;
    let crypter = stack.secrets(&config)?;
    let mut snapshot = backend
        .recover_snapshot(&lock, project, &stack.name, &crypter)?
        .ok_or_else(|| anyhow!("stack {:?} has no state to edit", stack.name))?;
    if !change(&stack, &mut snapshot)? {
        return Ok(());
    }
    verify_integrity(&snapshot).context("the edited state is inconsistent; nothing was saved")?;
    let stored = encode_deployment(&snapshot, SecretsMode::Encrypt(&crypter))?;
    Ok(backend.save(&lock, project, &stack.name, stored)?)
}

fn delete(
    workspace: &Workspace,
    urn: &str,
    force: bool,
    target_dependents: bool,
    yes: bool,
) -> Result<()> {
    let urn = parse_urn(urn)?;
    let mut removed = Vec::new();
    edit_state(workspace, "cairn state delete", |stack, snapshot| {
        removed = edit::delete_resource(snapshot, &urn, force, target_dependents).map_err(|e| {
            let hint = match &e {
                EditError::Protected(_) => {
                    "; unprotect it with `cairn state unprotect`, or pass --force"
                }
                EditError::HasDependents { .. } => {
                    "\nDelete those first, or pass --target-dependents to delete them too"
                }
                EditError::NotFound(_) => "",
            };
            anyhow!("{e}{hint}")
        })?;
        if !yes {
            let mut question = format!(
                "This removes {} resource{} from the state of stack {:?} (the real resources are left alone):",
                removed.len(),
                if removed.len() == 1 { "" } else { "s" },
                stack.name
            );
            for urn in &removed {
                question.push_str(&format!("\n    {urn}"));
            }
            confirm(workspace, &question, "deleting resources from the state")?;
        }
        Ok(true)
    })?;
    for urn in &removed {
        outln!("Deleted {urn} from the state.");
    }
    Ok(())
}

fn protect(workspace: &Workspace, args: ProtectArgs, protect: bool) -> Result<()> {
    let urn = args.urn.as_deref().map(parse_urn).transpose()?;
    let (verb, command) = if protect {
        ("protected", "cairn state protect")
    } else {
        ("unprotected", "cairn state unprotect")
    };
    let mut changed = 0;
    edit_state(workspace, command, |_, snapshot| {
        changed = edit::set_protect(snapshot, urn.as_ref(), protect)?;
        Ok(changed > 0)
    })?;
    match (&urn, changed) {
        (Some(urn), 0) => outln!("{urn} is already {verb}."),
        (Some(urn), _) => outln!("{} {urn}.", capitalized(verb)),
        (None, n) => outln!(
            "{} {n} resource{}.",
            capitalized(verb),
            if n == 1 { "" } else { "s" }
        ),
    }
    Ok(())
}

/// `cairn state taint` / `untaint` (`urns: None`: every resource), reported in Pulumi's words.
fn taint(workspace: &Workspace, urns: Option<&[String]>, taint: bool) -> Result<()> {
    let urns = urns
        .map(|urns| {
            urns.iter()
                .map(|u| parse_urn(u))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    let command = if taint {
        "cairn state taint"
    } else {
        "cairn state untaint"
    };
    let mut count = 0;
    edit_state(workspace, command, |_, snapshot| {
        count = edit::set_taint(snapshot, urns.as_deref(), taint)?;
        Ok(count > 0)
    })?;
    match (taint, &urns) {
        (false, None) => outln!("All resources untainted"),
        (true, _) => outln!("{count} resources tainted"),
        (false, Some(_)) => outln!("{count} resources untainted"),
    }
    Ok(())
}

/// `cairn state repair`: works on the state as stored (with an interrupted deployment's
/// journal replayed, so no completed operation is lost), without decrypting anything.
fn repair(workspace: &Workspace, yes: bool) -> Result<()> {
    let stack = Stack::current(workspace)?;
    let project = stack.project();
    let backend = &workspace.backend;
    let lock = backend.lock(project, &stack.name, "cairn state repair")?;
    let mut deployment = backend
        .recover_as_stored(&lock, project, &stack.name)?
        .ok_or_else(|| anyhow!("stack {:?} has no state to repair", stack.name))?;
    let report = cairn_engine::state::repair::repair(&mut deployment.resources);
    if report.repairs.is_empty() {
        return match report.remaining {
            None => {
                outln!(
                    "The state of stack {:?} passes its integrity check; nothing to repair.",
                    stack.name
                );
                Ok(())
            }
            Some(problems) => Err(anyhow!(
                "{problems}\nNone of these can be fixed safely by `cairn state repair`; edit the state by hand (`cairn stack export`, then `cairn stack import`)"
            )),
        };
    }
    let mut changes = format!(
        "Repairing the state of stack {:?} makes {} change{}:",
        stack.name,
        report.repairs.len(),
        if report.repairs.len() == 1 { "" } else { "s" }
    );
    for repair in &report.repairs {
        changes.push_str(&format!("\n    {repair}"));
    }
    outln!("{changes}");
    if !yes {
        confirm(workspace, "Save the repaired state?", "repairing the state")?;
    }
    backend.save(&lock, project, &stack.name, deployment)?;
    match report.remaining {
        None => {
            outln!("Repaired; the state passes its integrity check.");
            Ok(())
        }
        Some(problems) => Err(anyhow!(
            "saved the repairs, but {problems}\nThese cannot be fixed safely by `cairn state repair`; edit the state by hand (`cairn stack export`, then `cairn stack import`)"
        )),
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `cairn stack clear-pending`: forgets the operations an interrupted deployment left pending.
pub fn clear_pending(workspace: &Workspace, yes: bool) -> Result<()> {
    let mut cleared = Vec::new();
    let mut name = String::new();
    edit_state(workspace, "cairn stack clear-pending", |stack, snapshot| {
        name = stack.name.clone();
        if snapshot.pending_operations.is_empty() {
            return Ok(false);
        }
        let mut question = format!(
            "Stack {:?} has {} pending operation{}:",
            stack.name,
            snapshot.pending_operations.len(),
            if snapshot.pending_operations.len() == 1 {
                ""
            } else {
                "s"
            }
        );
        for op in &snapshot.pending_operations {
            question.push_str(&format!("\n    {} {}", operation_verb(op), op.resource.urn));
        }
        outln!("{question}");
        if !yes {
            confirm(
                workspace,
                "Forget them? The resources they were changing may exist; refresh or import them later.",
                "clearing pending operations",
            )?;
        }
        cleared = edit::clear_pending(snapshot);
        Ok(true)
    })?;
    if cleared.is_empty() {
        outln!("Stack {name:?} has no pending operations.");
    } else {
        outln!(
            "Cleared {} pending operation{}.",
            cleared.len(),
            if cleared.len() == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

/// Asks a yes/no question; non-interactively, refuses (the user must pass --yes).
fn confirm(workspace: &Workspace, question: &str, what: &str) -> Result<()> {
    if !workspace.context.interactive {
        bail!("{what} needs confirmation: pass --yes");
    }
    prompt(&format!("{question}\nContinue? [y/N] "));
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
        bail!("cancelled; the state is unchanged");
    }
    Ok(())
}
