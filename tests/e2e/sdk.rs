//! Programs written with the real Pulumi SDKs (from PyPI and npm), deployed by Cairn
//! unchanged: SDK resources through the SDK's own dynamic-provider plugin, Cairn wasm
//! providers resolved by package, components, dependsOn, protect, aliases, config, outputs,
//! refresh and destroy.

use serde_json::Value;

use crate::support::{Sandbox, assert_contains, example_wasm, python, repo};

fn outputs(sandbox: &Sandbox, show_secrets: bool) -> Value {
    let mut args = vec!["stack", "output", "--json"];
    if show_secrets {
        args.push("--show-secrets");
    }
    serde_json::from_str(&sandbox.ok(&args)).unwrap()
}

/// `(op, name)` of every finished step of a `--json` deployment.
fn steps(json: &str) -> Vec<(String, String)> {
    json.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "stepFinished")
        .map(|e| {
            let urn = e["urn"].as_str().unwrap_or_default();
            (
                e["op"].as_str().unwrap_or_default().to_owned(),
                urn.rsplit("::").next().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn ops(steps: &[(String, String)], name: &str) -> Vec<String> {
    steps
        .iter()
        .filter(|(_, n)| n == name)
        .map(|(op, _)| op.clone())
        .collect()
}

#[test]
fn a_python_sdk_program_with_dynamic_and_wasm_providers() {
    let python = python();
    let sandbox = Sandbox::new("python-demo");
    let example = repo().join("examples/programs/python");
    std::fs::copy(
        example.join("__main__.py"),
        sandbox.project.join("__main__.py"),
    )
    .unwrap();
    let venv = python.parent().unwrap().parent().unwrap();
    sandbox.write(
        "Pulumi.yaml",
        &std::fs::read_to_string(example.join("Pulumi.yaml"))
            .unwrap()
            .replace(
                "virtualenv: venv",
                &format!("virtualenv: {}", venv.display()),
            ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&[
        "plugin",
        "install",
        example_wasm("random").to_str().unwrap(),
    ]);

    // Missing secret config: the SDK's own error, shown as the program's failure.
    assert_contains(&sandbox.fails(&["up", "--yes"]), &["token"]);
    sandbox.ok(&["config", "set", "--secret", "token", "tok-123"]);

    // (The failed run may have created some resources already.)
    let out = sandbox.ok(&["up", "--yes"]);
    assert_contains(
        &out,
        &[
            "pulumi-python:dynamic:Resource",
            "random:index:RandomPet",
            "created",
        ],
    );
    let v1 = outputs(&sandbox, false);
    assert_eq!(v1["version"], 1);
    assert_eq!(v1["label"], "v1:stable text");
    assert_eq!(v1["message"], "msg:hello from version 1");
    assert_eq!(v1["greeting"], "greeting:hello", "a component's output");
    assert_eq!(v1["password"], "[secret]");
    assert_eq!(v1["token"], "[secret]");
    assert_eq!(outputs(&sandbox, true)["token"], "tok-123");
    assert_eq!(
        outputs(&sandbox, true)["password"].as_str().unwrap().len(),
        16
    );

    // Nothing changed: nothing to do.
    assert_contains(&sandbox.ok(&["up", "--yes"]), &["10 unchanged"]);

    // Version 2: replace, update, alias.
    sandbox.ok(&["config", "set", "version", "2"]);
    let run = steps(&sandbox.ok(&["up", "--yes", "--json"]));
    assert!(
        ops(&run, "label").iter().any(|op| op == "replace"),
        "{run:?}"
    );
    assert_eq!(ops(&run, "message"), ["update"], "{run:?}");
    assert_eq!(
        ops(&run, "welcome"),
        ["same"],
        "the alias keeps the component: {run:?}"
    );
    assert!(ops(&run, "greeter").is_empty(), "{run:?}");
    let v2 = outputs(&sandbox, false);
    assert_eq!(v2["label"], "v2:stable text");
    assert_eq!(v2["message"], "msg:hello from version 2");
    assert_eq!(v2["pet"], v1["pet"]);
    assert_eq!(v2["id"], v1["id"]);

    // dependsOn: message was registered after the pet it depends on.
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let message = state["deployment"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["urn"].as_str().unwrap().ends_with("::message"))
        .unwrap();
    assert!(
        message["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().ends_with("RandomPet::pet")),
        "{message}"
    );

    sandbox.ok(&["refresh", "--yes"]);
    // The protected UUID stops destroy until it is unprotected.
    assert_contains(
        &sandbox.fails(&["destroy", "--yes"]),
        &["protected", "RandomUuid::id"],
    );
    sandbox.ok(&[
        "state",
        "unprotect",
        "urn:pulumi:dev::python-demo::random:index:RandomUuid::id",
    ]);
    assert_contains(&sandbox.ok(&["destroy", "--yes"]), &["10 deleted"]);
}
