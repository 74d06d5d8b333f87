//! `--json` on a preview: Pulumi's preview digest, one JSON document written when the preview
//! ends (its `ShowPreviewDigest`); `cairn stack output --json` writes values with
//! [`value_to_json`]. (`--json` on a deployment that is not a preview streams Pulumi's engine
//! events: [`super::engine_events`].)
//!
//! The document is Pulumi's `PreviewDigest`, indented by four spaces, empty fields left out as
//! Go's `omitempty` leaves them out:
//!
//! ```text
//! {
//!     "config": {"proj:name": "x", "proj:pw": "[secret]"},
//!     "steps": [
//!         {
//!             "op": "update",
//!             "urn": "urn:pulumi:dev::proj::random:index:RandomPet::pet",
//!             "provider": "urn:pulumi:dev::proj::pulumi:providers:random::default::id",
//!             "oldState": { Resource V3, as in a checkpoint },
//!             "newState": { ... },
//!             "diffReasons": ["length"],
//!             "detailedDiff": {"length": {"kind": "update", "inputDiff": true}}
//!         }
//!     ],
//!     "diagnostics": [{"urn": "…", "message": "warning: …\n", "severity": "warning"}],
//!     "duration": 1234000000,
//!     "changeSummary": {"create": 1, "same": 2}
//! }
//! ```
//!
//! As in Pulumi: steps of default providers, `same` steps (unless `--show-sames`) and the
//! halves of a replacement (`create-replacement`, `delete-replaced`) are left out, the stack's
//! own step never is; `detailedDiff` is `null` for steps without one; `duration` is in
//! nanoseconds; debug diagnostics are left out and the others carry their prefix in `message`;
//! states show every secret as the string `[secret]` whatever `--show-secrets` says (Pulumi
//! masks them there unconditionally), unknowns as the state format's sentinel; the stack's
//! inputs and outputs are left empty with `--suppress-outputs`.
//!
//! [`value_to_json`]'s values are plain JSON, except: a secret is `"[secret]"` (its contents
//! with `show_secrets`), an unknown is `"[unknown]"`, a non-finite number is its string
//! (`"NaN"`, `"inf"`), a resource reference is its URN string, an output is its value (or the
//! markers above), an asset is `{"asset": {"hash": "…"|null, "source": "text"|"path"|"uri"|"hash",
//! "location": "…"}}` and an archive `{"archive": {"hash": …, "source":
//! "assets"|"path"|"uri"|"hash", "location": "…", "members": n}}` (`location` for `path`/`uri`
//! only, `members` for `assets` only).
//!
//! Everything is escaped by [`terminal::json_indented`]: DEL, C1 controls and bidi characters
//! too (as `\uXXXX`, which decodes to the original).

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use cairn_engine::asset::{ArchiveSource, AssetSource};
use cairn_engine::deploy::events::{EngineEvent, Operation, Severity, StepInfo, StepOp};
use cairn_engine::state::ResourceState;
use cairn_engine::state::codec::{SecretsMode, encode_property_map};
use cairn_engine::urn::ROOT_STACK_TYPE;
use cairn_engine::{PropertyMap, PropertyValue, Urn};
use serde::Serialize;
use serde_json::{Map, Value as Json};

use super::engine_events::{
    EventSettings, change_summary, detailed_diff, diff_keys, filtered_message, is_internal,
    is_logical, pulumi_op, secret_filter, step_provider,
};
use super::{Output, Renderer, SECRET, UNKNOWN, lock};
use crate::terminal;

/// The preview digest: built from the events, written once when the display finishes.
pub(super) struct PreviewDigest {
    show_sames: bool,
    suppress_outputs: bool,
    secrets: Vec<String>,
    state: Mutex<DigestState>,
    output: Mutex<Output>,
}

struct DigestState {
    digest: Digest,
    operation: Operation,
    /// The steps already in the digest (a step may be reported started and finished).
    added: HashSet<(Urn, StepOp)>,
    /// An event arrived: there is a preview to describe.
    any: bool,
    written: bool,
}

/// Pulumi's `display.PreviewDigest`.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct Digest {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    config: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    steps: Vec<PreviewStep>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    diagnostics: Vec<PreviewDiagnostic>,
    /// Nanoseconds (a Go `time.Duration`).
    #[serde(skip_serializing_if = "is_zero")]
    duration: u64,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    change_summary: BTreeMap<&'static str, usize>,
    #[serde(skip_serializing_if = "is_false")]
    maybe_corrupt: bool,
}

/// Pulumi's `display.PreviewStep`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PreviewStep {
    op: &'static str,
    urn: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    provider: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_state: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    new_state: Option<Json>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    diff_reasons: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    replace_reasons: Vec<String>,
    detailed_diff: Option<BTreeMap<String, DigestPropertyDiff>>,
}

/// Pulumi's `display.PropertyDiff` (not the engine events' `apitype.PropertyDiff`: `kind`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DigestPropertyDiff {
    kind: &'static str,
    input_diff: bool,
}

/// Pulumi's `display.PreviewDiagnostic` (its `prefix` is folded into `message`).
#[derive(Serialize)]
struct PreviewDiagnostic {
    #[serde(skip_serializing_if = "String::is_empty")]
    urn: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    message: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    severity: &'static str,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl PreviewDigest {
    pub(super) fn new(
        output: Output,
        settings: &EventSettings,
        show_sames: bool,
        suppress_outputs: bool,
    ) -> PreviewDigest {
        PreviewDigest {
            show_sames,
            suppress_outputs,
            secrets: secret_filter(settings.secrets.clone()),
            state: Mutex::new(DigestState {
                digest: Digest {
                    config: settings.config.clone(),
                    ..Digest::default()
                },
                operation: Operation::Update,
                added: HashSet::new(),
                any: false,
                written: false,
            }),
            output: Mutex::new(output),
        }
    }

    /// Whether the digest lists `step` (Pulumi's `shouldShow`, or the stack's own step).
    fn shows(&self, step: &StepInfo) -> bool {
        if is_internal(step) {
            return false;
        }
        if step.urn.qualified_type() == ROOT_STACK_TYPE {
            return true;
        }
        match step.op {
            StepOp::Same => self.show_sames,
            op => is_logical(op),
        }
    }

    fn step(&self, step: &StepInfo, operation: Operation) -> PreviewStep {
        // A refresh that finds nothing is listed as the `refresh` it is; drift and deletions
        // replace it with what it found, as Pulumi's digest does.
        let op = if operation == Operation::Refresh && step.op == StepOp::Refresh {
            "refresh"
        } else {
            pulumi_op(step, operation)
        };
        let suppress = self.suppress_outputs && step.urn.qualified_type() == ROOT_STACK_TYPE;
        PreviewStep {
            op,
            urn: step.urn.to_string(),
            provider: step_provider(step),
            old_state: step.old.as_deref().and_then(|s| digest_state(s, suppress)),
            new_state: step.new.as_deref().and_then(|s| digest_state(s, suppress)),
            diff_reasons: diff_keys(step),
            replace_reasons: step.replace_keys.clone(),
            detailed_diff: detailed_diff(step, operation).map(|diff| {
                diff.into_iter()
                    .map(|(path, (kind, input_diff))| {
                        (path, DigestPropertyDiff { kind, input_diff })
                    })
                    .collect()
            }),
        }
    }

    fn diagnostic(
        &self,
        severity: Severity,
        urn: Option<&Urn>,
        message: &str,
    ) -> PreviewDiagnostic {
        let (prefix, severity) = match severity {
            Severity::Debug => ("debug: ", "debug"),
            Severity::Info => ("", "info"),
            Severity::Warning => ("warning: ", "warning"),
            Severity::Error => ("error: ", "error"),
        };
        PreviewDiagnostic {
            urn: urn.map(|u| u.to_string()).unwrap_or_default(),
            message: format!("{prefix}{}", filtered_message(&self.secrets, message)),
            severity,
        }
    }
}

impl Renderer for PreviewDigest {
    fn event(&self, event: EngineEvent) {
        let mut state = lock(&self.state);
        state.any = true;
        match event {
            EngineEvent::Started { operation, .. } => state.operation = operation,
            EngineEvent::StepStarted(step) | EngineEvent::StepFinished { step, .. } => {
                if !self.shows(&step) {
                    return;
                }
                let key = (step.urn.clone(), step.op);
                if state.added.insert(key) {
                    let entry = self.step(&step, state.operation);
                    state.digest.steps.push(entry);
                }
            }
            EngineEvent::StepFailed { step, error, .. } => {
                let urn = (!is_internal(&step)).then_some(&step.urn);
                let message = format!("Preview failed: {error}");
                let diagnostic = self.diagnostic(Severity::Error, urn, &message);
                state.digest.diagnostics.push(diagnostic);
            }
            EngineEvent::Diagnostic {
                severity: Severity::Debug,
                ..
            } => {}
            EngineEvent::Diagnostic {
                severity,
                urn,
                message,
            } => {
                let diagnostic = self.diagnostic(severity, urn.as_ref(), &message);
                state.digest.diagnostics.push(diagnostic);
            }
            EngineEvent::Summary {
                changes,
                unchanged,
                duration,
                ..
            } => {
                state.digest.duration = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
                state.digest.change_summary =
                    change_summary(changes.iter().map(|(op, n)| (*op, *n)), unchanged);
            }
            // Pulumi's digest leaves policy events and outputs out.
            EngineEvent::PolicyPacks(_)
            | EngineEvent::PolicyViolation { .. }
            | EngineEvent::PolicyRemediation { .. }
            | EngineEvent::Outputs { .. } => {}
        }
    }

    fn finish(&self) {
        let mut state = lock(&self.state);
        if !state.any || state.written {
            return;
        }
        state.written = true;
        match terminal::json_indented(&state.digest, b"    ") {
            Ok(mut text) => {
                text.push('\n');
                lock(&self.output).write(&text);
            }
            Err(e) => tracing::warn!("the preview digest could not be written: {e}"),
        }
    }
}

/// A state as the digest shows it: Resource V3 (the checkpoint's shape) with every secret the
/// string `[secret]` (`None` if it cannot be encoded, as Pulumi then leaves it out).
fn digest_state(state: &ResourceState, suppress: bool) -> Option<Json> {
    let encoded = state
        .try_map_properties(|map, _| {
            if suppress {
                return Ok(Map::new());
            }
            encode_property_map(&masked_map(map), SecretsMode::Plaintext)
        })
        .ok()?;
    serde_json::to_value(encoded).ok()
}

/// Pulumi's `MassageSecrets`: secrets become the string `[secret]`, outputs their values.
fn masked_map(map: &PropertyMap) -> PropertyMap {
    map.iter()
        .map(|(k, v)| (k.clone(), masked_value(v)))
        .collect()
}

fn masked_value(value: &PropertyValue) -> PropertyValue {
    match value {
        PropertyValue::Secret(_) => PropertyValue::String(SECRET.to_owned()),
        PropertyValue::Output(output) if output.secret => PropertyValue::String(SECRET.to_owned()),
        PropertyValue::Output(output) => match &output.value {
            None => PropertyValue::Computed,
            Some(inner) => masked_value(inner),
        },
        PropertyValue::Array(items) => {
            PropertyValue::Array(items.iter().map(masked_value).collect())
        }
        PropertyValue::Object(map) => PropertyValue::Object(Box::new(masked_map(map))),
        other => other.clone(),
    }
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
            wrap("asset", blob_json(asset.hash.as_deref(), source, location))
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
    use crate::display::engine_events::EventSettings;
    use crate::display::test_support::*;
    use cairn_engine::asset::Asset;
    use cairn_engine::deploy::events::EventSink;
    use cairn_engine::state::codec::UNKNOWN_SENTINEL;
    use cairn_engine::{ResourceReference, props};

    fn digest(
        events: Vec<EngineEvent>,
        show_sames: bool,
        settings: EventSettings,
    ) -> (String, Json) {
        let (display, buf) = json_display(true, show_sames, settings);
        for event in events {
            display.emit(event);
        }
        drop(display);
        let text = buf.text();
        let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (text, json)
    }

    #[test]
    fn a_preview_is_one_document_in_pulumis_shape() {
        let settings = EventSettings {
            config: [("proj:pw".to_owned(), "[secret]".to_owned())].into(),
            secrets: vec!["hunter2".to_owned()],
            log: None,
        };
        let mut events = update_events(true);
        events.insert(
            1,
            EngineEvent::Diagnostic {
                severity: Severity::Info,
                urn: None,
                message: "the password is hunter2".into(),
            },
        );
        let (text, digest) = digest(events, false, settings);
        assert!(
            text.starts_with("{\n    \"config\": {"),
            "four-space indent:\n{text}"
        );
        assert!(text.ends_with("}\n"));
        assert!(!text.contains("hunter"), "{text}");
        let keys: Vec<&String> = digest.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "config",
                "steps",
                "diagnostics",
                "duration",
                "changeSummary"
            ],
            "maybeCorrupt is left out when false"
        );
        assert_eq!(digest["config"], serde_json::json!({"proj:pw": "[secret]"}));
        let steps: Vec<(&str, &str)> = digest["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["op"].as_str().unwrap(), s["urn"].as_str().unwrap()))
            .collect();
        // The stack's `same` step is listed, the halves of the replacement are not.
        assert_eq!(
            steps,
            [
                (
                    "same",
                    "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev"
                ),
                (
                    "create",
                    "urn:pulumi:dev::proj::random:index:RandomPet::pet"
                ),
                ("update", "urn:pulumi:dev::proj::aws:s3:Bucket::logs"),
                ("replace", "urn:pulumi:dev::proj::aws:ec2:Instance::web"),
                ("delete", "urn:pulumi:dev::proj::aws:s3:Bucket::old"),
            ]
        );
        assert_eq!(
            digest["steps"][2],
            serde_json::json!({
                "op": "update",
                "urn": "urn:pulumi:dev::proj::aws:s3:Bucket::logs",
                "diffReasons": ["tags", "size", "legacy", "password"],
                "detailedDiff": {
                    "legacy": {"kind": "delete", "inputDiff": true},
                    "password": {"kind": "update", "inputDiff": true},
                    "size": {"kind": "add", "inputDiff": true},
                    "tags.env": {"kind": "update", "inputDiff": true},
                },
            })
        );
        assert_eq!(
            digest["steps"][3]["replaceReasons"],
            serde_json::json!(["ami"])
        );
        assert_eq!(
            digest["steps"][1]["detailedDiff"],
            Json::Null,
            "always present"
        );
        assert_eq!(
            digest["diagnostics"],
            serde_json::json!([
                {"message": "the password is [secret]\n", "severity": "info"},
                {"urn": "urn:pulumi:dev::proj::aws:s3:Bucket::logs",
                    "message": "warning: versioning is disabled\n", "severity": "warning"},
            ])
        );
        assert_eq!(digest["duration"], 1_234_000_000u64, "nanoseconds");
        assert_eq!(
            digest["changeSummary"],
            serde_json::json!({"create": 1, "delete": 1, "replace": 1, "same": 1, "update": 1})
        );
    }

    #[test]
    fn sames_are_listed_with_show_sames_and_default_providers_never() {
        let mut same = pet(StepOp::Same);
        same.preview = true;
        let mut provider = step(StepOp::Create, "pulumi:providers:random", "default");
        provider.preview = true;
        for show_sames in [false, true] {
            let events = vec![
                EngineEvent::StepStarted(provider.clone()),
                EngineEvent::StepFinished {
                    step: provider.clone(),
                    duration: ms(0),
                },
                EngineEvent::StepFinished {
                    step: same.clone(),
                    duration: ms(0),
                },
            ];
            let (_, digest) = digest(events, show_sames, EventSettings::default());
            let steps = digest
                .get("steps")
                .and_then(Json::as_array)
                .map_or(0, Vec::len);
            assert_eq!(steps, usize::from(show_sames), "{digest}");
        }
    }

    #[test]
    fn states_are_resource_v3_with_secrets_masked() {
        let mut step = pet(StepOp::Update);
        step.preview = true;
        let urn = step.urn.clone();
        step.old = Some(state(
            &urn,
            props! {"length" => 2i64, "pw" => secret("hunter2")},
            props! {"id" => "x"},
        ));
        step.new = Some(state(
            &urn,
            props! {"length" => 3i64, "pw" => secret("hunter2")},
            props! {"later" => output(None, false), "hidden" => output(Some("hunter3".into()), true)},
        ));
        let (text, digest) = digest(
            vec![EngineEvent::StepStarted(step)],
            false,
            EventSettings::default(),
        );
        assert!(!text.contains("hunter"), "{text}");
        assert_eq!(
            digest["steps"][0]["newState"],
            serde_json::json!({
                "urn": urn.as_str(),
                "custom": true,
                "id": "pet-id",
                "type": "random:index:RandomPet",
                "inputs": {"length": 3, "pw": "[secret]"},
                "outputs": {"later": UNKNOWN_SENTINEL, "hidden": "[secret]"},
            })
        );
        assert_eq!(digest["steps"][0]["oldState"]["inputs"]["pw"], "[secret]");
    }

    #[test]
    fn a_failed_preview_reports_it_and_nothing_is_written_before_any_event() {
        let mut failing = pet(StepOp::Create);
        failing.preview = true;
        let (_, digest) = digest(
            vec![EngineEvent::StepFailed {
                step: failing,
                error: "boom".into(),
                duration: ms(0),
            }],
            false,
            EventSettings::default(),
        );
        assert_eq!(
            digest["diagnostics"],
            serde_json::json!([{"urn": "urn:pulumi:dev::proj::random:index:RandomPet::pet",
                "message": "error: Preview failed: boom\n", "severity": "error"}])
        );
        let (display, buf) = json_display(true, false, EventSettings::default());
        drop(display);
        assert_eq!(buf.text(), "");
    }

    #[test]
    fn values_convert_to_json() {
        let hash = "abc123";
        let reference = PropertyValue::ResourceReference(Box::new(ResourceReference {
            urn: urn("aws:s3:Bucket", "logs"),
            id: None,
            package_version: None,
        }));
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
                PropertyValue::from(
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
                PropertyValue::Asset(Box::new(Asset {
                    hash: Some(hash.into()),
                    ..Asset::from_path("a.txt")
                })),
                serde_json::json!({"asset": {"hash": "abc123", "source": "path", "location": "a.txt"}}),
                serde_json::json!({"asset": {"hash": "abc123", "source": "path", "location": "a.txt"}}),
            ),
            (
                PropertyValue::Asset(Box::new(Asset::from_text("secret text stays out"))),
                serde_json::json!({"asset": {"hash": null, "source": "text"}}),
                serde_json::json!({"asset": {"hash": null, "source": "text"}}),
            ),
            (
                PropertyValue::Archive(Box::new(one_member_archive())),
                serde_json::json!({"archive": {"hash": null, "source": "assets", "members": 1}}),
                serde_json::json!({"archive": {"hash": null, "source": "assets", "members": 1}}),
            ),
        ];
        for (value, masked, shown) in cases {
            assert_eq!(value_to_json(&value, false), masked, "{value:?}");
            assert_eq!(value_to_json(&value, true), shown, "{value:?} shown");
        }
    }
}
