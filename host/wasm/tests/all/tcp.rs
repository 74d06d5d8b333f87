//! Outbound TCP as a grant, against a hostile guest (`tests/guests/hostile-net`, whose manifest
//! requests `*:*`): a granted `host:port` is reached and nothing else is — not another port,
//! not loopback through `*`, not a name that resolves to loopback, not the IPv4-mapped form of
//! a granted address; names are resolved only when a grant could use them; listening, binding
//! and UDP are refused; thousands of sockets hit the per-instance cap; a server that accepts
//! and never answers is abandoned at the call's deadline. Every server here listens on
//! loopback and counts the connections it accepts, so "refused before connecting" is checked
//! where it matters: at the server.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cairn_engine::PropertyValue;
use cairn_engine::deploy::provider::Provider;
use cairn_engine::value::PropertyMap;

use crate::support::*;

const PROBE: &str = "hostile-net:index:Probe";

/// A loopback server that counts the connections it accepts and answers each one as `answer`
/// says: `Some(reply)` reads the request to its end and replies; `None` keeps the connection
/// open and silent.
struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Server {
    fn start(answer: Option<&'static str>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            let mut held: Vec<TcpStream> = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                match answer {
                    Some(reply) => {
                        std::thread::spawn(move || {
                            stream
                                .set_read_timeout(Some(Duration::from_secs(10)))
                                .unwrap();
                            let mut request = Vec::new();
                            let _ = stream.read_to_end(&mut request);
                            let _ = stream.write_all(reply.as_bytes());
                        });
                    }
                    None => held.push(stream),
                }
            }
        });
        Server { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

async fn net(grant: serde_json::Value) -> cairn_wasm::WasmProvider {
    let (p, _) = provider_with("hostile-net", grant);
    p.configure(PropertyMap::new(), false).await.unwrap();
    p
}

/// Runs `create` and returns its `key` output (an `{ok, value}` outcome or a map).
async fn probe(
    p: &cairn_wasm::WasmProvider,
    inputs: serde_json::Value,
    key: &str,
) -> PropertyValue {
    let r = p
        .create(create(PROBE, "p", inputs))
        .await
        .unwrap_or_else(|e| panic!("create failed: {e:?}"));
    r.outputs[key].clone()
}

/// Runs `create`, which must fail with a recorded violation; returns the message.
async fn refused(p: &cairn_wasm::WasmProvider, inputs: serde_json::Value) -> String {
    failure(
        p.create(create(PROBE, "p", inputs))
            .await
            .expect_err("the create should have been refused"),
    )
}

fn ok(outcome: &PropertyValue) -> (bool, String) {
    let o = outcome.as_object().unwrap();
    (
        o["ok"] == PropertyValue::Bool(true),
        o["value"].as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_granted_address_is_reached_and_nothing_else() {
    let granted = Server::start(Some("pong"));
    let other = Server::start(Some("other"));
    let p = net(serde_json::json!({"tcp": [format!("127.0.0.1:{}", granted.port)]})).await;
    assert!(p.sandbox().not_granted.is_empty(), "{:?}", p.sandbox());

    let reply = probe(
        &p,
        serde_json::json!({"mode": "connect", "address": format!("127.0.0.1:{}", granted.port), "send": "ping"}),
        "connect",
    )
    .await;
    assert_eq!(ok(&reply), (true, "connected; reply \"pong\"".into()));
    assert_eq!(granted.accepted(), 1);

    // Another port of the same host.
    let err = refused(
        &p,
        serde_json::json!({"mode": "connect", "address": format!("127.0.0.1:{}", other.port)}),
    )
    .await;
    assert_contains(
        &err,
        &[
            "hostile-net@0.1.0 create urn:pulumi:test::proj::hostile-net:index:Probe::p:",
            &format!(
                "TCP connection to 127.0.0.1:{} is not granted (grant it under cairn:grants.hostile-net.tcp)",
                other.port
            ),
        ],
    );
    // Another loopback address, and the IPv6 and IPv4-mapped forms of the granted one.
    for address in [
        format!("127.0.0.2:{}", granted.port),
        format!("[::1]:{}", granted.port),
        format!("[::ffff:127.0.0.1]:{}", granted.port),
    ] {
        let r = p
            .create(create(
                PROBE,
                "p",
                serde_json::json!({"mode": "connect", "address": address}),
            ))
            .await;
        // Refused by the grant (a violation), or by WASI itself before any check (an IPv4-mapped
        // address on an IPv6 socket is invalid there): either way the guest got no connection.
        match r {
            Err(e) => assert_contains(&failure(e), &["is not granted"]),
            Ok(r) => assert!(!ok(&r.outputs["connect"]).0, "{address}: {:?}", r.outputs),
        }
    }
    assert_eq!(other.accepted(), 0, "an ungranted port saw a connection");
    assert_eq!(
        granted.accepted(),
        1,
        "an ungranted form of the address got through"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wildcard_grant_never_reaches_loopback() {
    let server = Server::start(Some("pong"));
    let port = server.port;
    let p = net(serde_json::json!({"tcp": [format!("*:{port}")]})).await;

    let err = refused(
        &p,
        serde_json::json!({"mode": "connect", "address": format!("127.0.0.1:{port}")}),
    )
    .await;
    assert_contains(
        &err,
        &[&format!(
            "TCP connection to 127.0.0.1:{port} is not granted: 127.0.0.1 is a loopback address (127.0.0.0/8) (\"*\" reaches only public addresses; grant this host exactly under cairn:grants.hostile-net.tcp)"
        )],
    );
    // A name reached through `*` is resolved by the host, and its loopback addresses refused.
    let err = refused(
        &p,
        serde_json::json!({"mode": "connect", "address": format!("localhost:{port}")}),
    )
    .await;
    assert_contains(
        &err,
        &[&format!(
            "TCP connection to 127.0.0.1:{port} (localhost) is not granted: 127.0.0.1 is a loopback address"
        )],
    );
    let r = p
        .create(create(
            PROBE,
            "p",
            serde_json::json!({"mode": "connect", "address": format!("[::ffff:127.0.0.1]:{port}")}),
        ))
        .await;
    match r {
        Err(e) => assert_contains(&failure(e), &["is not granted"]),
        Ok(r) => assert!(!ok(&r.outputs["connect"]).0, "{:?}", r.outputs),
    }
    assert_eq!(server.accepted(), 0, "loopback was reached through *");

    // Named exactly, the same server is reached, by address and by name.
    let p = net(serde_json::json!({"tcp": [format!("localhost:{port}")]})).await;
    let reply = probe(
        &p,
        serde_json::json!({"mode": "connect", "address": format!("localhost:{port}"), "send": "x"}),
        "connect",
    )
    .await;
    assert_eq!(ok(&reply), (true, "connected; reply \"pong\"".into()));
    assert_eq!(server.accepted(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_resolved_only_when_a_grant_could_use_them() {
    let p = net(serde_json::json!({"tcp": ["127.0.0.1:5432"]})).await;
    let err = refused(
        &p,
        serde_json::json!({"mode": "lookup", "name": "db.example.com"}),
    )
    .await;
    assert_contains(
        &err,
        &[
            "resolving \"db.example.com\" is not granted (no entry of cairn:grants.hostile-net.tcp names it; grant \"db.example.com:PORT\")",
        ],
    );
    // An address literal needs no lookup.
    let r = probe(
        &p,
        serde_json::json!({"mode": "lookup", "name": "127.0.0.1"}),
        "lookup",
    )
    .await;
    assert_eq!(ok(&r), (true, "127.0.0.1".into()));

    let p = net(serde_json::json!({"tcp": ["LocalHost.:5432"]})).await;
    let r = probe(
        &p,
        serde_json::json!({"mode": "lookup", "name": "localhost"}),
        "lookup",
    )
    .await;
    let (resolved, addresses) = ok(&r);
    assert!(resolved && addresses.contains("127.0.0.1"), "{addresses}");

    // Without a tcp grant there is no lookup at all.
    let (p, _) = provider("hostile-net");
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = refused(
        &p,
        serde_json::json!({"mode": "lookup", "name": "localhost"}),
    )
    .await;
    assert_contains(
        &err,
        &[
            "resolving \"localhost\" (wasi:sockets/ip-name-lookup) is not granted (grant destinations under cairn:grants.hostile-net.tcp",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listening_binding_and_udp_are_refused() {
    let p = net(serde_json::json!({"tcp": ["127.0.0.1:5432", "*:53"]})).await;
    for (inputs, expected) in [
        (
            serde_json::json!({"mode": "listen"}),
            "listening for TCP connections is not granted (guests may only connect out)",
        ),
        (
            serde_json::json!({"mode": "bind", "address": "127.0.0.1:0"}),
            "binding a TCP socket to 127.0.0.1:0 is not granted (guests may only connect out)",
        ),
        (
            serde_json::json!({"mode": "bind", "address": "0.0.0.0:5432"}),
            "binding a TCP socket to 0.0.0.0:5432 is not granted",
        ),
        (
            serde_json::json!({"mode": "udp", "address": "127.0.0.1:53"}),
            "opening a UDP socket is not granted (guests get outbound TCP only, under cairn:grants.hostile-net.tcp)",
        ),
    ] {
        let err = refused(&p, inputs.clone()).await;
        assert_contains(&err, &[expected]);
    }
    still_reachable(&p).await;
}

/// The provider still answers (a fresh instance after a refusal).
async fn still_reachable(p: &cairn_wasm::WasmProvider) {
    p.check(check(PROBE, "x", serde_json::json!({})).request())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_sockets_hit_the_per_instance_cap() {
    let server = Server::start(None);
    let p = net(serde_json::json!({"tcp": [format!("127.0.0.1:{}", server.port)]})).await;
    let err = refused(
        &p,
        serde_json::json!({"mode": "many", "count": 5000, "address": format!("127.0.0.1:{}", server.port)}),
    )
    .await;
    assert_contains(
        &err,
        &["opening more than 64 TCP sockets at once is refused (a fixed limit per instance)"],
    );
    // Give the server's accept loop a moment to see what was connected, then count.
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.accepted() < 64 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.accepted(), 64);
    still_reachable(&p).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_abandoned_at_the_deadline() {
    let server = Server::start(None);
    let p = net(serde_json::json!({
        "tcp": [format!("127.0.0.1:{}", server.port)],
        "timeoutSeconds": 1
    }))
    .await;
    let started = Instant::now();
    let err = outcome_unknown(
        p.create(create(
            PROBE,
            "p",
            serde_json::json!({"mode": "silent", "address": format!("127.0.0.1:{}", server.port)}),
        ))
        .await
        .unwrap_err(),
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_contains(
        &err,
        &[
            "deadline of 1 s exceeded while waiting in a host call; raise it under cairn:grants.hostile-net.timeoutSeconds",
        ],
    );
    assert_eq!(server.accepted(), 1);
    still_reachable(&p).await;
}
