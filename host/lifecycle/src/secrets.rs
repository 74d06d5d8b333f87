//! The secret-scan invariant: the plaintext of a value a scenario marks secret never appears in
//! what a deployment persists (the checkpoint, every journal line written) or shows (the engine
//! events, rendered with secret values masked as every front end masks them).
//!
//! The plaintexts are every `{$secret: …}` in the scenario file — programs, config, cloud seeds
//! and expectations (which name the outputs a provider or `additionalSecretOutputs` made
//! secret). Plaintexts shorter than [`MIN_SECRET_CHARS`] characters are skipped: a value like
//! `abc` or `1` occurs by chance in IDs, hashes and numbers, so a hit would mean nothing.

use std::collections::BTreeSet;

use cairn_engine::deploy::events::{EngineEvent, StepInfo, StepState};
use cairn_engine::value::{PropertyMap, PropertyValue};
use serde_yaml_ng::Value as Yaml;

use crate::values::SECRET_KEY;

/// Plaintexts shorter than this are not scanned for.
pub const MIN_SECRET_CHARS: usize = 5;

/// Every secret plaintext of at least [`MIN_SECRET_CHARS`] characters in a scenario file.
pub fn plaintexts(scenario: &Yaml) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    collect(scenario, false, &mut found);
    found
}

fn collect(value: &Yaml, secret: bool, found: &mut BTreeSet<String>) {
    let mut leaf = |text: String| {
        if secret && text.chars().count() >= MIN_SECRET_CHARS {
            found.insert(text);
        }
    };
    match value {
        Yaml::String(s) => leaf(s.clone()),
        Yaml::Number(n) => leaf(n.to_string()),
        Yaml::Bool(_) | Yaml::Null => {}
        Yaml::Sequence(items) => items.iter().for_each(|v| collect(v, secret, found)),
        Yaml::Mapping(map) => {
            for (key, item) in map {
                let inner = secret || key.as_str() == Some(SECRET_KEY);
                collect(item, inner, found);
            }
        }
        Yaml::Tagged(tagged) => collect(&tagged.value, secret, found),
    }
}

/// The ways a plaintext can be spelled in what is scanned: as it is, JSON-escaped (checkpoint,
/// journal) and Rust-escaped (rendered events).
fn spellings(plaintext: &str) -> BTreeSet<String> {
    let mut all = BTreeSet::from([plaintext.to_owned()]);
    if let Ok(json) = serde_json::to_string(plaintext) {
        all.insert(json[1..json.len() - 1].to_owned());
    }
    let debug = format!("{plaintext:?}");
    all.insert(debug[1..debug.len() - 1].to_owned());
    all
}

/// One problem per secret whose plaintext occurs in `text` (`what` names the place), quoting
/// where.
pub fn scan(what: &str, text: &str, secrets: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for secret in secrets {
        for spelling in spellings(secret) {
            if let Some(at) = text.find(&spelling) {
                let start = text.floor_char_boundary(at.saturating_sub(120));
                let end = text.ceil_char_boundary((at + spelling.len() + 120).min(text.len()));
                problems.push(format!(
                    "SECRET LEAK: the plaintext of secret {secret:?} is in {what} (at byte {at}): …{:?}…",
                    &text[start..end]
                ));
                break;
            }
        }
    }
    problems
}

/// The events as a front end shows them: every secret value masked, everything else (names,
/// values, messages, errors) as it is.
pub fn rendered_events(events: &[EngineEvent]) -> String {
    events
        .iter()
        .map(|event| format!("{:?}\n", masked_event(event)))
        .collect()
}

fn masked_event(event: &EngineEvent) -> EngineEvent {
    match event {
        EngineEvent::StepStarted(step) => EngineEvent::StepStarted(masked_step(step)),
        EngineEvent::StepFinished { step, duration } => EngineEvent::StepFinished {
            step: masked_step(step),
            duration: *duration,
        },
        EngineEvent::StepFailed {
            step,
            error,
            duration,
        } => EngineEvent::StepFailed {
            step: masked_step(step),
            error: error.clone(),
            duration: *duration,
        },
        EngineEvent::Outputs { urn, outputs } => EngineEvent::Outputs {
            urn: urn.clone(),
            outputs: masked_map(outputs),
        },
        other => other.clone(),
    }
}

fn masked_step(step: &StepInfo) -> StepInfo {
    let state = |s: &Option<StepState>| {
        s.as_ref().map(|s| {
            StepState::new(cairn_engine::state::ResourceState {
                inputs: masked_map(&s.inputs),
                outputs: masked_map(&s.outputs),
                ..(**s).clone()
            })
        })
    };
    let mut masked = step.clone();
    masked.old = state(&step.old);
    masked.new = state(&step.new);
    for change in &mut masked.changes {
        change.old = change.old.as_ref().map(masked_value);
        change.new = change.new.as_ref().map(masked_value);
    }
    masked
}

fn masked_map(map: &PropertyMap) -> PropertyMap {
    map.iter()
        .map(|(k, v)| (k.clone(), masked_value(v)))
        .collect()
}

fn masked_value(value: &PropertyValue) -> PropertyValue {
    const MASK: &str = "[secret]";
    match value {
        PropertyValue::Secret(_) => PropertyValue::String(MASK.into()),
        PropertyValue::Output(o) if o.secret => PropertyValue::String(MASK.into()),
        PropertyValue::Output(o) => {
            let mut o = o.clone();
            o.value = o.value.as_deref().map(|v| Box::new(masked_value(v)));
            PropertyValue::Output(o)
        }
        PropertyValue::Array(items) => {
            PropertyValue::Array(items.iter().map(masked_value).collect())
        }
        PropertyValue::Object(map) => PropertyValue::Object(Box::new(masked_map(map))),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plaintexts_come_from_every_secret_in_the_file() {
        let yaml: Yaml = serde_yaml_ng::from_str(
            "deployments:\n  - config: {k: {$secret: config-value}}\n    program:\n      - inputs: {a: {$secret: {nested: [deep-value, 12345]}}, b: plain-value, c: {$secret: abc}}\n    expect:\n      state: {x: {outputs: {o: {$secret: output-value}}}}\n",
        )
        .unwrap();
        let found: Vec<String> = plaintexts(&yaml).into_iter().collect();
        assert_eq!(
            found,
            ["12345", "config-value", "deep-value", "output-value"],
            "short ones (abc) and plain ones are not scanned for"
        );
    }

    #[test]
    fn a_scan_finds_every_spelling_and_only_real_hits() {
        let secrets = BTreeSet::from(["hunter2".to_owned(), "a\"quoted\"b".to_owned()]);
        assert!(scan("x", "nothing to see", &secrets).is_empty());
        let hits = scan("the checkpoint", r#"{"p":"hunter2"}"#, &secrets);
        assert_eq!(hits.len(), 1);
        assert!(
            hits[0].contains("\"hunter2\" is in the checkpoint"),
            "{}",
            hits[0]
        );
        // JSON-escaped, as a checkpoint holds it.
        assert_eq!(scan("j", r#"{"p":"a\"quoted\"b"}"#, &secrets).len(), 1);
    }

    #[test]
    fn rendered_events_mask_secrets_and_keep_the_rest() {
        let urn = cairn_engine::urn::Urn::parse("urn:pulumi:s::p::t:index:T::a").unwrap();
        let outputs: PropertyMap = [
            (
                "pw".to_owned(),
                PropertyValue::secret(PropertyValue::from("hunter2")),
            ),
            ("leak".to_owned(), PropertyValue::from("correct-horse")),
        ]
        .into_iter()
        .collect();
        let text = rendered_events(&[EngineEvent::Outputs { urn, outputs }]);
        let secrets = BTreeSet::from(["hunter2".to_owned(), "correct-horse".to_owned()]);
        let hits = scan("the events", &text, &secrets);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].contains("correct-horse"));
    }
}
