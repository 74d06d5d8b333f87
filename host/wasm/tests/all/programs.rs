//! Hostile programs and providers against the real engine: `hostile-program` (raw WIT) sends
//! requests the SDK never would, and every one is refused where it is decoded, naming the
//! field, before the engine sees it; traps, floods and violations are reported as the
//! program's; a provider whose `create` returns outputs that cannot be stored leaves its
//! resource recorded in a valid snapshot. Each case checks that the next deployment works.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::state::{Snapshot, verify_integrity};
use cairn_engine::{PropertyValue, TypeToken};
use cairn_wasm::LogSource;

use crate::support::*;

async fn run_mode(mode: &str, extra: serde_json::Value, grant: serde_json::Value) -> Deployed {
    let logs = Logs::default();
    let mut config = serde_json::json!({ "proj:mode": mode });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        config[format!("proj:{k}")] = v;
    }
    deploy_program(
        hostile_program(grant, &logs),
        Snapshot::empty(None),
        config,
        serde_json::Value::Null,
        &logs,
    )
    .await
}

/// The next deployment of the same program works.
async fn next_deployment_works() {
    let deployed = run_mode("fine", serde_json::json!({}), serde_json::Value::Null).await;
    if let Err(e) = &deployed.result {
        panic!("the next deployment failed: {e}");
    }
    verify_integrity(&deployed.snapshot).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn program_requests_are_checked_where_they_are_decoded() {
    let refused = "failed: invalid register-resource request: ";
    let cases = [
        (
            "nan-inputs",
            "inputs: property cost: NaN is not a number JSON can store (NaN and infinities are refused)"
                .to_owned(),
        ),
        (
            "long-key",
            format!(
                "inputs: property [\"{}…\"]: the key is 2000 bytes long; keys may be at most 1024 bytes",
                "k".repeat(64)
            ),
        ),
        ("bad-kind", "inputs: node 1: unknown kind 77".to_owned()),
        (
            "esc-name",
            "the resource name \"\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\" contains control characters; it must be printable".to_owned(),
        ),
        (
            "long-name",
            "the resource name is 2000 bytes long; at most 1024 bytes are allowed".to_owned(),
        ),
        (
            "nan-timeout",
            "custom-timeouts.create: NaN is not a usable timeout (expected a number of seconds from 0, the default, to 604800)".to_owned(),
        ),
        (
            "huge-timeout",
            "custom-timeouts.create: 1e300 is not a usable timeout (expected a number of seconds from 0, the default, to 604800)".to_owned(),
        ),
        (
            "esc-import-id",
            "the import ID \"\\u{1b}[2Jid\" contains control characters; it must be printable"
                .to_owned(),
        ),
    ];
    for (mode, expected) in cases {
        let deployed = run_mode(mode, serde_json::json!({}), serde_json::Value::Null).await;
        assert_eq!(
            deployed.error(),
            format!("the program failed: {refused}{expected}"),
            "{mode}"
        );
        // Nothing reached the engine but the stack itself.
        verify_integrity(&deployed.snapshot).unwrap();
        assert!(
            deployed
                .snapshot
                .resources
                .iter()
                .all(|r| r.resource_type.as_str() == "pulumi:pulumi:Stack"),
            "{mode}: {:?}",
            deployed.snapshot.resources
        );
    }
    next_deployment_works().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn program_failures_name_the_program_and_the_limit() {
    let g = serde_json::Value::Null;
    let cases = [
        (
            "nan-outputs",
            serde_json::json!({}),
            "the program failed: outputs: property n: inf is not a number JSON can store (NaN and infinities are refused)".to_owned(),
        ),
        (
            "trap",
            serde_json::json!({}),
            "the program failed: program proj: wasm trap: unreachable instruction executed (the program panicked or aborted)".to_owned(),
        ),
        (
            "http",
            serde_json::json!({"url": "https://example.com/"}),
            "the program failed: program proj: HTTP request to example.com is not granted (grant it under cairn:program.http)".to_owned(),
        ),
        (
            "many-handles",
            serde_json::json!({"count": 1_000_000}),
            format!(
                "the program failed: program proj: the program made more than {} requests without collecting their completions with monitor.wait (a fixed limit)",
                cairn_wasm::program::MAX_UNCOLLECTED
            ),
        ),
    ];
    for (mode, extra, expected) in cases {
        let deployed = run_mode(mode, extra, g.clone()).await;
        assert_eq!(deployed.error(), expected, "{mode}");
        verify_integrity(&deployed.snapshot).unwrap();
    }

    // A huge error is cut, with a note of what was dropped.
    let deployed = run_mode("huge-error", serde_json::json!({}), g.clone()).await;
    let kept = cairn_engine::limits::MAX_MESSAGE_BYTES;
    assert_eq!(
        deployed.error(),
        format!(
            "the program failed: {}… [{} more bytes dropped]",
            "E".repeat(kept),
            (10 << 20) - kept
        )
    );
    next_deployment_works().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn program_logs_are_capped() {
    let logs = Logs::default();
    let deployed = deploy_program(
        hostile_program(serde_json::Value::Null, &logs),
        Snapshot::empty(None),
        serde_json::json!({"proj:mode": "log-flood", "proj:count": 100_000, "proj:size": 100}),
        serde_json::Value::Null,
        &logs,
    )
    .await;
    deployed.result.unwrap();
    let fit = cairn_wasm::LOG_LIMIT / (100 + cairn_wasm::RECORD_OVERHEAD);
    let records = logs.records();
    assert_eq!(
        records
            .iter()
            .filter(|r| r.source == LogSource::Host)
            .count(),
        fit
    );
    let note = records
        .iter()
        .find(|r| r.source == LogSource::Sandbox)
        .unwrap();
    assert_eq!(note.provider, "program proj");
    assert_eq!(
        note.message,
        format!(
            "{} log messages ({} bytes) were dropped: a call may log at most 1 MiB through host.log (a fixed limit)",
            100_000 - fit,
            (100_000 - fit) * 100
        )
    );
}

/// Registers one `hostile-wire:index:Probe` named `h` with the given `mode`.
struct OneProbe(&'static str);

#[async_trait]
impl Program for OneProbe {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        monitor
            .register_resource(RegisterResourceRequest::custom(
                TypeToken::parse("hostile-wire:index:Probe").unwrap(),
                "h",
                map(serde_json::json!({"mode": self.0})),
            ))
            .await?;
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_resource_whose_outputs_cannot_be_stored_is_still_recorded() {
    let logs = Logs::default();
    let deployed = deploy_program(
        Arc::new(OneProbe("nan-output")),
        Snapshot::empty(None),
        serde_json::json!({}),
        serde_json::Value::Null,
        &logs,
    )
    .await;
    assert_contains(
        &deployed.error(),
        &[
            "hostile-wire@0.1.0 create urn:pulumi:test::proj::hostile-wire:index:Probe::h: rejected the provider's result: outputs: property cost: NaN is not a number JSON can store",
            "(the resource exists: it is recorded with ID \"w-h\" and the outputs that could be kept)",
        ],
    );
    // The resource is tracked, with its ID, the outputs that could be kept and the error; the
    // snapshot is valid and holds no pending operation.
    verify_integrity(&deployed.snapshot).unwrap();
    assert!(deployed.snapshot.pending_operations.is_empty());
    let h = deployed
        .snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == "h")
        .unwrap_or_else(|| {
            panic!(
                "the created resource is not recorded: {:#?}",
                deployed
                    .snapshot
                    .resources
                    .iter()
                    .map(|r| r.urn.to_string())
                    .collect::<Vec<_>>()
            )
        });
    assert_eq!(h.id.as_deref(), Some("w-h"));
    assert_eq!(h.outputs.get("ok"), Some(&PropertyValue::Number(1.0)));
    assert!(!h.outputs.contains_key("cost"));
    assert_eq!(h.init_errors.len(), 1, "{:?}", h.init_errors);

    // The next deployment works from that state.
    let next = deploy_program(
        Arc::new(OneProbe("ok")),
        deployed.snapshot,
        serde_json::json!({}),
        serde_json::Value::Null,
        &logs,
    )
    .await;
    let outcome = next.result.unwrap_or_else(|e| panic!("{e}"));
    verify_integrity(&outcome.snapshot).unwrap();
    let h = outcome
        .snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == "h")
        .unwrap();
    assert_eq!(h.id.as_deref(), Some("w-h"));
}

/// Registers the remote component `hostile-wire:index:Group` named `g` with the given `mode`,
/// and checks the errors its `construct` got from the engine callbacks.
struct OneGroup(&'static str);

#[async_trait]
impl Program for OneGroup {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let group = monitor
            .register_resource(RegisterResourceRequest {
                remote: true,
                inputs: map(serde_json::json!({"mode": self.0})),
                ..RegisterResourceRequest::component(
                    TypeToken::parse("hostile-wire:index:Group").unwrap(),
                    "g",
                )
            })
            .await?;
        let refused = "invalid register-resource request: ";
        let expected = PropertyValue::Array(
            [
                format!("{refused}inputs: property x: NaN is not a number JSON can store (NaN and infinities are refused)"),
                format!("{refused}the resource name \"\\u{{1b}}[2J\" contains control characters; it must be printable"),
                format!("{refused}the resource name is 2000 bytes long; at most 1024 bytes are allowed"),
                format!("{refused}the provider reference \"urn:x\\n::id\" contains control characters; it must be printable"),
                "outputs: property y: inf is not a number JSON can store (NaN and infinities are refused)".to_owned(),
            ]
            .into_iter()
            .map(PropertyValue::String)
            .collect(),
        );
        if group.outputs.get("errors") != Some(&expected) {
            return Err(ProgramError::new(format!(
                "construct got {:#?}",
                group.outputs
            )));
        }
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_callbacks_in_construct_are_checked_where_they_are_decoded() {
    let logs = Logs::default();
    let deployed = deploy_program(
        Arc::new(OneGroup("callbacks")),
        Snapshot::empty(None),
        serde_json::json!({}),
        serde_json::Value::Null,
        &logs,
    )
    .await;
    let outcome = deployed.result.unwrap_or_else(|e| panic!("{e}"));
    verify_integrity(&outcome.snapshot).unwrap();
    // Only the component itself was registered; none of the refused children.
    let names: Vec<&str> = outcome
        .snapshot
        .resources
        .iter()
        .filter(|r| r.resource_type.as_str().starts_with("hostile-wire:"))
        .map(|r| r.urn.name())
        .collect();
    assert_eq!(names, ["g"]);

    // A construct result that cannot be stored fails the registration, naming the component.
    let deployed = deploy_program(
        Arc::new(OneGroup("nan-state")),
        Snapshot::empty(None),
        serde_json::json!({}),
        serde_json::Value::Null,
        &logs,
    )
    .await;
    assert_contains(
        &deployed.error(),
        &[
            "hostile-wire@0.1.0 construct hostile-wire:index:Group \"g\": rejected the provider's result: state: property x: NaN is not a number JSON can store (NaN and infinities are refused)",
        ],
    );
    verify_integrity(&deployed.snapshot).unwrap();
}
