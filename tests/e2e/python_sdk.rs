//! Providers written in Python with Cairn's Python SDK (guest-sdk/python), built into components
//! by componentize-py: the example `python-random` (RandomInteger, RandomString, RandomUuid with
//! the random package's tokens) installs like a Rust provider and serves the published
//! `pulumi_random` SDK unchanged — create, no-change preview, replacement, a check failure and
//! an ordinary failure reported as errors (not traps), destroy.

use std::path::PathBuf;
use std::process::Command;

use crate::support::*;

/// `examples/providers/python-random` built with the SDK (once per test binary).
pub fn python_random() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = repo().join("target/guests/python/random.wasm");
            std::fs::create_dir_all(out.parent().unwrap()).unwrap();
            let built = Command::new(python())
                .args(["-m", "cairn_sdk.build"])
                .arg(repo().join("examples/providers/python-random"))
                .arg("-o")
                .arg(&out)
                .env("PYTHONPATH", repo().join("guest-sdk/python"))
                .output()
                .expect("running the Python SDK's build");
            assert!(
                built.status.success(),
                "building python-random: {}{}",
                String::from_utf8_lossy(&built.stdout),
                String::from_utf8_lossy(&built.stderr)
            );
            out
        })
        .clone()
}

const PROGRAM: &str = r#"
import pulumi
import pulumi_random as random

config = pulumi.Config()
length = config.get_int("length") or 16

n = random.RandomInteger("n", min=1, max=6)
s = random.RandomString("s", length=length, special=False, min_numeric=2)
u = random.RandomUuid("u")
pulumi.export("integer", n.result)
pulumi.export("string", s.result)
pulumi.export("uuid", u.result)

bad = config.get("bad")
if bad == "check":
    random.RandomString("bad", length=2, min_upper=3)
if bad == "empty":
    random.RandomString("empty", length=4, upper=False, lower=False, numeric=False, special=False)
"#;

#[test]
fn the_published_random_sdk_runs_on_a_python_provider() {
    let provider = python_random();
    let sandbox = Sandbox::new("python-provider");
    let venv = python();
    let venv = venv.parent().unwrap().parent().unwrap();
    sandbox.write("__main__.py", PROGRAM);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: python-provider\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
            venv.display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    let out = sandbox.ok(&["plugin", "install", provider.to_str().unwrap()]);
    assert_contains(&out, &["Installed random@4.21.4"]);
    let inspected = sandbox.ok(&["plugin", "inspect", "random"]);
    assert_contains(
        &inspected,
        &[
            "random:index/randomInteger:RandomInteger",
            "random:index/randomString:RandomString",
            "random:index/randomUuid:RandomUuid",
        ],
    );

    sandbox.ok(&["up", "--yes"]);
    let first = outputs(&sandbox, true);
    let integer = first["integer"].as_f64().unwrap();
    assert!(
        (1.0..=6.0).contains(&integer) && integer.fract() == 0.0,
        "{first}"
    );
    let string = first["string"].as_str().unwrap();
    assert_eq!(string.len(), 16);
    assert!(
        string.chars().all(|c| c.is_ascii_alphanumeric()),
        "{string}"
    );
    assert!(
        string.chars().filter(char::is_ascii_digit).count() >= 2,
        "{string}"
    );
    let uuid = first["uuid"].as_str().unwrap();
    assert_eq!(uuid.len(), 36);
    assert_eq!(uuid.matches('-').count(), 4);

    // Nothing changes on a second run; a changed input replaces only its resource.
    sandbox.ok(&["preview", "--expect-no-changes"]);
    sandbox.ok(&["config", "set", "length", "20"]);
    sandbox.ok(&["up", "--yes"]);
    let after = outputs(&sandbox, true);
    assert_eq!(after["string"].as_str().unwrap().len(), 20);
    assert_eq!(after["uuid"], first["uuid"]);
    assert_eq!(after["integer"], first["integer"]);

    // A check failure names the property; an ordinary failure is an error, not a trap.
    sandbox.ok(&["config", "set", "bad", "check"]);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(&err, &["length", "less than the sum of the minimums"]);
    sandbox.ok(&["config", "set", "bad", "empty"]);
    let err = sandbox.fails(&["up", "--yes"]);
    assert_contains(&err, &["the character set is empty"]);
    assert!(!err.contains("trap"), "{err}");
    sandbox.ok(&["config", "rm", "bad"]);

    sandbox.ok(&["destroy", "--yes"]);
    let state = sandbox.ok(&["stack", "export"]);
    assert!(!state.contains("RandomString"), "{state}");
}
