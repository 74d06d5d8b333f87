//! Wasm providers from the CLI: installing plugins, and refresh/destroy driving a real provider
//! component inside the sandbox the user granted.

use serde_json::Value;

use crate::support::{Sandbox, assert_contains, example_wasm};

#[test]
fn plugins_install_list_inspect_and_remove() {
    let sandbox = Sandbox::new("web");
    let random = example_wasm("random");
    let out = sandbox.ok(&["plugin", "install", random.to_str().unwrap()]);
    assert_contains(&out, &["Installed random@", "sha256"]);
    assert_contains(&sandbox.ok(&["plugin", "ls"]), &["NAME", "random"]);

    let inspected = sandbox.ok(&["plugin", "inspect", "random"]);
    assert_contains(
        &inspected,
        &[
            "random@",
            "random:index/randomPet:RandomPet",
            "random:index/randomPassword:RandomPassword",
            "requests",
        ],
    );
    let by_file: Value = serde_json::from_str(&sandbox.ok(&[
        "plugin",
        "inspect",
        example_wasm("file").to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(by_file["name"], "file");
    assert_eq!(by_file["capabilities"]["directories"][0]["guest"], "/work");

    let listed: Value = serde_json::from_str(&sandbox.ok(&["plugin", "ls", "--json"])).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_contains(
        &sandbox.ok(&["plugin", "rm", "random"]),
        &["Removed random@"],
    );
    assert_contains(&sandbox.ok(&["plugin", "ls"]), &["No providers installed"]);

    let not_wasm = sandbox.write("bogus.wasm", "not a component");
    assert_contains(
        &sandbox.fails(&["plugin", "install", not_wasm.to_str().unwrap()]),
        &["bogus.wasm"],
    );
}

/// A stack holding one file managed by the `file` provider.
fn file_stack(grant: bool) -> Sandbox {
    let sandbox = Sandbox::new("web");
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&["plugin", "install", example_wasm("file").to_str().unwrap()]);
    std::fs::create_dir_all(sandbox.project.join("site")).unwrap();
    sandbox.write("site/hello.txt", "hello\n");
    if grant {
        for (path, value) in [
            ("[\"cairn:grants\"].file.directories[0].host", "./site"),
            ("[\"cairn:grants\"].file.directories[0].guest", "/work"),
            ("[\"cairn:grants\"].file.directories[0].write", "true"),
        ] {
            sandbox.ok(&["config", "set", "--path", path, value]);
        }
    }
    let state = r#"{"version": 3, "deployment": {
      "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": ""},
      "resources": [
        {"urn": "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev", "custom": false, "type": "pulumi:pulumi:Stack"},
        {"urn": "urn:pulumi:dev::web::pulumi:providers:file::default", "custom": true, "id": "p1", "type": "pulumi:providers:file"},
        {"urn": "urn:pulumi:dev::web::file:index:File::hello", "custom": true, "id": "hello.txt", "type": "file:index:File",
         "parent": "urn:pulumi:dev::web::pulumi:pulumi:Stack::web-dev",
         "provider": "urn:pulumi:dev::web::pulumi:providers:file::default::p1",
         "inputs": {"path": "hello.txt", "content": "hello\n"},
         "outputs": {"path": "hello.txt", "content": "hello\n"}}
      ]}}"#;
    let file = sandbox.write("state.json", state);
    sandbox.ok(&["stack", "import", "--file", file.to_str().unwrap()]);
    sandbox
}

fn hello_outputs(sandbox: &Sandbox) -> Value {
    let exported: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    // An empty stack's deployment omits `resources` altogether.
    let resources = exported["deployment"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    resources
        .iter()
        .find(|r| r["urn"].as_str().is_some_and(|u| u.ends_with("::hello")))
        .map(|r| r["outputs"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn refresh_records_drift_and_destroy_removes_the_file() {
    let sandbox = file_stack(true);
    sandbox.write("site/hello.txt", "changed out of band\n");
    let out = sandbox.ok(&["refresh", "--yes", "--json"]);
    // Pulumi's engine events: a refresh that found drift ends as an `update`.
    let drift = crate::support::json_events(&out).iter().any(|e| {
        let step = &e["resOutputsEvent"]["metadata"];
        step["op"] == "update"
            && step["urn"]
                .as_str()
                .is_some_and(|urn| urn.ends_with("::hello"))
    });
    assert!(drift, "refresh must report the drift:\n{out}");
    assert_eq!(hello_outputs(&sandbox)["content"], "changed out of band\n");

    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["hello", "deleted"]);
    assert!(
        !sandbox.project.join("site/hello.txt").exists(),
        "destroy must delete the file through the provider"
    );
    assert!(hello_outputs(&sandbox).is_null());
}

#[test]
fn refresh_drops_a_file_deleted_out_of_band() {
    let sandbox = file_stack(true);
    std::fs::remove_file(sandbox.project.join("site/hello.txt")).unwrap();
    sandbox.ok(&["refresh", "--yes"]);
    assert!(
        hello_outputs(&sandbox).is_null(),
        "the vanished file leaves the state"
    );
}

#[test]
fn without_a_grant_the_provider_cannot_touch_the_directory() {
    let sandbox = file_stack(false);
    let err = sandbox.fails(&["destroy", "--yes"]);
    assert_contains(
        &err,
        &[
            "delete urn:pulumi:dev::web::file:index:File::hello",
            "no directory is granted at /work",
            "cairn:grants.file.directories",
        ],
    );
    assert!(
        sandbox.project.join("site/hello.txt").exists(),
        "an ungranted provider must not delete anything"
    );
    assert!(
        !hello_outputs(&sandbox).is_null(),
        "the state keeps the resource"
    );
}
