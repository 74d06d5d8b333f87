//! The wasm boundary against `hostile-wire`, a provider written on the raw WIT that returns what
//! the SDK never would: values the engine cannot store, unusable IDs, huge lists and messages,
//! invalid timeouts, engine callbacks outside `construct`, log floods and many connections.
//! Every case asserts the exact error, the partial state handed to the engine (so a resource
//! that exists is recorded, not lost) and that the next call on the same provider works.

use std::io::{Read, Write};
use std::time::Duration;

use cairn_engine::PropertyValue;
use cairn_engine::deploy::provider::{
    DiffRequest, InvokeRequest, PartialState, Provider, ProviderError, ReadRequest, UpdateRequest,
};
use cairn_engine::value::PropertyMap;
use cairn_wasm::LogSource;

use crate::support::*;

const TYPE: &str = "hostile-wire:index:Probe";
const CONTEXT: &str = "hostile-wire@0.1.0 create urn:pulumi:test::proj::hostile-wire:index:Probe::h: rejected the provider's result: ";

fn ok_outputs() -> PropertyMap {
    map(serde_json::json!({"ok": 1}))
}

async fn create_mode(
    p: &cairn_wasm::WasmProvider,
    mode: &str,
    extra: serde_json::Value,
) -> Result<cairn_engine::deploy::provider::CreateResult, ProviderError> {
    let mut inputs = extra;
    inputs["mode"] = mode.into();
    p.create(create(TYPE, "h", inputs)).await
}

/// The next call on the same provider works.
async fn next_call_works(p: &cairn_wasm::WasmProvider) {
    let created = create_mode(p, "ok", serde_json::json!({}))
        .await
        .unwrap_or_else(|e| panic!("the next call failed: {e}"));
    assert_eq!(created.id, "w-h");
    assert_eq!(created.outputs, ok_outputs());
}

fn parts(e: ProviderError) -> (String, Option<PartialState>) {
    let partial = e.partial().cloned();
    (failure(e), partial)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unstorable_create_results_fail_with_the_resource_recorded() {
    let (p, _) = provider("hostile-wire");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let recorded =
        "(the resource exists: it is recorded with ID \"w-h\" and the outputs that could be kept)";
    // mode, the message after the context, the outputs kept (None: no partial state).
    let cases: Vec<(&str, String, Option<PropertyMap>)> = vec![
        (
            "nan-output",
            format!(
                "outputs: property cost: NaN is not a number JSON can store (NaN and infinities are refused) {recorded}"
            ),
            Some(ok_outputs()),
        ),
        (
            "inf-nested",
            format!(
                "outputs: property tags[\"a b\"][1]: -inf is not a number JSON can store (NaN and infinities are refused) {recorded}"
            ),
            Some(ok_outputs()),
        ),
        (
            "long-key",
            format!(
                "outputs: property [\"{}…\"]: the key is 2000 bytes long; keys may be at most 1024 bytes {recorded}",
                "k".repeat(64)
            ),
            Some(ok_outputs()),
        ),
        (
            "deep",
            format!(
                "outputs: property deep{}: the value is nested more than 64 levels deep {recorded}",
                "[0]".repeat(64)
            ),
            Some(ok_outputs()),
        ),
        (
            "bad-kind",
            format!("outputs: node 0: unknown kind 99 {recorded}"),
            Some(PropertyMap::new()),
        ),
        (
            "empty-id",
            "id: the ID is empty (Cairn cannot track a resource it cannot name: if the provider created it, delete it by hand)".to_owned(),
            None,
        ),
        (
            "esc-id",
            "id: the ID \"\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\" contains control characters; it must be printable (Cairn cannot track a resource it cannot name: if the provider created it, delete it by hand)".to_owned(),
            None,
        ),
        (
            "long-id",
            "id: the ID is 9000 bytes long; at most 8192 bytes are allowed (Cairn cannot track a resource it cannot name: if the provider created it, delete it by hand)".to_owned(),
            None,
        ),
    ];
    for (mode, expected, kept) in cases {
        let (message, partial) = parts(
            create_mode(&p, mode, serde_json::json!({}))
                .await
                .unwrap_err(),
        );
        assert_eq!(message, format!("{CONTEXT}{expected}"), "{mode}");
        match kept {
            Some(outputs) => {
                let partial = partial.unwrap_or_else(|| panic!("{mode}: no partial state"));
                assert_eq!(partial.id, "w-h", "{mode}");
                assert_eq!(partial.outputs, outputs, "{mode}");
            }
            None => assert_eq!(partial, None, "{mode}"),
        }
        next_call_works(&p).await;
    }

    // In a preview nothing exists: no partial state, and an empty ID is fine.
    let mut request = create(TYPE, "h", serde_json::json!({"mode": "nan-output"}));
    request.preview = true;
    let e = p.create(request).await.unwrap_err();
    assert_eq!(e.partial(), None);
    let mut request = create(TYPE, "h", serde_json::json!({"mode": "empty-id"}));
    request.preview = true;
    assert_eq!(p.create(request).await.unwrap().id, "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_errors_are_capped_and_their_partial_state_salvaged() {
    let (p, _) = provider("hostile-wire");
    p.configure(PropertyMap::new(), false).await.unwrap();

    let (message, partial) = parts(
        create_mode(&p, "huge-error", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    let kept = cairn_engine::limits::MAX_MESSAGE_BYTES;
    assert_eq!(
        message,
        format!(
            "{}… [{} more bytes dropped]",
            "E".repeat(kept),
            (10 << 20) - kept
        )
    );
    assert_eq!(partial, None);

    let (message, partial) = parts(
        create_mode(&p, "error-partial", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        "half-created (hostile-wire@0.1.0 create urn:pulumi:test::proj::hostile-wire:index:Probe::h: its partial state: partial outputs: property bad: NaN is not a number JSON can store (NaN and infinities are refused); the resource is recorded with ID \"p-1\" and the properties that could be kept)"
    );
    let partial = partial.unwrap();
    assert_eq!(partial.id, "p-1");
    assert_eq!(partial.outputs, ok_outputs());

    let (message, partial) = parts(
        create_mode(&p, "error-partial-bad-id", serde_json::json!({}))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        message,
        "half-created (hostile-wire@0.1.0 create urn:pulumi:test::proj::hostile-wire:index:Probe::h: its partial state: the ID \"\\u{1b}[31mred\" contains control characters; it must be printable; the resource it left behind cannot be recorded)"
    );
    assert_eq!(partial, None);

    // Timeouts that are not durations are never printed as one.
    for (mode, shown) in [
        ("timeout-nan", "NaN"),
        ("timeout-negative", "-5.0"),
        ("timeout-huge", "1e300"),
    ] {
        let e = create_mode(&p, mode, serde_json::json!({}))
            .await
            .unwrap_err();
        assert_eq!(
            failure(e),
            format!(
                "hostile-wire@0.1.0 create urn:pulumi:test::proj::hostile-wire:index:Probe::h: the provider reported a timeout of {shown} s, which is not a duration (it timed out, or failed)"
            ),
            "{mode}"
        );
    }
    let e = create_mode(&p, "unimplemented-huge", serde_json::json!({}))
        .await
        .unwrap_err();
    assert_eq!(e, ProviderError::Unimplemented { method: "Create" });
    next_call_works(&p).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_methods_check_what_they_are_given() {
    let (p, _) = provider("hostile-wire");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let urn = urn(TYPE, "h");
    let prefix = |method: &str| {
        format!(
            "hostile-wire@0.1.0 {method} urn:pulumi:test::proj::hostile-wire:index:Probe::h: rejected the provider's result: "
        )
    };

    // check: unstorable inputs are refused; a flood of failures is cut.
    let e = p
        .check(check(TYPE, "h", serde_json::json!({"mode": "nan-news"})).request())
        .await
        .unwrap_err();
    assert_eq!(
        failure(e),
        format!(
            "{}inputs: property n: NaN is not a number JSON can store (NaN and infinities are refused)",
            prefix("check")
        )
    );
    let checked = p
        .check(check(TYPE, "h", serde_json::json!({"mode": "many-failures"})).request())
        .await
        .unwrap();
    assert_eq!(checked.failures.len(), 101);
    let first = &checked.failures[0];
    assert_eq!(first.property, "p0");
    assert_eq!(
        first.reason,
        format!(
            "{}… [{} more bytes dropped]",
            "R".repeat(cairn_engine::limits::MAX_MESSAGE_BYTES),
            (100 << 10) - cairn_engine::limits::MAX_MESSAGE_BYTES
        )
    );
    assert_eq!(
        checked.failures[100].reason,
        "… and 900 more failures (at most 100 are kept)"
    );

    // A guest that passes more than its memory holds (the same bytes many times) is stopped.
    let e = p
        .check(check(TYPE, "h", serde_json::json!({"mode": "alias-flood"})).request())
        .await
        .unwrap_err();
    assert_eq!(
        failure(e),
        "hostile-wire@0.1.0 check urn:pulumi:test::proj::hostile-wire:index:Probe::h: passed more than 256 MiB to the host in one call (a provider may pass at most its memory limit in one call; raise it under cairn:grants.hostile-wire.memoryMiB)"
    );

    // diff: lists of keys and paths are bounded.
    let olds = PropertyMap::new();
    for (mode, expected) in [
        (
            "huge-keys",
            "replace-keys: 20000 entries; at most 10000 are accepted",
        ),
        (
            "long-key",
            "changed-keys[0]: the entry is 2000 bytes long; at most 1024 bytes are allowed",
        ),
        (
            "long-path",
            "detailed-diff[0]: the path is 20000 bytes long; at most 16384 bytes are allowed",
        ),
    ] {
        let news = map(serde_json::json!({ "mode": mode }));
        let e = p
            .diff(DiffRequest {
                urn: &urn,
                id: "w-h",
                old_inputs: &olds,
                old_outputs: &olds,
                news: &news,
                ignore_changes: &[],
            })
            .await
            .unwrap_err();
        assert_eq!(
            failure(e),
            format!("{}{expected}", prefix("diff")),
            "{mode}"
        );
    }

    // update: the resource exists (its ID is the request's); what can be kept is recorded.
    let e = p
        .update(UpdateRequest {
            urn: urn.clone(),
            id: "w-h".into(),
            old_inputs: PropertyMap::new(),
            old_outputs: PropertyMap::new(),
            news: map(serde_json::json!({"mode": "nan-output"})),
            timeout: 0.0,
            ignore_changes: vec![],
            preview: false,
        })
        .await
        .unwrap_err();
    let (message, partial) = parts(e);
    assert_eq!(
        message,
        format!(
            "{}outputs: property cost: NaN is not a number JSON can store (NaN and infinities are refused) (the resource exists: it is recorded with ID \"w-h\" and the outputs that could be kept)",
            prefix("update")
        )
    );
    let partial = partial.unwrap();
    assert_eq!(
        (partial.id.as_str(), &partial.outputs),
        ("w-h", &ok_outputs())
    );

    // read: an ID with escape sequences is refused.
    let e = p
        .read(ReadRequest {
            urn: urn.clone(),
            id: "w-h".into(),
            inputs: map(serde_json::json!({"mode": "esc-id"})),
            state: PropertyMap::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        failure(e),
        format!(
            "{}id: the ID \"\\u{{1b}}[2J\" contains control characters; it must be printable",
            prefix("read")
        )
    );

    // invoke: unstorable outputs are refused.
    let e = p
        .invoke(InvokeRequest {
            token: "hostile-wire:index:nan-output".into(),
            args: PropertyMap::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        failure(e),
        "hostile-wire@0.1.0 invoke: rejected the provider's result: outputs: property cost: NaN is not a number JSON can store (NaN and infinities are refused)"
    );
    next_call_works(&p).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_callbacks_outside_construct_are_refused() {
    let (p, _) = provider("hostile-wire");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let created = create_mode(&p, "callback", serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(
        created.outputs,
        map(serde_json::json!({
            "register": "engine.register-resource is only available during construct and call",
            "outputs": "engine.register-resource-outputs is only available during construct and call",
        }))
    );
    next_call_works(&p).await;
}

/// A guest that repeats a violation in a loop gets the first few reported and the rest
/// counted (not millions of messages).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_violations_are_counted_not_hoarded() {
    let (p, _) = provider("hostile-wire");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let (message, partial) = parts(
        create_mode(&p, "socket-flood", serde_json::json!({"count": 100_000}))
            .await
            .unwrap_err(),
    );
    let one = "opening a TCP socket is not granted (the provider's manifest requests no TCP destinations under capabilities.tcp; outbound HTTP goes through wasi:http and cairn:grants.hostile-wire.http)";
    let shown = cairn_wasm::state::MAX_VIOLATIONS;
    assert_eq!(
        message,
        format!(
            "hostile-wire@0.1.0 create urn:pulumi:test::proj::hostile-wire:index:Probe::h: {}; … and {} more violations (the resource exists: it is recorded with ID \"w-h\" and the outputs that could be kept)",
            vec![one; shown].join("; "),
            100_000 - shown
        )
    );
    assert_eq!(partial.map(|p| p.id), Some("w-h".to_owned()));
    next_call_works(&p).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_logs_are_capped_per_message_call_and_deployment() {
    // One message is cut to MAX_MESSAGE_BYTES, with a note of what was dropped.
    let (p, logs) = provider("hostile-wire");
    p.configure(PropertyMap::new(), false).await.unwrap();
    create_mode(&p, "log-huge", serde_json::json!({}))
        .await
        .unwrap();
    let kept = cairn_engine::limits::MAX_MESSAGE_BYTES;
    let host: Vec<String> = logs
        .records()
        .into_iter()
        .filter(|r| r.source == LogSource::Host)
        .map(|r| r.message)
        .collect();
    assert_eq!(
        host,
        [format!(
            "{}… [{} more bytes dropped]",
            "H".repeat(kept),
            (1 << 20) - kept
        )]
    );

    // A flood in one call: what fits the per-call limit is logged, the rest counted.
    let (p, logs) = provider("hostile-wire");
    p.configure(PropertyMap::new(), false).await.unwrap();
    create_mode(
        &p,
        "log-flood",
        serde_json::json!({"count": 100_000, "size": 100}),
    )
    .await
    .unwrap();
    let per = 100 + cairn_wasm::RECORD_OVERHEAD;
    let fit = cairn_wasm::LOG_LIMIT / per;
    let records = logs.records();
    let logged = records
        .iter()
        .filter(|r| r.source == LogSource::Host)
        .count();
    assert_eq!(logged, fit);
    let notes: Vec<&str> = records
        .iter()
        .filter(|r| r.source == LogSource::Sandbox && r.message.contains("were dropped"))
        .map(|r| r.message.as_str())
        .collect();
    assert_eq!(
        notes,
        [format!(
            "{} log messages ({} bytes) were dropped: a call may log at most 1 MiB through host.log (a fixed limit)",
            100_000 - fit,
            (100_000 - fit) * 100
        )]
    );

    // Across calls: at most DEPLOYMENT_LOG_LIMIT per provider in a deployment.
    let (p, logs) = provider("hostile-wire");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let size = 60_000;
    let per = size + cairn_wasm::RECORD_OVERHEAD;
    let per_call = cairn_wasm::LOG_LIMIT / per;
    let calls = cairn_wasm::DEPLOYMENT_LOG_LIMIT / (per_call * per) + 2;
    for _ in 0..calls {
        create_mode(
            &p,
            "log-flood",
            serde_json::json!({"count": 20, "size": size}),
        )
        .await
        .unwrap();
    }
    let records = logs.records();
    let logged = records
        .iter()
        .filter(|r| r.source == LogSource::Host)
        .count();
    assert_eq!(logged, cairn_wasm::DEPLOYMENT_LOG_LIMIT / per);
    assert!(
        records.iter().any(|r| r.source == LogSource::Sandbox
            && r.message.ends_with(
                "were dropped: at most 16 MiB of log output is kept per deployment (a fixed limit)"
            )),
        "{:?}",
        records
            .iter()
            .filter(|r| r.source == LogSource::Sandbox)
            .map(|r| &r.message)
            .collect::<Vec<_>>()
    );
    next_call_works(&p).await;
}

/// Requests to addresses that are or embed this host's own, with a wildcard grant: each is
/// refused naming the host, the address and why; the call fails, and what the guest said it
/// created is still recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_addresses_that_are_or_embed_private_ones() {
    let (p, _) = provider_with("hostile-wire", serde_json::json!({"http": ["*"]}));
    p.configure(PropertyMap::new(), false).await.unwrap();
    let grant = "(only an exact grant of this host under cairn:grants.hostile-wire.http allows such addresses)";
    let cases = [
        (
            "http://[::127.0.0.1]:9/",
            "HTTP request to ::127.0.0.1 is not granted: ::7f00:1 is an IPv4-compatible IPv6 address (::/96, deprecated) embedding 127.0.0.1, a loopback address (127.0.0.0/8)",
        ),
        (
            "http://[::ffff:127.0.0.1]:9/",
            "HTTP request to ::ffff:127.0.0.1 is not granted: ::ffff:127.0.0.1 is an IPv4-mapped IPv6 address (::ffff:0:0/96) embedding 127.0.0.1, a loopback address (127.0.0.0/8)",
        ),
        (
            "http://[64:ff9b::7f00:1]:9/",
            "HTTP request to 64:ff9b::7f00:1 is not granted: 64:ff9b::7f00:1 is a NAT64 address (64:ff9b::/96) embedding 127.0.0.1, a loopback address (127.0.0.0/8)",
        ),
        (
            "http://[2002:7f00:1::]:9/",
            "HTTP request to 2002:7f00:1:: is not granted: 2002:7f00:1:: is a 6to4 address (2002::/16) embedding 127.0.0.1, a loopback address (127.0.0.0/8)",
        ),
        (
            "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:9/",
            "is a Teredo address (2001::/32) whose client 127.0.0.1 is a loopback address (127.0.0.0/8)",
        ),
        (
            "http://0.0.0.0:9/",
            "HTTP request to 0.0.0.0 is not granted: 0.0.0.0 is a \"this network\" address (0.0.0.0/8)",
        ),
        (
            "http://[::]:9/",
            "HTTP request to :: is not granted: :: is the unspecified address (::)",
        ),
        (
            "http://100.64.0.1:9/",
            "100.64.0.1 is a shared (carrier-grade NAT) address (100.64.0.0/10)",
        ),
        (
            "http://[fec0::1]:9/",
            "fec0::1 is a site-local address (fec0::/10, deprecated)",
        ),
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254 is a link-local address (169.254.0.0/16)",
        ),
        (
            "http://localhost:9/",
            "HTTP request to localhost is not granted: it resolves to ",
        ),
    ];
    for (url, expected) in cases {
        let e = create_mode(&p, "http-many", serde_json::json!({"url": url, "count": 1}))
            .await
            .unwrap_err();
        let (message, partial) = parts(e);
        assert_contains(
            &message,
            &[
                "hostile-wire@0.1.0 create urn:pulumi:test::proj::hostile-wire:index:Probe::h: ",
                expected,
                grant,
                "(the resource exists: it is recorded with ID \"w-h\"",
            ],
        );
        if url.contains("localhost") {
            assert_contains(&message, &["loopback address"]);
        }
        assert_eq!(partial.map(|p| p.id), Some("w-h".to_owned()), "{url}");
    }
    next_call_works(&p).await;
}

/// A server on loopback that answers nothing until `hold` connections are open, then answers
/// every connection with 204; returns its port.
fn serve_after(hold: usize) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let answer = |mut stream: std::net::TcpStream| {
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(
                    b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            });
        };
        let (mut held, mut released) = (Vec::new(), false);
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            if released {
                answer(stream);
                continue;
            }
            held.push(stream);
            if held.len() == hold {
                released = true;
                held.drain(..).for_each(answer);
            }
        }
    });
    port
}

/// A server on loopback that answers every request with headers promising a body it never
/// sends, and keeps the connection open until the client closes it: each request stays open
/// for as long as the guest holds its response. Returns its port.
fn serve_unfinished() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n");
                // Until the client closes (read returns 0) or the timeout passes.
                while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_cannot_open_unbounded_connections() {
    let max = cairn_wasm::http::MAX_CONNECTIONS;
    // The guest sends every request before it reads any response, and each stays open until
    // the guest drops its response (the server never finishes a body): whatever the timing,
    // exactly `max` are open when the rest are sent. (A server that answered and closed could
    // free places before a slow guest sent its last requests.)
    let port = serve_unfinished();
    // The exact host is granted, so loopback is allowed.
    let (p, _) = provider_with("hostile-wire", serde_json::json!({"http": ["127.0.0.1"]}));
    p.configure(PropertyMap::new(), false).await.unwrap();
    let sent = max + 6;
    let created = create_mode(
        &p,
        "http-many",
        serde_json::json!({"url": format!("http://127.0.0.1:{port}/"), "count": sent}),
    )
    .await
    .unwrap();
    let count = |key: &str| match created.outputs.get(key) {
        Some(PropertyValue::Number(n)) => *n as usize,
        _ => 0,
    };
    let (answered, refused) = (
        count("status 200"),
        count("ErrorCode::ConnectionLimitReached"),
    );
    assert_eq!(
        (answered, refused),
        (max, sent - max),
        "{:?}",
        created.outputs
    );
    next_call_works(&p).await;
}

/// `https` goes through TLS on the checked connection: a server that answers in plain text
/// fails the handshake (rather than being spoken to in plain text).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_speaks_tls_over_the_checked_connection() {
    let port = serve_after(1);
    let (p, _) = provider_with("hostile-wire", serde_json::json!({"http": ["127.0.0.1"]}));
    p.configure(PropertyMap::new(), false).await.unwrap();
    let created = create_mode(
        &p,
        "http-many",
        serde_json::json!({"url": format!("https://127.0.0.1:{port}/"), "count": 1}),
    )
    .await
    .unwrap();
    assert_eq!(
        created.outputs,
        map(serde_json::json!({"ErrorCode::TlsProtocolError": 1}))
    );
}
