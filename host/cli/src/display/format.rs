//! The text the human modes ([`super::plain`], [`super::live`]) share: step lines, diffs,
//! values, diagnostics, stack outputs and the summary. `cairn stack output` prints values
//! with [`format_value`] too.
//!
//! Symbols and colours are Pulumi's: `+` create (green), `~` update and refresh (yellow),
//! `+-` replace (bright magenta), `++` create-replacement (bright green), `--` delete-replaced
//! (bright red), `-` delete and discard (red), `>` read and `>>` read-replacement (bright cyan),
//! `=` import and `=>` import-replacement (bright blue), blank for same.
//!
//! Every function returns text to print, never prints: names, keys and messages in it are
//! already made visible (see [`crate::terminal`]), and the writer checks the whole again.

use std::fmt::Write as _;
use std::time::Duration;

use cairn_engine::asset::{Archive, ArchiveSource, Asset, AssetSource};
use cairn_engine::deploy::analyzer::{Enforcement, PackSummary, Violation};
use cairn_engine::deploy::events::{
    ChangeKind, Operation, PropertyChange, Severity, StepInfo, StepOp,
};
use cairn_engine::path::{PathElement, PropertyPath};
use cairn_engine::{PropertyMap, PropertyValue, Urn};

use super::{SECRET, UNKNOWN, operation_label};
use crate::terminal::{self, Style};

/// The deployment summary, as [`format_summary`] prints it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SummaryInfo {
    pub operation: Operation,
    pub preview: bool,
    /// Steps per kind, counting only changes (as in `EngineEvent::Summary`).
    pub changes: Vec<(StepOp, usize)>,
    pub unchanged: usize,
    pub duration: Duration,
    pub succeeded: bool,
    /// It stopped because it was interrupted (then `succeeded` is false).
    pub interrupted: bool,
    /// Steps that failed (0 when unknown).
    pub failed_steps: usize,
    /// Resources with an error (a failed step or an error diagnostic; the stack's row holds
    /// the program's): Pulumi's `N errored`.
    pub resources_errored: usize,
    /// Warning diagnostics.
    pub warnings: usize,
    pub colors: bool,
}

/// The symbol shown before a step (`+`, `+-`, ...), Pulumi's.
pub(super) fn op_symbol(op: StepOp) -> &'static str {
    match op {
        StepOp::Same => "",
        StepOp::Create => "+",
        StepOp::Update | StepOp::Refresh => "~",
        StepOp::Delete | StepOp::Discard => "-",
        StepOp::Replace => "+-",
        StepOp::CreateReplacement => "++",
        StepOp::DeleteReplaced => "--",
        StepOp::Read => ">",
        StepOp::ReadReplacement => ">>",
        StepOp::Import => "=",
        StepOp::ImportReplacement => "=>",
    }
}

/// The colour of a step's symbol and status, Pulumi's.
pub(super) fn op_style(op: StepOp) -> Style {
    match op {
        StepOp::Same => Style::PLAIN,
        StepOp::Create => Style::CREATE,
        StepOp::Update | StepOp::Refresh => Style::UPDATE,
        StepOp::Delete | StepOp::Discard => Style::DELETE,
        StepOp::Replace | StepOp::ReadReplacement => Style::REPLACE,
        StepOp::CreateReplacement => Style::CREATE_REPLACEMENT,
        StepOp::DeleteReplaced => Style::DELETE_REPLACED,
        StepOp::Read => Style::READ,
        StepOp::Import | StepOp::ImportReplacement => Style::IMPORT,
    }
}

/// A duration as people read it: `0.4s`, `12.0s`, `2m5s`, `1h0m3s`.
pub(super) fn format_duration(duration: Duration) -> String {
    let total = duration.as_secs();
    if total < 60 {
        format!("{:.1}s", duration.as_secs_f64())
    } else if total < 3600 {
        format!("{}m{}s", total / 60, total % 60)
    } else {
        format!("{}h{}m{}s", total / 3600, total / 60 % 60, total % 60)
    }
}

/// Whether a property key is internal (`__provider`, `__defaults`, ...): Pulumi hides those
/// from diffs, and a dynamic provider's pickled code is one.
fn is_internal_key(key: &str) -> bool {
    key.starts_with("__")
}

/// The top-level key a change is under.
fn top_key(change: &PropertyChange) -> Option<&str> {
    match change.path.elements().first() {
        Some(PathElement::Key(key)) => Some(key.as_str()),
        _ => None,
    }
}

/// The diff summary of an update, replacement or drift, Pulumi's `diff: +added-deleted~updated`
/// (top-level keys, sorted, internal keys left out); `None` without changes.
pub(super) fn diff_summary(step: &StepInfo) -> Option<String> {
    if !matches!(
        step.op,
        StepOp::Update | StepOp::Replace | StepOp::Refresh | StepOp::Import
    ) {
        return None;
    }
    let mut groups: [(char, Vec<String>); 3] =
        [('+', Vec::new()), ('-', Vec::new()), ('~', Vec::new())];
    let mut note = |group: usize, key: &str| {
        let key = terminal::field(key).into_owned();
        if !groups[group].1.contains(&key) {
            groups[group].1.push(key);
        }
    };
    for change in &step.changes {
        let Some(key) = top_key(change).filter(|k| !is_internal_key(k)) else {
            continue;
        };
        // A change below the top level updates the top-level value.
        let group = match (change.kind, change.path.elements().len()) {
            (ChangeKind::Add, 1) => 0,
            (ChangeKind::Delete, 1) => 1,
            _ => 2,
        };
        note(group, key);
    }
    if step.changes.is_empty() {
        for key in step.replace_keys.iter().filter(|k| !is_internal_key(k)) {
            note(2, key);
        }
    }
    if groups.iter().all(|(_, keys)| keys.is_empty()) {
        return None;
    }
    let mut out = String::from("diff: ");
    for (symbol, mut keys) in groups {
        if keys.is_empty() {
            continue;
        }
        keys.sort();
        out.push(symbol);
        out.push_str(&keys.join(","));
    }
    Some(out)
}

/// The diff lines under a step, unindented (`~ tags.env: "dev" => "prod"`).
///
/// Replacement halves (`create-replacement`, ...) and `same` steps show none: the diff of a
/// replacement is shown once, under its `replace` step. An update or replacement without
/// property changes lists its replace keys.
pub(super) fn format_diff(step: &StepInfo, show_secrets: bool) -> Vec<String> {
    if matches!(
        step.op,
        StepOp::Same
            | StepOp::CreateReplacement
            | StepOp::DeleteReplaced
            | StepOp::ReadReplacement
            | StepOp::ImportReplacement
    ) {
        return Vec::new();
    }
    if step.changes.is_empty() {
        if matches!(step.op, StepOp::Update | StepOp::Replace) {
            return step
                .replace_keys
                .iter()
                .map(|key| {
                    format!(
                        "~ {} (forces replacement)",
                        terminal::field(&PropertyPath::key(key.as_str()).to_string())
                    )
                })
                .collect();
        }
        return Vec::new();
    }
    step.changes
        .iter()
        .flat_map(|change| format_change(change, &step.replace_keys, show_secrets))
        .collect()
}

/// Values longer than this are elided in diffs (`"abc…" (4,096 chars)`).
const MAX_VALUE_CHARS: usize = 120;

/// One property change: `~ path: old => new`, `+ path: new` or `- path: old`, with
/// ` (forces replacement)` when the change says so or its top-level key is in `replace_keys`.
/// A string changed on several lines is shown as a line diff under it; internal keys
/// (`__provider`, ...) are left out.
fn format_change(
    change: &PropertyChange,
    replace_keys: &[String],
    show_secrets: bool,
) -> Vec<String> {
    if top_key(change).is_some_and(is_internal_key) {
        return Vec::new();
    }
    let path = terminal::field(&change.path.to_string()).into_owned();
    let shown = |value: &Option<PropertyValue>| {
        value.as_ref().map_or_else(
            || "null".to_owned(),
            |v| elide(format_value(v, show_secrets)),
        )
    };
    let forced = change.replace
        || matches!(change.path.elements().first(),
            Some(PathElement::Key(key)) if replace_keys.iter().any(|k| k == key));
    let forced = if forced { " (forces replacement)" } else { "" };
    if change.kind == ChangeKind::Update
        && let (Some(PropertyValue::String(old)), Some(PropertyValue::String(new))) =
            (&change.old, &change.new)
        && (old.contains('\n') || new.contains('\n'))
    {
        let mut lines = vec![format!("~ {path}: (multi-line){forced}")];
        lines.extend(line_diff(old, new).into_iter().map(|l| format!("    {l}")));
        return lines;
    }
    let line = match (change.kind, &change.old, &change.new) {
        (ChangeKind::Add, _, None) => format!("+ {path}"),
        (ChangeKind::Add, _, new) => format!("+ {path}: {}", shown(new)),
        (ChangeKind::Delete, None, _) => format!("- {path}"),
        (ChangeKind::Delete, old, _) => format!("- {path}: {}", shown(old)),
        (ChangeKind::Update, old, new) => format!("~ {path}: {} => {}", shown(old), shown(new)),
    };
    vec![format!("{line}{forced}")]
}

/// `value` cut to [`MAX_VALUE_CHARS`], saying how long it was.
fn elide(value: String) -> String {
    let count = value.chars().count();
    if count <= MAX_VALUE_CHARS {
        return value;
    }
    let head: String = value.chars().take(MAX_VALUE_CHARS - 20).collect();
    format!("{head}… ({count} chars)")
}

/// The lines of `old` and `new` as a diff: common lines as `  line`, removed `- line`, added
/// `+ line` (a longest-common-subsequence diff; very long texts fall back to all removed, all
/// added). Each line is made visible and elided.
fn line_diff(old: &str, new: &str) -> Vec<String> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let line = |sign: &str, text: &str| {
        format!("{sign} {}", elide(terminal::field(text).into_owned()))
            .trim_end()
            .to_owned()
    };
    if a.len().saturating_mul(b.len()) > 1_000_000 {
        let mut out: Vec<String> = a.iter().map(|l| line("-", l)).collect();
        out.extend(b.iter().map(|l| line("+", l)));
        return out;
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push(line(" ", a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(line("+", b[j]));
            j += 1;
        } else {
            out.push(line("-", a[i]));
            i += 1;
        }
    }
    out
}

/// A resource's detailed diff, Pulumi's "details" block (`--diff`, or "details" at the
/// prompt):
///
/// ```text
///   aws:s3:Bucket (logs):
///     ~ aws:s3:Bucket: (update)
///         [id=logs-1]
///         [urn=urn:pulumi:dev::proj::aws:s3:Bucket::logs]
///       ~ tags.env: "dev" => "prod"
/// ```
pub(super) fn format_details(step: &StepInfo, show_secrets: bool, colors: bool) -> String {
    let kind = terminal::field(&step.resource_type);
    let mut out = format!("  {kind} ({}):\n", terminal::field(step.urn.name()));
    let symbol = op_symbol(step.op);
    let _ = writeln!(
        out,
        "    {}{}{kind}: ({})",
        op_style(step.op).paint(colors, symbol),
        " ".repeat(2 - symbol.chars().count().min(2)),
        step.op.label()
    );
    let id = step
        .old
        .as_ref()
        .and_then(|s| s.id.as_deref())
        .or_else(|| step.new.as_ref().and_then(|s| s.id.as_deref()))
        .filter(|id| !id.is_empty());
    if let Some(id) = id {
        let _ = writeln!(out, "        [id={}]", terminal::field(id));
    }
    let _ = writeln!(out, "        [urn={}]", terminal::field(step.urn.as_str()));
    for line in format_diff(step, show_secrets) {
        let style = match line.chars().next() {
            Some('+') => Style::CREATE,
            Some('-') => Style::DELETE,
            Some('~') => Style::UPDATE,
            _ => Style::PLAIN,
        };
        let _ = writeln!(out, "      {}", style.paint(colors, &line));
    }
    out
}

/// A value on one line: strings quoted and escaped, `[1, "a"]`, `{"k": v}`; secrets as
/// `[secret]` unless `show_secrets`, unknowns as `[unknown]`, resource references as their URN.
pub fn format_value(value: &PropertyValue, show_secrets: bool) -> String {
    let mut out = String::new();
    write_value(&mut out, value, show_secrets);
    out
}

fn write_value(out: &mut String, value: &PropertyValue, show_secrets: bool) {
    match value {
        PropertyValue::Null => out.push_str("null"),
        PropertyValue::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        PropertyValue::Number(n) => out.push_str(&format_number(*n)),
        PropertyValue::String(s) => out.push_str(&quote(s)),
        PropertyValue::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, show_secrets);
            }
            out.push(']');
        }
        PropertyValue::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quote(key));
                out.push_str(": ");
                write_value(out, item, show_secrets);
            }
            out.push('}');
        }
        PropertyValue::Asset(asset) => out.push_str(&format_asset(asset)),
        PropertyValue::Archive(archive) => out.push_str(&format_archive(archive)),
        PropertyValue::ResourceReference(reference) => {
            out.push_str(&terminal::field(reference.urn.as_str()));
        }
        PropertyValue::Secret(inner) => {
            if show_secrets {
                write_value(out, inner, show_secrets);
            } else {
                out.push_str(SECRET);
            }
        }
        PropertyValue::Computed => out.push_str(UNKNOWN),
        PropertyValue::Output(output) => match &output.value {
            _ if output.secret && !show_secrets => out.push_str(SECRET),
            None => out.push_str(UNKNOWN),
            Some(inner) => write_value(out, inner, show_secrets),
        },
    }
}

/// Integers without a fraction (`3`, not `3.0`); other numbers as Rust prints them.
fn format_number(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// A string in double quotes, escaped as in JSON (every control character included).
fn quote(s: &str) -> String {
    terminal::json_string(s)
}

/// The first 12 hex digits of a hash: enough to tell contents apart.
fn short_hash(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

fn format_asset(asset: &Asset) -> String {
    let source = match &asset.source {
        AssetSource::Text(_) => Some("text".to_owned()),
        AssetSource::Path(path) => Some(format!("file {}", quote(path))),
        AssetSource::Uri(uri) => Some(format!("uri {}", quote(uri))),
        AssetSource::HashOnly => None,
    };
    blob("asset", source, asset.hash.as_deref())
}

fn format_archive(archive: &Archive) -> String {
    let source = match &archive.source {
        ArchiveSource::Assets(members) => Some(match members.len() {
            1 => "1 member".to_owned(),
            n => format!("{n} members"),
        }),
        ArchiveSource::Path(path) => Some(format!("file {}", quote(path))),
        ArchiveSource::Uri(uri) => Some(format!("uri {}", quote(uri))),
        ArchiveSource::HashOnly => None,
    };
    blob("archive", source, archive.hash.as_deref())
}

/// `asset(file "a.txt", 2cf24dba5fb0)`: the kind, where it comes from, and its short hash.
fn blob(kind: &str, source: Option<String>, hash: Option<&str>) -> String {
    let parts: Vec<String> = source
        .into_iter()
        .chain(hash.map(|h| short_hash(h).to_owned()))
        .collect();
    if parts.is_empty() {
        format!("{kind}(?)")
    } else {
        format!("{kind}({})", parts.join(", "))
    }
}

/// The diagnostics of one resource (or of none), in the order they came.
pub(super) type DiagnosticGroup = (Option<Urn>, Vec<(Severity, String)>);

/// The `Diagnostics:` section, grouped by resource as Pulumi groups it; later lines of a
/// message are indented under it, so a provider's or program's message cannot fake a line of
/// Cairn's own. Debug messages are left out.
///
/// ```text
/// Diagnostics:
///   aws:s3:Bucket (logs):
///     warning: versioning is disabled
/// ```
pub(super) fn format_diagnostics(groups: &[DiagnosticGroup], colors: bool) -> String {
    let mut out = format!("{}\n", Style::HEADLINE.paint(colors, "Diagnostics:"));
    let mut first = true;
    for (urn, messages) in groups {
        let messages: Vec<&(Severity, String)> = messages
            .iter()
            .filter(|(severity, _)| *severity != Severity::Debug)
            .collect();
        if messages.is_empty() {
            continue;
        }
        if !first {
            out.push('\n');
        }
        first = false;
        let indent = match urn {
            Some(urn) => {
                let _ = writeln!(
                    out,
                    "  {} ({}):",
                    terminal::field(urn.resource_type()),
                    terminal::field(urn.name())
                );
                "    "
            }
            None => "  ",
        };
        for (severity, message) in messages {
            let (label, style) = match severity {
                Severity::Error => ("error: ", Style::ERROR),
                Severity::Warning => ("warning: ", Style::WARNING),
                _ => ("", Style::PLAIN),
            };
            let continuation = format!("{indent}  ");
            let text = terminal::message("", &continuation, message);
            let _ = writeln!(out, "{indent}{}{text}", style.paint(colors, label));
        }
    }
    out
}

/// What the policy packs of a deployment reported, for the `Policies:` section.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct PolicyReport {
    pub packs: Vec<PackSummary>,
    /// `(pack, resource, violation)` in the order reported.
    pub violations: Vec<(PackSummary, Option<Urn>, Violation)>,
    /// `(pack, policy)` per remediated resource.
    pub remediations: Vec<(PackSummary, String)>,
}

impl PolicyReport {
    pub fn is_empty(&self) -> bool {
        self.packs.is_empty()
    }
}

/// The `Policies:` section, as Pulumi prints it: a line per pack (`✅`, `⚠️` with advisory
/// violations, `❌` with mandatory ones; packs of one name and version merged, with the
/// places they were loaded from), then its remediations (`[remediate]  policy  (N resources)`)
/// and violations, mandatory first, then by severity, policy and resource:
///
/// ```text
/// Policies:
///     ❌ test-pack@v0.0.3 (local: ../pack)
///         - [mandatory]  no-public  (pulumi-python:dynamic:Resource: a)
///           No public things.
///           resource is public
/// ```
pub(super) fn format_policies(report: &PolicyReport) -> String {
    let key = |p: &PackSummary| format!("{}@v{}", p.name, p.version);
    let mut packs: Vec<(String, Vec<String>)> = Vec::new();
    for pack in &report.packs {
        let k = key(pack);
        match packs.iter_mut().find(|(existing, _)| *existing == k) {
            Some((_, places)) => places.push(pack.location.clone()),
            None => packs.push((k, vec![pack.location.clone()])),
        }
    }
    packs.sort();
    let mut out = String::from("Policies:\n");
    for (k, mut places) in packs {
        let mut violations: Vec<&(PackSummary, Option<Urn>, Violation)> = report
            .violations
            .iter()
            .filter(|(p, _, _)| key(p) == k)
            .collect();
        violations.sort_by(|(_, a_urn, a), (_, b_urn, b)| {
            (
                rank(a.enforcement),
                std::cmp::Reverse(a.severity),
                &a.policy,
                a_urn,
            )
                .cmp(&(
                    rank(b.enforcement),
                    std::cmp::Reverse(b.severity),
                    &b.policy,
                    b_urn,
                ))
        });
        let mark = if violations
            .iter()
            .any(|(_, _, v)| v.enforcement == Enforcement::Mandatory)
        {
            "❌"
        } else if violations.is_empty() {
            "✅"
        } else {
            "⚠️"
        };
        places.sort();
        places.retain(|p| !p.is_empty());
        let local = if places.is_empty() {
            String::new()
        } else {
            format!(" (local: {})", places.join("; "))
        };
        let _ = writeln!(
            out,
            "    {mark} {}{}",
            terminal::field(&k),
            terminal::text_of(&local)
        );
        let mut remediated: Vec<(&str, usize)> = Vec::new();
        for (_, policy) in report.remediations.iter().filter(|(p, _)| key(p) == k) {
            match remediated.iter_mut().find(|(name, _)| name == policy) {
                Some((_, n)) => *n += 1,
                None => remediated.push((policy, 1)),
            }
        }
        remediated.sort();
        for (policy, n) in remediated {
            let _ = writeln!(
                out,
                "        - [remediate]  {}  ({n} resource{})",
                terminal::field(policy),
                if n == 1 { "" } else { "s" }
            );
        }
        for (_, urn, v) in violations {
            let severity = v
                .severity
                .map(|s| format!(" [severity: {}]", s.as_str()))
                .unwrap_or_default();
            let clause = urn
                .as_ref()
                .map(|u| {
                    format!(
                        "  ({}: {})",
                        terminal::field(u.resource_type()),
                        terminal::field(u.name())
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "        - [{}]{severity}  {}{clause}",
                v.enforcement,
                terminal::field(&v.policy)
            );
            let message = if v.message.is_empty() {
                &v.description
            } else {
                &v.message
            };
            if !message.trim().is_empty() {
                let _ = writeln!(
                    out,
                    "{}",
                    terminal::message("          ", "          ", message)
                );
            }
        }
    }
    out
}

/// Pulumi's order of enforcement levels in the `Policies:` section.
fn rank(level: Enforcement) -> u8 {
    match level {
        Enforcement::Remediate => 0,
        Enforcement::Mandatory => 1,
        Enforcement::Advisory => 2,
        Enforcement::Disabled => 3,
    }
}

/// The stack outputs section, as Pulumi prints it: `Outputs:`, then a line per output in key
/// order, the keys aligned. With the outputs the stack had before (`old`), those that changed
/// show how: `  + name: value` added, `  - name: value` removed, `  ~ name: old => new` changed,
/// and unchanged ones as `    name: value` only if `show_sames` (an update shows them, a
/// preview does not; then no change means no section: `None`). Without `old` every output shows
/// as `    name: value`. Keys are padded to the longest, shown or not. Empty values (null, `""`, `[]`, `{}`) that did not change are left out,
/// as Pulumi leaves them out; in a preview an output whose new value is not known yet does not
/// count as changed.
pub(super) fn format_outputs(
    old: Option<&PropertyMap>,
    new: &PropertyMap,
    show_sames: bool,
    show_secrets: bool,
    colors: bool,
) -> Option<String> {
    enum Line<'a> {
        Same(&'a PropertyValue),
        Add(&'a PropertyValue),
        Delete(&'a PropertyValue),
        Update(&'a PropertyValue, &'a PropertyValue),
    }
    let mut keys: Vec<&str> = new.keys().map(String::as_str).collect();
    if let Some(old) = old {
        keys.extend(
            old.keys()
                .map(String::as_str)
                .filter(|k| new.get(k).is_none()),
        );
    }
    keys.sort_unstable();
    // Pulumi aligns to every key, those it leaves out too.
    let width = keys
        .iter()
        .map(|k| terminal::field(k).chars().count())
        .max()
        .unwrap_or(0);
    keys.retain(|k| !is_internal_key(k));
    let lines: Vec<(&str, Line)> = keys
        .iter()
        .map(|&key| {
            let line = match (old.map(|o| o.get(key)), new.get(key)) {
                (None, Some(value)) => Line::Same(value),
                (Some(None), Some(value)) => Line::Add(value),
                (Some(Some(value)), None) => Line::Delete(value),
                (Some(Some(before)), Some(after)) if before != after && !is_unknown(after) => {
                    Line::Update(before, after)
                }
                (_, Some(value)) => Line::Same(value),
                (_, None) => unreachable!("every key is in the old or the new outputs"),
            };
            (key, line)
        })
        .collect();
    let changed = lines.iter().any(|(_, l)| !matches!(l, Line::Same(_)));
    if old.is_some() && !changed && !show_sames {
        return None;
    }
    let mut out = String::new();
    let value = |v: &PropertyValue| format_value(v, show_secrets);
    for (key, line) in lines {
        let key = format!("{:<width$}", terminal::field(key));
        let (style, text) = match line {
            Line::Same(v) if !show_sames && old.is_some() || is_empty_value(v) => continue,
            Line::Same(v) => (Style::PLAIN, format!("  {key}: {}", value(v))),
            Line::Add(v) => (Style::CREATE, format!("+ {key}: {}", value(v))),
            Line::Delete(v) => (Style::DELETE, format!("- {key}: {}", value(v))),
            Line::Update(a, b) => (
                Style::UPDATE,
                format!("~ {key}: {} => {}", value(a), value(b)),
            ),
        };
        let _ = writeln!(out, "  {}", style.paint(colors, &text));
    }
    (!out.is_empty()).then(|| format!("{}\n{out}", Style::HEADLINE.paint(colors, "Outputs:")))
}

/// A value Pulumi does not list among unchanged outputs: null, `""`, `[]` or `{}`.
fn is_empty_value(value: &PropertyValue) -> bool {
    match value {
        PropertyValue::Null => true,
        PropertyValue::String(s) => s.is_empty(),
        PropertyValue::Array(items) => items.is_empty(),
        PropertyValue::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// A value not known yet (in a preview).
fn is_unknown(value: &PropertyValue) -> bool {
    match value {
        PropertyValue::Computed => true,
        PropertyValue::Output(output) => output.value.is_none(),
        _ => false,
    }
}

/// Summary lines per step kind: symbol, words in a preview, words after an update. Replacement
/// halves are left out: each is counted as one `replace`.
const SUMMARY_KINDS: [(StepOp, &str, &str); 8] = [
    (StepOp::Create, "to create", "created"),
    (StepOp::Update, "to update", "updated"),
    (StepOp::Replace, "to replace", "replaced"),
    (StepOp::Delete, "to delete", "deleted"),
    (StepOp::Read, "to read", "read"),
    (StepOp::Import, "to import", "imported"),
    (StepOp::Refresh, "to refresh", "refreshed"),
    (StepOp::Discard, "to discard", "discarded"),
];

/// The closing summary: `Resources:` with counts per kind, unchanged, duration, and failure.
pub(super) fn format_summary(summary: &SummaryInfo) -> String {
    let colors = summary.colors;
    let mut out = format!("{}\n", Style::HEADLINE.paint(colors, "Resources:"));
    let mut total = 0;
    let mut kinds = 0;
    for (op, planned, done) in SUMMARY_KINDS {
        let count: usize = summary
            .changes
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, n)| n)
            .sum();
        if count == 0 {
            continue;
        }
        total += count;
        kinds += 1;
        let words = if summary.preview { planned } else { done };
        let line = format!("{:<2}{count} {words}", op_symbol(op));
        let _ = writeln!(out, "    {}", op_style(op).paint(colors, &line));
    }
    let unchanged = summary.unchanged;
    if kinds > 1 {
        let changes = plural(total, "change", "changes");
        if unchanged > 0 {
            let _ = writeln!(out, "    {changes}. {unchanged} unchanged");
        } else {
            let _ = writeln!(out, "    {changes}");
        }
    } else if unchanged > 0 {
        let _ = writeln!(out, "    {unchanged} unchanged");
    } else if total == 0 {
        out.push_str("    no changes\n");
    }
    // Pulumi's `N errored`, then the warnings told in Diagnostics.
    let mut counts = Vec::new();
    if summary.resources_errored > 0 {
        let errored = format!("{} errored", summary.resources_errored);
        counts.push(Style::ERROR.paint(colors, &errored));
    }
    if summary.warnings > 0 {
        let warnings = plural(summary.warnings, "warning", "warnings");
        counts.push(Style::WARNING.paint(colors, &warnings));
    }
    if !counts.is_empty() {
        let _ = writeln!(out, "    {}", counts.join(", "));
    }
    let _ = writeln!(
        out,
        "\n{} {}",
        Style::HEADLINE.paint(colors, "Duration:"),
        format_duration(summary.duration)
    );
    if !summary.succeeded {
        let what = if summary.preview {
            "preview"
        } else {
            operation_label(summary.operation)
        };
        let detail = match summary.failed_steps {
            0 => String::new(),
            n => format!(": {}", plural(n, "step failed", "steps failed")),
        };
        // An interruption is the user's doing, not a failure.
        let ended = if summary.interrupted {
            "was interrupted"
        } else {
            "failed"
        };
        let _ = writeln!(out, "\nThe {what} {ended}{detail}.");
    }
    out
}

/// `1 change`, `2 changes`.
fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::test_support::*;
    use cairn_engine::{ResourceReference, props};

    #[test]
    fn values_format_on_one_line() {
        let hash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
        let reference = PropertyValue::ResourceReference(Box::new(ResourceReference {
            urn: urn("aws:s3:Bucket", "logs"),
            id: Some(Box::new("b-1".into())),
            package_version: None,
        }));
        // (value, masked, shown)
        let cases: Vec<(PropertyValue, &str, &str)> = vec![
            (PropertyValue::Null, "null", "null"),
            (true.into(), "true", "true"),
            (3i64.into(), "3", "3"),
            ((-2.5).into(), "-2.5", "-2.5"),
            (PropertyValue::Number(f64::NAN), "NaN", "NaN"),
            ("dev".into(), r#""dev""#, r#""dev""#),
            (
                r#"say "hi"\n"#.into(),
                r#""say \"hi\"\\n""#,
                r#""say \"hi\"\\n""#,
            ),
            ("line\nnext".into(), r#""line\nnext""#, r#""line\nnext""#),
            (PropertyValue::Array(vec![]), "[]", "[]"),
            (PropertyValue::from(props! {}), "{}", "{}"),
            (
                PropertyValue::from(
                    props! {"b" => 1i64, "a" => vec![PropertyValue::from("x"), PropertyValue::Null]},
                ),
                r#"{"b": 1, "a": ["x", null]}"#,
                r#"{"b": 1, "a": ["x", null]}"#,
            ),
            (secret("hunter2"), "[secret]", r#""hunter2""#),
            (
                PropertyValue::from(props! {"user" => "admin", "pw" => secret("hunter2")}),
                r#"{"user": "admin", "pw": [secret]}"#,
                r#"{"user": "admin", "pw": "hunter2"}"#,
            ),
            (
                secret(PropertyValue::from(props! {"k" => 1i64})),
                "[secret]",
                r#"{"k": 1}"#,
            ),
            (PropertyValue::Computed, "[unknown]", "[unknown]"),
            (
                vec![PropertyValue::Computed, 1i64.into()].into(),
                "[[unknown], 1]",
                "[[unknown], 1]",
            ),
            (output(None, false), "[unknown]", "[unknown]"),
            (output(None, true), "[secret]", "[unknown]"),
            (output(Some("v".into()), false), r#""v""#, r#""v""#),
            (
                output(Some("hunter2".into()), true),
                "[secret]",
                r#""hunter2""#,
            ),
            (
                PropertyValue::Asset(Box::new(Asset {
                    hash: Some(hash.into()),
                    ..Asset::from_path("index.js")
                })),
                r#"asset(file "index.js", 2cf24dba5fb0)"#,
                r#"asset(file "index.js", 2cf24dba5fb0)"#,
            ),
            (
                PropertyValue::Asset(Box::new(Asset::from_text("hello"))),
                "asset(text)",
                "asset(text)",
            ),
            (
                PropertyValue::Asset(Box::new(Asset {
                    hash: Some(hash.into()),
                    source: AssetSource::HashOnly,
                })),
                "asset(2cf24dba5fb0)",
                "asset(2cf24dba5fb0)",
            ),
            (
                PropertyValue::Archive(Box::new(Archive::from_uri("https://x/a.zip"))),
                r#"archive(uri "https://x/a.zip")"#,
                r#"archive(uri "https://x/a.zip")"#,
            ),
            (
                PropertyValue::Archive(Box::new(one_member_archive())),
                "archive(1 member)",
                "archive(1 member)",
            ),
            (
                reference,
                "urn:pulumi:dev::proj::aws:s3:Bucket::logs",
                "urn:pulumi:dev::proj::aws:s3:Bucket::logs",
            ),
        ];
        for (value, masked, shown) in cases {
            assert_eq!(format_value(&value, false), masked, "{value:?}");
            assert_eq!(format_value(&value, true), shown, "{value:?} shown");
        }
    }

    #[test]
    fn changes_format_per_kind() {
        let replacing = PropertyChange {
            replace: true,
            ..change(
                "length",
                ChangeKind::Update,
                Some(2i64.into()),
                Some(3i64.into()),
            )
        };
        // (change, replace keys, masked, shown)
        let cases: Vec<(PropertyChange, Vec<String>, &str, &str)> = vec![
            (
                change(
                    "tags.env",
                    ChangeKind::Update,
                    Some("dev".into()),
                    Some("prod".into()),
                ),
                vec![],
                r#"~ tags.env: "dev" => "prod""#,
                r#"~ tags.env: "dev" => "prod""#,
            ),
            (
                change("size", ChangeKind::Add, None, Some(3i64.into())),
                vec![],
                "+ size: 3",
                "+ size: 3",
            ),
            (
                change("legacy", ChangeKind::Delete, Some(true.into()), None),
                vec![],
                "- legacy: true",
                "- legacy: true",
            ),
            (
                change("x", ChangeKind::Add, None, None),
                vec![],
                "+ x",
                "+ x",
            ),
            (
                change("x", ChangeKind::Delete, None, None),
                vec![],
                "- x",
                "- x",
            ),
            (
                change("x", ChangeKind::Update, None, Some(1i64.into())),
                vec![],
                "~ x: null => 1",
                "~ x: null => 1",
            ),
            (
                replacing,
                vec![],
                "~ length: 2 => 3 (forces replacement)",
                "~ length: 2 => 3 (forces replacement)",
            ),
            (
                change(
                    "tags.env",
                    ChangeKind::Update,
                    Some("a".into()),
                    Some("b".into()),
                ),
                vec!["tags".into()],
                r#"~ tags.env: "a" => "b" (forces replacement)"#,
                r#"~ tags.env: "a" => "b" (forces replacement)"#,
            ),
            (
                change("tagsx", ChangeKind::Add, None, Some("b".into())),
                vec!["tags".into()],
                r#"+ tagsx: "b""#,
                r#"+ tagsx: "b""#,
            ),
            (
                change(
                    "password",
                    ChangeKind::Update,
                    Some(secret("old-pw")),
                    Some(secret("new-pw")),
                ),
                vec![],
                "~ password: [secret] => [secret]",
                r#"~ password: "old-pw" => "new-pw""#,
            ),
            (
                change(
                    "list[0][\"a b\"]",
                    ChangeKind::Add,
                    None,
                    Some(PropertyValue::Computed),
                ),
                vec![],
                r#"+ list[0]["a b"]: [unknown]"#,
                r#"+ list[0]["a b"]: [unknown]"#,
            ),
        ];
        for (change, keys, masked, shown) in cases {
            assert_eq!(format_change(&change, &keys, false), [masked]);
            assert_eq!(format_change(&change, &keys, true), [shown]);
        }
    }

    #[test]
    fn diffs_hide_internal_keys_elide_long_values_and_diff_lines() {
        let pickled = change(
            "__provider",
            ChangeKind::Update,
            Some("a".repeat(4096).into()),
            Some("b".repeat(4096).into()),
        );
        assert!(format_change(&pickled, &[], false).is_empty());
        let long = change(
            "policy",
            ChangeKind::Add,
            None,
            Some("x".repeat(500).into()),
        );
        let line = &format_change(&long, &[], false)[0];
        assert!(line.ends_with("… (502 chars)"), "{line}");
        assert!(line.chars().count() < 130, "{line}");
        let script = change(
            "userData",
            ChangeKind::Update,
            Some("#!/bin/sh\necho hi\nexit 0".into()),
            Some("#!/bin/sh\necho bye\nexit 0\n".into()),
        );
        assert_eq!(
            format_change(&script, &["userData".into()], false),
            [
                "~ userData: (multi-line) (forces replacement)",
                "      #!/bin/sh",
                "    + echo bye",
                "    - echo hi",
                "      exit 0",
            ]
        );
    }

    #[test]
    fn every_op_has_pulumis_symbol_and_a_colour() {
        let symbols: Vec<&str> = ALL_OPS.iter().map(|op| op_symbol(*op)).collect();
        assert_eq!(
            symbols,
            [
                "", "+", "~", "-", "+-", "++", "--", ">", ">>", "~", "=", "=>", "-"
            ]
        );
        for op in ALL_OPS {
            assert_eq!(op_style(op) == Style::PLAIN, op == StepOp::Same, "{op}");
        }
    }

    #[test]
    fn diff_summaries_group_top_level_keys_as_pulumi_does() {
        let mut s = pet(StepOp::Update);
        s.changes = vec![
            change("tags.env", ChangeKind::Add, None, Some("a".into())),
            change("size", ChangeKind::Add, None, Some(1i64.into())),
            change("ports[0]", ChangeKind::Update, None, Some(1i64.into())),
            change("legacy", ChangeKind::Delete, Some(true.into()), None),
            change("__defaults", ChangeKind::Add, None, Some(1i64.into())),
            change("tags.team", ChangeKind::Delete, Some("b".into()), None),
        ];
        assert_eq!(
            diff_summary(&s).as_deref(),
            Some("diff: +size-legacy~ports,tags")
        );
        assert_eq!(diff_summary(&pet(StepOp::Create)), None);
        let keys_only = StepInfo {
            op: StepOp::Replace,
            replace_keys: vec!["length".into()],
            ..pet(StepOp::Replace)
        };
        assert_eq!(diff_summary(&keys_only).as_deref(), Some("diff: ~length"));
    }

    #[test]
    fn diffs_show_under_changes_once_per_replacement() {
        let mut replace = pet(StepOp::Replace);
        replace.changes = vec![PropertyChange {
            replace: true,
            ..change(
                "length",
                ChangeKind::Update,
                Some(2i64.into()),
                Some(3i64.into()),
            )
        }];
        assert_eq!(
            format_diff(&replace, false),
            ["~ length: 2 => 3 (forces replacement)"]
        );
        for op in [
            StepOp::CreateReplacement,
            StepOp::DeleteReplaced,
            StepOp::Same,
        ] {
            let half = StepInfo {
                op,
                ..replace.clone()
            };
            assert!(format_diff(&half, false).is_empty(), "{op}");
        }
        let keys_only = StepInfo {
            changes: vec![],
            replace_keys: vec!["length".into(), "a b".into()],
            ..replace.clone()
        };
        assert_eq!(
            format_diff(&keys_only, false),
            [
                "~ length (forces replacement)",
                r#"~ ["a b"] (forces replacement)"#
            ]
        );
        assert!(format_diff(&pet(StepOp::Create), false).is_empty());
    }

    #[test]
    fn outputs_show_how_they_changed_as_pulumi_shows_them() {
        let old = props! {"xyz" => "ABC", "foo" => 42i64, "gone" => "bye", "empty" => ""};
        let new = props! {"xyz" => "DEF", "foo" => 42i64, "added" => "hi", "empty" => ""};
        // An update: every output, sorted, keys aligned to the longest, empty values left out.
        assert_eq!(
            format_outputs(Some(&old), &new, true, false, false).unwrap(),
            "Outputs:\n  + added: \"hi\"\n    foo  : 42\n  - gone : \"bye\"\n  ~ xyz  : \"ABC\" => \"DEF\"\n"
        );
        // A preview: only the changes; none, no section.
        assert_eq!(
            format_outputs(Some(&old), &new, false, false, false).unwrap(),
            "Outputs:\n  + added: \"hi\"\n  - gone : \"bye\"\n  ~ xyz  : \"ABC\" => \"DEF\"\n"
        );
        assert_eq!(format_outputs(Some(&new), &new, false, false, false), None);
        // A value not known yet is no change.
        let unknown = props! {"xyz" => PropertyValue::Computed, "foo" => 42i64, "added" => "hi", "empty" => ""};
        assert_eq!(
            format_outputs(Some(&new), &unknown, false, false, false),
            None
        );
        // Without old outputs (the first update), all of them, unmarked.
        assert_eq!(
            format_outputs(None, &old, false, false, false).unwrap(),
            "Outputs:\n    foo  : 42\n    gone : \"bye\"\n    xyz  : \"ABC\"\n"
        );
    }

    #[test]
    fn durations_read_naturally() {
        let cases = [
            (ms(0), "0.0s"),
            (ms(400), "0.4s"),
            (ms(1234), "1.2s"),
            (ms(59_900), "59.9s"),
            (Duration::from_secs(125), "2m5s"),
            (Duration::from_secs(3603), "1h0m3s"),
        ];
        for (d, expected) in cases {
            assert_eq!(format_duration(d), expected);
        }
    }

    #[test]
    fn summaries_count_pluralise_and_report_failure() {
        let info = |preview, changes: &[(StepOp, usize)], unchanged, succeeded, failed_steps| {
            SummaryInfo {
                operation: Operation::Update,
                preview,
                changes: changes.to_vec(),
                unchanged,
                duration: ms(1234),
                succeeded,
                interrupted: false,
                failed_steps,
                resources_errored: 0,
                warnings: 0,
                colors: false,
            }
        };
        let all = [
            (StepOp::Create, 3),
            (StepOp::Update, 1),
            (StepOp::Replace, 1),
            (StepOp::CreateReplacement, 1),
            (StepOp::DeleteReplaced, 1),
            (StepOp::Delete, 2),
        ];
        let cases: Vec<(SummaryInfo, &str)> = vec![
            (
                info(false, &all, 4, true, 0),
                "Resources:\n    + 3 created\n    ~ 1 updated\n    +-1 replaced\n    - 2 deleted\n    7 changes. 4 unchanged\n\nDuration: 1.2s\n",
            ),
            (
                info(true, &all, 0, true, 0),
                "Resources:\n    + 3 to create\n    ~ 1 to update\n    +-1 to replace\n    - 2 to delete\n    7 changes\n\nDuration: 1.2s\n",
            ),
            (
                info(false, &[(StepOp::Create, 1)], 2, true, 0),
                "Resources:\n    + 1 created\n    2 unchanged\n\nDuration: 1.2s\n",
            ),
            (
                info(
                    false,
                    &[(StepOp::Create, 1), (StepOp::Delete, 0)],
                    0,
                    true,
                    0,
                ),
                "Resources:\n    + 1 created\n\nDuration: 1.2s\n",
            ),
            (
                info(true, &[(StepOp::Import, 1), (StepOp::Read, 1)], 1, true, 0),
                "Resources:\n    > 1 to read\n    = 1 to import\n    2 changes. 1 unchanged\n\nDuration: 1.2s\n",
            ),
            (
                info(
                    false,
                    &[(StepOp::Refresh, 1), (StepOp::Discard, 2)],
                    0,
                    true,
                    0,
                ),
                "Resources:\n    ~ 1 refreshed\n    - 2 discarded\n    3 changes\n\nDuration: 1.2s\n",
            ),
            (
                info(false, &[], 0, true, 0),
                "Resources:\n    no changes\n\nDuration: 1.2s\n",
            ),
            (
                info(false, &[], 5, true, 0),
                "Resources:\n    5 unchanged\n\nDuration: 1.2s\n",
            ),
            (
                info(false, &[(StepOp::Create, 1)], 0, false, 1),
                "Resources:\n    + 1 created\n\nDuration: 1.2s\n\nThe update failed: 1 step failed.\n",
            ),
            (
                info(false, &[], 0, false, 2),
                "Resources:\n    no changes\n\nDuration: 1.2s\n\nThe update failed: 2 steps failed.\n",
            ),
            (
                info(true, &[], 0, false, 0),
                "Resources:\n    no changes\n\nDuration: 1.2s\n\nThe preview failed.\n",
            ),
            (
                SummaryInfo {
                    operation: Operation::Destroy,
                    ..info(false, &[(StepOp::Delete, 1)], 0, false, 0)
                },
                "Resources:\n    - 1 deleted\n\nDuration: 1.2s\n\nThe destroy failed.\n",
            ),
            (
                SummaryInfo {
                    resources_errored: 2,
                    warnings: 1,
                    ..info(false, &[], 1, false, 1)
                },
                "Resources:\n    1 unchanged\n    2 errored, 1 warning\n\nDuration: 1.2s\n\nThe update failed: 1 step failed.\n",
            ),
            (
                SummaryInfo {
                    interrupted: true,
                    ..info(false, &[(StepOp::Create, 1)], 0, false, 0)
                },
                "Resources:\n    + 1 created\n\nDuration: 1.2s\n\nThe update was interrupted.\n",
            ),
        ];
        for (summary, expected) in cases {
            assert_eq!(format_summary(&summary), expected, "{summary:?}");
        }
        let colored = SummaryInfo {
            colors: true,
            ..info(false, &[(StepOp::Create, 1)], 0, true, 0)
        };
        assert_eq!(
            format_summary(&colored),
            "\x1b[1;95mResources:\x1b[0m\n    \x1b[32m+ 1 created\x1b[0m\n\n\x1b[1;95mDuration:\x1b[0m 1.2s\n"
        );
    }

    #[test]
    fn diagnostics_are_grouped_by_resource_with_their_lines_indented() {
        let logs = urn("aws:s3:Bucket", "logs");
        let groups: Vec<DiagnosticGroup> = vec![
            (
                Some(logs.clone()),
                vec![
                    (Severity::Warning, "versioning is off\n".into()),
                    (Severity::Debug, "hidden".into()),
                    (Severity::Error, "boom\nResources:\n  + fake".into()),
                ],
            ),
            (None, vec![(Severity::Info, "hello".into())]),
            (
                Some(urn("a:b:C", "quiet")),
                vec![(Severity::Debug, "x".into())],
            ),
        ];
        assert_eq!(
            format_diagnostics(&groups, false),
            "Diagnostics:\n  aws:s3:Bucket (logs):\n    warning: versioning is off\n    error: boom\n      Resources:\n        + fake\n\n  hello\n"
        );
    }
}
