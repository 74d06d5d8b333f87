//! `cairn state move`: moves resources (with their children) from one stack of the project to
//! another, as Pulumi's `state move` does. Secrets are decrypted with the source's provider
//! and encrypted with the destination's. Both stacks are saved together: one transaction on
//! PostgreSQL; in a directory, the destination first, so an interruption between the two
//! saves leaves the resources in both stacks, never in neither.

use anyhow::{Context as _, Result, anyhow, bail};
use cairn_engine::state::moves::{MoveReport, ProviderOutcome, StackId, move_resources};
use cairn_engine::state::{SecretsMode, decode_deployment, encode_deployment};
use cairn_engine::urn::Urn;
use clap::Args;

use crate::stack::Stack;
use crate::terminal::{outln, quoted};
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub struct MoveArgs {
    /// The URNs of the resources to move (their children move with them).
    #[arg(required = true)]
    urns: Vec<String>,
    /// The stack to move from (default: the current stack).
    #[arg(long, value_name = "STACK")]
    source: Option<String>,
    /// The stack to move to.
    #[arg(long, value_name = "STACK")]
    dest: String,
    /// Also move the parents of the named resources (else they are parented to the
    /// destination's stack).
    #[arg(long)]
    include_parents: bool,
    /// Do not ask for confirmation.
    #[arg(short, long)]
    yes: bool,
}

pub fn run(workspace: &Workspace, args: MoveArgs) -> Result<()> {
    let source_name = match &args.source {
        Some(name) => workspace.parse_stack_name(name, "given to --source")?,
        None => workspace.current_stack()?,
    };
    let dest_name = workspace.parse_stack_name(&args.dest, "given to --dest")?;
    if source_name == dest_name {
        bail!("--source and --dest name the same stack ({dest_name:?})");
    }
    let urns = args
        .urns
        .iter()
        .map(|u| Urn::parse(u).with_context(|| format!("{} is not a resource URN", quoted(u))))
        .collect::<Result<Vec<_>>>()?;
    let project = workspace.name();
    let backend = &workspace.backend;
    for name in [&source_name, &dest_name] {
        if !backend.stack_exists(project, name)? {
            bail!("stack {name:?} does not exist; create it with `cairn stack init {name}`");
        }
    }
    let source = Stack {
        workspace,
        name: source_name,
    };
    let dest = Stack {
        workspace,
        name: dest_name,
    };
    let source_lock = backend.lock(project, &source.name, "cairn state move")?;
    let dest_lock = backend.lock(project, &dest.name, "cairn state move")?;
    let source_state = backend
        .recover(&source_lock, project, &source.name)?
        .ok_or_else(|| anyhow!("stack {:?} has no state", source.name))?;
    let dest_state = backend
        .recover(&dest_lock, project, &dest.name)?
        .ok_or_else(|| anyhow!("stack {:?} has no state", dest.name))?;
    let source_config = source.load_config()?;
    let source_crypter = source.secrets(&source_config)?;
    let mut dest_config = dest.load_config()?;
    let mut moved_source = decode_deployment(source_state, Some(&source_crypter))
        .with_context(|| format!("reading the state of stack {:?}", source.name))?;
    let dest_reader = dest.secrets(&dest_config)?;
    let mut moved_dest = decode_deployment(dest_state, Some(&dest_reader))
        .with_context(|| format!("reading the state of stack {:?}", dest.name))?;
    let report = move_resources(
        &mut moved_source,
        &mut moved_dest,
        StackId {
            project,
            stack: &dest.name,
        },
        &urns,
        args.include_parents,
    )?;
    describe(&report, &source.name, &dest.name);
    if !args.yes {
        confirm(workspace)?;
    }
    // The destination's own provider; created (with a new salt) if the stack has none yet
    // and secrets arrive.
    let dest_crypter = dest.secrets_or_create(&mut dest_config)?;
    dest.save_config(&dest_config)?;
    let stored_dest = encode_deployment(&moved_dest, SecretsMode::Encrypt(&dest_crypter))?;
    let stored_source = encode_deployment(&moved_source, SecretsMode::Encrypt(&source_crypter))?;
    backend
        .save_both(
            project,
            (&source_lock, &source.name, &stored_source),
            (&dest_lock, &dest.name, &stored_dest),
        )
        .context(
            "the move was not completed; in a directory backend the resources may now be in \
             both stacks (never in neither): check with `cairn stack export` and remove them \
             from one with `cairn state delete`",
        )?;
    outln!(
        "Moved {} resource{} from {:?} to {:?}.",
        report.moved.len(),
        if report.moved.len() == 1 { "" } else { "s" },
        source.name,
        dest.name
    );
    Ok(())
}

fn describe(report: &MoveReport, source: &str, dest: &str) {
    outln!("Planning to move the following resources from {source:?} to {dest:?}:");
    for moved in &report.moved {
        outln!("  - {}", moved.from);
    }
    if !report.providers.is_empty() {
        outln!("The providers they use are copied to {dest:?} (they stay in {source:?}):");
        for provider in &report.providers {
            let how = match provider.outcome {
                ProviderOutcome::Copied => "copied",
                ProviderOutcome::AlreadyThere => "already there",
                _ => "an equal provider there is used",
            };
            outln!("  - {} ({how})", provider.from.urn);
        }
    }
    if let Some(root) = &report.created_root {
        outln!("The destination has no stack resource: {root} is created.");
    }
    for urn in &report.not_found {
        outln!("warning: {urn} is not in stack {source:?}; skipped");
    }
    let broken: Vec<_> = report
        .broken_in_source
        .iter()
        .chain(&report.broken_in_dest)
        .collect();
    if !broken.is_empty() {
        outln!("These dependencies cross the two stacks and will be dropped:");
        for dependency in broken {
            outln!("  - {dependency}");
        }
    }
}

fn confirm(workspace: &Workspace) -> Result<()> {
    use std::io::BufRead;
    if !workspace.context.interactive {
        bail!("moving resources between stacks needs confirmation: pass --yes");
    }
    crate::terminal::prompt("Do you want to perform this move? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
        bail!("cancelled; neither stack was changed");
    }
    Ok(())
}
