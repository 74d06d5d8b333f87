//! Providers found by name in registries and pinned in `cairn.lock`: the first deployment
//! resolves and locks them (and says what it trusted); a fresh Cairn home fetches exactly the
//! locked digests; a registry that now serves other bytes for a locked version is refused with
//! both digests named; `--offline` fetches nothing but what a mirror directory holds; and
//! `cairn plugin lock` / `mirror` check, update and copy the lock's providers.

use crate::ociregistry::OciRegistry;
use crate::support::*;

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The quickstart program (providers `random` and `file`) with nothing installed, its registry
/// listed in the project's Pulumi.yaml (`config: cairn:registries`).
fn project_using(registry: &OciRegistry) -> Sandbox {
    let sandbox = program_stack("locked", &example_wasm("quickstart"), &[]);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: locked\nruntime: wasm\nmain: {}\nconfig:\n  cairn:registries:\n    value:\n      - {}\n",
            example_wasm("quickstart").display(),
            registry.url("cairn")
        ),
    );
    grant_out_dir(&sandbox);
    sandbox
}

fn publish(registry: &OciRegistry, file: &std::path::Path, repo: &str) {
    Sandbox::new("publisher").ok(&[
        "plugin",
        "publish",
        file.to_str().unwrap(),
        &registry.url(repo),
    ]);
}

/// The same component with one more custom section: other bytes, same name and version.
fn rebuilt(file: &std::path::Path, dir: &std::path::Path) -> std::path::PathBuf {
    let mut bytes = std::fs::read(file).unwrap();
    let name = b"rebuilt";
    let payload = b"other bytes";
    bytes.push(0);
    bytes.push((1 + name.len() + payload.len()) as u8);
    bytes.push(name.len() as u8);
    bytes.extend_from_slice(name);
    bytes.extend_from_slice(payload);
    let out = dir.join("random.wasm");
    std::fs::write(&out, bytes).unwrap();
    out
}

/// A fresh Cairn home for the same project and stack: no plugins, no registries.
fn forget_plugins(sandbox: &Sandbox) {
    let _ = std::fs::remove_dir_all(sandbox.home.join("plugins"));
}

#[test]
fn the_first_deployment_locks_and_a_fresh_home_fetches_exactly_the_lock() {
    let registry = OciRegistry::start();
    let (random, file) = (example_wasm("random"), example_wasm("file"));
    publish(&registry, &random, "cairn/random");
    publish(&registry, &file, "cairn/file");
    let sandbox = project_using(&registry);

    let out = sandbox.ok(&["up", "--yes"]);
    let lock_path = sandbox.project.join("cairn.lock");
    assert_contains(
        &out,
        &[
            "cairn.lock: locked random",
            "cairn.lock: locked file",
            &registry.url("cairn/random"),
        ],
    );
    let lock: serde_json::Value = serde_json::from_str(&sandbox.read("cairn.lock")).unwrap();
    assert_eq!(lock["version"], 1);
    let entries = lock["providers"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["name"], "file");
    assert_eq!(entries[1]["name"], "random");
    assert_eq!(entries[1]["source"], registry.url("cairn/random"));
    assert_eq!(entries[1]["requirement"], "*");
    assert_eq!(
        entries[1]["digest"],
        format!("sha256:{}", sha256_hex(&std::fs::read(&random).unwrap()))
    );

    // A fresh home: the lock alone says where and what; nothing else to do.
    forget_plugins(&sandbox);
    let out = sandbox.ok(&["preview", "--expect-no-changes"]);
    assert!(
        !out.contains("locked random"),
        "nothing new was locked: {out}"
    );
    assert!(sandbox.home.join("plugins/random").is_dir());
    let before = std::fs::read(&lock_path).unwrap();

    // The registry now serves other bytes for the locked version: refused, both digests named.
    let work = tempfile::tempdir().unwrap();
    let other = rebuilt(&random, work.path());
    publish(&registry, &other, "cairn/random");
    forget_plugins(&sandbox);
    let err = sandbox.fails(&["preview"]);
    assert_contains(
        &err,
        &[
            &format!("sha256:{}", sha256_hex(&std::fs::read(&other).unwrap())),
            &format!("sha256:{}", sha256_hex(&std::fs::read(&random).unwrap())),
            "lock pins",
            "cairn plugin lock --update random",
        ],
    );
    assert_eq!(
        std::fs::read(&lock_path).unwrap(),
        before,
        "the lock is unchanged"
    );
    assert!(
        !sandbox.home.join("plugins/random").exists(),
        "nothing unverified stored"
    );

    // `plugin lock --update random` takes the new bytes, saying what changed.
    let out = sandbox.ok(&["plugin", "lock", "--update", "random"]);
    assert_contains(
        &out,
        &[
            &format!("sha256:{}", sha256_hex(&std::fs::read(&other).unwrap())),
            ", was ",
        ],
    );
    sandbox.ok(&["preview"]);
}

#[test]
fn offline_uses_only_mirror_directories_and_mirrors_keep_the_lock_sources() {
    let registry = OciRegistry::start();
    publish(&registry, &example_wasm("random"), "cairn/random");
    publish(&registry, &example_wasm("file"), "cairn/file");
    let sandbox = project_using(&registry);
    sandbox.ok(&["preview"]);
    let lock_before = sandbox.read("cairn.lock");

    // Offline in a fresh home, with no mirror: nothing fetched, the reason named.
    forget_plugins(&sandbox);
    let err = sandbox.fails(&["preview", "--offline"]);
    assert_contains(&err, &["offline", "cairn/"]);

    // Mirror the lock's providers into a directory, then use it as a mirror, offline.
    let mirror = tempfile::tempdir().unwrap();
    let out = sandbox.ok(&["plugin", "mirror", "--to", mirror.path().to_str().unwrap()]);
    assert_contains(&out, &["random", "file", "sha256"]);
    sandbox.ok(&[
        "plugin",
        "registry",
        "add",
        &format!("file://{}", mirror.path().display()),
        "--mirror-of",
        &registry.url("cairn"),
    ]);
    forget_plugins(&sandbox);
    sandbox.ok(&["preview", "--offline"]);
    assert_eq!(
        sandbox.read("cairn.lock"),
        lock_before,
        "the lock's sources stay the same"
    );

    // A second registry as a mirror: `mirror --to oci://…` copies, and it serves first.
    let second = OciRegistry::start();
    sandbox.ok(&["plugin", "mirror", "--to", &second.url("copy")]);
    let (status, _) = second.get("/v2/copy/random/tags/list", "*/*");
    assert_eq!(status, 200);
    sandbox.ok(&[
        "plugin",
        "registry",
        "rm",
        &format!("file://{}", mirror.path().display()),
    ]);
    sandbox.ok(&[
        "plugin",
        "registry",
        "add",
        &second.url("copy"),
        "--mirror-of",
        &registry.url("cairn"),
    ]);
    drop(registry); // the origin is gone: the mirror alone serves
    forget_plugins(&sandbox);
    sandbox.ok(&["preview"]);
    assert_eq!(sandbox.read("cairn.lock"), lock_before);
}

#[test]
fn install_by_name_takes_the_newest_fitting_version() {
    let registry = OciRegistry::start();
    let random = example_wasm("random");
    let bytes = std::fs::read(&random).unwrap();
    let version = semver::Version::parse(&version_of(&random)).unwrap();
    publish(&registry, &random, "cairn/random");
    // A tag that is not a version is ignored.
    Sandbox::new("p").ok(&[
        "plugin",
        "publish",
        random.to_str().unwrap(),
        &format!("{}:latest", registry.url("cairn/random")),
    ]);
    let user = Sandbox::new("user");
    let err = user.fails(&["plugin", "install", "random"]);
    assert_contains(
        &err,
        &[
            "no registry to look random up in",
            "cairn plugin registry add",
        ],
    );
    user.ok(&["plugin", "registry", "add", &registry.url("cairn")]);
    assert_contains(
        &user.ok(&["plugin", "registry", "ls"]),
        &[&registry.url("cairn")],
    );
    let out = user.ok(&[
        "plugin",
        "install",
        &format!("random@^{}.{}", version.major, version.minor),
    ]);
    assert_contains(
        &out,
        &[&format!(
            "Installed random@{version} (sha256 {})",
            sha256_hex(&bytes)
        )],
    );
    let err = user.fails(&["plugin", "install", &format!("random@>{version}")]);
    assert_contains(
        &err,
        &[
            &format!("no version of random matching >{version}"),
            &registry.url("cairn"),
        ],
    );
    let err = user.fails(&["plugin", "install", "random@not-a-req"]);
    assert_contains(&err, &["is not a version requirement"]);
}

/// A Python program naming where its provider comes from (`plugin_download_url`, as a package's
/// `server` does): with nothing installed and no registry listed, the provider is fetched from
/// there, whether a registry prefix or a web address serving `<name>-<version>.wasm`, and
/// locked.
#[test]
fn plugin_download_url_fetches_and_locks() {
    let registry = OciRegistry::start();
    let random = example_wasm("random");
    let bytes = std::fs::read(&random).unwrap();
    publish(&registry, &random, "cairn/random");
    let version = version_of(&random);

    // A loopback web server holding the same file under the conventional name.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (served, wanted) = (bytes.clone(), format!("/providers/random-{version}.wasm"));
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).into_owned();
            if request.starts_with(&format!("GET {wanted} ")) {
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    served.len()
                );
                let _ = stream.write_all(&served);
            } else {
                let _ = write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
        }
    });

    for (url, source) in [
        (registry.url("cairn"), registry.url("cairn/random")),
        (
            format!("http://127.0.0.1:{port}/providers"),
            format!("http://127.0.0.1:{port}/providers/random-{version}.wasm"),
        ),
    ] {
        let sandbox = Sandbox::new("download-url");
        let python = python();
        let venv = python.parent().unwrap().parent().unwrap();
        sandbox.write(
            "__main__.py",
            &format!(
                "import pulumi\nimport pulumi_random as random\n\npet = random.RandomPet(\"pet\", length=2, opts=pulumi.ResourceOptions(plugin_download_url={url:?}))\npulumi.export(\"pet\", pet.id)\n"
            ),
        );
        sandbox.write(
            "Pulumi.yaml",
            &format!(
                "name: download-url\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
                venv.display()
            ),
        );
        sandbox.ok(&["stack", "init", "dev"]);
        let out = sandbox.ok(&["up", "--yes"]);
        assert_contains(&out, &[&format!("locked random {version} from {source}")]);
        let lock: serde_json::Value = serde_json::from_str(&sandbox.read("cairn.lock")).unwrap();
        assert_eq!(lock["providers"][0]["source"], source);
        assert_eq!(
            lock["providers"][0]["digest"],
            format!("sha256:{}", sha256_hex(&bytes))
        );
        // A fresh home fetches the locked bytes from the same place.
        forget_plugins(&sandbox);
        sandbox.ok(&["preview", "--expect-no-changes"]);
    }
}

/// The trust policy applies to what is fetched: a source that requires a signature gets only
/// signed components installed, the lock records the signer, and a locked provider no trusted
/// key verifies any more is refused.
#[test]
fn required_signatures_are_enforced_and_locked() {
    use cairn_registry::signature::SecretKeyFile;
    let registry = OciRegistry::start();
    let sandbox = project_using(&registry);
    let key = SecretKeyFile::generate();
    sandbox.write("release.key", &key.to_pem());
    sandbox.write("release.pub", &key.public_key().to_pem());
    let fingerprint = key.public_key().fingerprint();
    sandbox.ok(&[
        "plugin",
        "trust",
        "add",
        "release.pub",
        "--source",
        &registry.url("cairn"),
        "--require",
    ]);

    // Unsigned: refused, nothing stored, nothing locked.
    publish(&registry, &example_wasm("random"), "cairn/random");
    publish(&registry, &example_wasm("file"), "cairn/file");
    let err = sandbox.fails(&[
        "plugin",
        "install",
        &format!(
            "{}:{}",
            registry.url("cairn/random"),
            version_of(&example_wasm("random"))
        ),
    ]);
    assert_contains(&err, &[&registry.url("cairn/random"), &fingerprint]);
    let err = sandbox.fails(&["preview"]);
    assert_contains(&err, &[&fingerprint]);
    assert!(!sandbox.project.join("cairn.lock").exists());
    assert!(!sandbox.home.join("plugins/random").exists());

    // Signed and republished: the deployment locks it with its signer.
    for name in ["random", "file"] {
        let copy = sandbox.project.join(format!("{name}.wasm"));
        std::fs::copy(example_wasm(name), &copy).unwrap();
        sandbox.ok(&[
            "plugin",
            "sign",
            copy.to_str().unwrap(),
            "--key",
            "release.key",
        ]);
        publish(&registry, &copy, &format!("cairn/{name}"));
    }
    let out = sandbox.ok(&["preview"]);
    assert_contains(&out, &[&format!("signed by {fingerprint}")]);
    let lock: serde_json::Value = serde_json::from_str(&sandbox.read("cairn.lock")).unwrap();
    assert_eq!(lock["providers"][1]["signer"], fingerprint.as_str());

    // The key is no longer trusted: the locked signer no longer verifies, so the fetch is refused.
    sandbox.ok(&["plugin", "trust", "rm", &fingerprint]);
    forget_plugins(&sandbox);
    let err = sandbox.fails(&["preview"]);
    assert_contains(
        &err,
        &[&format!("cairn.lock records it signed by {fingerprint}")],
    );
}

fn version_of(file: &std::path::Path) -> String {
    let out = Sandbox::new("inspect").ok(&["plugin", "inspect", file.to_str().unwrap(), "--json"]);
    let inspected: serde_json::Value = serde_json::from_str(&out).unwrap();
    inspected["version"].as_str().unwrap().to_owned()
}
