//! Machine-readable output as Pulumi's: `preview --json` prints Pulumi's preview digest (one
//! document); `up` / `refresh` / `destroy --json` stream Pulumi's engine events, one per line;
//! `--event-log FILE` records every engine event of every deploying command next to the human
//! display. What a Pulumi program of the same shape gets from Pulumi, checked field by field
//! (pkg/backend/display/json.go, events.go; sdk/go/common/apitype/events.go).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Sandbox, assert_contains, assert_no_raw_controls, probe_stack};

/// The secret `apiKey` the `options` program passes as an input of `keyed`.
const API_KEY: &str = "xyz-secret-key-json";

/// A secret's form in engine events (Pulumi's blinding crypter).
fn blinded() -> Value {
    json!({"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
        "ciphertext": "[secret]"})
}

/// `program-probe` in mode `options`: an explicit provider `eu` for `direct` and the children
/// of component `group` (`child`), `keyed` with the secret config as an input (on the default
/// provider), structured config.
fn options_stack() -> Sandbox {
    let sandbox = probe_stack("options");
    sandbox.ok(&["config", "set", "--secret", "apiKey", API_KEY]);
    sandbox.ok(&["config", "set", "--path", "ports[0]", "80"]);
    sandbox
}

fn lines(text: &str) -> Vec<Value> {
    for line in text.lines().skip_while(|l| !l.starts_with("{\"sequence\"")) {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    crate::support::json_events(text)
}

/// The event kind of a line: its one key besides `sequence` and `timestamp`.
fn kind(event: &Value) -> String {
    let keys: Vec<&String> = event
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "sequence" && *k != "timestamp")
        .collect();
    assert_eq!(keys.len(), 1, "one event per line: {event}");
    keys[0].clone()
}

/// The lines of an event log, checked as every log must be: whole JSON lines, numbered from 0
/// without gaps, timestamped, one event each, no raw control character, no secret plaintext,
/// closed by a `cancelEvent`; the file readable by its owner only.
fn read_log(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap();
    assert_no_raw_controls("the event log", &bytes);
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        !text.contains(API_KEY),
        "a secret in the event log:\n{text}"
    );
    assert!(text.ends_with('\n'), "whole lines only");
    let events = lines(&text);
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event["sequence"], i, "{event}");
        assert!(event["timestamp"].as_u64().unwrap() > 1_600_000_000);
        kind(event);
    }
    assert_eq!(events.last().map(kind).as_deref(), Some("cancelEvent"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the event log is private");
    }
    events
}

/// `(op, URN name)` of the events of one kind (`resourcePreEvent`, `resOutputsEvent`).
fn steps(events: &[Value], kind: &str) -> BTreeSet<(String, String)> {
    events
        .iter()
        .filter_map(|e| e.get(kind))
        .map(|e| {
            let m = &e["metadata"];
            let urn = m["urn"].as_str().unwrap();
            (
                m["op"].as_str().unwrap().to_owned(),
                urn.rsplit("::").next().unwrap().to_owned(),
            )
        })
        .collect()
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// What the program creates, as Pulumi lists it (its default provider is internal).
const CREATES: [(&str, &str); 6] = [
    ("create", "prog-dev"),
    ("create", "eu"),
    ("create", "direct"),
    ("create", "group"),
    ("create", "child"),
    ("create", "keyed"),
];

#[test]
fn preview_json_is_pulumis_preview_digest() {
    let sandbox = options_stack();
    let out = sandbox.ok(&["preview", "--json"]);
    assert!(
        out.starts_with("{\n    \""),
        "one indented document:\n{out}"
    );
    let digest: Value = serde_json::from_str(&out).expect("one JSON document");
    assert!(!out.contains(API_KEY));
    assert_eq!(
        digest["config"],
        json!({"prog:apiKey": "[secret]", "prog:mode": "options", "prog:ports": "[80]"})
    );
    let listed: BTreeSet<(String, String)> = digest["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let urn = s["urn"].as_str().unwrap();
            (
                s["op"].as_str().unwrap().to_owned(),
                urn.rsplit("::").next().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(listed, set(&CREATES), "{digest:#}");
    assert_eq!(digest["changeSummary"], json!({"create": 6}));
    assert!(digest["duration"].as_u64().unwrap() > 0);
    assert!(digest.get("maybeCorrupt").is_none());
    let step = |name: &str| {
        digest["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["urn"].as_str().unwrap().ends_with(&format!("::{name}")))
            .unwrap()
            .clone()
    };
    let keyed = step("keyed");
    assert_eq!(keyed["detailedDiff"], Value::Null);
    assert!(keyed.get("oldState").is_none());
    let state = &keyed["newState"];
    assert_eq!(
        state["urn"],
        "urn:pulumi:dev::prog::probe:index:Thing::keyed"
    );
    assert_eq!(state["type"], "probe:index:Thing");
    assert_eq!(state["custom"], true);
    assert_eq!(state["inputs"]["key"], "[secret]", "{state:#}");
    assert_contains(
        keyed["provider"].as_str().unwrap(),
        &["urn:pulumi:dev::prog::pulumi:providers:probe::default"],
    );
    assert_contains(
        step("direct")["provider"].as_str().unwrap(),
        &["urn:pulumi:dev::prog::pulumi:providers:probe::eu::"],
    );
    assert_eq!(
        step("child")["newState"]["parent"],
        "urn:pulumi:dev::prog::prog:index:Group::group"
    );
    assert!(
        step("group").get("provider").is_none(),
        "components have none"
    );

    // Once deployed, a preview of no change lists the stack alone (sames are hidden).
    sandbox.ok(&["up", "--yes"]);
    let digest: Value = serde_json::from_str(&sandbox.ok(&["preview", "--json"])).unwrap();
    let ops: Vec<&str> = digest["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["same"], "{digest:#}");
    assert_eq!(digest["changeSummary"], json!({"same": 6}));
    let digest: Value =
        serde_json::from_str(&sandbox.ok(&["preview", "--json", "--show-sames"])).unwrap();
    assert_eq!(digest["steps"].as_array().unwrap().len(), 6, "{digest:#}");
    let shown = sandbox.ok(&["preview", "--json", "--show-secrets"]);
    assert!(
        !shown.contains(API_KEY),
        "Pulumi's digest masks secrets whatever --show-secrets says"
    );
}

#[test]
fn up_json_streams_engine_events_and_the_event_log_records_them_all() {
    let sandbox = options_stack();
    let log = sandbox.project.join("up.jsonl");
    let out = sandbox.ok(&[
        "up",
        "--yes",
        "--json",
        "--event-log",
        log.to_str().unwrap(),
    ]);
    assert_no_raw_controls("up --json", out.as_bytes());
    let stream = lines(&out);
    let logged = read_log(&log);

    // stdout: the log's events but the internal ones (the default provider's steps), with the
    // log's sequence numbers.
    let sequences: Vec<u64> = stream
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert!(sequences.windows(2).all(|w| w[0] < w[1]), "{sequences:?}");
    for event in &stream {
        let n = event["sequence"].as_u64().unwrap() as usize;
        assert_eq!(logged[n], *event, "the same event in both");
    }
    let internal: Vec<&Value> = logged.iter().filter(|e| !stream.contains(e)).collect();
    assert!(!internal.is_empty());
    for event in internal {
        assert_contains(
            &event.to_string(),
            &["urn:pulumi:dev::prog::pulumi:providers:probe::default"],
        );
    }

    assert_eq!(kind(&stream[0]), "preludeEvent");
    assert_eq!(
        stream[0]["preludeEvent"]["config"]["prog:apiKey"],
        "[secret]"
    );
    assert_eq!(steps(&stream, "resourcePreEvent"), set(&CREATES));
    // Outputs: of what providers manage, and of the components that registered theirs.
    assert_eq!(
        steps(&stream, "resOutputsEvent"),
        set(&[
            ("create", "eu"),
            ("create", "direct"),
            ("create", "child"),
            ("create", "keyed"),
            ("create", "group"),
            ("create", "prog-dev"),
        ])
    );
    let keyed = stream
        .iter()
        .find(|e| {
            e["resOutputsEvent"]["metadata"]["urn"]
                == "urn:pulumi:dev::prog::probe:index:Thing::keyed"
        })
        .unwrap();
    let metadata = &keyed["resOutputsEvent"]["metadata"];
    assert_eq!(metadata["type"], "probe:index:Thing");
    assert_eq!(metadata["old"], Value::Null);
    assert_eq!(metadata["detailedDiff"], Value::Null);
    assert_eq!(metadata["logical"], true);
    assert_eq!(metadata["new"]["inputs"]["key"], blinded());
    assert_eq!(metadata["new"]["custom"], true);
    assert!(
        metadata["new"]["id"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );
    assert_eq!(metadata["provider"], metadata["new"]["provider"]);
    assert!(keyed["resOutputsEvent"].get("planning").is_none());
    let stack_outputs = &stream
        .iter()
        .rfind(|e| e["resOutputsEvent"]["metadata"]["type"] == "pulumi:pulumi:Stack")
        .unwrap()["resOutputsEvent"]["metadata"]["new"]["outputs"];
    assert_eq!(stack_outputs["key"], blinded());
    assert_eq!(stack_outputs["portsSum"], 80);

    assert_eq!(
        stream[stream.len() - 2]["summaryEvent"],
        json!({"maybeCorrupt": false, "durationSeconds": stream[stream.len() - 2]["summaryEvent"]["durationSeconds"],
            "resourceChanges": {"create": 6}, "PolicyPacks": {}, "isPreview": false,
            "result": "succeeded"})
    );
    assert_eq!(stream.last().map(kind).as_deref(), Some("cancelEvent"));

    // A second up: every step is `same`, announced and finished.
    let out = sandbox.ok(&["up", "--yes", "--json"]);
    let stream = lines(&out);
    let pre = steps(&stream, "resourcePreEvent");
    assert!(pre.iter().all(|(op, _)| op == "same"), "{pre:?}");
    assert_eq!(pre.len(), 6);
    assert_eq!(
        stream[stream.len() - 2]["summaryEvent"]["resourceChanges"],
        json!({"same": 6})
    );
}

#[test]
fn every_deploying_command_writes_the_event_log_next_to_its_display() {
    let sandbox = options_stack();
    // (command, human output it still prints, preview, the summary's changes)
    let cases: [(&[&str], &str, bool, Value); 4] = [
        (&["preview"], "6 to create", true, json!({"create": 6})),
        (&["up", "--yes"], "6 created", false, json!({"create": 6})),
        (
            &["refresh", "--yes"],
            "unchanged",
            false,
            json!({"same": 6}),
        ),
        (
            &["destroy", "--yes"],
            "6 deleted",
            false,
            json!({"delete": 6}),
        ),
    ];
    for (args, human, preview, changes) in cases {
        let log = sandbox.project.join(format!("{}.jsonl", args[0]));
        let mut with_log = args.to_vec();
        with_log.extend(["--event-log", log.to_str().unwrap()]);
        let out = sandbox.ok(&with_log);
        assert_contains(&out, &[human]);
        let events = read_log(&log);
        assert_eq!(kind(&events[0]), "preludeEvent", "{args:?}");
        let kinds: BTreeSet<String> = events.iter().map(kind).collect();
        for expected in ["resourcePreEvent", "resOutputsEvent", "summaryEvent"] {
            assert!(
                kinds.contains(expected),
                "{args:?}: no {expected}: {kinds:?}"
            );
        }
        let summary = &events[events.len() - 2]["summaryEvent"];
        assert_eq!(summary["isPreview"], preview, "{args:?}");
        assert_eq!(summary["resourceChanges"], changes, "{args:?}");
        assert_eq!(summary["result"], "succeeded", "{args:?}");
        let planning = events
            .iter()
            .filter_map(|e| e.get("resourcePreEvent"))
            .all(|e| e["planning"] == preview || (!preview && e.get("planning").is_none()));
        assert!(planning, "{args:?}: planning is set in previews only");
    }
}

#[test]
fn a_refresh_announces_refresh_steps_as_pulumi_does() {
    let sandbox = options_stack();
    sandbox.ok(&["up", "--yes"]);
    let stream = lines(&sandbox.ok(&["refresh", "--yes", "--json"]));
    let pre = steps(&stream, "resourcePreEvent");
    assert!(pre.iter().all(|(op, _)| op == "refresh"), "{pre:?}");
    let outputs = steps(&stream, "resOutputsEvent");
    assert!(outputs.iter().all(|(op, _)| op == "same"), "{outputs:?}");
    assert!(outputs.contains(&("same".to_owned(), "keyed".to_owned())));
}

#[test]
fn an_event_log_that_cannot_be_created_fails_before_anything_deploys() {
    let sandbox = options_stack();
    let log = sandbox.project.join("missing-dir").join("events.jsonl");
    let err = sandbox.fails(&["up", "--yes", "--event-log", log.to_str().unwrap()]);
    assert_contains(
        &err,
        &["cannot create the event log", log.to_str().unwrap()],
    );
    let exported: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    assert!(
        exported["deployment"]["resources"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "nothing was deployed: {exported:#}"
    );
}
