//! Renders the engine's event stream: a live progress view on a terminal, plain lines for logs, or JSON lines.
//!
//! [`Display`] is an [`EventSink`]. It has three modes:
//!
//! * **Plain** (not a TTY): a line per resource, written once when its step ends, in the order
//!   steps end; a planned step (a preview) is written when it is planned. Stable for logs and tests.
//! * **Interactive** (a TTY): the same lines, plus a live area under them listing running steps
//!   with their elapsed time, redrawn with ANSI cursor movement on every event and every 200 ms.
//!   Both modes format each line with [`format_step_line`].
//! * **JSON** (`--json`): one JSON object per event, one per line (described below).
//!
//! Secret values are shown as `[secret]` and unknowns as `[unknown]` in every mode unless
//! `show_secrets` is set. Diagnostic messages and step errors are printed as the engine gives
//! them: they are text, not values, so nothing in them can be masked here.
//!
//! Names, types, keys, values, messages and errors come from programs, providers and state
//! files, so no control character of theirs reaches the terminal (see [`crate::terminal`]):
//! single-line fields are shown with `visible_line`, messages with their continuation lines
//! indented, strings as JSON string literals with every control character escaped, and the
//! writer passes all text through `visible_text` (only the live area's own cursor movements
//! are written raw). JSON lines escape DEL, C1 controls and bidi characters too (as `\uXXXX`,
//! which decodes to the original).
//!
//! # Human output
//!
//! ```text
//!   +  create   random:index:RandomPet  pet  created (0.4s)
//!   ~  update   aws:s3:Bucket  logs  updated (1.2s)
//!       ~ tags.env: "dev" => "prod"
//!       + size: 3
//!       - legacy: true
//! warning: logs: bucket versioning is disabled
//!
//! Outputs:
//!     url: "https://example.com"
//!
//! Resources:
//!     + 1 created
//!     ~ 1 updated
//!     2 changes. 4 unchanged
//!
//! Duration: 1.6s
//! ```
//!
//! Symbols: `+` create, `~` update and refresh, `+-` replace, `++` create-replacement,
//! `--` delete-replaced, `-` delete and discard, `<=` read and read-replacement, `=` import and
//! import-replacement, blank for same. `same` steps, `refresh` steps without drift and
//! debug diagnostics are hidden unless `show_sames` (debug: never). The diff of a replacement is
//! shown under its `replace` step only, not again under `create-replacement`/`delete-replaced`.
//! Outputs of the root stack resource (`pulumi:pulumi:Stack`) are printed with the summary.
//!
//! # JSON lines
//!
//! Each line is one object; `type` names the event and keys come in this order:
//!
//! | `type`         | further keys                                                                    |
//! |----------------|---------------------------------------------------------------------------------|
//! | `started`      | `operation` (`update`, `refresh`, `destroy`), `preview`                         |
//! | `stepStarted`  | `op`, `urn`, `resourceType`, `preview`, `changes`, `replaceKeys`                |
//! | `stepFinished` | as `stepStarted`, then `durationMs`                                             |
//! | `stepFailed`   | as `stepStarted`, then `error`, `durationMs`                                    |
//! | `diagnostic`   | `severity` (`debug`, `info`, `warning`, `error`), `urn` (or `null`), `message`  |
//! | `outputs`      | `urn`, `outputs` (an object of values)                                          |
//! | `summary`      | `operation`, `preview`, `changes` (op → count), `unchanged`, `durationMs`, `succeeded` |
//!
//! `op` is a step label: `same`, `create`, `update`, `delete`, `replace`, `create-replacement`,
//! `delete-replaced`, `read`, `read-replacement`, `refresh`, `import`, `import-replacement`,
//! `discard`. Each element of `changes` is
//! `{"path": "tags.env", "kind": "add"|"update"|"delete", "old": v, "new": v, "replace": bool}`,
//! `old`/`new` left out when absent. Durations are whole milliseconds.
//!
//! Values are plain JSON, except: a secret is `"[secret]"` (its contents with `show_secrets`), an
//! unknown is `"[unknown]"`, a non-finite number is its string (`"NaN"`, `"inf"`), a resource
//! reference is its URN string, an output is its value (or the markers above), an asset is
//! `{"asset": {"hash": "…"|null, "source": "text"|"path"|"uri"|"hash", "location": "…"}}` and an
//! archive `{"archive": {"hash": …, "source": "assets"|"path"|"uri"|"hash", "location": "…",
//! "members": n}}` (`location` for `path`/`uri` only, `members` for `assets` only).
//!
//! ```text
//! {"type":"stepFinished","op":"update","urn":"urn:pulumi:dev::p::aws:s3:Bucket::logs","resourceType":"aws:s3:Bucket","preview":false,"changes":[{"path":"tags.env","kind":"update","old":"dev","new":"prod","replace":false}],"replaceKeys":[],"durationMs":1200}
//! {"type":"summary","operation":"update","preview":false,"changes":{"create":1,"update":1},"unchanged":4,"durationMs":1612,"succeeded":true}
//! ```

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cairn_engine::asset::{Archive, ArchiveSource, Asset, AssetSource};
use cairn_engine::deploy::events::{
    ChangeKind, EngineEvent, EventSink, Operation, PropertyChange, Severity, StepInfo, StepOp,
};
use cairn_engine::path::{PathElement, PropertyPath};
use cairn_engine::urn::ROOT_STACK_TYPE;
use cairn_engine::{PropertyMap, PropertyValue, Urn};
use serde_json::{Map, Value as Json};

use crate::terminal;

/// How often the live area is redrawn when no event arrives.
const TICK: Duration = Duration::from_millis(200);
/// At most this many running steps are listed in the live area.
const MAX_LIVE: usize = 20;
/// Indentation of the lines under a step (diffs, errors).
const DETAIL_INDENT: &str = "      ";
/// Shown in place of a secret value.
const SECRET: &str = "[secret]";
/// Shown in place of an unknown value.
const UNKNOWN: &str = "[unknown]";

/// How a [`Display`] renders, and where to.
pub struct DisplayOptions {
    /// One JSON object per event per line (see the module docs).
    pub json: bool,
    /// The writer is a terminal: keep a live area of running steps, redrawn in place.
    pub interactive: bool,
    /// Show secret values instead of `[secret]`.
    pub show_secrets: bool,
    /// Show resources that do not change.
    pub show_sames: bool,
    /// Where output goes (stdout, or a buffer in tests).
    pub writer: Box<dyn Write + Send>,
}

/// Renders engine events; safe to call from many tasks at once.
pub struct Display {
    shared: Arc<Shared>,
    ticker: Mutex<Option<Ticker>>,
    tracked: Mutex<Tracked>,
}

/// What the command needs to know of the events besides their rendering.
#[derive(Default)]
struct Tracked {
    /// Steps started and not yet ended (all modes): the operations in flight.
    in_flight: HashSet<(Urn, StepOp)>,
    /// Every URN an event named: the resources the deployment met.
    seen: HashSet<Urn>,
}

/// The state every caller (and the redraw thread) shares.
struct Shared {
    json: bool,
    interactive: bool,
    show_secrets: bool,
    show_sames: bool,
    state: Mutex<State>,
}

/// The thread that redraws the live area so elapsed times advance.
struct Ticker {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<()>,
}

/// Mutable rendering state, behind the lock.
struct State {
    writer: Box<dyn Write + Send>,
    /// Steps started and not yet ended (interactive mode only), in start order.
    running: Vec<Running>,
    /// How many lines the live area currently occupies on screen.
    live_lines: usize,
    /// Planned steps already written (a preview may report a step as started and finished).
    planned: HashSet<(Urn, StepOp)>,
    stack_outputs: Option<PropertyMap>,
    failed_steps: usize,
    /// Terminal width: live lines are cut to fit so the redraw can count them.
    width: usize,
}

/// A running step: enough of its [`StepInfo`] to draw its line.
struct Running {
    step: StepInfo,
    since: Instant,
}

/// The status column of a step line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LineStatus {
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
pub struct SummaryInfo {
    pub operation: Operation,
    pub preview: bool,
    /// Steps per kind, counting only changes (as in [`EngineEvent::Summary`]).
    pub changes: Vec<(StepOp, usize)>,
    pub unchanged: usize,
    pub duration: Duration,
    pub succeeded: bool,
    /// Steps that failed (0 when unknown).
    pub failed_steps: usize,
}

impl Display {
    /// A display writing to `options.writer`; interactive mode starts its redraw thread.
    pub fn new(options: DisplayOptions) -> Display {
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|w| *w >= 20)
            .unwrap_or(80);
        let shared = Arc::new(Shared {
            json: options.json,
            interactive: options.interactive && !options.json,
            show_secrets: options.show_secrets,
            show_sames: options.show_sames,
            state: Mutex::new(State {
                writer: options.writer,
                running: Vec::new(),
                live_lines: 0,
                planned: HashSet::new(),
                stack_outputs: None,
                failed_steps: 0,
                width,
            }),
        });
        let ticker = if shared.interactive {
            spawn_ticker(Arc::clone(&shared))
        } else {
            None
        };
        Display {
            shared,
            ticker: Mutex::new(ticker),
            tracked: Mutex::new(Tracked::default()),
        }
    }

    /// How many steps have started and not ended.
    pub fn in_flight(&self) -> usize {
        self.tracked().in_flight.len()
    }

    /// Every URN an event named so far (steps, diagnostics, outputs).
    pub fn seen(&self) -> HashSet<Urn> {
        self.tracked().seen.clone()
    }

    fn tracked(&self) -> MutexGuard<'_, Tracked> {
        self.tracked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn track(&self, event: &EngineEvent) {
        let mut tracked = self.tracked();
        match event {
            EngineEvent::StepStarted(step) => {
                tracked.seen.insert(step.urn.clone());
                if !step.preview {
                    tracked.in_flight.insert((step.urn.clone(), step.op));
                }
            }
            EngineEvent::StepFinished { step, .. } | EngineEvent::StepFailed { step, .. } => {
                tracked.in_flight.remove(&(step.urn.clone(), step.op));
                tracked.seen.insert(step.urn.clone());
            }
            EngineEvent::Diagnostic { urn: Some(urn), .. } | EngineEvent::Outputs { urn, .. } => {
                tracked.seen.insert(urn.clone());
            }
            _ => {}
        }
    }

    /// Stops live redrawing and clears the live area; called on drop, harmless to repeat.
    pub fn finish(&self) {
        let ticker = self
            .ticker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(Ticker { stop, handle }) = ticker {
            drop(stop);
            let _ = handle.join();
        }
        let mut state = self.shared.lock();
        state.running.clear();
        state.write("", self.shared.interactive);
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        self.finish();
    }
}

impl EventSink for Display {
    fn emit(&self, event: EngineEvent) {
        self.track(&event);
        let shared = &self.shared;
        if shared.json {
            // Formatted before taking the lock: only the write is serialised.
            let mut line = terminal::json(&event_to_json(&event, shared.show_secrets));
            line.push('\n');
            shared.lock().write(&line, false);
            return;
        }
        let mut state = shared.lock();
        let text = shared.human(&mut state, event);
        state.write(&text, shared.interactive);
    }
}

fn spawn_ticker(shared: Arc<Shared>) -> Option<Ticker> {
    let (stop, stopped) = mpsc::channel::<()>();
    let handle = std::thread::Builder::new()
        .name("cairn-display".to_owned())
        .spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                let mut state = shared.lock();
                if !state.running.is_empty() {
                    state.write("", true);
                }
            }
        })
        .ok()?;
    Some(Ticker { stop, handle })
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Updates the state for one event; returns the text to print above the live area.
    fn human(&self, state: &mut State, event: EngineEvent) -> String {
        let mut out = String::new();
        match event {
            EngineEvent::Started { .. } => {
                state.running.clear();
                state.planned.clear();
                state.stack_outputs = None;
                state.failed_steps = 0;
            }
            EngineEvent::StepStarted(step) | EngineEvent::StepFinished { step, .. }
                if !is_shown(&step, self.show_sames) => {}
            EngineEvent::StepStarted(step) => {
                if step.preview {
                    if state.planned.insert((step.urn.clone(), step.op)) {
                        out = self.block(&step, LineStatus::Planned, None);
                    }
                } else if self.interactive {
                    state.running.push(Running {
                        step: line_only(&step),
                        since: Instant::now(),
                    });
                }
            }
            EngineEvent::StepFinished { step, duration } => {
                state.stop_running(&step);
                if step.preview {
                    if state.planned.insert((step.urn.clone(), step.op)) {
                        out = self.block(&step, LineStatus::Planned, None);
                    }
                } else {
                    out = self.block(&step, LineStatus::Done(duration), None);
                }
            }
            EngineEvent::StepFailed {
                step,
                error,
                duration,
            } => {
                state.stop_running(&step);
                state.failed_steps += 1;
                state.planned.insert((step.urn.clone(), step.op));
                out = self.block(&step, LineStatus::Failed(duration), Some(&error));
            }
            EngineEvent::Diagnostic {
                severity,
                urn,
                message,
            } => {
                if severity != Severity::Debug {
                    out = format_diagnostic(severity, urn.as_ref(), &message);
                    out.push('\n');
                }
            }
            EngineEvent::Outputs { urn, outputs } => {
                if urn.qualified_type() == ROOT_STACK_TYPE {
                    state.stack_outputs = Some(outputs);
                }
            }
            EngineEvent::Summary {
                operation,
                preview,
                changes,
                unchanged,
                duration,
                succeeded,
            } => {
                state.running.clear();
                if let Some(outputs) = state.stack_outputs.take()
                    && !outputs.is_empty()
                {
                    out.push('\n');
                    out.push_str(&format_outputs(&outputs, self.show_secrets));
                }
                out.push('\n');
                out.push_str(&format_summary(&SummaryInfo {
                    operation,
                    preview,
                    changes: changes.iter().map(|(op, n)| (*op, *n)).collect(),
                    unchanged,
                    duration,
                    succeeded,
                    failed_steps: state.failed_steps,
                }));
            }
        }
        out
    }

    /// A step line, its diff, and its error, each line ending in a newline.
    fn block(&self, step: &StepInfo, status: LineStatus, error: Option<&str>) -> String {
        let mut out = format_step_line(step, status);
        out.push('\n');
        for line in format_diff(step, self.show_secrets) {
            let _ = writeln!(out, "{DETAIL_INDENT}{line}");
        }
        if let Some(error) = error {
            let first = format!("{DETAIL_INDENT}error: ");
            let indent = format!("{DETAIL_INDENT}  ");
            let _ = writeln!(out, "{}", terminal::message(&first, &indent, error));
        }
        out
    }
}

impl State {
    fn stop_running(&mut self, step: &StepInfo) {
        if let Some(i) = self
            .running
            .iter()
            .position(|r| r.step.op == step.op && r.step.urn == step.urn)
        {
            self.running.remove(i);
        }
    }

    /// Writes `text`; in interactive mode erases the live area first and redraws it after.
    fn write(&mut self, text: &str, interactive: bool) {
        let mut out = String::new();
        if interactive && self.live_lines > 0 {
            // Cursor to the start of the live area's first line, then clear to the screen's end.
            let _ = write!(out, "\x1b[{}F\x1b[J", self.live_lines);
        }
        // The one place text reaches the writer: whatever a field forgot, no control
        // character but a newline or tab gets through.
        out.push_str(&terminal::text_of(text));
        if interactive {
            let live = self.live_area();
            self.live_lines = live.len();
            for line in live {
                out.push_str(&line);
                out.push('\n');
            }
        }
        if out.is_empty() {
            return;
        }
        // Output errors (a closed pipe) must not disturb the deployment.
        let _ = self.writer.write_all(out.as_bytes());
        let _ = self.writer.flush();
    }

    fn live_area(&self) -> Vec<String> {
        let now = Instant::now();
        let mut lines: Vec<String> = self
            .running
            .iter()
            .take(MAX_LIVE)
            .map(|r| {
                let elapsed = now.saturating_duration_since(r.since);
                truncate(
                    &terminal::field(&format_step_line(&r.step, LineStatus::Running(elapsed))),
                    self.width,
                )
            })
            .collect();
        if self.running.len() > MAX_LIVE {
            lines.push(format!("  ... and {} more", self.running.len() - MAX_LIVE));
        }
        lines
    }
}

/// Cuts `line` to fewer than `width` characters, so it cannot wrap.
fn truncate(line: &str, width: usize) -> String {
    let max = width.saturating_sub(1).max(1);
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// The parts of a step its line shows (no states or changes), for the live area.
fn line_only(step: &StepInfo) -> StepInfo {
    StepInfo {
        op: step.op,
        urn: step.urn.clone(),
        resource_type: step.resource_type.clone(),
        custom: step.custom,
        old: None,
        new: None,
        changes: Vec::new(),
        replace_keys: Vec::new(),
        preview: step.preview,
    }
}

/// Whether a step gets a line: changes and reads always, the rest with `show_sames`.
fn is_shown(step: &StepInfo, show_sames: bool) -> bool {
    show_sames
        || step.op.is_change()
        || step.op == StepOp::Read
        || (step.op == StepOp::Refresh && !step.changes.is_empty())
}

/// The symbol shown before a step ("+", "+-", ...).
pub fn op_symbol(op: StepOp) -> &'static str {
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
pub fn format_duration(duration: Duration) -> String {
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
pub fn format_step_line(step: &StepInfo, status: LineStatus) -> String {
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
pub fn format_diff(step: &StepInfo, show_secrets: bool) -> Vec<String> {
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
pub fn format_change(
    change: &PropertyChange,
    replace_keys: &[String],
    show_secrets: bool,
) -> String {
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
pub fn format_diagnostic(severity: Severity, urn: Option<&Urn>, message: &str) -> String {
    let label = severity_label(severity);
    let first = match urn {
        Some(urn) => format!("{label}: {}: ", terminal::field(urn.name())),
        None => format!("{label}: "),
    };
    terminal::message(&first, "    ", message)
}

/// The stack outputs section: `Outputs:` then `    name: value` per output.
pub fn format_outputs(outputs: &PropertyMap, show_secrets: bool) -> String {
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
pub fn format_summary(summary: &SummaryInfo) -> String {
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

fn operation_label(operation: Operation) -> &'static str {
    match operation {
        Operation::Update => "update",
        Operation::Refresh => "refresh",
        Operation::Destroy => "destroy",
    }
}

fn severity_label(severity: Severity) -> &'static str {
    match severity {
        Severity::Debug => "debug",
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Error => "error",
    }
}

fn kind_label(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Add => "add",
        ChangeKind::Update => "update",
        ChangeKind::Delete => "delete",
    }
}

fn millis(duration: Duration) -> Json {
    Json::from(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// One event as its JSON line (see the module docs for the schema).
pub fn event_to_json(event: &EngineEvent, show_secrets: bool) -> Json {
    let mut m = Map::new();
    match event {
        EngineEvent::Started { operation, preview } => {
            m.insert("type".into(), "started".into());
            m.insert("operation".into(), operation_label(*operation).into());
            m.insert("preview".into(), (*preview).into());
        }
        EngineEvent::StepStarted(step) => {
            step_json(&mut m, "stepStarted", step, show_secrets);
        }
        EngineEvent::StepFinished { step, duration } => {
            step_json(&mut m, "stepFinished", step, show_secrets);
            m.insert("durationMs".into(), millis(*duration));
        }
        EngineEvent::StepFailed {
            step,
            error,
            duration,
        } => {
            step_json(&mut m, "stepFailed", step, show_secrets);
            m.insert("error".into(), error.as_str().into());
            m.insert("durationMs".into(), millis(*duration));
        }
        EngineEvent::Diagnostic {
            severity,
            urn,
            message,
        } => {
            m.insert("type".into(), "diagnostic".into());
            m.insert("severity".into(), severity_label(*severity).into());
            m.insert(
                "urn".into(),
                urn.as_ref().map_or(Json::Null, |u| u.as_str().into()),
            );
            m.insert("message".into(), message.as_str().into());
        }
        EngineEvent::Outputs { urn, outputs } => {
            m.insert("type".into(), "outputs".into());
            m.insert("urn".into(), urn.as_str().into());
            m.insert("outputs".into(), map_to_json(outputs, show_secrets));
        }
        EngineEvent::Summary {
            operation,
            preview,
            changes,
            unchanged,
            duration,
            succeeded,
        } => {
            m.insert("type".into(), "summary".into());
            m.insert("operation".into(), operation_label(*operation).into());
            m.insert("preview".into(), (*preview).into());
            let counts: Map<String, Json> = changes
                .iter()
                .map(|(op, n)| (op.label().to_owned(), Json::from(*n)))
                .collect();
            m.insert("changes".into(), Json::Object(counts));
            m.insert("unchanged".into(), Json::from(*unchanged));
            m.insert("durationMs".into(), millis(*duration));
            m.insert("succeeded".into(), (*succeeded).into());
        }
    }
    Json::Object(m)
}

fn step_json(m: &mut Map<String, Json>, kind: &str, step: &StepInfo, show_secrets: bool) {
    m.insert("type".into(), kind.into());
    m.insert("op".into(), step.op.label().into());
    m.insert("urn".into(), step.urn.as_str().into());
    m.insert("resourceType".into(), step.resource_type.as_str().into());
    m.insert("preview".into(), step.preview.into());
    let changes = step
        .changes
        .iter()
        .map(|change| {
            let mut c = Map::new();
            c.insert("path".into(), change.path.to_string().into());
            c.insert("kind".into(), kind_label(change.kind).into());
            if let Some(old) = &change.old {
                c.insert("old".into(), value_to_json(old, show_secrets));
            }
            if let Some(new) = &change.new {
                c.insert("new".into(), value_to_json(new, show_secrets));
            }
            c.insert("replace".into(), change.replace.into());
            Json::Object(c)
        })
        .collect();
    m.insert("changes".into(), Json::Array(changes));
    m.insert(
        "replaceKeys".into(),
        step.replace_keys
            .iter()
            .map(|k| Json::from(k.as_str()))
            .collect(),
    );
}

fn map_to_json(map: &PropertyMap, show_secrets: bool) -> Json {
    Json::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), value_to_json(v, show_secrets)))
            .collect(),
    )
}

/// A value as JSON (see the module docs): secrets masked unless `show_secrets`.
pub fn value_to_json(value: &PropertyValue, show_secrets: bool) -> Json {
    match value {
        PropertyValue::Null => Json::Null,
        PropertyValue::Bool(b) => Json::Bool(*b),
        PropertyValue::Number(n) => {
            if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                Json::from(*n as i64)
            } else {
                serde_json::Number::from_f64(*n)
                    .map_or_else(|| Json::String(n.to_string()), Json::Number)
            }
        }
        PropertyValue::String(s) => Json::String(s.clone()),
        PropertyValue::Array(items) => items
            .iter()
            .map(|v| value_to_json(v, show_secrets))
            .collect(),
        PropertyValue::Object(map) => map_to_json(map, show_secrets),
        PropertyValue::Asset(asset) => {
            let (source, location) = match &asset.source {
                AssetSource::Text(_) => ("text", None),
                AssetSource::Path(p) => ("path", Some(p)),
                AssetSource::Uri(u) => ("uri", Some(u)),
                AssetSource::HashOnly => ("hash", None),
            };
            let mut m = blob_json(asset.hash.as_deref(), source, location);
            m.remove("members");
            wrap("asset", m)
        }
        PropertyValue::Archive(archive) => {
            let (source, location) = match &archive.source {
                ArchiveSource::Assets(_) => ("assets", None),
                ArchiveSource::Path(p) => ("path", Some(p)),
                ArchiveSource::Uri(u) => ("uri", Some(u)),
                ArchiveSource::HashOnly => ("hash", None),
            };
            let mut m = blob_json(archive.hash.as_deref(), source, location);
            if let ArchiveSource::Assets(members) = &archive.source {
                m.insert("members".into(), Json::from(members.len()));
            }
            wrap("archive", m)
        }
        PropertyValue::ResourceReference(reference) => Json::String(reference.urn.to_string()),
        PropertyValue::Secret(inner) => {
            if show_secrets {
                value_to_json(inner, show_secrets)
            } else {
                Json::String(SECRET.to_owned())
            }
        }
        PropertyValue::Computed => Json::String(UNKNOWN.to_owned()),
        PropertyValue::Output(output) => match &output.value {
            _ if output.secret && !show_secrets => Json::String(SECRET.to_owned()),
            None => Json::String(UNKNOWN.to_owned()),
            Some(inner) => value_to_json(inner, show_secrets),
        },
    }
}

fn blob_json(hash: Option<&str>, source: &str, location: Option<&String>) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("hash".into(), hash.map_or(Json::Null, Json::from));
    m.insert("source".into(), source.into());
    if let Some(location) = location {
        m.insert("location".into(), location.as_str().into());
    }
    m
}

fn wrap(kind: &str, inner: Map<String, Json>) -> Json {
    let mut m = Map::new();
    m.insert(kind.to_owned(), Json::Object(inner));
    Json::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_engine::asset::ArchiveMember;
    use cairn_engine::deploy::events::StepState;
    use cairn_engine::{OutputValue, ResourceReference, props};

    const ALL_OPS: [StepOp; 13] = [
        StepOp::Same,
        StepOp::Create,
        StepOp::Update,
        StepOp::Delete,
        StepOp::Replace,
        StepOp::CreateReplacement,
        StepOp::DeleteReplaced,
        StepOp::Read,
        StepOp::ReadReplacement,
        StepOp::Refresh,
        StepOp::Import,
        StepOp::ImportReplacement,
        StepOp::Discard,
    ];

    /// A writer tests can read back.
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buf {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn display(
        json: bool,
        interactive: bool,
        show_secrets: bool,
        show_sames: bool,
    ) -> (Display, Buf) {
        let buf = Buf::default();
        let display = Display::new(DisplayOptions {
            json,
            interactive,
            show_secrets,
            show_sames,
            writer: Box::new(buf.clone()),
        });
        (display, buf)
    }

    fn urn(ty: &str, name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::proj::{ty}::{name}")).unwrap()
    }

    fn step(op: StepOp, ty: &str, name: &str) -> StepInfo {
        StepInfo {
            op,
            urn: urn(ty, name),
            resource_type: ty.to_owned(),
            custom: true,
            old: None,
            new: None,
            changes: vec![],
            replace_keys: vec![],
            preview: false,
        }
    }

    fn pet(op: StepOp) -> StepInfo {
        step(op, "random:index:RandomPet", "pet")
    }

    fn change(
        path: &str,
        kind: ChangeKind,
        old: Option<PropertyValue>,
        new: Option<PropertyValue>,
    ) -> PropertyChange {
        PropertyChange {
            path: PropertyPath::parse(path).unwrap(),
            kind,
            replace: false,
            old,
            new,
        }
    }

    fn secret(v: impl Into<PropertyValue>) -> PropertyValue {
        PropertyValue::secret(v.into())
    }

    fn output(value: Option<PropertyValue>, secret: bool) -> PropertyValue {
        PropertyValue::Output(OutputValue {
            value: value.map(Box::new),
            secret,
            dependencies: vec![],
        })
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn summary_event(
        preview: bool,
        changes: &[(StepOp, usize)],
        unchanged: usize,
        succeeded: bool,
    ) -> EngineEvent {
        EngineEvent::Summary {
            operation: Operation::Update,
            preview,
            changes: changes.iter().copied().collect(),
            unchanged,
            duration: ms(1234),
            succeeded,
        }
    }

    #[test]
    fn values_format_on_one_line() {
        let hash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
        let reference = PropertyValue::ResourceReference(ResourceReference {
            urn: urn("aws:s3:Bucket", "logs"),
            id: Some(Box::new("b-1".into())),
            package_version: None,
        });
        let members = [(
            "a.txt".to_owned(),
            ArchiveMember::Asset(Asset::from_text("a")),
        )]
        .into_iter()
        .collect();
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
                PropertyValue::Archive(Archive::from_assets(members)),
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
    fn unchanged_steps_get_a_line_only_with_show_sames() {
        let mut drifted = pet(StepOp::Refresh);
        drifted.changes = vec![change("size", ChangeKind::Add, None, Some(1i64.into()))];
        for op in ALL_OPS {
            let expected = !matches!(op, StepOp::Same | StepOp::Refresh);
            assert_eq!(is_shown(&pet(op), false), expected, "{op}");
            assert!(is_shown(&pet(op), true), "{op} with show_sames");
        }
        assert!(is_shown(&drifted, false), "a refresh with drift");
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

    /// A small update: create, update with a diff, replace, delete, a diagnostic, stack outputs.
    fn update_events(preview: bool) -> Vec<EngineEvent> {
        let stack = step(StepOp::Same, ROOT_STACK_TYPE, "proj-dev");
        let create = pet(StepOp::Create);
        let mut update = step(StepOp::Update, "aws:s3:Bucket", "logs");
        update.changes = vec![
            change(
                "tags.env",
                ChangeKind::Update,
                Some("dev".into()),
                Some("prod".into()),
            ),
            change("size", ChangeKind::Add, None, Some(3i64.into())),
            change("legacy", ChangeKind::Delete, Some(true.into()), None),
            change(
                "password",
                ChangeKind::Update,
                Some(secret("hunter2")),
                Some(secret("hunter3")),
            ),
        ];
        let mut replace = step(StepOp::Replace, "aws:ec2:Instance", "web");
        replace.changes = vec![PropertyChange {
            replace: true,
            ..change(
                "ami",
                ChangeKind::Update,
                Some("ami-1".into()),
                Some(PropertyValue::Computed),
            )
        }];
        replace.replace_keys = vec!["ami".into()];
        let create_replacement = StepInfo {
            op: StepOp::CreateReplacement,
            ..replace.clone()
        };
        let delete_replaced = StepInfo {
            op: StepOp::DeleteReplaced,
            ..replace.clone()
        };
        let delete = step(StepOp::Delete, "aws:s3:Bucket", "old");
        let mut steps = vec![
            stack.clone(),
            create,
            update,
            create_replacement,
            replace,
            delete,
            delete_replaced,
        ];
        for s in &mut steps {
            s.preview = preview;
        }
        let mut events = vec![EngineEvent::Started {
            operation: Operation::Update,
            preview,
        }];
        for (i, s) in steps.into_iter().enumerate() {
            events.push(EngineEvent::StepStarted(s.clone()));
            events.push(EngineEvent::StepFinished {
                step: s,
                duration: ms(100 * (i as u64 + 1)),
            });
        }
        events.push(EngineEvent::Diagnostic {
            severity: Severity::Warning,
            urn: Some(urn("aws:s3:Bucket", "logs")),
            message: "versioning is disabled".into(),
        });
        events.push(EngineEvent::Diagnostic {
            severity: Severity::Debug,
            urn: None,
            message: "debug chatter".into(),
        });
        events.push(EngineEvent::Outputs {
            urn: urn("aws:s3:Bucket", "logs"),
            outputs: props! {"arn" => "arn:logs"},
        });
        events.push(EngineEvent::Outputs {
            urn: stack.urn.clone(),
            outputs: props! {"petName" => "brave-ant", "dbPassword" => secret("hunter2")},
        });
        events.push(summary_event(
            preview,
            &[
                (StepOp::Create, 1),
                (StepOp::Update, 1),
                (StepOp::Replace, 1),
                (StepOp::CreateReplacement, 1),
                (StepOp::DeleteReplaced, 1),
                (StepOp::Delete, 1),
            ],
            1,
            true,
        ));
        events
    }

    const UPDATE_TRANSCRIPT: &str = r#"  +  create   random:index:RandomPet  pet  created (0.2s)
  ~  update   aws:s3:Bucket  logs  updated (0.3s)
      ~ tags.env: "dev" => "prod"
      + size: 3
      - legacy: true
      ~ password: [secret] => [secret]
  ++ create-replacement aws:ec2:Instance  web  created replacement (0.4s)
  +- replace  aws:ec2:Instance  web  replaced (0.5s)
      ~ ami: "ami-1" => [unknown] (forces replacement)
  -  delete   aws:s3:Bucket  old  deleted (0.6s)
  -- delete-replaced aws:ec2:Instance  web  deleted original (0.7s)
warning: logs: versioning is disabled

Outputs:
    petName: "brave-ant"
    dbPassword: [secret]

Resources:
    + 1 created
    ~ 1 updated
    +-1 replaced
    - 1 deleted
    4 changes. 1 unchanged

Duration: 1.2s
"#;

    #[test]
    fn plain_output_is_a_stable_transcript() {
        let (display, buf) = display(false, false, false, false);
        for event in update_events(false) {
            display.emit(event);
        }
        drop(display);
        assert_eq!(buf.text(), UPDATE_TRANSCRIPT);
    }

    #[test]
    fn previews_use_planned_verbs_and_print_each_step_once() {
        let (display, buf) = display(false, false, false, false);
        for event in update_events(true) {
            display.emit(event);
        }
        drop(display);
        let text = buf.text();
        assert_eq!(
            text.matches("  +  create   random:index:RandomPet  pet\n")
                .count(),
            1,
            "{text}"
        );
        assert!(
            text.contains("  +- replace  aws:ec2:Instance  web\n"),
            "{text}"
        );
        assert!(
            text.contains("    + 1 to create\n    ~ 1 to update\n    +-1 to replace\n"),
            "{text}"
        );
        for done in ["created (", "updated (", "replaced (", "deleted ("] {
            assert!(!text.contains(done), "{done} in a preview:\n{text}");
        }
    }

    #[test]
    fn sames_are_hidden_unless_asked_for() {
        for (show_sames, expected) in [(false, 0), (true, 1)] {
            let (display, buf) = display(false, false, false, show_sames);
            for event in update_events(false) {
                display.emit(event);
            }
            drop(display);
            let line = "     same     pulumi:pulumi:Stack  proj-dev\n";
            assert_eq!(buf.text().matches(line).count(), expected, "{}", buf.text());
        }
    }

    #[test]
    fn failures_print_the_error_under_the_resource() {
        let (display, buf) = display(false, false, false, false);
        let mut s = pet(StepOp::Update);
        s.changes = vec![change(
            "length",
            ChangeKind::Update,
            Some(1i64.into()),
            Some(2i64.into()),
        )];
        display.emit(EngineEvent::StepStarted(s.clone()));
        display.emit(EngineEvent::StepFailed {
            step: s,
            error: "quota exceeded\nretry later".into(),
            duration: ms(300),
        });
        display.emit(summary_event(false, &[], 0, false));
        drop(display);
        let expected = "  ~  update   random:index:RandomPet  pet  failed (0.3s)\n      ~ length: 1 => 2\n      error: quota exceeded\n        retry later\n\nResources:\n    no changes\n\nDuration: 1.2s\n\nThe update failed: 1 step failed.\n";
        assert_eq!(buf.text(), expected);
    }

    #[test]
    fn secrets_never_leak_unless_shown() {
        for json in [false, true] {
            for show in [false, true] {
                let (display, buf) = display(json, false, show, true);
                for event in update_events(false) {
                    display.emit(event);
                }
                drop(display);
                let text = buf.text();
                assert_eq!(
                    text.contains("hunter2"),
                    show,
                    "json={json} show={show}:\n{text}"
                );
                assert_eq!(text.contains("hunter3"), show, "json={json} show={show}");
                assert_eq!(text.contains("[secret]"), !show, "json={json} show={show}");
            }
        }
    }

    #[test]
    fn json_lines_parse_back_with_the_documented_fields() {
        let (display, buf) = display(true, true, false, false);
        for event in update_events(false) {
            display.emit(event);
        }
        drop(display);
        let text = buf.text();
        assert!(!text.contains('\x1b'), "no terminal control in JSON mode");
        let lines: Vec<Json> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines.len(),
            update_events(false).len(),
            "one line per event, debug included"
        );
        let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(types[..3], ["started", "stepStarted", "stepFinished"]);
        assert_eq!(
            lines[0],
            serde_json::json!({"type": "started", "operation": "update", "preview": false})
        );

        let update = lines
            .iter()
            .find(|l| l["type"] == "stepFinished" && l["op"] == "update")
            .unwrap();
        let keys: Vec<&String> = update.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "type",
                "op",
                "urn",
                "resourceType",
                "preview",
                "changes",
                "replaceKeys",
                "durationMs"
            ]
        );
        assert_eq!(update["urn"], "urn:pulumi:dev::proj::aws:s3:Bucket::logs");
        assert_eq!(update["resourceType"], "aws:s3:Bucket");
        assert_eq!(update["durationMs"], 300);
        assert_eq!(
            update["changes"],
            serde_json::json!([
                {"path": "tags.env", "kind": "update", "old": "dev", "new": "prod", "replace": false},
                {"path": "size", "kind": "add", "new": 3, "replace": false},
                {"path": "legacy", "kind": "delete", "old": true, "replace": false},
                {"path": "password", "kind": "update", "old": "[secret]", "new": "[secret]", "replace": false},
            ])
        );
        let replace = lines.iter().find(|l| l["op"] == "replace").unwrap();
        assert_eq!(replace["changes"][0]["new"], "[unknown]");
        assert_eq!(replace["changes"][0]["replace"], true);
        assert_eq!(replace["replaceKeys"], serde_json::json!(["ami"]));

        let diagnostics: Vec<&Json> = lines.iter().filter(|l| l["type"] == "diagnostic").collect();
        assert_eq!(
            *diagnostics[0],
            serde_json::json!({"type": "diagnostic", "severity": "warning",
                "urn": "urn:pulumi:dev::proj::aws:s3:Bucket::logs", "message": "versioning is disabled"})
        );
        assert_eq!(diagnostics[1]["urn"], Json::Null);
        let outputs = lines.iter().rfind(|l| l["type"] == "outputs").unwrap();
        assert_eq!(
            outputs["outputs"],
            serde_json::json!({"petName": "brave-ant", "dbPassword": "[secret]"})
        );
        assert_eq!(
            *lines.last().unwrap(),
            serde_json::json!({"type": "summary", "operation": "update", "preview": false,
                "changes": {"create": 1, "update": 1, "replace": 1, "create-replacement": 1,
                    "delete-replaced": 1, "delete": 1},
                "unchanged": 1, "durationMs": 1234, "succeeded": true})
        );
    }

    #[test]
    fn failed_steps_carry_their_error_in_json() {
        let event = EngineEvent::StepFailed {
            step: pet(StepOp::Create),
            error: "boom".into(),
            duration: ms(12),
        };
        let json = event_to_json(&event, false);
        assert_eq!(json["type"], "stepFailed");
        assert_eq!(json["op"], "create");
        assert_eq!(json["error"], "boom");
        assert_eq!(json["durationMs"], 12);
    }

    #[test]
    fn values_convert_to_json() {
        let hash = "abc123";
        let reference = PropertyValue::ResourceReference(ResourceReference {
            urn: urn("aws:s3:Bucket", "logs"),
            id: None,
            package_version: None,
        });
        let members = [(
            "a.txt".to_owned(),
            ArchiveMember::Asset(Asset::from_text("a")),
        )]
        .into_iter()
        .collect();
        // (value, masked, shown)
        let cases: Vec<(PropertyValue, Json, Json)> = vec![
            (PropertyValue::Null, Json::Null, Json::Null),
            (3i64.into(), serde_json::json!(3), serde_json::json!(3)),
            (1.5.into(), serde_json::json!(1.5), serde_json::json!(1.5)),
            (
                PropertyValue::Number(f64::INFINITY),
                "inf".into(),
                "inf".into(),
            ),
            (
                PropertyValue::Object(
                    props! {"a" => vec![PropertyValue::from("x")], "s" => secret("pw")},
                ),
                serde_json::json!({"a": ["x"], "s": "[secret]"}),
                serde_json::json!({"a": ["x"], "s": "pw"}),
            ),
            (
                PropertyValue::Computed,
                "[unknown]".into(),
                "[unknown]".into(),
            ),
            (output(None, true), "[secret]".into(), "[unknown]".into()),
            (
                output(Some(1i64.into()), true),
                "[secret]".into(),
                serde_json::json!(1),
            ),
            (
                reference,
                "urn:pulumi:dev::proj::aws:s3:Bucket::logs".into(),
                "urn:pulumi:dev::proj::aws:s3:Bucket::logs".into(),
            ),
            (
                PropertyValue::Asset(Asset {
                    hash: Some(hash.into()),
                    ..Asset::from_path("a.txt")
                }),
                serde_json::json!({"asset": {"hash": "abc123", "source": "path", "location": "a.txt"}}),
                serde_json::json!({"asset": {"hash": "abc123", "source": "path", "location": "a.txt"}}),
            ),
            (
                PropertyValue::Asset(Asset::from_text("secret text stays out")),
                serde_json::json!({"asset": {"hash": null, "source": "text"}}),
                serde_json::json!({"asset": {"hash": null, "source": "text"}}),
            ),
            (
                PropertyValue::Archive(Archive::from_assets(members)),
                serde_json::json!({"archive": {"hash": null, "source": "assets", "members": 1}}),
                serde_json::json!({"archive": {"hash": null, "source": "assets", "members": 1}}),
            ),
        ];
        for (value, masked, shown) in cases {
            assert_eq!(value_to_json(&value, false), masked, "{value:?}");
            assert_eq!(value_to_json(&value, true), shown, "{value:?} shown");
        }
    }

    /// Everything a provider, program or state file can put in an event, with every kind of
    /// control character (CSI, OSC with BEL, CR, backspace, C1 CSI, NEL, bidi override, DEL,
    /// NUL) and a newline followed by a fake line of Cairn's own.
    const HOSTILE: &str = "a\x1b[2J\x1b]0;title\x07b\rc\x08d\u{9b}31m\u{85}e\u{202e}f\x7fg\0h\nResources:\n  +  create   fake";

    fn hostile_events() -> Vec<EngineEvent> {
        let mut s = step(StepOp::Update, "a:b:C", "pet");
        s.resource_type = HOSTILE.to_owned();
        s.changes = vec![PropertyChange {
            path: PropertyPath::key(HOSTILE),
            kind: ChangeKind::Update,
            replace: false,
            old: Some(HOSTILE.into()),
            new: Some(PropertyValue::Object(props! {HOSTILE => HOSTILE})),
        }];
        s.replace_keys = vec![HOSTILE.to_owned()];
        let mut keys_only = step(StepOp::Replace, "a:b:C", "keys");
        keys_only.replace_keys = vec![HOSTILE.to_owned()];
        vec![
            EngineEvent::Started {
                operation: Operation::Update,
                preview: false,
            },
            EngineEvent::StepStarted(s.clone()),
            EngineEvent::Diagnostic {
                severity: Severity::Warning,
                urn: Some(s.urn.clone()),
                message: HOSTILE.into(),
            },
            EngineEvent::StepFinished {
                step: s.clone(),
                duration: ms(10),
            },
            EngineEvent::StepFinished {
                step: keys_only,
                duration: ms(10),
            },
            EngineEvent::StepFailed {
                step: s,
                error: HOSTILE.into(),
                duration: ms(10),
            },
            EngineEvent::Outputs {
                urn: urn(ROOT_STACK_TYPE, "proj-dev"),
                outputs: props! {HOSTILE => HOSTILE, "ref" => PropertyValue::Asset(Asset::from_path(HOSTILE))},
            },
            summary_event(false, &[(StepOp::Update, 1)], 0, false),
        ]
    }

    /// The characters of `text` a terminal would act on (newlines and tabs aside).
    fn raw_controls(text: &str) -> Vec<char> {
        text.chars()
            .filter(|c| *c != '\n' && *c != '\t' && cairn_engine::text::is_unsafe(*c))
            .collect()
    }

    #[test]
    fn hostile_text_reaches_no_mode_raw() {
        for (json, interactive) in [(false, false), (false, true), (true, false)] {
            let (display, buf) = display(json, interactive, true, true);
            for event in hostile_events() {
                display.emit(event);
            }
            drop(display);
            let mut text = buf.text();
            if interactive {
                // The live area's own cursor movements are the only escapes allowed.
                text = text.replace("\x1b[1F\x1b[J", "");
            }
            assert_eq!(raw_controls(&text), Vec::<char>::new(), "{text}");
            if json {
                for line in text.lines() {
                    let event: Json = serde_json::from_str(line).unwrap();
                    if event["type"] == "diagnostic" {
                        assert_eq!(event["message"], HOSTILE, "JSON keeps the exact text");
                    }
                }
                continue;
            }
            // No line of the message starts where Cairn's own lines do.
            assert!(!text.contains("\nResources:\n  +  create   fake"), "{text}");
            assert!(
                text.contains("\n    Resources:\n      +  create   fake"),
                "{text}"
            );
            assert!(
                text.contains("\n        Resources:\n          +  create   fake"),
                "{text}"
            );
            assert!(
                text.contains(
                    r#"\x1b[2J\x1b]0;title\x07b\rc\x08d\u{9b}31m\u{85}e\u{202e}f\x7fg\x00h"#
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn interactive_mode_redraws_running_steps_above_finished_lines() {
        let (display, buf) = display(false, true, false, false);
        let s = pet(StepOp::Create);
        display.emit(EngineEvent::StepStarted(s.clone()));
        let live = buf.text();
        assert!(
            live.starts_with("  +  create   random:index:RandomPet  pet  creating (0.0s)\n"),
            "{live:?}"
        );
        display.emit(EngineEvent::StepFinished {
            step: s,
            duration: ms(400),
        });
        let text = buf.text();
        // The live line is erased (cursor up one line, clear below) before the finished line.
        assert!(
            text.contains(
                "\x1b[1F\x1b[J  +  create   random:index:RandomPet  pet  created (0.4s)\n"
            ),
            "{text:?}"
        );
        assert!(
            text.ends_with("created (0.4s)\n"),
            "nothing running: no live area"
        );
        drop(display);
    }

    #[test]
    fn interactive_live_lines_fit_the_terminal() {
        assert_eq!(truncate("abcdef", 80), "abcdef");
        assert_eq!(truncate("abcdef", 5), "abc…");
        assert_eq!(truncate("ééééé", 5), "ééé…");
    }

    #[test]
    fn concurrent_emitters_write_whole_lines() {
        let (display, buf) = display(true, false, false, false);
        let display = Arc::new(display);
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let display = Arc::clone(&display);
                std::thread::spawn(move || {
                    for i in 0..50 {
                        display.emit(EngineEvent::StepFinished {
                            step: step(
                                StepOp::Create,
                                "random:index:RandomPet",
                                &format!("p{t}-{i}"),
                            ),
                            duration: ms(i),
                        });
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = buf.text();
        let lines: Vec<Json> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 400);
        let mut names: Vec<String> = lines
            .iter()
            .map(|l| l["urn"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 400);
    }

    #[test]
    fn step_states_are_not_rendered() {
        let mut s = pet(StepOp::Create);
        s.new = Some(StepState {
            id: Some("id-1".into()),
            inputs: props! {"pw" => "plaintext-in-state"},
            outputs: props! {},
        });
        for json in [false, true] {
            let (display, buf) = display(json, false, false, false);
            display.emit(EngineEvent::StepFinished {
                step: s.clone(),
                duration: ms(1),
            });
            drop(display);
            assert!(!buf.text().contains("plaintext-in-state"));
            assert!(buf.text().contains("pet"));
        }
    }
}
