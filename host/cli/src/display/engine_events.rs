//! Pulumi's engine events (`apitype.EngineEvent`): Cairn's events converted, stamped with a
//! sequence number and a timestamp, and written one JSON object per line — on stdout for
//! `--json` on a deployment that is not a preview, and to `--event-log FILE` for every
//! deploying command. The one definition of the conversion (the preview digest, [`super::json`],
//! reuses its step vocabulary: [`pulumi_op`], [`detailed_diff`], [`is_internal`]).
//!
//! Each line is `{"sequence": n, "timestamp": unix-seconds, "<kind>": {...}}` with exactly one
//! kind, as Pulumi's `ConvertEngineEvent` and `logJSONEvent` write them:
//!
//! | Cairn event          | Pulumi event(s)                                                  |
//! |----------------------|------------------------------------------------------------------|
//! | `Started`            | `preludeEvent` (`config`: the stack's, secrets `[secret]`)        |
//! | `StepStarted`        | `resourcePreEvent` (`metadata`, `planning` in a preview)          |
//! | `StepFinished`       | (`resourcePreEvent` if the step never started, e.g. `same`,       |
//! |                      | refresh) `resOutputsEvent`                                        |
//! | `StepFailed`         | `diagnosticEvent` (error), then `resOpFailedEvent` (not in a      |
//! |                      | preview, where the message starts "Preview failed: ")            |
//! | `Diagnostic`         | `diagnosticEvent` (debug ones left out: SDKs log secrets there)   |
//! | `PolicyPacks`        | `policyLoadEvent`                                                 |
//! | `PolicyViolation`    | `policyEvent`                                                     |
//! | `PolicyRemediation`  | `policyRemediationEvent`                                          |
//! | `Outputs`            | `resOutputsEvent` of the component (or stack) with its outputs    |
//! | `Summary`            | `summaryEvent`                                                    |
//! | the display finishes | `cancelEvent` (Pulumi's end of every operation)                   |
//!
//! Secrets are never shown, whatever `--show-secrets` says (Pulumi converts with the blinding
//! crypter and `showSecrets` false): a secret is `{"4dabf…": "1b47…", "ciphertext": "[secret]"}`,
//! an unknown the state format's sentinel, a text asset's text `<contents elided>`. Known
//! secret configuration values are replaced by `[secret]` in messages, as Pulumi's log filter
//! does. Messages carry no color directives (`"color": "never"`).
//!
//! Steps of default providers are Pulumi's internal events: written to the event log, not to
//! stdout. A multi-phase command (a preview, then the update) starts the event log afresh for
//! each phase, as Pulumi opens it with `O_TRUNC` for each.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};
use cairn_engine::deploy::events::{
    ChangeKind, EngineEvent, Operation, Severity, StepInfo, StepOp,
};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::ResourceState;
use cairn_engine::state::codec::{ASSET_SIG, SIG_KEY, SecretsMode, encode_property_map};
use cairn_engine::{PropertyMap, Urn};
use serde::Serialize;
use serde_json::{Map, Value as Json};

use super::{Output, lock};
use crate::terminal;

/// What a text asset's text becomes in an event (Pulumi's `filterAsset`).
const ELIDED: &str = "<contents elided>";
/// Stands for a secret: in ciphertexts, config values and filtered messages.
const SECRET: &str = "[secret]";
/// Messages carry no color directives.
const COLOR: &str = "never";

/// What the engine events need from the command: the prelude's configuration and the secret
/// values to keep out of messages, and the event log (`--event-log`), if any.
#[derive(Clone, Default)]
pub struct EventSettings {
    /// The stack's configuration, `project:key` → value, secrets as `[secret]`.
    pub config: BTreeMap<String, String>,
    /// Decrypted secret configuration values: replaced by `[secret]` in messages.
    pub secrets: Vec<String>,
    pub log: Option<EventLog>,
}

/// The `--event-log` file: created (mode 0600) before anything deploys, shared by the phases of
/// a command; every line is written whole with one `write` on an `O_APPEND` file.
#[derive(Clone)]
pub struct EventLog {
    path: PathBuf,
    file: Arc<Mutex<File>>,
}

impl EventLog {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> Result<EventLog> {
        let mut options = OpenOptions::new();
        options.create(true).append(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options
            .open(path)
            .with_context(|| format!("cannot create the event log {}", path.display()))?;
        file.set_len(0)
            .with_context(|| format!("cannot truncate the event log {}", path.display()))?;
        Ok(EventLog {
            path: path.to_owned(),
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// Starts the log afresh for a new phase.
    fn restart(&self) {
        if let Err(e) = lock(&self.file).set_len(0) {
            tracing::warn!("truncating the event log {}: {e}", self.path.display());
        }
    }

    /// Appends `line` (ending in a newline) in one write, durable in the page cache at once.
    fn write(&self, line: &str) {
        let mut file = lock(&self.file);
        if let Err(e) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
            tracing::warn!("writing the event log {}: {e}", self.path.display());
        }
    }
}

/// Converts, stamps and writes engine events; serialises its writers, so the lines of the log
/// and of stdout come in sequence order.
pub(super) struct EventStream {
    state: Mutex<StreamState>,
}

struct StreamState {
    converter: Converter,
    sequence: u64,
    log: Option<EventLog>,
    /// stdout, for `--json` (internal events are left out there).
    stdout: Option<Output>,
    finished: bool,
}

impl EventStream {
    /// A stream writing to the event log and/or `stdout`; none when there is neither.
    pub(super) fn new(settings: EventSettings, stdout: Option<Output>) -> Option<EventStream> {
        if settings.log.is_none() && stdout.is_none() {
            return None;
        }
        if let Some(log) = &settings.log {
            log.restart();
        }
        Some(EventStream {
            state: Mutex::new(StreamState {
                converter: Converter::new(settings.config, settings.secrets),
                sequence: 0,
                log: settings.log,
                stdout,
                finished: false,
            }),
        })
    }

    pub(super) fn emit(&self, event: &EngineEvent) {
        let mut state = lock(&self.state);
        if state.finished {
            return;
        }
        let converted = state.converter.convert(event);
        for event in converted {
            state.write(event);
        }
    }

    /// Writes the closing `cancelEvent`; harmless to repeat.
    pub(super) fn finish(&self) {
        let mut state = lock(&self.state);
        if !state.finished {
            state.write(Converted::new(Payload::CancelEvent(Empty {})));
            state.finished = true;
        }
    }
}

impl StreamState {
    fn write(&mut self, converted: Converted) {
        let stamped = Stamped {
            sequence: self.sequence,
            timestamp: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            payload: converted.payload,
        };
        self.sequence += 1;
        let mut line = match terminal::json_line(&stamped) {
            Ok(line) => line,
            Err(e) => {
                tracing::warn!("an engine event could not be written as JSON: {e}");
                return;
            }
        };
        line.push('\n');
        if let Some(log) = &self.log {
            log.write(&line);
        }
        if !converted.internal
            && let Some(stdout) = &mut self.stdout
        {
            stdout.write(&line);
        }
    }
}

/// One line: `apitype.EngineEvent`.
#[derive(Serialize)]
struct Stamped {
    sequence: u64,
    timestamp: u64,
    #[serde(flatten)]
    payload: Payload,
}

/// The one event a line carries, under its `apitype.EngineEvent` field name.
#[derive(Serialize)]
#[allow(
    clippy::enum_variant_names,
    reason = "the variants are Pulumi's field names"
)]
#[serde(rename_all = "camelCase")]
enum Payload {
    CancelEvent(Empty),
    DiagnosticEvent(DiagnosticEvent),
    PreludeEvent(PreludeEvent),
    SummaryEvent(SummaryEvent),
    ResourcePreEvent(ResourceEvent),
    ResOutputsEvent(ResourceEvent),
    ResOpFailedEvent(ResOpFailedEvent),
    PolicyEvent(PolicyEvent),
    PolicyRemediationEvent(PolicyRemediationEvent),
    PolicyLoadEvent(Empty),
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DiagnosticEvent {
    #[serde(skip_serializing_if = "String::is_empty")]
    urn: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    prefix: String,
    message: String,
    color: &'static str,
    severity: &'static str,
}

#[derive(Serialize)]
struct PreludeEvent {
    config: BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryEvent {
    maybe_corrupt: bool,
    duration_seconds: u64,
    resource_changes: BTreeMap<&'static str, usize>,
    /// PascalCase in Pulumi's wire format (its JSON tag was forgotten).
    #[serde(rename = "PolicyPacks")]
    policy_packs: BTreeMap<String, String>,
    is_preview: bool,
    result: &'static str,
}

#[derive(Serialize)]
struct ResourceEvent {
    metadata: StepMetadata,
    #[serde(skip_serializing_if = "is_false")]
    planning: bool,
}

#[derive(Serialize)]
struct ResOpFailedEvent {
    metadata: StepMetadata,
    status: u32,
    steps: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyEvent {
    #[serde(skip_serializing_if = "String::is_empty")]
    resource_urn: String,
    message: String,
    color: &'static str,
    policy_name: String,
    policy_pack_name: String,
    policy_pack_version: String,
    policy_pack_version_tag: String,
    enforcement_level: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    severity: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicyRemediationEvent {
    #[serde(skip_serializing_if = "String::is_empty")]
    resource_urn: String,
    color: &'static str,
    policy_name: String,
    policy_pack_name: String,
    policy_pack_version: String,
    policy_pack_version_tag: String,
}

/// `apitype.StepEventMetadata`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StepMetadata {
    op: &'static str,
    urn: String,
    #[serde(rename = "type")]
    resource_type: String,
    old: Option<StateMetadata>,
    new: Option<StateMetadata>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    keys: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    diffs: Vec<String>,
    /// `null` when the step has no detailed diff (never left out: Pulumi tells `null` from `{}`).
    detailed_diff: Option<BTreeMap<String, ApiPropertyDiff>>,
    #[serde(skip_serializing_if = "is_false")]
    logical: bool,
    provider: String,
}

/// `apitype.StepEventStateMetadata`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StateMetadata {
    #[serde(rename = "type")]
    resource_type: String,
    urn: String,
    #[serde(skip_serializing_if = "is_false")]
    custom: bool,
    #[serde(skip_serializing_if = "is_false")]
    delete: bool,
    id: String,
    parent: String,
    #[serde(skip_serializing_if = "is_false")]
    protect: bool,
    #[serde(skip_serializing_if = "is_false")]
    taint: bool,
    #[serde(skip_serializing_if = "is_false")]
    external: bool,
    #[serde(skip_serializing_if = "is_false")]
    retain_on_delete: bool,
    inputs: Json,
    outputs: Json,
    provider: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    init_errors: Vec<String>,
}

/// `apitype.PropertyDiff`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ApiPropertyDiff {
    diff_kind: &'static str,
    input_diff: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A converted event, and whether it is one of Pulumi's internal events (a default provider's
/// step: in the event log only).
struct Converted {
    payload: Payload,
    internal: bool,
}

impl Converted {
    fn new(payload: Payload) -> Converted {
        Converted {
            payload,
            internal: false,
        }
    }
}

/// Turns Cairn's events into Pulumi's; keeps what the conversion needs across events.
struct Converter {
    config: BTreeMap<String, String>,
    secrets: Vec<String>,
    operation: Operation,
    /// Steps started and not yet ended: a step that ends without having started (a `same`, a
    /// refresh) gets its `resourcePreEvent` when it ends, as in Pulumi.
    started: HashSet<(Urn, StepOp)>,
    /// The last step of each component (and the stack): its outputs event repeats it.
    components: HashMap<Urn, StepInfo>,
    /// The policy packs, name → version, for the summary.
    packs: BTreeMap<String, String>,
    /// Logical steps done, for `resOpFailedEvent.steps`.
    steps: usize,
}

impl Converter {
    fn new(config: BTreeMap<String, String>, secrets: Vec<String>) -> Converter {
        Converter {
            config,
            secrets: secret_filter(secrets),
            operation: Operation::Update,
            started: HashSet::new(),
            components: HashMap::new(),
            packs: BTreeMap::new(),
            steps: 0,
        }
    }

    fn convert(&mut self, event: &EngineEvent) -> Vec<Converted> {
        match event {
            EngineEvent::Started { operation, .. } => {
                self.operation = *operation;
                vec![Converted::new(Payload::PreludeEvent(PreludeEvent {
                    config: self.config.clone(),
                }))]
            }
            EngineEvent::StepStarted(step) => {
                self.started.insert((step.urn.clone(), step.op));
                vec![self.pre_event(step)]
            }
            EngineEvent::StepFinished { step, .. } => {
                let mut out = Vec::with_capacity(2);
                if !self.started.remove(&(step.urn.clone(), step.op)) {
                    out.push(self.pre_event(step));
                }
                if !step.custom {
                    self.components.insert(step.urn.clone(), step.clone());
                }
                let op = pulumi_op(step, self.operation);
                if is_logical(step.op) && !is_internal(step) {
                    self.steps += 1;
                }
                // Pulumi reports outputs of what a provider manages, deletions and refreshes
                // (and everything in a preview); components report theirs when registered.
                if step.preview
                    || step.custom
                    || self.operation == Operation::Refresh
                    || op == "delete"
                {
                    out.push(Converted {
                        payload: Payload::ResOutputsEvent(ResourceEvent {
                            metadata: step_metadata(step, op, self.operation, None),
                            planning: step.preview,
                        }),
                        internal: is_internal(step),
                    });
                }
                out
            }
            EngineEvent::StepFailed { step, error, .. } => {
                let mut out = Vec::with_capacity(3);
                if !self.started.remove(&(step.urn.clone(), step.op)) {
                    out.push(self.pre_event(step));
                }
                let internal = is_internal(step);
                let message = if step.preview {
                    format!("Preview failed: {error}")
                } else {
                    error.clone()
                };
                out.push(Converted::new(Payload::DiagnosticEvent(self.diagnostic(
                    Severity::Error,
                    (!internal).then_some(&step.urn),
                    &message,
                ))));
                if !step.preview {
                    out.push(Converted {
                        payload: Payload::ResOpFailedEvent(ResOpFailedEvent {
                            metadata: step_metadata(
                                step,
                                pulumi_op(step, self.operation),
                                self.operation,
                                None,
                            ),
                            status: 0,
                            steps: self.steps,
                        }),
                        internal,
                    });
                }
                out
            }
            EngineEvent::Diagnostic {
                severity: Severity::Debug,
                ..
            } => vec![],
            EngineEvent::Diagnostic {
                severity,
                urn,
                message,
            } => vec![Converted::new(Payload::DiagnosticEvent(self.diagnostic(
                *severity,
                urn.as_ref(),
                message,
            )))],
            EngineEvent::PolicyPacks(packs) => {
                for pack in packs {
                    self.packs.insert(pack.name.clone(), pack.version.clone());
                }
                vec![Converted::new(Payload::PolicyLoadEvent(Empty {}))]
            }
            EngineEvent::PolicyViolation {
                pack,
                urn,
                violation,
            } => {
                let message = if violation.message.is_empty() {
                    &violation.description
                } else {
                    &violation.message
                };
                vec![Converted::new(Payload::PolicyEvent(PolicyEvent {
                    resource_urn: urn
                        .as_ref()
                        .or(violation.urn.as_ref())
                        .map(|u| u.to_string())
                        .unwrap_or_default(),
                    message: self.message(message),
                    color: COLOR,
                    policy_name: violation.policy.clone(),
                    policy_pack_name: pack.name.clone(),
                    policy_pack_version: pack.version.clone(),
                    policy_pack_version_tag: pack.version.clone(),
                    enforcement_level: violation.enforcement.as_str(),
                    severity: violation.severity.map_or("", |s| s.as_str()),
                }))]
            }
            EngineEvent::PolicyRemediation { pack, urn, policy } => {
                vec![Converted::new(Payload::PolicyRemediationEvent(
                    PolicyRemediationEvent {
                        resource_urn: urn.to_string(),
                        color: COLOR,
                        policy_name: policy.clone(),
                        policy_pack_name: pack.name.clone(),
                        policy_pack_version: pack.version.clone(),
                        policy_pack_version_tag: pack.version.clone(),
                    },
                ))]
            }
            EngineEvent::Outputs { urn, outputs } => {
                let metadata = match self.components.get(urn) {
                    Some(step) => step_metadata(
                        step,
                        pulumi_op(step, self.operation),
                        self.operation,
                        Some(outputs),
                    ),
                    None => outputs_only_metadata(urn, outputs),
                };
                vec![Converted::new(Payload::ResOutputsEvent(ResourceEvent {
                    metadata,
                    planning: self.components.get(urn).is_some_and(|s| s.preview),
                }))]
            }
            EngineEvent::Summary {
                operation,
                preview,
                changes,
                unchanged,
                duration,
                succeeded,
                ..
            } => {
                // Refresh and import run no policy packs (Pulumi leaves them out there).
                let policy_packs = match operation {
                    Operation::Update | Operation::Destroy => self.packs.clone(),
                    Operation::Refresh | Operation::Import => BTreeMap::new(),
                };
                vec![Converted::new(Payload::SummaryEvent(SummaryEvent {
                    maybe_corrupt: false,
                    duration_seconds: whole_seconds_up(*duration),
                    resource_changes: change_summary(
                        changes.iter().map(|(op, n)| (*op, *n)),
                        *unchanged,
                    ),
                    policy_packs,
                    is_preview: *preview,
                    result: if *succeeded { "succeeded" } else { "failed" },
                }))]
            }
        }
    }

    /// The `resourcePreEvent` of `step` (a refresh's step is announced as `refresh`).
    fn pre_event(&self, step: &StepInfo) -> Converted {
        let op = if self.operation == Operation::Refresh
            && matches!(step.op, StepOp::Refresh | StepOp::Update | StepOp::Discard)
        {
            "refresh"
        } else {
            pulumi_op(step, self.operation)
        };
        Converted {
            payload: Payload::ResourcePreEvent(ResourceEvent {
                metadata: step_metadata(step, op, self.operation, None),
                planning: step.preview,
            }),
            internal: is_internal(step),
        }
    }

    fn diagnostic(&self, severity: Severity, urn: Option<&Urn>, message: &str) -> DiagnosticEvent {
        let (prefix, severity) = match severity {
            Severity::Debug => ("debug: ", "debug"),
            Severity::Info => ("", "info"),
            Severity::Warning => ("warning: ", "warning"),
            Severity::Error => ("error: ", "error"),
        };
        DiagnosticEvent {
            urn: urn.map(|u| u.to_string()).unwrap_or_default(),
            prefix: prefix.to_owned(),
            message: self.message(&without_ansi_colors(message)),
            color: COLOR,
            severity,
        }
    }

    fn message(&self, message: &str) -> String {
        filtered_message(&self.secrets, message)
    }
}

/// The secrets [`filtered_message`] replaces: longest first, so a secret containing another is
/// replaced whole.
pub(super) fn secret_filter(mut secrets: Vec<String>) -> Vec<String> {
    secrets.retain(|s| !s.is_empty());
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

/// A message as Pulumi's diagnostics carry it: the `secrets` (longest first) replaced by
/// `[secret]`, ending in a newline.
pub(super) fn filtered_message(secrets: &[String], message: &str) -> String {
    let mut out = message.to_owned();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), SECRET);
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `message` without the ANSI color and erase-line sequences (`ESC [ digits/; m|K`) Pulumi
/// removes from diagnostics; every other control character stays (escaped in the JSON).
fn without_ansi_colors(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.contains('\x1b') {
        return message.into();
    }
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let params = after
            .find(|c: char| !c.is_ascii_digit() && c != ';')
            .unwrap_or(after.len());
        match after[params..].chars().next() {
            Some('m' | 'K') => rest = &after[params + 1..],
            _ => {
                out.push_str("\x1b[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.into()
}

/// Pulumi's name for what `step` does, in an `operation`: a resource dropped from the state is
/// a `delete` (Pulumi deletes what is retained, or gone in a refresh, with a delete step), or a
/// `discard` when it was read; a refresh that found no drift leaves its resource the `same`.
pub(super) fn pulumi_op(step: &StepInfo, operation: Operation) -> &'static str {
    let external = step.old.as_ref().is_some_and(|old| old.external);
    match step.op {
        StepOp::Discard if external => "discard",
        StepOp::Discard => "delete",
        StepOp::Refresh if operation == Operation::Refresh => "same",
        op => op.label(),
    }
}

/// Pulumi's name for a kind of step in a change summary.
fn summary_op(op: StepOp) -> &'static str {
    match op {
        StepOp::Discard => "delete",
        StepOp::Refresh => "same",
        op => op.label(),
    }
}

/// Whether the step is the program's own operation: the halves of a replacement are not
/// (Pulumi's `Logical`), so they are left out of summaries.
pub(super) fn is_logical(op: StepOp) -> bool {
    !matches!(
        op,
        StepOp::CreateReplacement
            | StepOp::DeleteReplaced
            | StepOp::ReadReplacement
            | StepOp::ImportReplacement
    )
}

/// A default provider's step: one of Pulumi's internal events.
pub(super) fn is_internal(step: &StepInfo) -> bool {
    step.resource_type.starts_with("pulumi:providers:") && step.urn.name().starts_with("default")
}

/// Pulumi's `changeSummary` / `resourceChanges`: counts of logical steps per kind, unchanged
/// resources as `same`.
pub(super) fn change_summary(
    changes: impl Iterator<Item = (StepOp, usize)>,
    unchanged: usize,
) -> BTreeMap<&'static str, usize> {
    let mut summary = BTreeMap::new();
    for (op, n) in changes {
        if is_logical(op) && n > 0 {
            *summary.entry(summary_op(op)).or_default() += n;
        }
    }
    if unchanged > 0 {
        *summary.entry("same").or_default() += unchanged;
    }
    summary
}

/// Top-level keys the step's changes touch, in order (Pulumi's `diffs` / `diffReasons`).
pub(super) fn diff_keys(step: &StepInfo) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for change in &step.changes {
        let key = match change.path.elements().first() {
            Some(cairn_engine::path::PathElement::Key(key)) => key.clone(),
            _ => change.path.to_string(),
        };
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// A change's kind as Pulumi's detailed diffs name it (`update`, `add-replace`, ...).
pub(super) fn diff_kind(kind: ChangeKind, replace: bool) -> &'static str {
    match (kind, replace) {
        (ChangeKind::Add, false) => "add",
        (ChangeKind::Add, true) => "add-replace",
        (ChangeKind::Update, false) => "update",
        (ChangeKind::Update, true) => "update-replace",
        (ChangeKind::Delete, false) => "delete",
        (ChangeKind::Delete, true) => "delete-replace",
    }
}

/// The step's detailed diff, path → (kind, whether it compares inputs), for the steps Pulumi
/// gives one (updates, replacements, refreshes); `None` for the others and when nothing is
/// known property by property. A refresh compares what the provider read with the recorded
/// state; the other steps compare inputs.
pub(super) fn detailed_diff(
    step: &StepInfo,
    operation: Operation,
) -> Option<BTreeMap<String, (&'static str, bool)>> {
    let has_one = matches!(
        step.op,
        StepOp::Update | StepOp::Replace | StepOp::CreateReplacement | StepOp::Refresh
    );
    if !has_one || step.changes.is_empty() {
        return None;
    }
    let input_diff = operation != Operation::Refresh;
    Some(
        step.changes
            .iter()
            .map(|c| {
                (
                    c.path.to_string(),
                    (diff_kind(c.kind, c.replace), input_diff),
                )
            })
            .collect(),
    )
}

/// The provider reference a step names (the new state's, else the old one's).
pub(super) fn step_provider(step: &StepInfo) -> String {
    step.new
        .as_ref()
        .or(step.old.as_ref())
        .and_then(|s| s.provider.as_ref())
        .map(|p| p.to_string())
        .unwrap_or_default()
}

fn step_metadata(
    step: &StepInfo,
    op: &'static str,
    operation: Operation,
    outputs: Option<&PropertyMap>,
) -> StepMetadata {
    StepMetadata {
        op,
        urn: step.urn.to_string(),
        resource_type: step.resource_type.clone(),
        old: step.old.as_deref().map(|s| state_metadata(s, None)),
        new: step.new.as_deref().map(|s| state_metadata(s, outputs)),
        keys: step.replace_keys.clone(),
        diffs: diff_keys(step),
        detailed_diff: detailed_diff(step, operation).map(|diff| {
            diff.into_iter()
                .map(|(path, (diff_kind, input_diff))| {
                    (
                        path,
                        ApiPropertyDiff {
                            diff_kind,
                            input_diff,
                        },
                    )
                })
                .collect()
        }),
        logical: is_logical(step.op),
        provider: step_provider(step),
    }
}

/// The metadata of outputs registered for a resource no step of this display described.
fn outputs_only_metadata(urn: &Urn, outputs: &PropertyMap) -> StepMetadata {
    StepMetadata {
        op: "same",
        urn: urn.to_string(),
        resource_type: urn.qualified_type().to_owned(),
        old: None,
        new: Some(StateMetadata {
            resource_type: urn.qualified_type().to_owned(),
            urn: urn.to_string(),
            custom: false,
            delete: false,
            id: String::new(),
            parent: String::new(),
            protect: false,
            taint: false,
            external: false,
            retain_on_delete: false,
            inputs: Json::Object(Map::new()),
            outputs: blinded(outputs),
            provider: String::new(),
            init_errors: vec![],
        }),
        keys: vec![],
        diffs: vec![],
        detailed_diff: None,
        logical: true,
        provider: String::new(),
    }
}

fn state_metadata(state: &ResourceState, outputs: Option<&PropertyMap>) -> StateMetadata {
    StateMetadata {
        resource_type: state.resource_type.as_str().to_owned(),
        urn: state.urn.to_string(),
        custom: state.custom,
        delete: state.delete,
        id: state.id.clone().unwrap_or_default(),
        parent: state
            .parent
            .as_ref()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        protect: state.protect,
        taint: state.taint,
        external: state.external,
        retain_on_delete: state.retain_on_delete,
        inputs: blinded(&state.inputs),
        outputs: blinded(outputs.unwrap_or(&state.outputs)),
        provider: state
            .provider
            .as_ref()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        init_errors: state.init_errors.clone(),
    }
}

/// Pulumi's `BlindingCrypter`: every secret's ciphertext is `[secret]`.
struct Blinding;

impl Crypter for Blinding {
    fn encrypt(&self, _plaintext: &str) -> Result<String, SecretsError> {
        Ok(SECRET.to_owned())
    }
    fn decrypt(&self, _ciphertext: &str) -> Result<String, SecretsError> {
        Ok(SECRET.to_owned())
    }
}

/// A property map as events carry it: the state format with secrets blinded and text assets'
/// text elided (`null` if it cannot be encoded, as Pulumi leaves such a map out).
fn blinded(map: &PropertyMap) -> Json {
    match encode_property_map(map, SecretsMode::Encrypt(&Blinding)) {
        Ok(encoded) => {
            let mut json = Json::Object(encoded);
            elide_asset_text(&mut json);
            json
        }
        Err(e) => {
            tracing::debug!("a property map could not be encoded for an event: {e}");
            Json::Null
        }
    }
}

/// Replaces the text of every encoded text asset (archive members too) by [`ELIDED`].
fn elide_asset_text(json: &mut Json) {
    match json {
        Json::Object(map) => {
            let is_asset = map.get(SIG_KEY).and_then(Json::as_str) == Some(ASSET_SIG);
            if is_asset && let Some(text) = map.get_mut("text") {
                *text = Json::String(ELIDED.to_owned());
            }
            for value in map.values_mut() {
                elide_asset_text(value);
            }
        }
        Json::Array(items) => items.iter_mut().for_each(elide_asset_text),
        _ => {}
    }
}

/// Pulumi's `durationSeconds`: whole seconds, rounded up.
fn whole_seconds_up(duration: Duration) -> u64 {
    let secs = duration.as_secs();
    if duration.subsec_nanos() > 0 {
        secs + 1
    } else {
        secs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::test_support::*;
    use cairn_engine::PropertyValue;
    use cairn_engine::asset::Asset;
    use cairn_engine::deploy::events::EventSink;
    use cairn_engine::props;
    use cairn_engine::state::codec::{SECRET_SIG, UNKNOWN_SENTINEL};
    use cairn_engine::urn::ROOT_STACK_TYPE;

    /// The lines a display wrote, parsed.
    fn lines(text: &str) -> Vec<Json> {
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// The one event kind a line carries (besides `sequence` and `timestamp`).
    fn kind(line: &Json) -> &str {
        let keys: Vec<&String> = line
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "sequence" && *k != "timestamp")
            .collect();
        assert_eq!(keys.len(), 1, "exactly one event per line: {line}");
        keys[0]
    }

    fn stream(events: Vec<EngineEvent>, settings: EventSettings) -> Vec<Json> {
        let (display, buf) = json_display(false, false, settings);
        for event in events {
            display.emit(event);
        }
        drop(display);
        lines(&buf.text())
    }

    fn settings() -> EventSettings {
        EventSettings {
            config: [
                ("proj:name".to_owned(), "world".to_owned()),
                ("proj:token".to_owned(), SECRET.to_owned()),
            ]
            .into(),
            secrets: vec!["tok-123".to_owned()],
            log: None,
        }
    }

    #[test]
    fn an_update_streams_as_pulumi_engine_events() {
        let lines = stream(update_events(false), settings());
        for (i, line) in lines.iter().enumerate() {
            assert_eq!(line["sequence"], i, "sequence numbers count from 0: {line}");
            assert!(line["timestamp"].as_u64().unwrap() > 1_600_000_000);
            kind(line);
        }
        let kinds: Vec<&str> = lines.iter().map(kind).collect();
        assert_eq!(kinds.first(), Some(&"preludeEvent"));
        assert_eq!(kinds.last(), Some(&"cancelEvent"));
        assert_eq!(kinds[kinds.len() - 2], "summaryEvent");
        assert_eq!(
            lines[0]["preludeEvent"],
            serde_json::json!({"config": {"proj:name": "world", "proj:token": "[secret]"}})
        );
        // Every step is announced, then reports its outputs (a component's only when it
        // registers them).
        let pre: Vec<(&str, &str)> = lines
            .iter()
            .filter(|l| kind(l) == "resourcePreEvent")
            .map(|l| {
                let m = &l["resourcePreEvent"]["metadata"];
                (m["op"].as_str().unwrap(), m["urn"].as_str().unwrap())
            })
            .collect();
        assert_eq!(pre.len(), 7, "{pre:?}");
        assert_eq!(
            pre[0],
            (
                "same",
                "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev"
            )
        );
        let update = lines
            .iter()
            .find(|l| l["resOutputsEvent"]["metadata"]["op"] == "update")
            .unwrap();
        assert_eq!(
            update["resOutputsEvent"],
            serde_json::json!({"metadata": {
                "op": "update",
                "urn": "urn:pulumi:dev::proj::aws:s3:Bucket::logs",
                "type": "aws:s3:Bucket",
                "old": null,
                "new": null,
                "diffs": ["tags", "size", "legacy", "password"],
                "detailedDiff": {
                    "legacy": {"diffKind": "delete", "inputDiff": true},
                    "password": {"diffKind": "update", "inputDiff": true},
                    "size": {"diffKind": "add", "inputDiff": true},
                    "tags.env": {"diffKind": "update", "inputDiff": true},
                },
                "logical": true,
                "provider": "",
            }}),
            "no `planning` outside a preview"
        );
        let replace = lines
            .iter()
            .find(|l| l["resourcePreEvent"]["metadata"]["op"] == "replace")
            .unwrap();
        assert_eq!(
            replace["resourcePreEvent"]["metadata"]["keys"],
            serde_json::json!(["ami"])
        );
        assert_eq!(
            replace["resourcePreEvent"]["metadata"]["detailedDiff"],
            serde_json::json!({"ami": {"diffKind": "update-replace", "inputDiff": true}})
        );
        let half = lines
            .iter()
            .find(|l| l["resourcePreEvent"]["metadata"]["op"] == "create-replacement")
            .unwrap();
        assert!(
            half["resourcePreEvent"]["metadata"]
                .get("logical")
                .is_none()
        );
        let diagnostics: Vec<&Json> = lines
            .iter()
            .filter_map(|l| l.get("diagnosticEvent"))
            .collect();
        assert_eq!(
            diagnostics,
            [
                &serde_json::json!({"urn": "urn:pulumi:dev::proj::aws:s3:Bucket::logs",
                "prefix": "warning: ", "message": "versioning is disabled\n",
                "color": "never", "severity": "warning"})
            ],
            "the debug diagnostic is left out"
        );
        // The stack's outputs come with the stack's last step.
        let outputs = lines
            .iter()
            .rfind(|l| l["resOutputsEvent"]["metadata"]["type"] == ROOT_STACK_TYPE)
            .unwrap();
        assert_eq!(outputs["resOutputsEvent"]["metadata"]["op"], "same");
        assert_eq!(
            *lines.iter().rfind(|l| kind(l) == "summaryEvent").unwrap(),
            serde_json::json!({"sequence": lines.len() - 2, "timestamp": lines[0]["timestamp"],
                "summaryEvent": {"maybeCorrupt": false, "durationSeconds": 2,
                "resourceChanges": {"create": 1, "delete": 1, "replace": 1, "same": 1, "update": 1},
                "PolicyPacks": {}, "isPreview": false, "result": "succeeded"}})
        );
    }

    #[test]
    fn a_preview_step_is_planning() {
        let mut step = pet(StepOp::Create);
        step.preview = true;
        let lines = stream(
            vec![
                EngineEvent::StepStarted(step.clone()),
                EngineEvent::StepFinished {
                    step,
                    duration: ms(1),
                },
            ],
            EventSettings::default(),
        );
        assert_eq!(lines[0]["resourcePreEvent"]["planning"], true);
        assert_eq!(lines[1]["resOutputsEvent"]["planning"], true);
    }

    /// Pulumi's `TestEmptyDetailedDiff`: the metadata's shape, key for key.
    #[test]
    fn step_metadata_has_pulumis_shape() {
        let step = step(StepOp::Import, "a:b:C", "name");
        let metadata = step_metadata(&step, "import", Operation::Import, None);
        assert_eq!(
            serde_json::to_string(&metadata).unwrap(),
            r#"{"op":"import","urn":"urn:pulumi:dev::proj::a:b:C::name","type":"a:b:C","old":null,"new":null,"detailedDiff":null,"logical":true,"provider":""}"#
        );
    }

    #[test]
    fn states_are_blinded() {
        let urn = urn("random:index:RandomPassword", "pw");
        let mut step = step(StepOp::Create, "random:index:RandomPassword", "pw");
        let mut new = (*state(
            &urn,
            props! {"length" => 12i64, "seed" => secret("hunter2"), "later" => PropertyValue::Computed,
                "file" => PropertyValue::Asset(Box::new(Asset::from_text("hunter2 in a file")))},
            props! {"result" => output(Some("hunter3".into()), true), "id" => "pw-id"},
        ))
        .clone();
        new.provider = Some(
            cairn_engine::state::ProviderReference::parse(
                "urn:pulumi:dev::proj::pulumi:providers:random::default::p-id",
            )
            .unwrap(),
        );
        new.parent = Some(urn.clone());
        new.protect = true;
        step.new = Some(std::sync::Arc::new(new));
        let lines = stream(
            vec![EngineEvent::StepFinished {
                step,
                duration: ms(1),
            }],
            EventSettings::default(),
        );
        let text = lines
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(!text.contains("hunter"), "{text}");
        let secret = serde_json::json!({SIG_KEY: SECRET_SIG, "ciphertext": "[secret]"});
        let new = &lines[1]["resOutputsEvent"]["metadata"]["new"];
        assert_eq!(new["inputs"]["seed"], secret);
        assert_eq!(new["outputs"]["result"], secret);
        assert_eq!(new["inputs"]["later"], UNKNOWN_SENTINEL);
        assert_eq!(new["inputs"]["file"]["text"], ELIDED);
        assert_eq!(new["inputs"]["length"], 12);
        assert_eq!(new["id"], "pw-id");
        assert_eq!(new["custom"], true);
        assert_eq!(new["protect"], true);
        assert_eq!(new["parent"], urn.as_str());
        assert_eq!(
            new["provider"],
            "urn:pulumi:dev::proj::pulumi:providers:random::default::p-id"
        );
        assert_eq!(
            lines[1]["resOutputsEvent"]["metadata"]["provider"],
            new["provider"]
        );
    }

    /// Pulumi's `TestShowEvents`: internal events (default providers' steps) go to the event
    /// log, not to stdout; both number the events alike.
    #[test]
    fn the_event_log_has_every_event_stdout_not_the_internal_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let log = EventLog::create(&path).unwrap();
        let provider = step(StepOp::Create, "pulumi:providers:random", "default_4_21_4");
        let (display, buf) = json_display(
            false,
            false,
            EventSettings {
                log: Some(log),
                ..EventSettings::default()
            },
        );
        for s in [provider, pet(StepOp::Create)] {
            display.emit(EngineEvent::StepStarted(s.clone()));
            display.emit(EngineEvent::StepFinished {
                step: s,
                duration: ms(1),
            });
        }
        drop(display);
        let stdout = buf.text();
        let logged = std::fs::read_to_string(&path).unwrap();
        assert!(!stdout.contains("default_4_21_4"), "{stdout}");
        assert!(stdout.contains("RandomPet"), "{stdout}");
        assert!(logged.contains("default_4_21_4"), "{logged}");
        let logged = lines(&logged);
        assert_eq!(logged.len(), 5, "2 steps × (pre + outputs) + cancel");
        let sequences: Vec<u64> = logged
            .iter()
            .map(|l| l["sequence"].as_u64().unwrap())
            .collect();
        assert_eq!(sequences, [0, 1, 2, 3, 4]);
        let shown: Vec<u64> = lines(&stdout)
            .iter()
            .map(|l| l["sequence"].as_u64().unwrap())
            .collect();
        assert_eq!(shown, [2, 3, 4], "stdout keeps the log's numbers");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn concurrent_events_are_logged_as_whole_lines_in_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let display =
            std::sync::Arc::new(super::super::Display::new(super::super::DisplayOptions {
                events: EventSettings {
                    log: Some(EventLog::create(&path).unwrap()),
                    ..EventSettings::default()
                },
                ..super::super::DisplayOptions::plain(Box::new(std::io::sink()))
            }));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let display = std::sync::Arc::clone(&display);
                std::thread::spawn(move || {
                    for i in 0..50 {
                        display.emit(EngineEvent::StepFinished {
                            step: step(
                                StepOp::Create,
                                "random:index:RandomPet",
                                &format!("p{t}-{i}"),
                            ),
                            duration: ms(1),
                        });
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        display.finish();
        let logged = lines(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(logged.len(), 8 * 50 * 2 + 1);
        for (i, line) in logged.iter().enumerate() {
            assert_eq!(line["sequence"], i);
        }
    }

    #[test]
    fn a_new_phase_starts_the_log_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let log = EventLog::create(&path).unwrap();
        for phase in ["preview", "update"] {
            let (display, _buf) = json_display(
                phase == "preview",
                false,
                EventSettings {
                    log: Some(log.clone()),
                    ..EventSettings::default()
                },
            );
            display.emit(EngineEvent::Diagnostic {
                severity: Severity::Info,
                urn: None,
                message: phase.into(),
            });
        }
        let logged = lines(&std::fs::read_to_string(&path).unwrap());
        assert_eq!(logged.len(), 2, "{logged:?}");
        assert_eq!(logged[0]["diagnosticEvent"]["message"], "update\n");
        assert_eq!(logged[1]["sequence"], 1);
    }

    #[test]
    fn an_event_log_that_cannot_be_created_names_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("events.jsonl");
        let Err(e) = EventLog::create(&path) else {
            panic!("created a file in a missing directory");
        };
        assert!(
            format!("{e:#}").contains(&path.display().to_string()),
            "{e:#}"
        );
    }

    #[test]
    fn failures_and_messages() {
        let failing = pet(StepOp::Create);
        let lines = stream(
            vec![
                EngineEvent::Started {
                    operation: Operation::Update,
                    preview: false,
                },
                EngineEvent::StepStarted(failing.clone()),
                EngineEvent::StepFailed {
                    step: failing,
                    error: "the token tok-123 was refused".into(),
                    duration: ms(1),
                },
                EngineEvent::Diagnostic {
                    severity: Severity::Info,
                    urn: None,
                    message: "\x1b[31mHello, World!\x1b[0m".into(),
                },
                summary_event(false, &[], 0, false),
            ],
            settings(),
        );
        let kinds: Vec<&str> = lines.iter().map(kind).collect();
        assert_eq!(
            kinds,
            [
                "preludeEvent",
                "resourcePreEvent",
                "diagnosticEvent",
                "resOpFailedEvent",
                "diagnosticEvent",
                "summaryEvent",
                "cancelEvent"
            ]
        );
        assert_eq!(
            lines[2]["diagnosticEvent"],
            serde_json::json!({"urn": "urn:pulumi:dev::proj::random:index:RandomPet::pet",
                "prefix": "error: ", "message": "the token [secret] was refused\n",
                "color": "never", "severity": "error"}),
            "known secrets are filtered from messages"
        );
        assert_eq!(lines[3]["resOpFailedEvent"]["status"], 0);
        assert_eq!(lines[3]["resOpFailedEvent"]["steps"], 0);
        // Pulumi's `TestRemoveANSI`.
        assert_eq!(lines[4]["diagnosticEvent"]["message"], "Hello, World!\n");
        assert!(lines[4]["diagnosticEvent"].get("prefix").is_none());
        assert_eq!(lines[5]["summaryEvent"]["result"], "failed");
        assert_eq!(
            lines[5]["summaryEvent"]["resourceChanges"],
            serde_json::json!({})
        );
    }

    #[test]
    fn refreshes_are_announced_as_refresh_and_end_as_what_they_found() {
        let events = |op: StepOp| {
            let mut s = pet(op);
            let urn = s.urn.clone();
            s.old = Some(state(&urn, props! {}, props! {"a" => 1i64}));
            vec![
                EngineEvent::Started {
                    operation: Operation::Refresh,
                    preview: false,
                },
                EngineEvent::StepFinished {
                    step: s,
                    duration: ms(0),
                },
            ]
        };
        // (cairn's step, Pulumi's result op)
        for (op, result) in [
            (StepOp::Refresh, "same"),
            (StepOp::Update, "update"),
            (StepOp::Discard, "delete"),
        ] {
            let lines = stream(events(op), EventSettings::default());
            assert_eq!(
                lines[1]["resourcePreEvent"]["metadata"]["op"], "refresh",
                "{op}"
            );
            assert_eq!(
                lines[2]["resOutputsEvent"]["metadata"]["op"], result,
                "{op}"
            );
        }
    }

    #[test]
    fn change_summaries_count_logical_steps() {
        type Case = (Vec<(StepOp, usize)>, usize, Json);
        // (changes, unchanged, summary)
        let cases: Vec<Case> = vec![
            (vec![], 0, serde_json::json!({})),
            (vec![], 3, serde_json::json!({"same": 3})),
            (
                vec![
                    (StepOp::Replace, 2),
                    (StepOp::CreateReplacement, 2),
                    (StepOp::DeleteReplaced, 2),
                ],
                0,
                serde_json::json!({"replace": 2}),
            ),
            (
                vec![
                    (StepOp::Delete, 1),
                    (StepOp::Discard, 2),
                    (StepOp::Create, 0),
                ],
                1,
                serde_json::json!({"delete": 3, "same": 1}),
            ),
            (
                vec![(StepOp::Import, 2), (StepOp::ImportReplacement, 1)],
                0,
                serde_json::json!({"import": 2}),
            ),
        ];
        for (changes, unchanged, expected) in cases {
            let summary = change_summary(changes.iter().copied(), unchanged);
            assert_eq!(
                serde_json::to_value(&summary).unwrap(),
                expected,
                "{changes:?}"
            );
        }
    }

    #[test]
    fn durations_round_up_to_whole_seconds() {
        for (duration, seconds) in [
            (Duration::ZERO, 0),
            (Duration::from_millis(1), 1),
            (Duration::from_secs(2), 2),
            (Duration::from_millis(2001), 3),
        ] {
            assert_eq!(whole_seconds_up(duration), seconds, "{duration:?}");
        }
    }
}
