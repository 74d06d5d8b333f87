//! Providers through a real OCI registry (Debian's `docker-registry`): `cairn plugin publish`
//! pushes the Wasm artifact layout, `cairn plugin install oci://…` fetches and verifies it, and
//! both interoperate with `oras`, an independent client, when it is installed. A registry that
//! serves other bytes than its manifest promises installs nothing.

use std::process::Command;

use crate::ociregistry::{OciRegistry, oras};
use crate::support::*;

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The `random` example provider's file, bytes and version.
fn random_provider() -> (std::path::PathBuf, Vec<u8>, String) {
    let file = example_wasm("random");
    let bytes = std::fs::read(&file).unwrap();
    let sandbox = Sandbox::new("inspect");
    let out = sandbox.ok(&["plugin", "inspect", file.to_str().unwrap(), "--json"]);
    let inspected: serde_json::Value = serde_json::from_str(&out).unwrap();
    let version = inspected["version"].as_str().unwrap().to_owned();
    (file, bytes, version)
}

#[test]
fn publish_then_install_by_tag_and_by_digest() {
    let registry = OciRegistry::start();
    let (file, bytes, version) = random_provider();
    let publisher = Sandbox::new("publisher");
    let out = publisher.ok(&[
        "plugin",
        "publish",
        file.to_str().unwrap(),
        &registry.url("cairn/random"),
    ]);
    let tag_ref = format!(
        "{}:{}",
        registry.url("cairn/random"),
        version.replace('+', "_")
    );
    assert_contains(
        &out,
        &[
            &format!("Published random@{version} to {tag_ref}"),
            &format!("component sha256:{}", sha256_hex(&bytes)),
        ],
    );
    let manifest_digest = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("manifest "))
        .expect("the manifest digest is printed")
        .to_owned();

    // The registry holds the CNCF layout: the layer is the component byte for byte.
    let (status, manifest) = registry.get(
        &format!("/v2/cairn/random/manifests/{}", version.replace('+', "_")),
        "application/vnd.oci.image.manifest.v1+json",
    );
    assert_eq!(status, 200);
    assert_eq!(format!("sha256:{}", sha256_hex(&manifest)), manifest_digest);
    let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    assert_eq!(
        m["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(m["layers"].as_array().unwrap().len(), 1);
    assert_eq!(m["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(
        m["layers"][0]["digest"],
        format!("sha256:{}", sha256_hex(&bytes))
    );
    assert_eq!(
        m["layers"][0]["annotations"]["org.opencontainers.image.title"],
        format!("random-{version}.wasm")
    );
    let (_, config) = registry.get(
        &format!(
            "/v2/cairn/random/blobs/{}",
            m["config"]["digest"].as_str().unwrap()
        ),
        "*/*",
    );
    let config: serde_json::Value = serde_json::from_slice(&config).unwrap();
    assert_eq!(config["architecture"], "wasm");
    assert_eq!(config["os"], "wasip2");
    assert_eq!(config["layerDigests"][0], m["layers"][0]["digest"]);
    assert!(
        config["component"]["exports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().starts_with("cairn:deploy/provider")),
        "{config}"
    );

    // Installed by tag, in a fresh home: the same bytes, stored by name and version.
    for reference in [
        tag_ref.clone(),
        format!("{}@{manifest_digest}", registry.url("cairn/random")),
    ] {
        let user = Sandbox::new("user");
        let out = user.ok(&["plugin", "install", &reference]);
        assert_contains(
            &out,
            &[
                &format!("Installed random@{version} (sha256 {})", sha256_hex(&bytes)),
                &format!("from {}@{manifest_digest}", registry.url("cairn/random")),
            ],
        );
        let installed = user
            .home
            .join(format!("plugins/random/{version}/random-{version}.wasm"));
        assert_eq!(
            std::fs::read(&installed).unwrap(),
            bytes,
            "{}",
            installed.display()
        );
    }

    // A tag that names another version than the component's is refused, and nothing stored.
    publisher.ok(&[
        "plugin",
        "publish",
        file.to_str().unwrap(),
        &format!("{}:9.9.9", registry.url("cairn/random")),
    ]);
    let user = Sandbox::new("user");
    let err = user.fails(&[
        "plugin",
        "install",
        &format!("{}:9.9.9", registry.url("cairn/random")),
    ]);
    assert_contains(
        &err,
        &[
            ":9.9.9",
            &format!("the component is \"random\"@{version}, not the version 9.9.9 its tag names"),
        ],
    );
    assert!(!user.home.join("plugins/random").exists());

    // Unknown repositories and tags are named.
    let err = user.fails(&[
        "plugin",
        "install",
        &format!("{}:1.0.0", registry.url("cairn/none")),
    ]);
    assert_contains(&err, &["cairn/none:1.0.0", "not found"]);
}

#[test]
fn a_registry_serving_other_bytes_installs_nothing() {
    let registry = OciRegistry::start();
    let (file, bytes, version) = random_provider();
    let publisher = Sandbox::new("publisher");
    publisher.ok(&[
        "plugin",
        "publish",
        file.to_str().unwrap(),
        &registry.url("cairn/random"),
    ]);
    // Tamper with the stored blob behind the registry's back (same size, one byte flipped).
    let data = registry.data_dir();
    let blob = walk(&data)
        .into_iter()
        .find(|p| p.ends_with("data") && std::fs::read(p).is_ok_and(|b| b == bytes))
        .expect("the component's blob in the registry's storage");
    let mut tampered = bytes.clone();
    tampered[bytes.len() / 2] ^= 0xff;
    std::fs::write(&blob, &tampered).unwrap();

    let user = Sandbox::new("user");
    let err = user.fails(&[
        "plugin",
        "install",
        &format!(
            "{}:{}",
            registry.url("cairn/random"),
            version.replace('+', "_")
        ),
    ]);
    assert_contains(
        &err,
        &[
            "component whose digest is",
            &format!("sha256:{}", sha256_hex(&tampered)),
            &format!("sha256:{}", sha256_hex(&bytes)),
        ],
    );
    assert!(!user.home.join("plugins").exists() || walk(&user.home.join("plugins")).is_empty());
}

#[test]
fn oras_and_cairn_exchange_artifacts() {
    let Some(oras) = oras() else {
        // Straight to stderr, as the harness does not capture it.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: oras is not installed (tests/run.sh installs it)"
        );
        return;
    };
    let registry = OciRegistry::start();
    let (file, bytes, version) = random_provider();
    let work = tempfile::tempdir().unwrap();

    // Cairn publishes; oras pulls the same bytes under the layer's title.
    let publisher = Sandbox::new("publisher");
    publisher.ok(&[
        "plugin",
        "publish",
        file.to_str().unwrap(),
        &format!("{}:fromcairn", registry.url("cairn/random")),
    ]);
    let pulled = work.path().join("pulled");
    let out = Command::new(&oras)
        .args(["pull", "--plain-http", "--no-tty", "-o"])
        .arg(&pulled)
        .arg(registry.plain("cairn/random:fromcairn"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "oras pull: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(pulled.join(format!("random-{version}.wasm"))).unwrap(),
        bytes
    );

    // oras pushes the layout; Cairn installs it.
    std::fs::copy(&file, work.path().join("random.wasm")).unwrap();
    std::fs::write(work.path().join("config.json"), r#"{"created":"2026-01-01T00:00:00Z","architecture":"wasm","os":"wasip2","layerDigests":[]}"#).unwrap();
    let out = Command::new(&oras)
        .current_dir(work.path())
        .args([
            "push",
            "--plain-http",
            "--no-tty",
            "--config",
            "config.json:application/vnd.wasm.config.v0+json",
        ])
        .arg(registry.plain("oras/random:fromoras"))
        .arg("random.wasm:application/wasm")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "oras push: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let user = Sandbox::new("user");
    let out = user.ok(&[
        "plugin",
        "install",
        &format!("{}:fromoras", registry.url("oras/random")),
    ]);
    assert_contains(
        &out,
        &[&format!(
            "Installed random@{version} (sha256 {})",
            sha256_hex(&bytes)
        )],
    );

    // oras's default artifact (not the Wasm layout) is refused by name.
    let out = Command::new(&oras)
        .current_dir(work.path())
        .args(["push", "--plain-http", "--no-tty"])
        .arg(registry.plain("oras/plain:1.0.0"))
        .arg("random.wasm")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "oras push: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = user.fails(&[
        "plugin",
        "install",
        &format!("{}:1.0.0", registry.url("oras/plain")),
    ]);
    assert_contains(&err, &["oras/plain:1.0.0 is not a Wasm component artifact"]);
}

#[test]
fn urls_need_a_checksum_and_must_match_it() {
    let (file, bytes, version) = random_provider();
    let user = Sandbox::new("user");
    let err = user.fails(&["plugin", "install", "https://example.invalid/random.wasm"]);
    assert_contains(&err, &["needs --checksum sha256:HEX"]);
    let err = user.fails(&[
        "plugin",
        "install",
        "http://example.invalid/random.wasm",
        "--checksum",
        &format!("sha256:{}", sha256_hex(&bytes)),
    ]);
    assert_contains(
        &err,
        &[
            "http://example.invalid/random.wasm",
            "plain http is used only for loopback",
        ],
    );

    // A loopback server of the test's own serving the file.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let body = bytes.clone();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    let url = format!("http://127.0.0.1:{port}/random.wasm");
    let wrong = format!("sha256:{}", "0".repeat(64));
    let err = user.fails(&["plugin", "install", &url, "--checksum", &wrong]);
    assert_contains(&err, &[&url, &wrong, &sha256_hex(&bytes)]);
    assert!(!user.home.join("plugins/random").exists());
    let out = user.ok(&[
        "plugin",
        "install",
        &url,
        "--checksum",
        &format!("sha256:{}", sha256_hex(&bytes)),
    ]);
    assert_contains(
        &out,
        &[
            &format!("Installed random@{version}"),
            &format!("from {url}"),
        ],
    );
    let _ = file;
}

#[test]
fn registry_login_stores_credentials_for_the_owner_only() {
    let user = Sandbox::new("user");
    let out = user.run_with_stdin(
        &[
            "plugin",
            "registry",
            "login",
            "registry.example:5000",
            "-u",
            "alice",
            "--password-stdin",
        ],
        b"p4ssw0rd-secret\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = user.home.join("registry-auth.json");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let err = user.fails(&[
        "plugin",
        "registry",
        "login",
        "registry.example",
        "-u",
        "alice",
    ]);
    assert_contains(&err, &["--password-stdin"]);
    let err = user.fails(&[
        "plugin",
        "registry",
        "login",
        "bad host!",
        "-u",
        "a",
        "--password-stdin",
    ]);
    assert_contains(&err, &["\"bad host!\" is not a registry"]);
    assert_contains(
        &user.ok(&["plugin", "registry", "logout", "registry.example:5000"]),
        &["Forgot the credentials for registry.example:5000"],
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}
