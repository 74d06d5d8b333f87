//! The instance pool: parallel calls on distinct instances, `configure` recorded and replayed,
//! trapped instances discarded, instances whose memory grew retired.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use cairn_engine::PropertyValue;
use cairn_engine::deploy::provider::{InvokeRequest, Provider};
use cairn_engine::value::PropertyMap;

use crate::support::*;

const THING: &str = "probe:index:Thing";

fn instance_of(outputs: &PropertyMap) -> i64 {
    outputs["instance"].as_number().unwrap() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_run_on_distinct_configured_instances() {
    let (p, _) = provider("probe");
    let config = map(serde_json::json!({"region": "north"}));
    p.configure(config.clone(), false).await.unwrap();
    assert_eq!(p.stats().created, 1);

    // Four calls that each wait 400 ms: run in parallel, they take about 400 ms, not 1.6 s.
    let started = Instant::now();
    let calls = (0..4).map(|i| {
        let p = p.clone();
        async move {
            p.create(create(
                THING,
                &format!("t{i}"),
                serde_json::json!({"sleepMs": 400}),
            ))
            .await
            .unwrap()
        }
    });
    let results = futures::future::join_all(calls).await;
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_millis(1200), "took {elapsed:?}");

    let instances: BTreeSet<i64> = results.iter().map(|r| instance_of(&r.outputs)).collect();
    assert_eq!(
        instances.len(),
        4,
        "each call had its own instance: {instances:?}"
    );
    // Every instance saw the configuration: the three new ones by replay.
    for r in &results {
        assert_eq!(
            r.outputs["configured"],
            PropertyValue::Object(Box::new(config.clone()))
        );
    }
    let stats = p.stats();
    assert_eq!(stats.peak_busy, 4);
    assert_eq!(stats.created, 4);
    assert_eq!(stats.configure_replays, 3);
    assert_eq!(stats.idle, 4);
    assert!(stats.idle_memory_bytes > 0);
    // All four are alive and memories only grow: the peak is what they hold now. The code is
    // counted once, not per instance.
    assert_eq!(stats.peak_memory_bytes, stats.idle_memory_bytes);
    assert!(stats.code_bytes > 0, "{stats:?}");

    // Instances are reused afterwards: sequential calls create nothing new.
    for i in 0..3 {
        let r = p
            .create(create(THING, &format!("again{i}"), serde_json::json!({})))
            .await
            .unwrap();
        assert!(instances.contains(&instance_of(&r.outputs)));
    }
    assert_eq!(p.stats().created, 4);

    // A new configuration retires the old instances.
    let south = map(serde_json::json!({"region": "south"}));
    p.configure(south.clone(), false).await.unwrap();
    let r = p
        .create(create(THING, "after", serde_json::json!({})))
        .await
        .unwrap();
    assert_eq!(
        r.outputs["configured"],
        PropertyValue::Object(Box::new(south))
    );
    assert_eq!(p.stats().idle, 1);

    // invoke sees the same state.
    let who = p
        .invoke(InvokeRequest {
            token: "probe:index:whoami".into(),
            args: PropertyMap::new(),
        })
        .await
        .unwrap();
    assert_eq!(who.outputs["instance"], r.outputs["instance"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trapped_instance_is_discarded_and_the_next_call_gets_a_fresh_one() {
    let (p, logs) = provider("probe");
    p.configure(map(serde_json::json!({"region": "x"})), false)
        .await
        .unwrap();
    let first = p
        .create(create(THING, "a", serde_json::json!({})))
        .await
        .unwrap();
    let err = failure(
        p.create(create(
            THING,
            "b",
            serde_json::json!({"panic": "boom in b"}),
        ))
        .await
        .unwrap_err(),
    );
    assert_contains(
        &err,
        &[
            "probe@0.3.0 create urn:pulumi:test::proj::probe:index:Thing::b:",
            "wasm trap: unreachable instruction executed (the provider panicked or aborted)",
            "boom in b",
        ],
    );
    // The panic message also went to the log, as a warning from stderr.
    let record = logs.find("boom in b").expect("stderr captured");
    assert_eq!(record.source, cairn_wasm::LogSource::Stderr);
    assert_eq!(p.stats().discarded, 1);

    let next = p
        .create(create(THING, "c", serde_json::json!({})))
        .await
        .unwrap();
    assert_ne!(instance_of(&next.outputs), instance_of(&first.outputs));
    // The replacement was configured by replay.
    assert_eq!(
        next.outputs["configured"],
        PropertyValue::Object(Box::new(map(serde_json::json!({"region": "x"}))))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_configuration_is_not_recorded() {
    let (p, _) = provider("probe");
    p.configure(map(serde_json::json!({"region": "ok"})), false)
        .await
        .unwrap();
    let err = failure(
        p.configure(map(serde_json::json!({"reject": true})), false)
            .await
            .unwrap_err(),
    );
    assert_eq!(err, "configuration rejected");
    let r = p
        .create(create(THING, "t", serde_json::json!({})))
        .await
        .unwrap();
    assert_eq!(
        r.outputs["configured"],
        PropertyValue::Object(Box::new(map(serde_json::json!({"region": "ok"}))))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_and_output_reach_the_sink_with_the_resource() {
    let (p, logs) = provider("probe");
    p.configure(PropertyMap::new(), false).await.unwrap();
    p.create(create(
        THING,
        "talker",
        serde_json::json!({"log": "via host.log", "print": "via stdout", "eprint": "via stderr"}),
    ))
    .await
    .unwrap();
    let thing = urn(THING, "talker");
    for (text, source) in [
        ("via host.log", cairn_wasm::LogSource::Host),
        ("via stdout", cairn_wasm::LogSource::Stdout),
        ("via stderr", cairn_wasm::LogSource::Stderr),
    ] {
        let r = logs
            .find(text)
            .unwrap_or_else(|| panic!("{text} missing: {:?}", logs.messages()));
        assert_eq!(r.source, source);
        assert_eq!(r.urn.as_ref(), Some(&thing));
        assert_eq!(r.provider, "probe@0.3.0");
    }
}

/// A guest that leaks (as some languages' runtimes do per call) is not allowed to grow without
/// bound: an instance whose linear memory grew by more than the allowance is retired when its
/// call returns, and the next call runs on a fresh, configured instance. Small growth is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_whose_memory_grew_is_retired_and_replaced() {
    let (p, _) = provider("probe");
    let config = map(serde_json::json!({"region": "north"}));
    p.configure(config.clone(), false).await.unwrap();
    let first = p
        .create(create(THING, "small", serde_json::json!({"leakKiB": 1024})))
        .await
        .unwrap();
    // 1 MiB of growth is within the allowance: the same instance serves the next call.
    let again = p
        .create(create(THING, "again", serde_json::json!({})))
        .await
        .unwrap();
    assert_eq!(instance_of(&first.outputs), instance_of(&again.outputs));
    assert_eq!(p.stats().recycled, 0);

    // 24 MiB more is not: the instance is retired once the call has returned its result.
    let big = p
        .create(create(
            THING,
            "big",
            serde_json::json!({"leakKiB": 24 * 1024}),
        ))
        .await
        .unwrap();
    assert_eq!(instance_of(&big.outputs), instance_of(&first.outputs));
    let stats = p.stats();
    assert_eq!(
        (stats.recycled, stats.idle, stats.discarded),
        (1, 0, 0),
        "{stats:?}"
    );

    let fresh = p
        .create(create(THING, "fresh", serde_json::json!({})))
        .await
        .unwrap();
    assert_ne!(instance_of(&fresh.outputs), instance_of(&first.outputs));
    assert_eq!(
        fresh.outputs["configured"],
        PropertyValue::Object(Box::new(config))
    );
    let stats = p.stats();
    assert_eq!(
        (stats.created, stats.configure_replays),
        (2, 1),
        "{stats:?}"
    );
    assert!(stats.idle_memory_bytes < 8 << 20, "{stats:?}");
}
