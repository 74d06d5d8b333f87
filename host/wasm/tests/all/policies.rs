//! Policy pack components (`wit/policy.wit`) through the host: the example pack
//! (`examples/policies/site`) against resources of the example providers, configuration, stack
//! policies; and `hostile-policy`, which traps, loops, floods its log or hoards memory on
//! demand: each fails with an error naming the pack and the limit, and the pack is not called
//! again.

use std::time::{Duration, Instant};

use cairn_engine::deploy::analyzer::{
    AnalyzedResource, Analyzer, Enforcement, PolicyConfigs, config,
};
use cairn_engine::state::ResourceState;
use cairn_engine::urn::TypeToken;
use cairn_wasm::ProgramFile;
use cairn_wasm::policy::{PolicyLimits, WasmPolicyPack};

use crate::support::{Logs, assert_contains, map, runtime, urn, wasm};

async fn load(name: &str, limits: PolicyLimits, logs: &Logs) -> WasmPolicyPack {
    let file = ProgramFile::from_file(name, wasm(name)).unwrap();
    runtime()
        .load_policy_pack(&file, limits, logs.sink())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

fn state(resource_type: &str, name: &str, inputs: serde_json::Value) -> ResourceState {
    let mut state = ResourceState::new(
        urn(resource_type, name),
        TypeToken::parse(resource_type).unwrap(),
        true,
    );
    state.inputs = map(inputs);
    state.outputs = state.inputs.clone();
    state
}

fn analyzed(state: &ResourceState) -> AnalyzedResource<'_> {
    AnalyzedResource {
        state,
        properties: &state.inputs,
        delete_before_replace: None,
        provider: None,
    }
}

#[tokio::test]
async fn the_example_pack_checks_the_example_providers_resources() {
    let logs = Logs::default();
    let pack = load("site-policies", PolicyLimits::default(), &logs).await;
    let info = pack.info();
    assert_eq!(info.name, "site-policies");
    let names: Vec<&str> = info.policies.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["no-world-writable", "password-length", "max-resources"]
    );

    // Defaults (from the schemas) through the same reconciliation as gRPC packs.
    let configured = config::reconcile(info, &PolicyConfigs::new()).unwrap();
    pack.configure(&configured).await.unwrap();
    let open = state(
        "file:index:File",
        "creds",
        serde_json::json!({"path": "creds.txt", "content": "x", "mode": "0666"}),
    );
    let violations = pack.analyze(&analyzed(&open)).await.unwrap();
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].policy, "no-world-writable");
    assert_eq!(violations[0].enforcement, Enforcement::Mandatory);
    assert_eq!(
        violations[0].message,
        "Files must not be writable by everyone.\nmode 0666 lets anyone write creds"
    );
    let closed = state(
        "file:index:File",
        "creds",
        serde_json::json!({"path": "creds.txt", "mode": "0600"}),
    );
    assert!(pack.analyze(&analyzed(&closed)).await.unwrap().is_empty());
    let short = state(
        "random:index/randomPassword:RandomPassword",
        "pw",
        serde_json::json!({"length": 8}),
    );
    let violations = pack.analyze(&analyzed(&short)).await.unwrap();
    assert_eq!(violations[0].policy, "password-length");
    assert_eq!(violations[0].enforcement, Enforcement::Advisory);

    // Configuration: a lower minimum, a stricter level, a smaller stack.
    let file = config::parse_file(
        r#"{"password-length": {"enforcementLevel": "mandatory", "minLength": 8},
            "no-world-writable": "disabled", "max-resources": {"max": 1}}"#,
    )
    .unwrap();
    pack.configure(&config::reconcile(pack.info(), &file).unwrap())
        .await
        .unwrap();
    assert!(pack.analyze(&analyzed(&short)).await.unwrap().is_empty());
    assert!(pack.analyze(&analyzed(&open)).await.unwrap().is_empty());
    let stack = pack
        .analyze_stack(&[analyzed(&open), analyzed(&short)])
        .await
        .unwrap();
    assert_eq!(stack.len(), 1, "{stack:?}");
    assert_contains(
        &stack[0].message,
        &["the stack has 2 resources (at most 1)"],
    );

    // Configuration the schema refuses never reaches the pack.
    let bad = config::parse_file(r#"{"password-length": {"minLength": 0}}"#).unwrap();
    assert_eq!(
        config::reconcile(pack.info(), &bad).unwrap_err(),
        ["password-length: minLength: Must be >= 1"]
    );
}

#[tokio::test]
async fn hostile_packs_fail_naming_the_limit_and_stay_stopped() {
    let limits = PolicyLimits {
        memory_mib: 64,
        timeout: Duration::from_secs(2),
    };
    for (name, expected) in [
        ("trap", &["wasm trap", "the hostile policy traps"][..]),
        (
            "loop",
            &["deadline of 2 s exceeded", "CAIRN_POLICY_TIMEOUT"][..],
        ),
        ("flood", &["deadline of 2 s exceeded"][..]),
        (
            "grow",
            &["64 MiB memory limit", "CAIRN_POLICY_MEMORY_MIB"][..],
        ),
    ] {
        let logs = Logs::default();
        let pack = load("hostile-policy", limits, &logs).await;
        let fine = state("test:index:Thing", "fine", serde_json::json!({}));
        let checked = pack.analyze(&analyzed(&fine)).await.unwrap();
        assert_eq!(checked[0].message, "Misbehaves on demand.\nchecked fine");

        let started = Instant::now();
        let bad = state("test:index:Thing", name, serde_json::json!({}));
        let error = pack.analyze(&analyzed(&bad)).await.unwrap_err().to_string();
        assert_contains(&error, expected);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{name} took {:?}",
            started.elapsed()
        );
        let again = pack
            .analyze(&analyzed(&fine))
            .await
            .unwrap_err()
            .to_string();
        assert_contains(&again, &["stopped working earlier"]);
        if name == "flood" {
            let logged: usize = logs.messages().iter().map(String::len).sum();
            assert!(
                logged < 16 * 1024 * 1024,
                "the log flood was capped: {logged} bytes"
            );
        }
    }

    // No files: the pack's sandbox grants nothing.
    let logs = Logs::default();
    let pack = load("hostile-policy", limits, &logs).await;
    let fine = state("test:index:Thing", "fine", serde_json::json!({}));
    let files = state("test:index:Thing", "files", serde_json::json!({}));
    let violations = pack.analyze(&analyzed(&files)).await.unwrap();
    assert_contains(&violations[0].message, &["no files"]);

    // A resource policy is told the resource's type, URN, options and provider.
    let mut echo = state("test:index:Thing", "echo", serde_json::json!({}));
    echo.protect = true;
    echo.ignore_changes = vec!["tags".to_owned()];
    echo.additional_secret_outputs = vec!["key".to_owned()];
    echo.aliases = vec![urn("test:index:Thing", "old")];
    echo.parent = Some(urn("pulumi:pulumi:Stack", "proj-dev"));
    let provider = state(
        "pulumi:providers:test",
        "eu",
        serde_json::json!({"region": "eu-west-1"}),
    );
    let violations = pack
        .analyze(&AnalyzedResource {
            state: &echo,
            properties: &echo.inputs,
            delete_before_replace: Some(true),
            provider: Some(&provider),
        })
        .await
        .unwrap();
    assert_eq!(
        violations[0].message,
        format!(
            "Misbehaves on demand.\ntest:index:Thing {} protect=true ignore=[\"tags\"] \
             dbr=Some(true) aliases=[\"{}\"] secret=[\"key\"] parent=Some(\"{}\") \
             provider=Some((\"pulumi:providers:test\", \"eu\", Some(String(\"eu-west-1\"))))",
            echo.urn,
            urn("test:index:Thing", "old"),
            urn("pulumi:pulumi:Stack", "proj-dev"),
        )
    );

    // What it answers is checked: terminal escapes made visible, a huge message capped, a
    // flood of violations refused; none of these stops the pack.
    let control = state("test:index:Thing", "control", serde_json::json!({}));
    let violations = pack.analyze(&analyzed(&control)).await.unwrap();
    assert_eq!(
        violations[0].message,
        "Misbehaves on demand.\n\\x1b[2J\\x1b]0;owned\\x07\\rfaked\\u{202e}"
    );
    let huge = state("test:index:Thing", "huge", serde_json::json!({}));
    let violations = pack.analyze(&analyzed(&huge)).await.unwrap();
    let message = &violations[0].message;
    assert!(message.len() < 65 * 1024, "{} bytes", message.len());
    assert_contains(message, &["Misbehaves on demand.\nxxxx", "bytes"]);
    let many = state("test:index:Thing", "many", serde_json::json!({}));
    let error = pack
        .analyze(&analyzed(&many))
        .await
        .unwrap_err()
        .to_string();
    assert_contains(
        &error,
        &["analyze answered 20000 violations (at most 10000)"],
    );
    assert!(pack.analyze(&analyzed(&fine)).await.is_ok());
}
