//! The sandbox against hostile guests: every escape attempt and resource bomb is contained
//! with an error naming the provider, method, resource and capability or limit, and the next
//! call on the same provider still works. An instance that dies in `create` (these guests
//! misbehave there) may have acted first, so that error is `OutcomeUnknown`; refusals after a
//! normal return are `Failed`.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use cairn_engine::PropertyValue;
use cairn_engine::deploy::provider::{CreateResult, Provider, ProviderError};
use cairn_engine::value::PropertyMap;

use crate::support::*;

const PROBE: &str = "Probe";

fn probe_type(package: &str) -> String {
    format!("{package}:index:{PROBE}")
}

async fn create_probe(
    p: &cairn_wasm::WasmProvider,
    name: &str,
    inputs: serde_json::Value,
) -> Result<CreateResult, ProviderError> {
    p.create(create(&probe_type(p.package()), name, inputs))
        .await
}

/// The provider still answers after a contained failure.
async fn still_works(p: &cairn_wasm::WasmProvider, inputs: serde_json::Value) {
    create_probe(p, "after", inputs)
        .await
        .unwrap_or_else(|e| panic!("the next call failed: {e:?}"));
    p.check(check(&probe_type(p.package()), "after", serde_json::json!({})).request())
        .await
        .unwrap();
}

fn field<'a>(outputs: &'a PropertyMap, path: &[&str]) -> &'a PropertyValue {
    let mut v = &outputs[path[0]];
    for key in &path[1..] {
        v = &v.as_object().unwrap()[*key];
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_outside_the_granted_directory_find_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("inside.txt"), "inside").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "SECRET-OUTSIDE").unwrap();
    let (p, _) = provider_with(
        "hostile-fs",
        serde_json::json!({"directories": [{"host": work, "guest": "/work"}]}),
    );
    p.configure(PropertyMap::new(), false).await.unwrap();
    let r = create_probe(&p, "fs", serde_json::json!({})).await.unwrap();
    let results = field(&r.outputs, &["results"]).as_object().unwrap();
    for (path, outcome) in results {
        let outcome = outcome.as_object().unwrap();
        if path == "ls /" {
            // The root lists only the granted mount point, if anything.
            let listing = outcome["value"].as_str().unwrap_or_default();
            assert!(
                !listing.contains("etc") && !listing.contains("outside"),
                "{listing}"
            );
        } else {
            assert_eq!(
                outcome["ok"],
                PropertyValue::Bool(false),
                "{path} was readable: {outcome:?}"
            );
        }
    }
    let text = format!("{:?}", r.outputs);
    assert!(
        !text.contains("SECRET-OUTSIDE") && !text.contains("root:"),
        "{text}"
    );

    // Inside the grant works.
    let r = create_probe(&p, "fs", serde_json::json!({"paths": ["/work/inside.txt"]}))
        .await
        .unwrap();
    assert_eq!(
        field(&r.outputs, &["results", "/work/inside.txt", "value"]).as_str(),
        Some("inside")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_are_denied_and_named() {
    let (p, _) = provider("hostile-net");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = failure(
        create_probe(&p, "net", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    assert_contains(
        &err,
        &[
            "hostile-net@0.1.0 create urn:pulumi:test::proj::hostile-net:index:Probe::net:",
            "opening a TCP socket is not granted (grant destinations under cairn:grants.hostile-net.tcp; outbound HTTP goes through wasi:http",
            "resolving \"localhost\" (wasi:sockets/ip-name-lookup) is not granted",
        ],
    );
    // Every create of this guest tries the network again; check still works.
    p.check(check("hostile-net:index:Probe", "x", serde_json::json!({})).request())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_to_an_ungranted_host_is_refused_before_connecting() {
    // Granted api.example.com, which the manifest requests; example.com is neither.
    let (p, _) = provider_with(
        "hostile-http",
        serde_json::json!({"http": ["api.example.com"]}),
    );
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = failure(
        create_probe(&p, "h", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    assert_contains(
        &err,
        &[
            "hostile-http@0.1.0 create urn:pulumi:test::proj::hostile-http:index:Probe::h:",
            "HTTP request to example.com is not granted (the provider's manifest does not request it",
        ],
    );

    // Requested but not granted.
    let (p, _) = provider("hostile-http");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = failure(
        create_probe(&p, "h", serde_json::json!({"authority": "api.example.com"}))
            .await
            .unwrap_err(),
    );
    assert_contains(
        &err,
        &[
            "HTTP request to api.example.com is not granted (grant it under cairn:grants.hostile-http.http)",
        ],
    );
    p.check(check("hostile-http:index:Probe", "x", serde_json::json!({})).request())
        .await
        .unwrap();
}

/// A one-shot HTTP server on loopback; returns its port.
fn serve_once() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        listener.set_nonblocking(false).unwrap();
        if let Ok((mut stream, _)) = listener.accept() {
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_need_an_exact_grant() {
    // A wildcard grant does not reach loopback.
    let (p, _) = provider_with("probe", serde_json::json!({"http": ["*"]}));
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err =
        failure(create_probe_thing(&p, serde_json::json!({"http": "http://127.0.0.1:9/"})).await);
    assert_contains(
        &err,
        &[
            "HTTP request to 127.0.0.1 is not granted: 127.0.0.1 is a loopback address (127.0.0.0/8) (only an exact grant of this host under cairn:grants.probe.http allows such addresses)",
        ],
    );

    // The exact host, granted and requested, is reached.
    let port = serve_once();
    let (p, _) = provider_with("probe", serde_json::json!({"http": ["127.0.0.1"]}));
    p.configure(PropertyMap::new(), false).await.unwrap();
    let r = p
        .create(create(
            "probe:index:Thing",
            "ok",
            serde_json::json!({"http": format!("http://127.0.0.1:{port}/")}),
        ))
        .await
        .unwrap();
    assert_eq!(
        r.outputs.get("httpStatus"),
        Some(&PropertyValue::Number(204.0)),
        "{:?}",
        r.outputs
    );
}

async fn create_probe_thing(
    p: &cairn_wasm::WasmProvider,
    inputs: serde_json::Value,
) -> ProviderError {
    p.create(create("probe:index:Thing", "h", inputs))
        .await
        .unwrap_err()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_granted_and_requested_environment_variables_are_visible() {
    // TZ is requested and granted; OTHER is granted but not requested.
    let (p, _) = provider_with(
        "hostile-env",
        serde_json::json!({"env": {"TZ": "UTC", "OTHER": "nope"}}),
    );
    p.configure(PropertyMap::new(), false).await.unwrap();
    let r = create_probe(&p, "env", serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(
        r.outputs["vars"],
        PropertyValue::Object(Box::new(map(serde_json::json!({"TZ": "UTC"}))))
    );
    assert_eq!(r.outputs["args"], PropertyValue::Array(vec![]));

    // Requested but not granted: nothing.
    let (p, _) = provider("hostile-env");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let r = create_probe(&p, "env", serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(r.outputs["vars"], PropertyValue::Object(Box::default()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infinite_loop_is_interrupted_at_its_deadline() {
    let (p, _) = provider_with("hostile-loop", serde_json::json!({"timeoutSeconds": 1}));
    p.configure(PropertyMap::new(), false).await.unwrap();
    let started = Instant::now();
    let err = failure(
        create_probe(&p, "spin", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        err,
        "hostile-loop@0.1.0 create urn:pulumi:test::proj::hostile-loop:index:Probe::spin: wasm trap: interrupted (deadline of 1 s exceeded; raise it under cairn:grants.hostile-loop.timeoutSeconds) (it is granted nothing that reaches outside its sandbox, so it changed nothing)"
    );
    // The request's own timeout wins over the grant's.
    let mut request = create("hostile-loop:index:Probe", "spin", serde_json::json!({}));
    request.timeout = 0.3;
    let err = failure(p.create(request).await.unwrap_err());
    assert_contains(
        &err,
        &["deadline of 0.3 s exceeded; it is set by the resource's customTimeouts"],
    );
    p.check(check("hostile-loop:index:Probe", "x", serde_json::json!({})).request())
        .await
        .unwrap();
    assert_eq!(p.stats().discarded, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_blocked_in_a_host_call_is_abandoned_at_its_deadline() {
    let (p, _) = provider("probe");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let mut request = create(
        "probe:index:Thing",
        "sleepy",
        serde_json::json!({"sleepMs": 60_000}),
    );
    request.timeout = 0.5;
    let started = Instant::now();
    let err = failure(p.create(request).await.unwrap_err());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_contains(
        &err,
        &[
            "probe@0.3.0 create urn:pulumi:test::proj::probe:index:Thing::sleepy: deadline of 0.5 s exceeded while waiting in a host call; it is set by the resource's customTimeouts",
        ],
    );
    p.create(create("probe:index:Thing", "awake", serde_json::json!({})))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_bomb_hits_the_memory_limit() {
    let (p, _) = provider("hostile-memory");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = failure(
        create_probe(&p, "bomb", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        err,
        "hostile-memory@0.1.0 create urn:pulumi:test::proj::hostile-memory:index:Probe::bomb: exceeded its 256 MiB memory limit (raise it under cairn:grants.hostile-memory.memoryMiB) (it is granted nothing that reaches outside its sandbox, so it changed nothing)"
    );
    // A graceful guest is stopped the same way; a smaller grant is named.
    let (p, _) = provider_with("hostile-memory", serde_json::json!({"memoryMiB": 32}));
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = failure(
        create_probe(&p, "bomb", serde_json::json!({"mode": "try", "mib": 64}))
            .await
            .unwrap_err(),
    );
    assert_contains(&err, &["exceeded its 32 MiB memory limit"]);
    still_works(&p, serde_json::json!({"mib": 4})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_exhausts_the_stack_cleanly() {
    let (p, _) = provider("hostile-recursion");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = failure(
        create_probe(&p, "deep", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    assert_contains(
        &err,
        &[
            "hostile-recursion@0.1.0 create urn:pulumi:test::proj::hostile-recursion:index:Probe::deep:",
            "wasm trap:",
            "stack",
        ],
    );
    still_works(&p, serde_json::json!({"limit": 100})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_results_and_floods_of_output_are_refused() {
    let (p, _) = provider("hostile-output");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = failure(
        create_probe(&p, "big", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    assert_contains(
        &err,
        &[
            "hostile-output@0.1.0 create urn:pulumi:test::proj::hostile-output:index:Probe::big:",
            "outputs: the value is 64.0 MiB, more than the 16 MiB limit on one value",
        ],
    );
    still_works(&p, serde_json::json!({"mib": 1})).await;

    // Writing more than the per-call output limit to stdout traps.
    let (p, logs) = provider("probe");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let flood = "y".repeat(cairn_wasm::OUTPUT_LIMIT + 10);
    let err = failure(
        p.create(create(
            "probe:index:Thing",
            "loud",
            serde_json::json!({"print": flood}),
        ))
        .await
        .unwrap_err(),
    );
    assert_contains(
        &err,
        &[
            "probe@0.3.0 create urn:pulumi:test::proj::probe:index:Thing::loud: wrote more than 1 MiB to stdout in one call (a fixed limit on output per call)",
        ],
    );
    let logged: usize = logs
        .records()
        .iter()
        .filter(|r| r.source == cairn_wasm::LogSource::Stdout)
        .map(|r| r.message.len())
        .sum();
    assert!(
        logged <= cairn_wasm::OUTPUT_LIMIT,
        "logged {logged} bytes of stdout"
    );
    p.create(create(
        "probe:index:Thing",
        "quiet",
        serde_json::json!({"print": "short"}),
    ))
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_is_the_intersection_of_request_and_grant() {
    // probe requests http [api.example.com, 127.0.0.1] and env [PROBE_MODE, PROBE_SECRET].
    let (p, logs) = provider_with(
        "probe",
        serde_json::json!({"http": ["other.example.com"], "env": {"PROBE_MODE": "fast", "UNREQUESTED": "x"}}),
    );
    let sandbox = p.sandbox();
    assert_eq!(
        sandbox.env,
        [("PROBE_MODE".to_string(), "fast".to_string())]
    );
    assert_eq!(
        sandbox.not_granted,
        ["http api.example.com", "http 127.0.0.1", "env PROBE_SECRET"]
    );
    assert!(
        logs.find("requests env PROBE_SECRET, which cairn:grants.probe does not grant")
            .is_some()
    );
    p.configure(PropertyMap::new(), false).await.unwrap();
    // Granted and requested: visible. Requested, not granted: absent. Granted, not requested: absent.
    for (var, expected) in [
        ("PROBE_MODE", PropertyValue::from("fast")),
        ("PROBE_SECRET", PropertyValue::Null),
        ("UNREQUESTED", PropertyValue::Null),
    ] {
        let r = p
            .create(create(
                "probe:index:Thing",
                "e",
                serde_json::json!({"env": var}),
            ))
            .await
            .unwrap();
        assert_eq!(r.outputs["envValue"], expected, "{var}");
    }
    // Granted but not requested: refused.
    let err = failure(
        create_probe_thing(
            &p,
            serde_json::json!({"http": "https://other.example.com/"}),
        )
        .await,
    );
    assert_contains(
        &err,
        &[
            "HTTP request to other.example.com is not granted (the provider's manifest does not request it",
        ],
    );
}

/// A guest that returns a large result in time keeps it: the host's copying of the result out
/// of the guest, after it returned, does not count against its deadline. Its 250 MiB output
/// is over the limit on one value, so the create fails, with a known outcome: the resource is
/// recorded by the ID the guest returned (the partial state), not left as an unknown outcome
/// that blocks later updates until a refresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_result_returned_in_time_is_kept_while_the_host_copies_it() {
    let (p, _) = provider_with("hostile-output", serde_json::json!({"memoryMiB": 1024}));
    p.configure(PropertyMap::new(), false).await.unwrap();
    // It returns 1.5 s into its 2 s; copying 250 MiB out and checking it takes longer than
    // the 0.5 s left (over 2 s in a debug build), which used to interrupt it.
    let mut request = create(
        "hostile-output:index:Probe",
        "big",
        serde_json::json!({"mib": 250, "returnAfterMs": 1500}),
    );
    request.timeout = 2.0;
    let err = p.create(request).await.unwrap_err();
    match err {
        ProviderError::Failed {
            message,
            partial: Some(partial),
        } => {
            assert_eq!(partial.id, "probe", "{message}");
            assert_contains(
                &message,
                &[
                    "hostile-output@0.1.0 create urn:pulumi:test::proj::hostile-output:index:Probe::big:",
                    "the value is 250.0 MiB, more than the 16 MiB limit on one value",
                ],
            );
        }
        other => panic!("expected a failure with the resource's ID, got {other:?}"),
    }
}
