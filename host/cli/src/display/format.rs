//! The text the human modes ([`super::plain`], [`super::live`]) share: step lines, diffs,
//! values, diagnostics, stack outputs and the summary. `cairn stack output` prints values
//! with [`format_value`] too.
//!
//! Symbols: `+` create, `~` update and refresh, `+-` replace, `++` create-replacement,
//! `--` delete-replaced, `-` delete and discard, `<=` read and read-replacement, `=` import and
//! import-replacement, blank for same.
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

use super::{SECRET, UNKNOWN, operation_label, severity_label};
use crate::terminal;

/// The status column of a step line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum LineStatus {
    /// Planned in a preview: no status, the op column says what would happen.
    Planned,
    /// Running for this long ("creating (1.2s)").
    Running(Duration),
    /// Ended after this long ("created (0.4s)").
    Done(Duration),
    /// Failed after this long ("failed (0.1s)").
    Failed(Duration),
}

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
    /// Steps that failed (0 when unknown).
    pub failed_steps: usize,
}

/// The symbol shown before a step ("+", "+-", ...).
fn op_symbol(op: StepOp) -> &'static str {
    match op {
        StepOp::Same => " ",
        StepOp::Create => "+",
        StepOp::Update | StepOp::Refresh => "~",
        StepOp::Delete | StepOp::Discard => "-",
        StepOp::Replace => "+-",
        StepOp::CreateReplacement => "++",
        StepOp::DeleteReplaced => "--",
        StepOp::Read | StepOp::ReadReplacement => "<=",
        StepOp::Import | StepOp::ImportReplacement => "=",
    }
}

/// The status words of a step: (while running, once done). Empty for `same`.
fn op_status(op: StepOp) -> (&'static str, &'static str) {
    match op {
        StepOp::Same => ("", ""),
        StepOp::Create => ("creating", "created"),
        StepOp::Update => ("updating", "updated"),
        StepOp::Delete => ("deleting", "deleted"),
        StepOp::Replace => ("replacing", "replaced"),
        StepOp::CreateReplacement => ("creating replacement", "created replacement"),
        StepOp::DeleteReplaced => ("deleting original", "deleted original"),
        StepOp::Read => ("reading", "read"),
        StepOp::ReadReplacement => ("reading for replacement", "read for replacement"),
        StepOp::Refresh => ("refreshing", "refreshed"),
        StepOp::Import => ("importing", "imported"),
        StepOp::ImportReplacement => ("importing replacement", "imported replacement"),
        StepOp::Discard => ("discarding", "discarded"),
    }
}

/// A duration as people read it: `0.4s`, `12.0s`, `2m5s`, `1h0m3s`.
fn format_duration(duration: Duration) -> String {
    let total = duration.as_secs();
    if total < 60 {
        format!("{:.1}s", duration.as_secs_f64())
    } else if total < 3600 {
        format!("{}m{}s", total / 60, total % 60)
    } else {
        format!("{}h{}m{}s", total / 3600, total / 60 % 60, total % 60)
    }
}

/// One resource's line: `  +  create   random:index:RandomPet  pet  created (0.4s)`.
pub(super) fn format_step_line(step: &StepInfo, status: LineStatus) -> String {
    let mut line = format!(
        "  {:<2} {:<8} {}  {}",
        op_symbol(step.op),
        step.op.label(),
        terminal::field(&step.resource_type),
        terminal::field(step.urn.name())
    );
    let (running, done) = op_status(step.op);
    let status = match status {
        LineStatus::Planned => None,
        LineStatus::Running(_) | LineStatus::Done(_) if running.is_empty() => None,
        LineStatus::Running(elapsed) => Some(format!("{running} ({})", format_duration(elapsed))),
        LineStatus::Done(took) => Some(format!("{done} ({})", format_duration(took))),
        LineStatus::Failed(took) => Some(format!("failed ({})", format_duration(took))),
    };
    if let Some(status) = status {
        line.push_str("  ");
        line.push_str(&status);
    }
    line
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
        .map(|change| format_change(change, &step.replace_keys, show_secrets))
        .collect()
}

/// One property change: `~ path: old => new`, `+ path: new` or `- path: old`, with
/// ` (forces replacement)` when the change says so or its top-level key is in `replace_keys`.
fn format_change(change: &PropertyChange, replace_keys: &[String], show_secrets: bool) -> String {
    let path = terminal::field(&change.path.to_string()).into_owned();
    let shown = |value: &Option<PropertyValue>| {
        value
            .as_ref()
            .map_or_else(|| "null".to_owned(), |v| format_value(v, show_secrets))
    };
    let mut line = match (change.kind, &change.old, &change.new) {
        (ChangeKind::Add, _, None) => format!("+ {path}"),
        (ChangeKind::Add, _, new) => format!("+ {path}: {}", shown(new)),
        (ChangeKind::Delete, None, _) => format!("- {path}"),
        (ChangeKind::Delete, old, _) => format!("- {path}: {}", shown(old)),
        (ChangeKind::Update, old, new) => format!("~ {path}: {} => {}", shown(old), shown(new)),
    };
    let forced = change.replace
        || matches!(change.path.elements().first(),
            Some(PathElement::Key(key)) if replace_keys.iter().any(|k| k == key));
    if forced {
        line.push_str(" (forces replacement)");
    }
    line
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

/// A diagnostic: `warning: pet: message`; later lines of the message are indented, so a
/// provider's or program's message cannot fake a line of its own.
pub(super) fn format_diagnostic(severity: Severity, urn: Option<&Urn>, message: &str) -> String {
    let label = severity_label(severity);
    let first = match urn {
        Some(urn) => format!("{label}: {}: ", terminal::field(urn.name())),
        None => format!("{label}: "),
    };
    terminal::message(&first, "    ", message)
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

/// The stack outputs section: `Outputs:` then `    name: value` per output.
pub(super) fn format_outputs(outputs: &PropertyMap, show_secrets: bool) -> String {
    let mut out = String::from("Outputs:\n");
    for (name, value) in outputs {
        let _ = writeln!(
            out,
            "    {}: {}",
            terminal::field(name),
            format_value(value, show_secrets)
        );
    }
    out
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
    let mut out = String::from("Resources:\n");
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
        let _ = writeln!(out, "    {:<2}{count} {words}", op_symbol(op));
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
    let _ = writeln!(out, "\nDuration: {}", format_duration(summary.duration));
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
        let _ = writeln!(out, "\nThe {what} failed{detail}.");
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
        let reference = PropertyValue::ResourceReference(ResourceReference {
            urn: urn("aws:s3:Bucket", "logs"),
            id: Some(Box::new("b-1".into())),
            package_version: None,
        });
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
            (PropertyValue::Object(props! {}), "{}", "{}"),
            (
                PropertyValue::Object(
                    props! {"b" => 1i64, "a" => vec![PropertyValue::from("x"), PropertyValue::Null]},
                ),
                r#"{"b": 1, "a": ["x", null]}"#,
                r#"{"b": 1, "a": ["x", null]}"#,
            ),
            (secret("hunter2"), "[secret]", r#""hunter2""#),
            (
                PropertyValue::Object(props! {"user" => "admin", "pw" => secret("hunter2")}),
                r#"{"user": "admin", "pw": [secret]}"#,
                r#"{"user": "admin", "pw": "hunter2"}"#,
            ),
            (
                secret(PropertyValue::Object(props! {"k" => 1i64})),
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
                PropertyValue::Asset(Asset {
                    hash: Some(hash.into()),
                    ..Asset::from_path("index.js")
                }),
                r#"asset(file "index.js", 2cf24dba5fb0)"#,
                r#"asset(file "index.js", 2cf24dba5fb0)"#,
            ),
            (
                PropertyValue::Asset(Asset::from_text("hello")),
                "asset(text)",
                "asset(text)",
            ),
            (
                PropertyValue::Asset(Asset {
                    hash: Some(hash.into()),
                    source: AssetSource::HashOnly,
                }),
                "asset(2cf24dba5fb0)",
                "asset(2cf24dba5fb0)",
            ),
            (
                PropertyValue::Archive(Archive::from_uri("https://x/a.zip")),
                r#"archive(uri "https://x/a.zip")"#,
                r#"archive(uri "https://x/a.zip")"#,
            ),
            (
                PropertyValue::Archive(one_member_archive()),
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
            assert_eq!(format_change(&change, &keys, false), masked);
            assert_eq!(format_change(&change, &keys, true), shown);
        }
    }

    #[test]
    fn step_lines_for_every_op() {
        // (op, done line, running status, planned line)
        let ty = "random:index:RandomPet";
        let cases: [(StepOp, &str, &str); 13] = [
            (
                StepOp::Same,
                "     same     random:index:RandomPet  pet",
                "",
            ),
            (
                StepOp::Create,
                "  +  create   random:index:RandomPet  pet  created (0.4s)",
                "creating",
            ),
            (
                StepOp::Update,
                "  ~  update   random:index:RandomPet  pet  updated (0.4s)",
                "updating",
            ),
            (
                StepOp::Delete,
                "  -  delete   random:index:RandomPet  pet  deleted (0.4s)",
                "deleting",
            ),
            (
                StepOp::Replace,
                "  +- replace  random:index:RandomPet  pet  replaced (0.4s)",
                "replacing",
            ),
            (
                StepOp::CreateReplacement,
                "  ++ create-replacement random:index:RandomPet  pet  created replacement (0.4s)",
                "creating replacement",
            ),
            (
                StepOp::DeleteReplaced,
                "  -- delete-replaced random:index:RandomPet  pet  deleted original (0.4s)",
                "deleting original",
            ),
            (
                StepOp::Read,
                "  <= read     random:index:RandomPet  pet  read (0.4s)",
                "reading",
            ),
            (
                StepOp::ReadReplacement,
                "  <= read-replacement random:index:RandomPet  pet  read for replacement (0.4s)",
                "reading for replacement",
            ),
            (
                StepOp::Refresh,
                "  ~  refresh  random:index:RandomPet  pet  refreshed (0.4s)",
                "refreshing",
            ),
            (
                StepOp::Import,
                "  =  import   random:index:RandomPet  pet  imported (0.4s)",
                "importing",
            ),
            (
                StepOp::ImportReplacement,
                "  =  import-replacement random:index:RandomPet  pet  imported replacement (0.4s)",
                "importing replacement",
            ),
            (
                StepOp::Discard,
                "  -  discard  random:index:RandomPet  pet  discarded (0.4s)",
                "discarding",
            ),
        ];
        assert_eq!(cases.map(|c| c.0), ALL_OPS, "every op is covered");
        for (op, done, running) in cases {
            let s = step(op, ty, "pet");
            assert_eq!(format_step_line(&s, LineStatus::Done(ms(400))), done);
            let head = format!("  {:<2} {:<8} {ty}  pet", op_symbol(op), op.label());
            assert!(done.starts_with(&head), "{done:?}");
            let planned = format_step_line(&s, LineStatus::Planned);
            assert_eq!(planned, head, "a planned line has no status");
            let live = format_step_line(&s, LineStatus::Running(ms(1250)));
            if running.is_empty() {
                assert_eq!(live, head);
            } else {
                assert_eq!(live, format!("{head}  {running} (1.2s)"));
            }
            assert_eq!(
                format_step_line(&s, LineStatus::Failed(ms(50))),
                format!("{head}  failed (0.1s)")
            );
        }
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
                failed_steps,
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
                "Resources:\n    <=1 to read\n    = 1 to import\n    2 changes. 1 unchanged\n\nDuration: 1.2s\n",
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
        ];
        for (summary, expected) in cases {
            assert_eq!(format_summary(&summary), expected, "{summary:?}");
        }
    }

    #[test]
    fn diagnostics_name_severity_and_resource() {
        let logs = urn("aws:s3:Bucket", "logs");
        let cases = [
            (
                Severity::Warning,
                Some(&logs),
                "versioning is off\n",
                "warning: logs: versioning is off",
            ),
            (Severity::Error, None, "boom", "error: boom"),
            (Severity::Info, Some(&logs), "a\nb", "info: logs: a\n    b"),
        ];
        for (severity, urn, message, expected) in cases {
            assert_eq!(format_diagnostic(severity, urn, message), expected);
        }
    }
}
