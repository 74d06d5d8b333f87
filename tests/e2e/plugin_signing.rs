//! `cairn plugin sign`, `verify` and `trust` as a user runs them: a provider signed in place or
//! to another file, verified by the right key and refused by the wrong one, signatures by two
//! keys side by side, a signed provider still installing, key files of the wrong kind named in
//! the error, and the trust policy's entries added, listed and removed.

use cairn_registry::signature::SecretKeyFile;

use crate::support::*;

/// A key pair written as PEM files `NAME.key` and `NAME.pub` in the sandbox's project; its
/// fingerprint.
fn key_pair(sandbox: &Sandbox, name: &str) -> String {
    let key = SecretKeyFile::generate();
    sandbox.write(&format!("{name}.key"), &key.to_pem());
    sandbox.write(&format!("{name}.pub"), &key.public_key().to_pem());
    key.public_key().fingerprint()
}

#[test]
fn sign_verify_and_wrong_keys() {
    let sandbox = Sandbox::new("signing");
    let alice = key_pair(&sandbox, "alice");
    let bob = key_pair(&sandbox, "bob");
    let unsigned = std::fs::read(example_wasm("random")).unwrap();
    std::fs::write(sandbox.project.join("random.wasm"), &unsigned).unwrap();

    // To another file: the input is left as it was.
    let out = sandbox.ok(&[
        "plugin",
        "sign",
        "random.wasm",
        "--key",
        "alice.key",
        "-o",
        "signed.wasm",
    ]);
    assert_contains(
        &out,
        &[
            &format!("Signed random.wasm with {alice}"),
            "key id ",
            "written to ",
        ],
    );
    assert_eq!(
        std::fs::read(sandbox.project.join("random.wasm")).unwrap(),
        unsigned
    );
    let signed = std::fs::read(sandbox.project.join("signed.wasm")).unwrap();
    // The signature comes first; the component follows it unchanged.
    assert!(signed.len() > unsigned.len() && signed.ends_with(&unsigned[8..]));

    let out = sandbox.ok(&["plugin", "verify", "signed.wasm", "--key", "alice.pub"]);
    assert_contains(&out, &[&format!("Signature valid: signed by {alice}")]);
    // A fingerprint names a key as well as its file does.
    sandbox.ok(&["plugin", "verify", "signed.wasm", "--key", &alice]);

    let err = sandbox.fails(&["plugin", "verify", "signed.wasm", "--key", "bob.pub"]);
    assert_contains(
        &err,
        &[
            "verifying signed.wasm",
            &format!("no valid signature for key {bob}"),
        ],
    );
    let err = sandbox.fails(&["plugin", "verify", "random.wasm", "--key", "alice.pub"]);
    assert_contains(&err, &["not signed: no `signature` section"]);
    let err = sandbox.fails(&["plugin", "verify", "signed.wasm"]);
    assert_contains(&err, &["--key"]);

    // A tampered component is refused.
    let mut tampered = signed.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    std::fs::write(sandbox.project.join("tampered.wasm"), &tampered).unwrap();
    let err = sandbox.fails(&["plugin", "verify", "tampered.wasm", "--key", "alice.pub"]);
    assert_contains(&err, &[&format!("no valid signature for key {alice}")]);

    // In place, a second signature next to the first: either key verifies it; the first key
    // given that signed is named.
    let out = sandbox.ok(&["plugin", "sign", "signed.wasm", "--key", "bob.key"]);
    assert_contains(&out, &[&format!("Signed signed.wasm with {bob}")]);
    for (keys, signer) in [
        (vec!["alice.pub"], &alice),
        (vec!["bob.pub"], &bob),
        (vec!["bob.pub", "alice.pub"], &bob),
    ] {
        let mut args = vec!["plugin", "verify", "signed.wasm"];
        for key in keys {
            args.extend(["--key", key]);
        }
        let out = sandbox.ok(&args);
        assert_contains(&out, &[&format!("signed by {signer}")]);
    }
    // Signing again with the same key changes nothing.
    let before = std::fs::read(sandbox.project.join("signed.wasm")).unwrap();
    let out = sandbox.ok(&["plugin", "sign", "signed.wasm", "--key", "alice.key"]);
    assert_contains(&out, &[&format!("already signed by {alice}; unchanged")]);
    assert_eq!(
        std::fs::read(sandbox.project.join("signed.wasm")).unwrap(),
        before
    );

    // Keys of the wrong kind, and files that are no keys, are named.
    let err = sandbox.fails(&["plugin", "sign", "random.wasm", "--key", "alice.pub"]);
    assert_contains(
        &err,
        &["alice.pub: a public key; signing needs the secret key"],
    );
    let err = sandbox.fails(&["plugin", "verify", "signed.wasm", "--key", "alice.key"]);
    assert_contains(&err, &["alice.key: a secret key, not a public key"]);
    sandbox.write("junk.key", "not a key");
    let err = sandbox.fails(&["plugin", "sign", "random.wasm", "--key", "junk.key"]);
    assert_contains(&err, &["junk.key: not a secret key Cairn reads"]);
    let err = sandbox.fails(&["plugin", "sign", "random.wasm", "--key", "missing.key"]);
    assert_contains(&err, &["missing.key: cannot read it"]);

    // A signed provider is still a provider: it installs and runs its checks as before.
    let out = sandbox.ok(&["plugin", "install", "signed.wasm"]);
    assert_contains(&out, &["Installed random@"]);
}

#[test]
fn trust_entries_are_added_listed_and_removed() {
    let sandbox = Sandbox::new("trust");
    let alice = key_pair(&sandbox, "alice");
    let bob = key_pair(&sandbox, "bob");

    let out = sandbox.ok(&["plugin", "trust", "ls"]);
    assert_contains(&out, &["No trusted keys"]);
    let out = sandbox.ok(&[
        "plugin",
        "trust",
        "add",
        "alice.pub",
        "--source",
        "oci://Registry.Example:5000/acme/",
        "--require",
    ]);
    assert_contains(
        &out,
        &[&format!(
            "Trusted {alice} for oci://registry.example:5000/acme (a valid signature by a trusted key is required)"
        )],
    );
    sandbox.ok(&["plugin", "trust", "add", &bob, "--source", "oci://ghcr.io"]);
    sandbox.ok(&[
        "plugin",
        "trust",
        "add",
        "alice.pub",
        "--source",
        "oci://ghcr.io/acme",
    ]);

    let out = sandbox.ok(&["plugin", "trust", "ls"]);
    assert_contains(
        &out,
        &[
            "KEY",
            &format!("{alice} yes      oci://registry.example:5000/acme"),
            &format!("{bob} no       oci://ghcr.io"),
        ],
    );
    let listed: serde_json::Value =
        serde_json::from_str(&sandbox.ok(&["plugin", "trust", "ls", "--json"])).unwrap();
    assert_eq!(
        listed,
        serde_json::json!([
            {"key": alice, "source": "oci://registry.example:5000/acme", "require": true},
            {"key": bob, "source": "oci://ghcr.io", "require": false},
            {"key": alice, "source": "oci://ghcr.io/acme", "require": false},
        ])
    );
    // The file is the policy the install path reads.
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sandbox.home.join("trust.json")).unwrap()).unwrap();
    assert_eq!(file["entries"], listed);

    // Adding the same key and source again updates the entry.
    let out = sandbox.ok(&[
        "plugin",
        "trust",
        "add",
        "bob.pub",
        "--source",
        "oci://ghcr.io/",
        "--require",
    ]);
    assert_contains(&out, &[&format!("Updated {bob} for oci://ghcr.io")]);

    // Sources that are no registry prefix are refused.
    for source in ["https://ghcr.io/acme", "oci://ghcr.io/acme:1.0", "ghcr.io"] {
        let err = sandbox.fails(&["plugin", "trust", "add", "alice.pub", "--source", source]);
        assert_contains(&err, &["is not a trust source"]);
    }
    let err = sandbox.fails(&[
        "plugin",
        "trust",
        "add",
        "alice.key",
        "--source",
        "oci://ghcr.io",
    ]);
    assert_contains(&err, &["alice.key: a secret key, not a public key"]);

    // Removing: one source, then every source of a key; a key not trusted is an error.
    let out = sandbox.ok(&[
        "plugin",
        "trust",
        "rm",
        &alice,
        "--source",
        "oci://ghcr.io/acme",
    ]);
    assert_contains(
        &out,
        &[&format!(
            "No longer trusting {alice} for oci://ghcr.io/acme"
        )],
    );
    let out = sandbox.ok(&["plugin", "trust", "rm", &alice]);
    assert_contains(
        &out,
        &[&format!(
            "No longer trusting {alice} for oci://registry.example:5000/acme"
        )],
    );
    let err = sandbox.fails(&["plugin", "trust", "rm", &alice]);
    assert_contains(&err, &["is not trusted"]);
    let err = sandbox.fails(&["plugin", "trust", "rm", "ed25519:nothex"]);
    assert_contains(&err, &["is not a key fingerprint"]);
    let listed: serde_json::Value =
        serde_json::from_str(&sandbox.ok(&["plugin", "trust", "ls", "--json"])).unwrap();
    assert_eq!(
        listed,
        serde_json::json!([{"key": bob, "source": "oci://ghcr.io", "require": true}])
    );
}
