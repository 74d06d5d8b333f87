//! The steps of an update as its history keeps them: what each step did, when it started and
//! ended (for the console's timeline), and, per resource, which properties changed. Secrets are
//! masked before anything is recorded: history is stored, and a secret is never stored in plain
//! text.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use cairn_engine::deploy::events::{ChangeKind, EngineEvent, EventSink, StepInfo};
use cairn_engine::value::PropertyValue;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The most steps one update records (a 10,000-resource update records every step).
pub const MAX_STEPS: usize = 10_000;
/// The most changed properties recorded per step.
const MAX_DIFFS: usize = 100;
/// Longer strings are cut to this many characters.
const MAX_TEXT: usize = 2_000;

/// One step of an update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    pub urn: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    /// `create`, `update`, `delete`, `replace`, `create-replacement`, …
    pub op: String,
    /// Milliseconds from the update's start.
    pub start: u64,
    pub end: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<PropertyDiff>,
}

/// One changed property: secrets as `{"$secret": true}`, long text cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertyDiff {
    pub path: String,
    /// `add`, `update` or `delete`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
}

/// Collects the steps of a running update from its engine events (an [`EventSink`]).
#[derive(Debug)]
pub struct StepLog {
    started: Instant,
    state: Mutex<LogState>,
}

#[derive(Debug, Default)]
struct LogState {
    /// Steps started and not yet finished: their start, by URN and kind.
    running: HashMap<(String, String), u64>,
    steps: Vec<StepRecord>,
    omitted: u64,
    /// The counts of the deployment's summary, once it has one.
    resource_changes: Option<BTreeMap<String, u64>>,
}

impl Default for StepLog {
    fn default() -> StepLog {
        StepLog::new()
    }
}

impl StepLog {
    pub fn new() -> StepLog {
        StepLog {
            started: Instant::now(),
            state: Mutex::new(LogState::default()),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The steps recorded, in the order they ended, and how many more were left out.
    pub fn take(&self) -> (Vec<StepRecord>, u64) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let steps = std::mem::take(&mut state.steps);
        (steps, state.omitted)
    }

    /// The update's `resourceChanges`, as Pulumi records them: steps per kind (the logical
    /// ones: a replacement is one `replace`) and `same` for those left unchanged, from the
    /// deployment's summary, which a failed deployment has too; `None` before the summary.
    pub fn resource_changes(&self) -> Option<BTreeMap<String, u64>> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.resource_changes.clone()
    }

    fn finished(&self, step: &StepInfo, error: Option<String>) {
        let end = self.now();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (step.urn.as_str().to_owned(), step.op.label().to_owned());
        let start = state.running.remove(&key).unwrap_or(end);
        if !step.op.is_change() && error.is_none() {
            return;
        }
        if state.steps.len() >= MAX_STEPS {
            state.omitted += 1;
            return;
        }
        let diff = step
            .changes
            .iter()
            .take(MAX_DIFFS)
            .map(|change| PropertyDiff {
                path: change.path.to_string(),
                kind: match change.kind {
                    ChangeKind::Add => "add",
                    ChangeKind::Update => "update",
                    ChangeKind::Delete => "delete",
                }
                .to_owned(),
                replace: change.replace,
                old: change.old.as_ref().map(recordable),
                new: change.new.as_ref().map(recordable),
            })
            .collect();
        state.steps.push(StepRecord {
            urn: key.0,
            resource_type: step.resource_type.clone(),
            op: key.1,
            start,
            end,
            error,
            diff,
        });
    }
}

impl StepLog {
    /// Notes one engine event (steps starting, finishing and failing, and the summary).
    pub fn observe(&self, event: &EngineEvent) {
        match event {
            EngineEvent::StepStarted(step) => {
                let start = self.now();
                let key = (step.urn.as_str().to_owned(), step.op.label().to_owned());
                self.state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .running
                    .insert(key, start);
            }
            EngineEvent::StepFinished { step, .. } => self.finished(step, None),
            EngineEvent::StepFailed { step, error, .. } => self.finished(step, Some(cut(error))),
            EngineEvent::Summary {
                changes, unchanged, ..
            } => {
                let mut counts: BTreeMap<String, u64> = changes
                    .iter()
                    .filter(|(_, n)| **n > 0)
                    .map(|(op, n)| (op.label().to_owned(), *n as u64))
                    .collect();
                if *unchanged > 0 {
                    counts.insert("same".into(), *unchanged as u64);
                }
                self.state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .resource_changes = Some(counts);
            }
            _ => {}
        }
    }
}

impl EventSink for StepLog {
    fn emit(&self, event: EngineEvent) {
        self.observe(&event);
    }
}

/// A value as history may keep it: secrets masked, long text cut, assets by their hash.
pub fn recordable(value: &PropertyValue) -> Value {
    match value {
        PropertyValue::Null => Value::Null,
        PropertyValue::Bool(b) => Value::Bool(*b),
        PropertyValue::Number(n) => json!(n),
        PropertyValue::String(s) => Value::String(cut(s)),
        PropertyValue::Array(items) => Value::Array(items.iter().map(recordable).collect()),
        PropertyValue::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (cut(k), recordable(v))).collect())
        }
        PropertyValue::Asset(asset) => json!({"$asset": asset.hash}),
        PropertyValue::Archive(archive) => json!({"$archive": archive.hash}),
        PropertyValue::ResourceReference(reference) => {
            json!({"$resource": reference.urn.as_str()})
        }
        PropertyValue::Secret(_) => json!({"$secret": true}),
        PropertyValue::Computed => json!({"$unknown": true}),
        PropertyValue::Output(output) => match (&output.value, output.secret) {
            (_, true) => json!({"$secret": true}),
            (Some(value), false) => recordable(value),
            (None, false) => json!({"$unknown": true}),
        },
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        None => text.to_owned(),
        Some((at, _)) => format!(
            "{}… ({} more characters)",
            &text[..at],
            text[at..].chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cairn_engine::deploy::events::{PropertyChange, StepOp};
    use cairn_engine::path::PropertyPath;

    use super::*;

    fn step(op: StepOp, name: &str, changes: Vec<PropertyChange>) -> StepInfo {
        StepInfo {
            op,
            urn: format!("urn:pulumi:dev::p::t:index:T::{name}")
                .parse()
                .unwrap(),
            resource_type: "t:index:T".into(),
            custom: true,
            parent: None,
            old: None,
            new: None,
            changes,
            replace_keys: Vec::new(),
            preview: false,
        }
    }

    fn change(path: &str, old: PropertyValue, new: PropertyValue) -> PropertyChange {
        PropertyChange {
            path: PropertyPath::key(path),
            kind: ChangeKind::Update,
            replace: path == "zone",
            old: Some(old),
            new: Some(new),
        }
    }

    #[test]
    fn records_changing_steps_with_masked_diffs_and_skips_sames() {
        let log = StepLog::new();
        let secret = |s: &str| PropertyValue::Secret(Box::new(PropertyValue::String(s.into())));
        let update = step(
            StepOp::Update,
            "db",
            vec![
                change("password", secret("old-hunter2"), secret("new-hunter2")),
                change(
                    "zone",
                    PropertyValue::String("a".into()),
                    PropertyValue::String("x".repeat(MAX_TEXT + 5)),
                ),
            ],
        );
        let same = step(StepOp::Same, "cache", Vec::new());
        let failed = step(StepOp::Create, "queue", Vec::new());
        for info in [&update, &same, &failed] {
            log.observe(&EngineEvent::StepStarted(info.clone()));
        }
        log.observe(&EngineEvent::StepFinished {
            step: update,
            duration: Duration::ZERO,
        });
        log.observe(&EngineEvent::StepFinished {
            step: same,
            duration: Duration::ZERO,
        });
        log.observe(&EngineEvent::StepFailed {
            step: failed,
            error: "quota exceeded".into(),
            duration: Duration::ZERO,
        });
        let (steps, omitted) = log.take();
        assert_eq!(omitted, 0);
        let ops: Vec<&str> = steps.iter().map(|s| s.op.as_str()).collect();
        assert_eq!(ops, ["update", "create"], "same steps are not recorded");
        let text = serde_json::to_string(&steps).unwrap();
        assert!(!text.contains("hunter2"), "a secret was recorded: {text}");
        assert_eq!(steps[0].diff[0].old, Some(json!({"$secret": true})));
        assert!(steps[0].diff[1].replace);
        let cut_text = steps[0].diff[1].new.as_ref().unwrap().as_str().unwrap();
        assert!(cut_text.ends_with("… (5 more characters)"), "{cut_text}");
        assert_eq!(steps[1].error.as_deref(), Some("quota exceeded"));
        assert!(steps.iter().all(|s| s.end >= s.start));
    }

    #[test]
    fn stops_recording_at_the_limit_and_counts_the_rest() {
        let log = StepLog::new();
        for i in 0..MAX_STEPS + 3 {
            let info = step(StepOp::Create, &format!("r{i}"), Vec::new());
            log.observe(&EngineEvent::StepFinished {
                step: info,
                duration: Duration::ZERO,
            });
        }
        let (steps, omitted) = log.take();
        assert_eq!((steps.len(), omitted), (MAX_STEPS, 3));
    }
}
