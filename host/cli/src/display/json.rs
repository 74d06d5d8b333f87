//! JSON mode (`--json`): one JSON object per event, one per line. `cairn stack output --json`
//! writes values with [`value_to_json`] too.
//!
//! Each line is one object; `type` names the event and keys come in this order:
//!
//! | `type`         | further keys                                                                    |
//! |----------------|---------------------------------------------------------------------------------|
//! | `started`      | `operation` (`update`, `refresh`, `destroy`), `preview`                         |
//! | `stepStarted`  | `op`, `urn`, `resourceType`, `preview`, `changes`, `replaceKeys`                |
//! | `stepFinished` | as `stepStarted`, then `durationMs`                                             |
//! | `stepFailed`   | as `stepStarted`, then `error`, `durationMs`                                    |
//! | `diagnostic`   | `severity` (`info`, `warning`, `error`), `urn` (or `null`), `message`; debug ones are left out |
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
//!
//! Every line is escaped by [`terminal::json`]: DEL, C1 controls and bidi characters too (as
//! `\uXXXX`, which decodes to the original).

use std::sync::Mutex;
use std::time::Duration;

use cairn_engine::asset::{ArchiveSource, AssetSource};
use cairn_engine::deploy::events::{ChangeKind, EngineEvent, Severity, StepInfo};
use cairn_engine::{PropertyMap, PropertyValue};
use serde_json::{Map, Value as Json};

use super::{Output, Renderer, SECRET, UNKNOWN, lock, operation_label, severity_label};
use crate::terminal;

/// JSON mode: each event formatted as it arrives and written as one line.
pub(super) struct JsonLines {
    show_secrets: bool,
    output: Mutex<Output>,
}

impl JsonLines {
    pub(super) fn new(output: Output, show_secrets: bool) -> JsonLines {
        JsonLines {
            show_secrets,
            output: Mutex::new(output),
        }
    }
}

impl Renderer for JsonLines {
    fn event(&self, event: EngineEvent) {
        // Debug diagnostics stay out, as in the other displays: SDKs log their RPC traffic at
        // debug level, resolved secrets included (the Node.js SDK's RegisterResource results).
        if let EngineEvent::Diagnostic {
            severity: Severity::Debug,
            ..
        } = event
        {
            return;
        }
        // Formatted before taking the lock: only the write is serialised.
        let mut line = terminal::json(&event_to_json(&event, self.show_secrets));
        line.push('\n');
        lock(&self.output).write(&line);
    }
}

/// One event as its JSON line (see the module docs for the schema).
fn event_to_json(event: &EngineEvent, show_secrets: bool) -> Json {
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
        EngineEvent::PolicyPacks(packs) => {
            m.insert("type".into(), "policyPacks".into());
            let packs: Vec<Json> = packs.iter().map(pack_json).collect();
            m.insert("packs".into(), Json::Array(packs));
        }
        EngineEvent::PolicyViolation {
            pack,
            urn,
            violation,
        } => {
            m.insert("type".into(), "policyViolation".into());
            m.insert("pack".into(), pack_json(pack));
            m.insert(
                "urn".into(),
                urn.as_ref().map_or(Json::Null, |u| u.as_str().into()),
            );
            m.insert("policy".into(), violation.policy.as_str().into());
            m.insert(
                "enforcementLevel".into(),
                violation.enforcement.as_str().into(),
            );
            m.insert("description".into(), violation.description.as_str().into());
            m.insert("message".into(), violation.message.as_str().into());
            m.insert(
                "severity".into(),
                violation.severity.map_or(Json::Null, |s| s.as_str().into()),
            );
        }
        EngineEvent::PolicyRemediation { pack, urn, policy } => {
            m.insert("type".into(), "policyRemediation".into());
            m.insert("pack".into(), pack_json(pack));
            m.insert("urn".into(), urn.as_str().into());
            m.insert("policy".into(), policy.as_str().into());
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

fn pack_json(pack: &cairn_engine::deploy::analyzer::PackSummary) -> Json {
    let mut m = Map::new();
    m.insert("name".into(), pack.name.as_str().into());
    m.insert("version".into(), pack.version.as_str().into());
    m.insert("location".into(), pack.location.as_str().into());
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

/// A change's `kind`.
fn kind_label(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Add => "add",
        ChangeKind::Update => "update",
        ChangeKind::Delete => "delete",
    }
}

/// A duration in whole milliseconds.
fn millis(duration: Duration) -> Json {
    Json::from(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
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
    use std::sync::Arc;

    use super::*;
    use crate::display::test_support::*;
    use cairn_engine::asset::Asset;
    use cairn_engine::deploy::events::{EventSink, StepOp};
    use cairn_engine::{ResourceReference, props};

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
        let debug = update_events(false)
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    EngineEvent::Diagnostic {
                        severity: Severity::Debug,
                        ..
                    }
                )
            })
            .count();
        assert!(debug > 0, "the events include a debug diagnostic");
        assert_eq!(
            lines.len(),
            update_events(false).len() - debug,
            "one line per event, debug diagnostics left out"
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
        assert_eq!(diagnostics.len(), 1, "the debug diagnostic is left out");
        assert!(!text.contains("debug chatter"));
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
                PropertyValue::Archive(one_member_archive()),
                serde_json::json!({"archive": {"hash": null, "source": "assets", "members": 1}}),
                serde_json::json!({"archive": {"hash": null, "source": "assets", "members": 1}}),
            ),
        ];
        for (value, masked, shown) in cases {
            assert_eq!(value_to_json(&value, false), masked, "{value:?}");
            assert_eq!(value_to_json(&value, true), shown, "{value:?} shown");
        }
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
}
