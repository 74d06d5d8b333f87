//! Signatures against the real `wasmsign2` (the CLI of wasmsign2-cli 0.2.8; `$CAIRN_WASMSIGN2`,
//! else `target/tools/bin/wasmsign2`, else PATH; skipped when absent): what Cairn signs it
//! verifies, what it signs Cairn verifies, with its raw keys and with OpenSSH keys from
//! `ssh-keygen`, one signature added next to the other's, and a tampered manifest refused by
//! both.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cairn_registry::RegistryError;
use cairn_registry::signature::{PublicKey, SecretKeyFile, sign, verify};

const MANIFEST: &str = r#"{"name":"interop","version":"0.1.0","wit":"0.3.0"}"#;

fn skip(why: &str) {
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

fn wasmsign2() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CAIRN_WASMSIGN2") {
        return Some(PathBuf::from(path));
    }
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tools/bin/wasmsign2");
    if tools.is_file() {
        return Some(tools);
    }
    find_on_path("wasmsign2")
}

/// A component whose nested core module carries a `cairn:manifest` section, as providers do.
fn component() -> Vec<u8> {
    let escaped: String = MANIFEST.bytes().map(|b| format!("\\{b:02x}")).collect();
    wat::parse_str(format!(
        "(component (core module (func (export \"f\")) (@custom \"cairn:manifest\" \"{escaped}\")))"
    ))
    .unwrap()
}

/// `bytes` with one byte of the manifest changed.
fn tamper_manifest(bytes: &[u8]) -> Vec<u8> {
    let at = bytes
        .windows(MANIFEST.len())
        .position(|w| w == MANIFEST.as_bytes())
        .expect("the manifest is in the component");
    let mut tampered = bytes.to_vec();
    tampered[at + 9] ^= 0x01;
    tampered
}

fn run(program: &Path, args: &[&str], dir: &Path) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", program.display()))
}

fn ok(program: &Path, args: &[&str], dir: &Path) -> String {
    let out = run(program, args, dir);
    assert!(
        out.status.success(),
        "{} {args:?} failed:\n{}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails(program: &Path, args: &[&str], dir: &Path) -> String {
    let out = run(program, args, dir);
    assert!(
        !out.status.success(),
        "{} {args:?} unexpectedly succeeded",
        program.display()
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

#[test]
fn raw_keys_interoperate_both_ways() {
    let Some(tool) = wasmsign2() else {
        return skip("no wasmsign2 (cargo install wasmsign2-cli --version 0.2.8)");
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("unsigned.wasm"), component()).unwrap();
    ok(&tool, &["keygen", "-k", "a.sec", "-K", "a.pub"], d);
    ok(&tool, &["keygen", "-k", "b.sec", "-K", "b.pub"], d);
    let a = SecretKeyFile::load(&d.join("a.sec")).unwrap();
    let a_pub = PublicKey::load(&d.join("a.pub")).unwrap();
    let b = SecretKeyFile::load(&d.join("b.sec")).unwrap();
    let b_pub = PublicKey::load(&d.join("b.pub")).unwrap();
    assert_eq!(a.public_key(), &a_pub);

    // Cairn signs; wasmsign2 verifies.
    let by_cairn = sign(&read(d, "unsigned.wasm"), &a).unwrap();
    std::fs::write(d.join("cairn.wasm"), &by_cairn).unwrap();
    let out = ok(&tool, &["verify", "-i", "cairn.wasm", "-K", "a.pub"], d);
    assert!(out.contains("Signature is valid"), "{out}");
    fails(&tool, &["verify", "-i", "cairn.wasm", "-K", "b.pub"], d);

    // wasmsign2 signs, with the key id and without; Cairn verifies. With the key id, the two
    // tools write the same bytes (Ed25519 signatures are deterministic).
    ok(
        &tool,
        &[
            "sign",
            "-i",
            "unsigned.wasm",
            "-o",
            "tool.wasm",
            "-k",
            "a.sec",
            "-K",
            "a.pub",
        ],
        d,
    );
    assert_eq!(read(d, "tool.wasm"), by_cairn);
    ok(
        &tool,
        &[
            "sign",
            "-i",
            "unsigned.wasm",
            "-o",
            "tool-noid.wasm",
            "-k",
            "a.sec",
        ],
        d,
    );
    for file in ["tool.wasm", "tool-noid.wasm"] {
        let signer = verify(&read(d, file), std::slice::from_ref(&a_pub)).unwrap();
        assert_eq!(signer.fingerprint, a_pub.fingerprint(), "{file}");
        let err = verify(&read(d, file), std::slice::from_ref(&b_pub)).unwrap_err();
        assert!(
            matches!(err, RegistryError::NoValidSignature { .. }),
            "{file}: {err}"
        );
    }

    // A tampered manifest: both refuse.
    for file in ["cairn.wasm", "tool-noid.wasm"] {
        let name = format!("tampered-{file}");
        std::fs::write(d.join(&name), tamper_manifest(&read(d, file))).unwrap();
        let err = fails(&tool, &["verify", "-i", &name, "-K", "a.pub"], d);
        assert!(err.contains("No valid signatures"), "{err}");
        let err = verify(&read(d, &name), std::slice::from_ref(&a_pub)).unwrap_err();
        assert!(
            matches!(err, RegistryError::NoValidSignature { .. }),
            "{name}: {err}"
        );
    }

    // Unsigned: both say so.
    let err = fails(&tool, &["verify", "-i", "unsigned.wasm", "-K", "a.pub"], d);
    assert!(err.contains("No signatures"), "{err}");
    assert!(matches!(
        verify(&read(d, "unsigned.wasm"), std::slice::from_ref(&a_pub)).unwrap_err(),
        RegistryError::Unsigned
    ));

    // Multiple signatures: each tool adds its signature next to the other's.
    ok(
        &tool,
        &[
            "sign",
            "-i",
            "cairn.wasm",
            "-o",
            "cairn-then-tool.wasm",
            "-k",
            "b.sec",
            "-K",
            "b.pub",
        ],
        d,
    );
    let then_cairn = sign(&read(d, "tool-noid.wasm"), &b).unwrap();
    std::fs::write(d.join("tool-then-cairn.wasm"), then_cairn).unwrap();
    for file in ["cairn-then-tool.wasm", "tool-then-cairn.wasm"] {
        for (key, public) in [("a.pub", &a_pub), ("b.pub", &b_pub)] {
            ok(&tool, &["verify", "-i", file, "-K", key], d);
            assert_eq!(
                verify(&read(d, file), std::slice::from_ref(public))
                    .unwrap()
                    .fingerprint,
                public.fingerprint(),
                "{file} {key}"
            );
        }
    }
}

#[test]
fn openssh_keys_interoperate_both_ways() {
    let Some(tool) = wasmsign2() else {
        return skip("no wasmsign2 (cargo install wasmsign2-cli --version 0.2.8)");
    };
    let Some(ssh_keygen) = find_on_path("ssh-keygen") else {
        return skip("no ssh-keygen");
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("unsigned.wasm"), component()).unwrap();
    ok(
        &ssh_keygen,
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "cairn test",
            "-f",
            "id_ed25519",
        ],
        d,
    );
    let secret = SecretKeyFile::load(&d.join("id_ed25519")).unwrap();
    let public = PublicKey::load(&d.join("id_ed25519.pub")).unwrap();
    assert_eq!(secret.public_key(), &public);

    std::fs::write(
        d.join("cairn.wasm"),
        sign(&read(d, "unsigned.wasm"), &secret).unwrap(),
    )
    .unwrap();
    let out = ok(
        &tool,
        &[
            "verify",
            "--ssh",
            "-K",
            "id_ed25519.pub",
            "-i",
            "cairn.wasm",
        ],
        d,
    );
    assert!(out.contains("Signature is valid"), "{out}");

    ok(
        &tool,
        &[
            "sign",
            "--ssh",
            "-k",
            "id_ed25519",
            "-K",
            "id_ed25519.pub",
            "-i",
            "unsigned.wasm",
            "-o",
            "tool.wasm",
        ],
        d,
    );
    assert_eq!(
        verify(&read(d, "tool.wasm"), std::slice::from_ref(&public))
            .unwrap()
            .fingerprint,
        public.fingerprint()
    );

    std::fs::write(
        d.join("tampered.wasm"),
        tamper_manifest(&read(d, "tool.wasm")),
    )
    .unwrap();
    fails(
        &tool,
        &[
            "verify",
            "--ssh",
            "-K",
            "id_ed25519.pub",
            "-i",
            "tampered.wasm",
        ],
        d,
    );
    assert!(verify(&read(d, "tampered.wasm"), &[public]).is_err());

    // A passphrase-protected key is refused with a way out, never misread.
    ok(
        &ssh_keygen,
        &["-q", "-t", "ed25519", "-N", "a passphrase", "-f", "locked"],
        d,
    );
    let err = SecretKeyFile::load(&d.join("locked"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("passphrase"), "{err}");
}

/// A real provider component (the examples' build, when it is there) signed by each tool
/// verifies with the other.
#[test]
fn a_built_provider_round_trips() {
    let Some(tool) = wasmsign2() else {
        return skip("no wasmsign2");
    };
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/guests/wasm32-wasip2/release/random.wasm");
    let Ok(bytes) = std::fs::read(&built) else {
        return skip("no built random.wasm (tests/run.sh builds the examples)");
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("random.wasm"), &bytes).unwrap();
    ok(&tool, &["keygen", "-k", "a.sec", "-K", "a.pub"], d);
    let key = SecretKeyFile::load(&d.join("a.sec")).unwrap();
    let signed = sign(&bytes, &key).unwrap();
    // The provider follows the signature byte for byte: nothing was re-encoded.
    assert!(signed.ends_with(&bytes[8..]));
    std::fs::write(d.join("cairn.wasm"), &signed).unwrap();
    ok(&tool, &["verify", "-i", "cairn.wasm", "-K", "a.pub"], d);
    ok(
        &tool,
        &[
            "sign",
            "-i",
            "random.wasm",
            "-o",
            "tool.wasm",
            "-k",
            "a.sec",
            "-K",
            "a.pub",
        ],
        d,
    );
    assert_eq!(read(d, "tool.wasm"), signed);
    assert!(
        verify(
            &read(d, "tool.wasm"),
            std::slice::from_ref(key.public_key())
        )
        .is_ok()
    );
}
