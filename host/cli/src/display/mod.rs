//! Renders the engine's event stream: a live progress view on a terminal, plain lines for logs, or JSON lines.
//!
//! [`Display`] is the [`EventSink`] the deploying commands use. It keeps what the command needs
//! to know of the events (the steps in flight, the resources met) and hands every event to one
//! [`Renderer`]: the output mode, chosen once from its [`DisplayOptions`]. A mode is one file:
//!
//! * **Plain** ([`plain`], not a TTY): a line per resource, written once when its step ends, in
//!   the order steps end; a planned step (a preview) is written when it is planned. Stable for
//!   logs and tests.
//! * **Interactive** ([`live`], a TTY): the same lines, plus a live area under them listing
//!   running steps with their elapsed time, redrawn with ANSI cursor movement on every event and
//!   every 200 ms.
//! * **JSON** (`--json`): Pulumi's machine-readable output. A preview prints Pulumi's preview
//!   digest, one document, when it ends ([`json`]); any other deployment streams Pulumi's engine
//!   events, one JSON object per line ([`engine_events`]).
//!
//! Independently of the mode, `--event-log FILE` writes every event as Pulumi's engine event
//! ([`engine_events`], the same conversion as the `--json` stream).
//!
//! What the human modes share (step lines, diffs, values, diagnostics, outputs, the summary) is
//! in [`format`]. The modes are split behind one interface because they change apart: a new
//! way of showing progress, or a new JSON schema, is a change to one file.
//!
//! Secret values are shown as `[secret]` and unknowns as `[unknown]` in every mode unless
//! `show_secrets` is set. Diagnostic messages and step errors are printed as the engine gives
//! them: they are text, not values, so nothing in them can be masked here.
//!
//! Names, types, keys, values, messages and errors come from programs, providers and state
//! files, so no control character of theirs reaches the terminal (see [`crate::terminal`]):
//! single-line fields are shown with `visible_line`, messages with their continuation lines
//! indented, strings as JSON string literals with every control character escaped, and every
//! mode writes through [`Output`], which passes all text through `visible_text` (only the live
//! area's own cursor movements are written raw). JSON lines escape DEL, C1 controls and bidi
//! characters too (as `\uXXXX`, which decodes to the original).
//!
//! # The display is split by output mode
//!
//! Plain lines, the interactive live view and JSON events change apart, so each mode is one file
//! behind `Renderer` (what it does with an event, on a tick, at the end, its details), chosen once
//! in `Display::new`. Both human modes keep the same `Human` transcript (rows, diagnostics, closing
//! sections); text they share lives in `format.rs`, rows and the tree in `rows.rs`.
//!
//! # Diagnostics are told once, at the end, grouped by resource
//!
//! Diagnostics are told once, at the end, grouped by resource (Pulumi's `Diagnostics:` section);
//! while running, a row's Info column carries only the latest message's first line (plain) or
//! nothing (live), and at the end the counts. A program's unhandled exception is logged once as the
//! stack's error by the Python bootstrap (as Pulumi's language host does); the command's own error
//! names its last line instead of repeating it.

pub mod engine_events;
pub mod format;
pub mod json;
mod live;
mod plain;
mod rows;
#[cfg(test)]
mod test_support;

use std::collections::HashSet;
use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use cairn_backend::StepLog;
use cairn_engine::Urn;
use cairn_engine::deploy::events::{EngineEvent, EventSink, Operation, StepOp};
use cairn_engine::urn::ROOT_STACK_TYPE;

use self::engine_events::{EventSettings, EventStream};
use self::json::PreviewDigest;
use self::live::Live;
use self::plain::{HumanOptions, Plain};
use crate::terminal;

/// Shown in place of a secret value.
const SECRET: &str = "[secret]";
/// Shown in place of an unknown value.
const UNKNOWN: &str = "[unknown]";

/// How a [`Display`] renders, and where to.
pub struct DisplayOptions {
    /// One JSON object per event per line (see [`json`]).
    pub json: bool,
    /// The writer is a terminal: keep a live area of running steps, redrawn in place.
    pub interactive: bool,
    /// Show secret values instead of `[secret]`.
    pub show_secrets: bool,
    /// Show resources that do not change.
    pub show_sames: bool,
    /// Leave the stack's outputs out of the human display (`--suppress-outputs`).
    pub suppress_outputs: bool,
    /// Show the halves of replacements (`++`, `--`) as steps of their own.
    pub show_replacement_steps: bool,
    /// Show property diffs (`--diff`), in a `Changes:` section.
    pub show_diff: bool,
    /// Keep the steps' diffs for [`Display::details`] ("details" at the prompt).
    pub keep_details: bool,
    /// No progress while running (`--suppress-progress`): the closing sections only.
    pub suppress_progress: bool,
    /// Colour the human modes' output.
    pub colors: bool,
    /// The stack's name, for the header (`Updating (dev):`).
    pub stack: Option<String>,
    /// Where output goes (stdout, or a buffer in tests).
    pub writer: Box<dyn Write + Send>,
    /// The deployment is a preview (`--json` then prints the preview digest).
    pub preview: bool,
    /// What Pulumi's engine events need (`--json` outside previews, `--event-log`).
    pub events: EventSettings,
}

impl DisplayOptions {
    /// Plain output to `writer` with every option off.
    #[cfg(test)]
    pub fn plain(writer: Box<dyn Write + Send>) -> DisplayOptions {
        DisplayOptions {
            json: false,
            interactive: false,
            show_secrets: false,
            show_sames: false,
            suppress_outputs: false,
            show_replacement_steps: false,
            show_diff: false,
            keep_details: false,
            suppress_progress: false,
            colors: false,
            stack: None,
            writer,
            preview: false,
            events: EventSettings::default(),
        }
    }
}

/// Renders engine events; safe to call from many tasks at once.
pub struct Display {
    renderer: Arc<dyn Renderer>,
    /// The stack's outputs are not shown (human modes only: JSON events carry everything).
    suppress_outputs: bool,
    ticker: Mutex<Option<Ticker>>,
    tracked: Mutex<Tracked>,
    /// Pulumi's engine events, if `--json` streams them or `--event-log` records them.
    engine_events: Option<EventStream>,
    /// Where the steps go for the stack's history (the deployment that changes the stack).
    step_log: OnceLock<Arc<StepLog>>,
}

/// What one output mode does with the event stream. [`Display`] calls it from many tasks at
/// once (and from its ticker thread), so a mode serialises its own writes.
trait Renderer: Send + Sync {
    /// Renders one event.
    fn event(&self, event: EngineEvent);

    /// How often [`Renderer::tick`] is to be called while the display runs (`None`: never).
    fn tick_every(&self) -> Option<Duration> {
        None
    }

    /// Redraws what changes with time alone (elapsed times).
    fn tick(&self) {}

    /// The event stream has ended: writes what the mode still holds and clears what it
    /// redraws. Harmless to repeat.
    fn finish(&self) {}

    /// The property diffs of the steps seen (a preview's, for "details" at the prompt).
    fn details(&self) -> String {
        String::new()
    }
}

/// Where every mode's text goes: the one place it reaches the writer.
struct Output {
    writer: Box<dyn Write + Send>,
    /// Cairn's own colour sequences are kept (only those: see `terminal::styled_text_of`).
    colors: bool,
}

impl Output {
    /// Writes `text`: whatever a field forgot, no control character but a newline or tab (and
    /// Cairn's colours, when on) gets through.
    fn write(&mut self, text: &str) {
        self.write_styled_after("", text);
    }

    /// Writes `cursor` as it is, then `text` as [`Output::write`] does, in one write. `cursor`
    /// is the live area's own cursor movement: the only bytes a mode writes raw.
    fn write_styled_after(&mut self, cursor: &str, text: &str) {
        let mut out = cursor.to_owned();
        out.push_str(&terminal::styled_text_of(text, self.colors));
        if out.is_empty() {
            return;
        }
        // Output errors (a closed pipe) must not disturb the deployment.
        let _ = self.writer.write_all(out.as_bytes());
        let _ = self.writer.flush();
    }
}

/// What the command needs to know of the events besides their rendering.
#[derive(Default)]
struct Tracked {
    /// Steps started and not yet ended (all modes): the operations in flight.
    in_flight: HashSet<(Urn, StepOp)>,
    /// Every URN an event named: the resources the deployment met.
    seen: HashSet<Urn>,
}

/// The thread that calls [`Renderer::tick`], so elapsed times advance.
struct Ticker {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<()>,
}

impl Display {
    /// A display writing to `options.writer` in the mode the options choose (JSON before
    /// interactive); a mode that redraws with time gets its ticker thread.
    pub fn new(options: DisplayOptions) -> Display {
        let colors = options.colors && !options.json;
        let output = Output {
            writer: options.writer,
            colors,
        };
        let human = HumanOptions {
            show_secrets: options.show_secrets,
            show_sames: options.show_sames,
            show_replacement_steps: options.show_replacement_steps,
            show_diff: options.show_diff,
            keep_details: options.keep_details,
            suppress_progress: options.suppress_progress,
            colors,
            stack: options.stack,
        };
        let mut stdout_events = None;
        let renderer: Arc<dyn Renderer> = if options.json && options.preview {
            Arc::new(PreviewDigest::new(
                output,
                &options.events,
                options.show_sames,
                options.suppress_outputs,
            ))
        } else if options.json {
            // The engine-event stream writes stdout; nothing else does.
            stdout_events = Some(output);
            Arc::new(Silent)
        } else if options.interactive {
            Arc::new(Live::new(output, human))
        } else {
            Arc::new(Plain::new(output, human))
        };
        let ticker = renderer
            .tick_every()
            .and_then(|every| spawn_ticker(Arc::clone(&renderer), every));
        Display {
            renderer,
            suppress_outputs: options.suppress_outputs && !options.json,
            ticker: Mutex::new(ticker),
            tracked: Mutex::new(Tracked::default()),
            engine_events: EventStream::new(options.events, stdout_events),
            step_log: OnceLock::new(),
        }
    }

    /// Also notes every step in `log` (for the update's history record).
    pub fn record_steps_in(&self, log: Arc<StepLog>) {
        let _ = self.step_log.set(log);
    }

    /// The property diffs of the changes seen (kept with `keep_details` or `show_diff`): what
    /// "details" at the prompt shows.
    pub fn details(&self) -> String {
        self.renderer.details()
    }

    /// How many steps have started and not ended.
    pub fn in_flight(&self) -> usize {
        lock(&self.tracked).in_flight.len()
    }

    /// Every URN an event named so far (steps, diagnostics, outputs).
    pub fn seen(&self) -> HashSet<Urn> {
        lock(&self.tracked).seen.clone()
    }

    fn track(&self, event: &EngineEvent) {
        let mut tracked = lock(&self.tracked);
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

    /// Stops the ticker and lets the mode clear what it redraws; called on drop, harmless to
    /// repeat.
    pub fn finish(&self) {
        let ticker = lock(&self.ticker).take();
        if let Some(Ticker { stop, handle }) = ticker {
            drop(stop);
            let _ = handle.join();
        }
        self.renderer.finish();
        if let Some(stream) = &self.engine_events {
            stream.finish();
        }
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
        if let Some(log) = self.step_log.get() {
            log.observe(&event);
        }
        if let Some(stream) = &self.engine_events {
            stream.emit(&event);
        }
        if self.suppress_outputs
            && let EngineEvent::Outputs { urn, .. } = &event
            && urn.qualified_type() == ROOT_STACK_TYPE
        {
            return;
        }
        self.renderer.event(event);
    }
}

/// `--json` outside previews: the engine-event stream writes stdout, nothing renders.
struct Silent;

impl Renderer for Silent {
    fn event(&self, _event: EngineEvent) {}
}

/// Calls `renderer.tick()` every `every` until the returned ticker's `stop` is dropped.
fn spawn_ticker(renderer: Arc<dyn Renderer>, every: Duration) -> Option<Ticker> {
    let (stop, stopped) = mpsc::channel::<()>();
    let handle = std::thread::Builder::new()
        .name("cairn-display".to_owned())
        .spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                renderer.tick();
            }
        })
        .ok()?;
    Some(Ticker { stop, handle })
}

/// Locks `mutex`, even if a panicking thread left it poisoned: a display keeps rendering.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An operation as both human and JSON output name it.
fn operation_label(operation: Operation) -> &'static str {
    match operation {
        Operation::Update => "update",
        Operation::Refresh => "refresh",
        Operation::Destroy => "destroy",
        Operation::Import => "import",
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use cairn_engine::asset::Asset;
    use cairn_engine::deploy::events::Severity;
    use cairn_engine::deploy::events::{ChangeKind, PropertyChange, StepInfo, StepState};
    use cairn_engine::path::PropertyPath;
    use cairn_engine::urn::ROOT_STACK_TYPE;
    use cairn_engine::{PropertyValue, props};
    use serde_json::Value as Json;

    #[test]
    fn every_mode_tracks_steps_in_flight_and_resources_met() {
        for (json, interactive) in [(false, false), (false, true), (true, false)] {
            let (display, _buf) = display(json, interactive, false, false);
            let failing = step(StepOp::Create, "a:b:C", "failing");
            let planned = StepInfo {
                preview: true,
                ..step(StepOp::Create, "a:b:C", "planned")
            };
            display.emit(EngineEvent::StepStarted(failing.clone()));
            display.emit(EngineEvent::StepStarted(planned));
            assert_eq!(display.in_flight(), 1, "a planned step is not in flight");
            display.emit(EngineEvent::StepFailed {
                step: failing,
                error: "boom".into(),
                duration: ms(1),
            });
            assert_eq!(display.in_flight(), 0, "a failed step ended");
            display.emit(EngineEvent::StepStarted(pet(StepOp::Delete)));
            display.emit(EngineEvent::Diagnostic {
                severity: Severity::Info,
                urn: Some(urn("a:b:C", "noted")),
                message: "m".into(),
            });
            for event in update_events(false) {
                display.emit(event);
            }
            assert_eq!(display.in_flight(), 1, "the delete of pet never ended");
            let expected: HashSet<Urn> = [
                urn("a:b:C", "failing"),
                urn("a:b:C", "planned"),
                urn("a:b:C", "noted"),
                urn(ROOT_STACK_TYPE, "proj-dev"),
                urn("random:index:RandomPet", "pet"),
                urn("aws:s3:Bucket", "logs"),
                urn("aws:ec2:Instance", "web"),
                urn("aws:s3:Bucket", "old"),
            ]
            .into();
            assert_eq!(
                display.seen(),
                expected,
                "json={json} interactive={interactive}"
            );
        }
    }

    #[test]
    fn secrets_never_leak_unless_shown() {
        for json in [false, true] {
            for show in [false, true] {
                let (display, buf) = display_with_diffs(json, false, show);
                for event in update_events(false) {
                    display.emit(event);
                }
                drop(display);
                let text = buf.text();
                // Pulumi's JSON output never shows secrets, whatever --show-secrets says.
                let shown = show && !json;
                assert_eq!(
                    text.contains("hunter2"),
                    shown,
                    "json={json} show={show}:\n{text}"
                );
                assert_eq!(text.contains("hunter3"), shown, "json={json} show={show}");
                assert_eq!(text.contains("[secret]"), !shown, "json={json} show={show}");
            }
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
            new: Some(PropertyValue::from(props! {HOSTILE => HOSTILE})),
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
                outputs: props! {HOSTILE => HOSTILE, "ref" => PropertyValue::Asset(Box::new(Asset::from_path(HOSTILE)))},
            },
            summary_event(false, &[(StepOp::Update, 1)], 0, false),
        ]
    }

    /// `text` without the live area's cursor movements (`CR ESC [ n A ESC [ J`).
    fn strip_cursor_moves(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("\r\x1b[") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 3..];
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            match after[digits..].strip_prefix("A\x1b[J") {
                Some(tail) if digits > 0 => rest = tail,
                _ => {
                    out.push('\r');
                    rest = &rest[at + 1..];
                }
            }
        }
        out.push_str(rest);
        out
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
            let (display, buf) = display_with_diffs(json, interactive, true);
            for event in hostile_events() {
                display.emit(event);
            }
            drop(display);
            let mut text = buf.text();
            if interactive {
                // The live area's own cursor movements are the only escapes allowed.
                text = strip_cursor_moves(&text);
            }
            assert_eq!(raw_controls(&text), Vec::<char>::new(), "{text}");
            if json {
                let mut diagnostics = 0;
                for line in text.lines() {
                    let event: Json = serde_json::from_str(line).unwrap();
                    if event["diagnosticEvent"]["severity"] == "warning" {
                        diagnostics += 1;
                        let expected = format!("{HOSTILE}\n");
                        assert_eq!(
                            event["diagnosticEvent"]["message"], *expected,
                            "JSON keeps the exact text"
                        );
                    }
                }
                assert_eq!(diagnostics, 1, "{text}");
                continue;
            }
            // No line of the message starts where Cairn's own lines do: the diagnostic and
            // the step's error are indented under their first lines.
            assert!(!text.contains("\nResources:\n  +  create   fake"), "{text}");
            assert_eq!(
                text.matches("\n      Resources:\n        +  create   fake")
                    .count(),
                2,
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
    fn step_states_are_not_rendered_by_human_modes() {
        let mut s = pet(StepOp::Create);
        s.new = Some(StepState::new(cairn_engine::state::ResourceState {
            id: Some("id-1".into()),
            inputs: props! {"pw" => "plaintext-in-state"},
            ..cairn_engine::state::ResourceState::new(
                s.urn.clone(),
                cairn_engine::urn::TypeToken::parse("random:index:RandomPet").unwrap(),
                true,
            )
        }));
        for interactive in [false, true] {
            let (display, buf) = display(false, interactive, false, false);
            display.emit(EngineEvent::Started {
                operation: Operation::Update,
                preview: false,
            });
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
