//! `cairn destroy` / `cairn refresh` from the CLI: confirmation, the display, JSON events, and
//! errors that leave the state as it was.

use serde_json::Value;

use crate::support::{Sandbox, assert_contains};

const COMPONENTS: &str = r#"{"version": 3, "deployment": {
  "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": ""},
  "resources": [
    {"urn": "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev", "custom": false, "type": "pulumi:pulumi:Stack"},
    {"urn": "urn:pulumi:dev::web::my:index:Site::site", "custom": false, "type": "my:index:Site",
     "parent": "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev"},
    {"urn": "urn:pulumi:dev::web::my:index:Site$my:index:Page::home", "custom": false, "type": "my:index:Page",
     "parent": "urn:pulumi:dev::web::my:index:Site::site", "PROTECT": false}
  ]}}"#;

const WITH_CUSTOM: &str = r#"{"version": 3, "deployment": {
  "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": ""},
  "resources": [
    {"urn": "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev", "custom": false, "type": "pulumi:pulumi:Stack"},
    {"urn": "urn:pulumi:dev::web::pulumi:providers:random::default", "custom": true, "id": "p1", "type": "pulumi:providers:random"},
    {"urn": "urn:pulumi:dev::web::random:index:RandomPet::pet", "custom": true, "id": "pet-1", "type": "random:index:RandomPet",
     "parent": "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev",
     "provider": "urn:pulumi:dev::web::pulumi:providers:random::default::p1"}
  ]}}"#;

fn stack_with(state: &str) -> Sandbox {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    let file = sandbox.write("state.json", &state.replace(", \"PROTECT\": false", ""));
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    sandbox
}

fn resource_count(sandbox: &Sandbox) -> usize {
    let exported: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    exported["deployment"]["resources"]
        .as_array()
        .map_or(0, Vec::len)
}

#[test]
fn destroy_deletes_children_before_parents_and_empties_the_stack() {
    let sandbox = stack_with(COMPONENTS);
    assert_contains(
        &sandbox.fails(&["destroy"]),
        &["cairn destroy needs confirmation: pass --yes"],
    );
    assert_eq!(
        resource_count(&sandbox),
        3,
        "nothing deleted without confirmation"
    );

    let out = sandbox.ok(&["destroy", "--yes"]);
    assert_contains(&out, &["delete", "home", "site", "3 deleted"]);
    let home = out.find("home").unwrap();
    let site = out.rfind(" site").unwrap();
    assert!(
        home < site,
        "the child is deleted before its parent:\n{out}"
    );
    assert_eq!(resource_count(&sandbox), 0);
}

/// As in Pulumi: the protected resource's delete fails, naming it, and what it depends on (its
/// parent and the stack) stays with it.
#[test]
fn destroy_refuses_protected_resources_and_keeps_what_they_depend_on() {
    let sandbox = stack_with(COMPONENTS);
    sandbox.ok(&[
        "state",
        "protect",
        "urn:pulumi:dev::web::my:index:Site$my:index:Page::home",
    ]);
    let err = sandbox.fails(&["destroy", "--yes"]);
    assert_contains(
        &err,
        &[
            "my:index:Page::home\" cannot be deleted",
            "because it is protected",
            "cairn state unprotect 'urn:pulumi:dev::web::my:index:Site$my:index:Page::home'",
        ],
    );
    assert_eq!(resource_count(&sandbox), 3);
}

#[test]
fn destroy_with_a_missing_provider_names_the_package_and_keeps_the_state() {
    let sandbox = stack_with(WITH_CUSTOM);
    let before = sandbox.ok(&["stack", "export"]);
    let err = sandbox.fails(&["destroy", "--yes"]);
    assert_contains(&err, &["package \"random\"", "no wasm provider found"]);
    let after: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let before: Value = serde_json::from_str(&before).unwrap();
    assert_eq!(
        after["deployment"]["resources"], before["deployment"]["resources"],
        "the failed destroy must keep every resource it did not delete"
    );
}

#[test]
fn events_can_be_printed_as_json_lines() {
    let sandbox = stack_with(COMPONENTS);
    let out = sandbox.ok(&["destroy", "--yes", "--skip-preview", "--json"]);
    let events: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert!(events[0].get("preludeEvent").is_some(), "{out}");
    let deletes = events
        .iter()
        .filter(|e| e["resOutputsEvent"]["metadata"]["op"] == "delete")
        .count();
    assert_eq!(deletes, 3, "{out}");
    assert_eq!(events.last().unwrap()["cancelEvent"], serde_json::json!({}));
    let summary = &events[events.len() - 2]["summaryEvent"];
    assert_eq!(summary["result"], "succeeded", "{out}");
    assert_eq!(summary["isPreview"], false);
    assert_eq!(summary["resourceChanges"], serde_json::json!({"delete": 3}));
}

#[test]
fn refresh_of_components_changes_nothing() {
    let sandbox = stack_with(COMPONENTS);
    let out = sandbox.ok(&["refresh", "--yes"]);
    assert_contains(&out, &["Resources:"]);
    assert_eq!(resource_count(&sandbox), 3);
}
