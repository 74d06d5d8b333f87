//! `cairn stack history` and `cairn stack tag`: what a stack's updates were, and the labels a
//! team puts on stacks. Both read and write through the backend, so they work the same on a
//! directory and on PostgreSQL.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use cairn_backend::UpdateRecord;
use clap::{Args, Subcommand};

use crate::terminal::{field, json_pretty, outln};
use crate::workspace::Workspace;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Print JSON: an array of updates, newest first, as Pulumi's `stack history --json`.
    #[arg(long)]
    json: bool,
    /// Show this many updates per page (0: all).
    #[arg(long, default_value_t = 0, value_name = "N")]
    page_size: usize,
    /// Show this page (from 1) of --page-size updates.
    #[arg(long, default_value_t = 1, value_name = "N")]
    page: usize,
}

#[derive(Debug, Args)]
pub struct TagArgs {
    #[command(subcommand)]
    command: TagCommand,
}

#[derive(Debug, Subcommand)]
enum TagCommand {
    /// Set a tag's value.
    Set { name: String, value: String },
    /// Print a tag's value.
    Get { name: String },
    /// List the stack's tags.
    Ls {
        /// Print JSON: an object of names to values.
        #[arg(long)]
        json: bool,
    },
    /// Remove a tag.
    Rm { name: String },
}

/// `cairn stack history`.
pub fn history(workspace: &Workspace, stack: &str, args: HistoryArgs) -> Result<()> {
    let mut updates = workspace.backend.history(workspace.name(), stack)?;
    updates.reverse();
    if args.page_size > 0 {
        if args.page == 0 {
            bail!("--page counts from 1");
        }
        let skip = (args.page - 1).saturating_mul(args.page_size);
        updates = updates
            .into_iter()
            .skip(skip)
            .take(args.page_size)
            .collect();
    }
    if args.json {
        let json: Vec<serde_json::Value> = updates.iter().map(update_json).collect();
        outln!("{}", json_pretty(&json)?);
        return Ok(());
    }
    if updates.is_empty() {
        outln!("Stack {stack} has never been updated");
        return Ok(());
    }
    outln!("Stack {stack}");
    for update in &updates {
        print_update(update);
    }
    Ok(())
}

/// One update as `stack history --json` prints it: Pulumi's shape, times in RFC 3339.
fn update_json(update: &UpdateRecord) -> serde_json::Value {
    serde_json::json!({
        "version": update.version,
        "kind": update.kind,
        "startTime": rfc3339(update.start_time),
        "message": update.message,
        "environment": update.environment,
        "config": update.config,
        "result": update.result,
        "endTime": rfc3339(update.end_time),
        "resourceChanges": update.resource_changes,
    })
}

fn rfc3339(unix_seconds: i64) -> String {
    chrono::DateTime::from_timestamp(unix_seconds, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| unix_seconds.to_string())
}

fn print_update(update: &UpdateRecord) {
    outln!("Version: {}", update.version);
    outln!("UpdateKind: {}", field(&update.kind));
    outln!("Status: {}", field(&update.result));
    if !update.message.is_empty() {
        outln!("Message: {}", field(&update.message));
    }
    outln!("{}", change_summary(&update.resource_changes));
    outln!("Start Timestamp: {}", rfc3339(update.start_time));
    outln!("End Timestamp: {}", rfc3339(update.end_time));
    for (key, value) in &update.environment {
        outln!("    {}: {}", field(key), field(value));
    }
    outln!("");
}

/// `+2-1~3 4 same` as Pulumi abbreviates an update's changes (creates, deletes, updates),
/// then every other kind by name.
fn change_summary(changes: &BTreeMap<String, u64>) -> String {
    let count = |kind: &str| changes.get(kind).copied().unwrap_or(0);
    let mut text = format!(
        "Resource changes: +{}-{}~{}",
        count("create"),
        count("delete"),
        count("update")
    );
    for (kind, n) in changes {
        if !matches!(kind.as_str(), "create" | "delete" | "update") {
            text.push_str(&format!(" {n} {}", field(kind)));
        }
    }
    text
}

/// `cairn stack tag …`.
pub fn tag(workspace: &Workspace, stack: &str, args: TagArgs) -> Result<()> {
    let project = workspace.name();
    let backend = &workspace.backend;
    match args.command {
        TagCommand::Set { name, value } => {
            check_tag(&name, Some(&value))?;
            Ok(backend.set_tag(project, stack, &name, Some(&value))?)
        }
        TagCommand::Get { name } => {
            check_tag(&name, None)?;
            match tags(workspace, stack)?.get(&name) {
                Some(value) => {
                    outln!("{}", field(value));
                    Ok(())
                }
                None => bail!(
                    "stack {stack:?} has no tag {}",
                    crate::terminal::quoted(&name)
                ),
            }
        }
        TagCommand::Ls { json } => {
            let tags = tags(workspace, stack)?;
            if json {
                outln!("{}", json_pretty(&tags)?);
            } else if tags.is_empty() {
                outln!("This stack has no tags.");
            } else {
                let width = tags
                    .keys()
                    .map(|k| k.chars().count())
                    .max()
                    .unwrap_or(4)
                    .max(4);
                outln!("{:<width$}  VALUE", "NAME");
                for (name, value) in &tags {
                    outln!("{:<width$}  {}", field(name), field(value));
                }
            }
            Ok(())
        }
        TagCommand::Rm { name } => {
            check_tag(&name, None)?;
            if !tags(workspace, stack)?.contains_key(&name) {
                bail!(
                    "stack {stack:?} has no tag {}",
                    crate::terminal::quoted(&name)
                );
            }
            Ok(backend.set_tag(project, stack, &name, None)?)
        }
    }
}

/// The stack's tags: the ones set, and the project's own (`pulumi:project`, …) as Pulumi
/// shows them.
fn tags(workspace: &Workspace, stack: &str) -> Result<BTreeMap<String, String>> {
    let mut tags = workspace.backend.tags(workspace.name(), stack)?;
    for (name, value) in project_tags(workspace) {
        tags.entry(name).or_insert(value);
    }
    Ok(tags)
}

/// The tags Pulumi derives from the project file.
fn project_tags(workspace: &Workspace) -> Vec<(String, String)> {
    let project = &workspace.project;
    let mut tags = vec![
        ("pulumi:project".to_owned(), project.name.clone()),
        ("pulumi:runtime".to_owned(), project.runtime.name.clone()),
    ];
    if let Some(description) = &project.description {
        tags.push(("pulumi:description".to_owned(), description.clone()));
    }
    tags
}

/// Pulumi's rules for tag names and values (a value is checked when one is given).
fn check_tag(name: &str, value: Option<&str>) -> Result<()> {
    cairn_engine::state::moves::check_stack_tag(name, value.unwrap_or_default())?;
    Ok(())
}
