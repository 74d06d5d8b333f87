//! A scriptable HTTP/1.1 server on 127.0.0.1 and the attacks it plays.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_registry::layout::{self, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE};
use cairn_registry::{
    Client, ClientOptions, Credential, Credentials, Digest, Reference, RegistryError,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server does for one request.
#[derive(Clone)]
enum Reply {
    /// Status, headers, body (with a Content-Length).
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// 200 with no length, then bytes forever.
    Endless,
    /// 200 announcing `len` bytes, then one byte every 100 ms.
    Trickle(usize),
    /// 307 to `location`.
    Redirect(String),
}

type Routes = Arc<dyn Fn(&str, &HashMap<String, String>) -> Reply + Send + Sync>;

/// Serves `routes` (by request path, headers lower-cased) until the test ends.
async fn serve(routes: Routes) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let routes = routes.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let mut lines = head.lines();
                let path = lines
                    .next()
                    .unwrap_or_default()
                    .split(' ')
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned();
                let headers: HashMap<String, String> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                    .collect();
                let _ = match routes(&path, &headers) {
                    Reply::Full(status, extra, body) => {
                        let mut out = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
                        for (k, v) in extra {
                            out.push_str(&format!("{k}: {v}\r\n"));
                        }
                        out.push_str("\r\n");
                        let mut bytes = out.into_bytes();
                        bytes.extend_from_slice(&body);
                        socket.write_all(&bytes).await
                    }
                    Reply::Endless => {
                        let _ = socket.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n").await;
                        let chunk = vec![b'{'; 64 * 1024];
                        loop {
                            if socket.write_all(&chunk).await.is_err() {
                                break Ok(());
                            }
                        }
                    }
                    Reply::Trickle(len) => {
                        let _ = socket.write_all(format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n").as_bytes()).await;
                        for _ in 0..len {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            if socket.write_all(b"x").await.is_err() {
                                break;
                            }
                        }
                        Ok(())
                    }
                    Reply::Redirect(location) => {
                        socket.write_all(format!("HTTP/1.1 307 X\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n").as_bytes()).await
                    }
                };
            });
        }
    });
    port
}

/// A published artifact: the component, its config and manifest bytes.
struct Published {
    component: Vec<u8>,
    config: Vec<u8>,
    manifest: Vec<u8>,
}

fn published() -> Published {
    let component = b"\0asm\x0d\0\x01\0 a component's bytes".repeat(100);
    let a = layout::artifact(
        &component,
        "x-1.0.0.wasm",
        &semver::Version::new(1, 0, 0),
        chrono::Utc::now(),
    );
    Published {
        component,
        config: a.config,
        manifest: a.manifest,
    }
}

/// A manifest JSON with `change` applied.
fn manifest_with(p: &Published, change: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let mut m: serde_json::Value = serde_json::from_slice(&p.manifest).unwrap();
    change(&mut m);
    serde_json::to_vec(&m).unwrap()
}

fn ok(body: Vec<u8>) -> Reply {
    Reply::Full(200, vec![], body)
}

/// A registry serving `manifest` for every manifest request and `blob` for every blob.
async fn registry(manifest: Vec<u8>, blob: Reply) -> u16 {
    serve(Arc::new(move |path: &str, _: &HashMap<String, String>| {
        if path.contains("/manifests/") {
            Reply::Full(
                200,
                vec![("Content-Type".into(), layout::MANIFEST_MEDIA_TYPE.into())],
                manifest.clone(),
            )
        } else if path.contains("/blobs/") {
            blob.clone()
        } else {
            Reply::Full(404, vec![], b"{}".to_vec())
        }
    }))
    .await
}

fn client(timeout: Duration) -> Client {
    Client::new(ClientOptions {
        plain_http: false,
        timeout,
        credentials: Credentials::default(),
    })
    .unwrap()
}

fn reference(port: u16) -> Reference {
    Reference::parse(&format!("oci://127.0.0.1:{port}/acme/x:1.0.0")).unwrap()
}

async fn pull_err(port: u16) -> String {
    client(Duration::from_secs(10))
        .pull(&reference(port))
        .await
        .unwrap_err()
        .to_string()
}

fn assert_contains(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} not in {text:?}");
    }
}

#[tokio::test]
async fn an_honest_registry_is_pulled_and_verified() {
    let p = published();
    let port = registry(p.manifest.clone(), ok(p.component.clone())).await;
    let pulled = client(Duration::from_secs(10))
        .pull(&reference(port))
        .await
        .unwrap();
    assert_eq!(pulled.component, p.component);
    assert_eq!(pulled.digest, Digest::of(&p.component));
    assert_eq!(pulled.manifest_digest, Digest::of(&p.manifest));
    assert_eq!(pulled.title.as_deref(), Some("x-1.0.0.wasm"));
    assert_eq!(
        pulled.reference.to_string(),
        format!("oci://127.0.0.1:{port}/acme/x@{}", Digest::of(&p.manifest))
    );
    let _ = p.config;
}

#[tokio::test]
async fn a_tampered_blob_is_refused_with_both_digests() {
    let p = published();
    let mut tampered = p.component.clone();
    tampered[40] ^= 1;
    let port = registry(p.manifest.clone(), ok(tampered.clone())).await;
    let err = pull_err(port).await;
    assert_contains(
        &err,
        &[
            "/blobs/",
            "component",
            &Digest::of(&p.component).to_string(),
            &Digest::of(&tampered).to_string(),
        ],
    );
}

#[tokio::test]
async fn wrong_sizes_are_refused() {
    let p = published();
    for body in [
        p.component[..p.component.len() - 1].to_vec(),
        [p.component.clone(), b"more".to_vec()].concat(),
    ] {
        let port = registry(p.manifest.clone(), ok(body.clone())).await;
        let err = pull_err(port).await;
        assert_contains(
            &err,
            &[&format!(
                "sent {} bytes of the component; the manifest says {}",
                body.len(),
                p.component.len()
            )],
        );
    }
}

#[tokio::test]
async fn manifests_of_the_wrong_layout_are_refused_before_any_blob() {
    let p = published();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            manifest_with(&p, |m| {
                let l = m["layers"][0].clone();
                m["layers"].as_array_mut().unwrap().push(l)
            }),
            "it has 2 layers",
        ),
        (
            manifest_with(&p, |m| {
                m["layers"][0]["mediaType"] = "application/vnd.oci.image.layer.v1.tar".into()
            }),
            "its layer has media type",
        ),
        (
            manifest_with(&p, |m| {
                m["config"]["mediaType"] = "application/vnd.oci.empty.v1+json".into()
            }),
            "not a Wasm artifact",
        ),
        (
            manifest_with(&p, |m| m["mediaType"] = layout::INDEX_MEDIA_TYPE.into()),
            "image index",
        ),
        (b"<html>not json</html>".to_vec(), "not JSON"),
    ];
    for (manifest, why) in cases {
        // A blob request would be answered with garbage; the layout check must come first.
        let port = registry(manifest, Reply::Endless).await;
        let err = pull_err(port).await;
        assert_contains(
            &err,
            &[
                &format!("oci://127.0.0.1:{port}/acme/x:1.0.0 is not a Wasm component artifact"),
                why,
            ],
        );
    }
    let _ = (WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE);
}

#[tokio::test]
async fn an_endless_manifest_stops_at_the_cap() {
    let port = serve(Arc::new(|_: &str, _: &HashMap<String, String>| {
        Reply::Endless
    }))
    .await;
    let started = Instant::now();
    let err = pull_err(port).await;
    assert_contains(
        &err,
        &[
            "/manifests/1.0.0",
            "more than the 4194304 bytes expected of the manifest",
        ],
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn an_endless_blob_stops_at_its_declared_size() {
    let p = published();
    let port = registry(p.manifest.clone(), Reply::Endless).await;
    let err = pull_err(port).await;
    assert_contains(
        &err,
        &[
            "/blobs/",
            &format!(
                "more than the {} bytes expected of the component",
                p.component.len()
            ),
        ],
    );
}

#[tokio::test]
async fn a_redirect_loop_is_cut_short() {
    let p = published();
    let port = serve(Arc::new(move |path: &str, _: &HashMap<String, String>| {
        if path.contains("/manifests/") {
            ok(p.manifest.clone())
        } else {
            Reply::Redirect(format!("{path}x"))
        }
    }))
    .await;
    let err = pull_err(port).await;
    assert_contains(&err, &["/blobs/", "more than 5 redirects"]);
}

#[tokio::test]
async fn a_slow_trickle_hits_the_deadline() {
    let p = published();
    let port = registry(p.manifest.clone(), Reply::Trickle(p.component.len())).await;
    let started = Instant::now();
    let err = client(Duration::from_millis(800))
        .pull(&reference(port))
        .await
        .unwrap_err();
    assert!(matches!(err, RegistryError::Timeout { .. }), "{err}");
    assert_contains(
        &err.to_string(),
        &[
            &format!("oci://127.0.0.1:{port}/acme/x:1.0.0"),
            "no answer within",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn manifest_digests_are_checked() {
    let p = published();
    // Asked by digest, served other bytes.
    let port = registry(p.manifest.clone(), ok(p.component.clone())).await;
    let other = Digest::of(b"another manifest");
    let by_digest = Reference::parse(&format!("oci://127.0.0.1:{port}/acme/x@{other}")).unwrap();
    let err = client(Duration::from_secs(10))
        .pull(&by_digest)
        .await
        .unwrap_err()
        .to_string();
    assert_contains(
        &err,
        &[
            "manifest whose digest is",
            &other.to_string(),
            &Digest::of(&p.manifest).to_string(),
        ],
    );
    // A registry whose Docker-Content-Digest header disagrees with what it sent.
    let manifest = p.manifest.clone();
    let port = serve(Arc::new(move |_: &str, _: &HashMap<String, String>| {
        Reply::Full(
            200,
            vec![("Docker-Content-Digest".into(), other.to_string())],
            manifest.clone(),
        )
    }))
    .await;
    assert_contains(
        &pull_err(port).await,
        &["manifest whose digest is", &other.to_string()],
    );
}

#[tokio::test]
async fn bearer_tokens_are_fetched_with_the_credentials_and_wrong_ones_are_named() {
    let p = published();
    let port_cell = Arc::new(std::sync::OnceLock::<u16>::new());
    let cell = port_cell.clone();
    let expected_basic = format!("Basic {}", base64_of("alice:wonder"));
    let component = p.component.clone();
    let port = serve(Arc::new(
        move |path: &str, headers: &HashMap<String, String>| {
            let port = cell.get().copied().unwrap_or_default();
            if path.starts_with("/token") {
                assert!(
                    path.contains("scope=repository%3Aacme%2Fx%3Apull"),
                    "{path}"
                );
                return if headers.get("authorization") == Some(&expected_basic) {
                    ok(br#"{"token":"t0k3n"}"#.to_vec())
                } else {
                    Reply::Full(401, vec![], vec![])
                };
            }
            if headers.get("authorization").map(String::as_str) != Some("Bearer t0k3n") {
                return Reply::Full(
                    401,
                    vec![(
                        "WWW-Authenticate".into(),
                        format!("Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"test\""),
                    )],
                    vec![],
                );
            }
            if path.contains("/manifests/") {
                ok(p.manifest.clone())
            } else {
                ok(p.component.clone())
            }
        },
    ))
    .await;
    port_cell.set(port).unwrap();
    let with = |password: &str| {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        Credentials::save(
            &file,
            &format!("127.0.0.1:{port}"),
            &Credential {
                username: "alice".into(),
                password: password.into(),
            },
        )
        .unwrap();
        let mut credentials = Credentials::default();
        credentials.load_file(&file).unwrap();
        Client::new(ClientOptions {
            plain_http: false,
            timeout: Duration::from_secs(10),
            credentials,
        })
        .unwrap()
    };
    let pulled = with("wonder").pull(&reference(port)).await.unwrap();
    assert_eq!(pulled.component, component);
    let err = with("wrong")
        .pull(&reference(port))
        .await
        .unwrap_err()
        .to_string();
    assert_contains(&err, &["/token", "answered 401"]);
    let err = client(Duration::from_secs(10))
        .pull(&reference(port))
        .await
        .unwrap_err()
        .to_string();
    assert_contains(&err, &["/token", "401"]);
}

fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}
