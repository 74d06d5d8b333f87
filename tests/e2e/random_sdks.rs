//! Unmodified programs written with the published `random` SDKs — `pulumi_random` 4.21.4 from
//! PyPI and `@pulumi/random` 4.21.2 from npm — deployed on the sandboxed wasm `random`
//! provider (examples/providers/random, 4.21.4): every resource type, keepers, secrets kept
//! out of the state file, no-op and replacing updates, imports by the documented ID formats,
//! bad inputs, destroy. And the same `@pulumi/random` on the random providers written with the
//! TypeScript and Go guest SDKs (examples/providers/typescript-random, go-random: a subset of
//! the resource types with the same tokens), each named by its source directory in
//! `plugins.providers` and built by `cairn up`.

use serde_json::Value;

use crate::support::{
    Sandbox, assert_contains, example_wasm, finished_steps, node_modules, ops_of, outputs, python,
    repo,
};

/// The program in Python. Config: `rotation` (the string's keeper), `imports` (adopt existing
/// values with the `import` option), `bad` (`length` or `import`: an invalid resource).
const PYTHON: &str = r#"
import pulumi
import pulumi_random as random

config = pulumi.Config()
rotation = config.get("rotation") or "1"

s = random.RandomString("s", length=12, special=False, min_numeric=2, keepers={"rotation": rotation})
pw = random.RandomPassword("pw", length=20, override_special="_%", min_special=2)
n = random.RandomInteger("n", min=1, max=1000, seed="fixed")
pet = random.RandomPet("pet", length=3, separator="_", prefix="dev")
rid = random.RandomId("rid", byte_length=8, prefix="p-")
uuid = random.RandomUuid("uuid")
uuid7 = random.RandomUuid7("uuid7")
sh = random.RandomShuffle("sh", inputs=["a", "b", "c", "d"], result_count=6)
b = random.RandomBytes("b", length=16)

pulumi.export("string", s.result)
pulumi.export("stringId", s.id)
pulumi.export("password", pw.result)
pulumi.export("bcryptHash", pw.bcrypt_hash)
pulumi.export("integer", n.result)
pulumi.export("pet", pet.id)
pulumi.export("idId", rid.id)
pulumi.export("idB64Url", rid.b64_url)
pulumi.export("idHex", rid.hex)
pulumi.export("idDec", rid.dec)
pulumi.export("uuid", uuid.result)
pulumi.export("uuid7", uuid7.result)
pulumi.export("shuffled", sh.results)
pulumi.export("bytesBase64", b.base64)
pulumi.export("bytesHex", b.hex)


def imported(id_):
    return pulumi.ResourceOptions(import_=id_)


if config.get_bool("imports"):
    pulumi.export("importedString", random.RandomString("imp-s", length=6, opts=imported("abc123")).result)
    pulumi.export("importedPassword", random.RandomPassword("imp-pw", length=9, opts=imported("imported!")).result)
    pulumi.export("importedInteger", random.RandomInteger("imp-n", min=1, max=9, opts=imported("4,1,9")).result)
    pulumi.export("importedId", random.RandomId("imp-id", byte_length=3, prefix="x-", opts=imported("x-,-_8B")).hex)
    pulumi.export("importedBytes", random.RandomBytes("imp-b", length=3, opts=imported("+/8B")).hex)
    pulumi.export("importedUuid", random.RandomUuid("imp-u", opts=imported("6BA7B810-9DAD-11D1-80B4-00C04FD430C8")).result)

bad = config.get("bad")
if bad == "length":
    random.RandomString("bad", length=2, min_upper=2, min_lower=1)
if bad == "import":
    random.RandomInteger("bad-imp", min=1, max=9, opts=imported("12,1,9"))
"#;

/// The same program in JavaScript, with `@pulumi/random`.
const NODE: &str = r#"
"use strict";
const pulumi = require("@pulumi/pulumi");
const random = require("@pulumi/random");

const config = new pulumi.Config();
const rotation = config.get("rotation") || "1";

const s = new random.RandomString("s", { length: 12, special: false, minNumeric: 2, keepers: { rotation } });
const pw = new random.RandomPassword("pw", { length: 20, overrideSpecial: "_%", minSpecial: 2 });
const n = new random.RandomInteger("n", { min: 1, max: 1000, seed: "fixed" });
const pet = new random.RandomPet("pet", { length: 3, separator: "_", prefix: "dev" });
const rid = new random.RandomId("rid", { byteLength: 8, prefix: "p-" });
const uuid = new random.RandomUuid("uuid");
const uuid7 = new random.RandomUuid7("uuid7");
const sh = new random.RandomShuffle("sh", { inputs: ["a", "b", "c", "d"], resultCount: 6 });
const b = new random.RandomBytes("b", { length: 16 });

exports.string = s.result;
exports.stringId = s.id;
exports.password = pw.result;
exports.bcryptHash = pw.bcryptHash;
exports.integer = n.result;
exports.pet = pet.id;
exports.idId = rid.id;
exports.idB64Url = rid.b64Url;
exports.idHex = rid.hex;
exports.idDec = rid.dec;
exports.uuid = uuid.result;
exports.uuid7 = uuid7.result;
exports.shuffled = sh.results;
exports.bytesBase64 = b.base64;
exports.bytesHex = b.hex;

const imported = (id) => ({ import: id });
if (config.getBoolean("imports")) {
    exports.importedString = new random.RandomString("imp-s", { length: 6 }, imported("abc123")).result;
    exports.importedPassword = new random.RandomPassword("imp-pw", { length: 9 }, imported("imported!")).result;
    exports.importedInteger = new random.RandomInteger("imp-n", { min: 1, max: 9 }, imported("4,1,9")).result;
    exports.importedId = new random.RandomId("imp-id", { byteLength: 3, prefix: "x-" }, imported("x-,-_8B")).hex;
    exports.importedBytes = new random.RandomBytes("imp-b", { length: 3 }, imported("+/8B")).hex;
    exports.importedUuid = new random.RandomUuid("imp-u", {}, imported("6BA7B810-9DAD-11D1-80B4-00C04FD430C8")).result;
}

const bad = config.get("bad");
if (bad === "length") {
    new random.RandomString("bad", { length: 2, minUpper: 2, minLower: 1 });
}
if (bad === "import") {
    new random.RandomInteger("bad-imp", { min: 1, max: 9 }, imported("12,1,9"));
}
"#;

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    Node,
}

/// A project running the program with `sdk`, its SDK installed, the wasm `random` provider
/// installed in the home, and stack `dev`.
fn project(sdk: Sdk) -> Sandbox {
    let sandbox = Sandbox::new("uses-random");
    match sdk {
        Sdk::Python => {
            let python = python();
            let venv = python.parent().unwrap().parent().unwrap();
            sandbox.write("__main__.py", PYTHON);
            sandbox.write(
                "Pulumi.yaml",
                &format!(
                    "name: uses-random\nruntime:\n  name: python\n  options:\n    virtualenv: {}\n",
                    venv.display()
                ),
            );
        }
        Sdk::Node => {
            std::os::unix::fs::symlink(node_modules(), sandbox.project.join("node_modules"))
                .unwrap();
            sandbox.write("index.js", NODE);
            sandbox.write(
                "package.json",
                r#"{"name": "uses-random", "main": "index.js"}"#,
            );
            sandbox.write("Pulumi.yaml", "name: uses-random\nruntime: nodejs\n");
        }
    }
    sandbox.ok(&["stack", "init", "dev"]);
    sandbox.ok(&[
        "plugin",
        "install",
        example_wasm("random").to_str().unwrap(),
    ]);
    sandbox
}

/// stdout and stderr of a run that must fail.
fn failure(sandbox: &Sandbox, args: &[&str]) -> String {
    let out = sandbox.run(args);
    assert!(!out.status.success(), "cairn {args:?} succeeded");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

#[test]
fn a_pulumi_random_python_program_runs_on_the_wasm_provider() {
    random_sdk_lifecycle(Sdk::Python);
}

#[test]
fn an_at_pulumi_random_node_program_runs_on_the_wasm_provider() {
    random_sdk_lifecycle(Sdk::Node);
}

/// Both programs declare the same resources and outputs; the same expectations hold.
fn random_sdk_lifecycle(sdk: Sdk) {
    let sandbox = project(sdk);

    // up: every resource is created by the wasm provider, resolved for the SDK's version.
    let out = sandbox.ok(&["up", "--yes"]);
    assert_contains(
        &out,
        &["random:index/randomString:RandomString", "10 created"],
    );
    let plain = outputs(&sandbox, false);
    let shown = outputs(&sandbox, true);
    // Secrets: shown only on request, never in the state file. (Not the sandbox's scan of
    // every output: the Node.js SDK's own debug log of its RegisterResource results carries
    // them in plain text, and `--json` streams debug diagnostics.)
    let secrets: Vec<String> = ["password", "bcryptHash", "bytesBase64", "bytesHex"]
        .iter()
        .map(|key| {
            assert_eq!(plain[*key], "[secret]", "{sdk:?} {key}");
            text(&shown[*key]).to_owned()
        })
        .collect();
    let state_hides_secrets = || {
        let state = std::fs::read_to_string(sandbox.state_file("uses-random", "dev")).unwrap();
        assert!(state.contains("ciphertext"), "{sdk:?}");
        for secret in &secrets {
            assert!(
                !state.contains(secret.as_str()),
                "{sdk:?}: {secret} in the state"
            );
        }
    };
    state_hides_secrets();

    let string = text(&plain["string"]);
    assert_eq!(string.chars().count(), 12, "{string}");
    assert!(
        string.chars().all(|c| c.is_ascii_alphanumeric()),
        "{string}"
    );
    assert!(string.chars().filter(char::is_ascii_digit).count() >= 2);
    assert_eq!(plain["stringId"], plain["string"], "the string is its ID");
    let password = text(&shown["password"]);
    assert_eq!(password.chars().count(), 20);
    assert!(
        password
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_%".contains(c))
    );
    assert!(password.chars().filter(|c| "_%".contains(*c)).count() >= 2);
    assert!(text(&shown["bcryptHash"]).starts_with("$2a$10$"));
    let integer = plain["integer"].as_i64().unwrap();
    assert!((1..=1000).contains(&integer));
    let pet = text(&plain["pet"]);
    assert!(
        pet.starts_with("dev_") && pet.split('_').count() == 4,
        "{pet}"
    );
    let id = text(&plain["idId"]);
    assert_eq!(plain["idB64Url"], format!("p-{id}"));
    let hex = text(&plain["idHex"]);
    assert!(hex.starts_with("p-") && hex.len() == 2 + 16, "{hex}");
    let dec = text(&plain["idDec"]);
    assert!(dec[2..].chars().all(|c| c.is_ascii_digit()), "{dec}");
    for (key, version) in [("uuid", '4'), ("uuid7", '7')] {
        let uuid = text(&plain[key]);
        assert_eq!(uuid.len(), 36, "{uuid}");
        assert_eq!(uuid.chars().nth(14), Some(version), "{uuid}");
    }
    let shuffled: Vec<&str> = plain["shuffled"]
        .as_array()
        .unwrap()
        .iter()
        .map(text)
        .collect();
    assert_eq!(shuffled.len(), 6);
    let mut round: Vec<&str> = shuffled[..4].to_vec();
    round.sort();
    assert_eq!(round, ["a", "b", "c", "d"], "{shuffled:?}");
    assert_eq!(text(&shown["bytesHex"]).len(), 32);

    // Nothing changed: every resource stays as it is.
    let run = finished_steps(&sandbox.ok(&["up", "--yes", "--json"]));
    assert!(!run.is_empty());
    assert!(run.iter().all(|(op, _)| op == "same"), "{sdk:?} {run:?}");
    assert_eq!(outputs(&sandbox, true), shown);

    // A changed keeper replaces the string (a new value); nothing else changes.
    sandbox.ok(&["config", "set", "rotation", "2"]);
    let run = finished_steps(&sandbox.ok(&["up", "--yes", "--json"]));
    assert!(
        ops_of(&run, "s").iter().any(|op| op == "replace"),
        "{run:?}"
    );
    assert_eq!(ops_of(&run, "pw"), ["same"], "{run:?}");
    let after = outputs(&sandbox, true);
    assert_ne!(after["string"], shown["string"]);
    for key in ["password", "integer", "pet", "idId", "uuid", "shuffled"] {
        assert_eq!(after[key], shown[key], "{key}");
    }
    state_hides_secrets();

    // Imports with the `import` option, by each documented ID format.
    sandbox.ok(&["config", "set", "imports", "true"]);
    let run = finished_steps(&sandbox.ok(&["up", "--yes", "--json"]));
    for name in ["imp-s", "imp-pw", "imp-n", "imp-id", "imp-b", "imp-u"] {
        assert_eq!(ops_of(&run, name), ["import"], "{name}: {run:?}");
    }
    let imported = outputs(&sandbox, false);
    assert_eq!(imported["importedString"], "abc123");
    assert_eq!(imported["importedPassword"], "[secret]");
    assert_eq!(outputs(&sandbox, true)["importedPassword"], "imported!");
    assert_eq!(imported["importedInteger"], 4);
    assert_eq!(imported["importedId"], "x-fbff01");
    assert_eq!(imported["importedBytes"], "[secret]");
    assert_eq!(
        imported["importedUuid"],
        "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
    );
    // Imported resources are then managed like the others: no change, no step.
    let run = finished_steps(&sandbox.ok(&["up", "--yes", "--json"]));
    assert!(run.iter().all(|(op, _)| op == "same"), "{sdk:?} {run:?}");
    state_hides_secrets();

    // Bad input: the provider's error names the property; a bad import ID says the format.
    sandbox.ok(&["config", "set", "bad", "length"]);
    assert_contains(
        &failure(&sandbox, &["up", "--yes"]),
        &["length: is 2, less than minLower + minUpper + minNumeric + minSpecial (3)"],
    );
    sandbox.ok(&["config", "set", "bad", "import"]);
    assert_contains(
        &failure(&sandbox, &["up", "--yes"]),
        &["cannot import RandomInteger with ID \"12,1,9\": 12 is not between 1 and 9"],
    );
    sandbox.ok(&["config", "rm", "bad"]);

    // Destroy: everything goes.
    let out = sandbox.ok(&["destroy", "--yes"]);
    assert_contains(&out, &["16 deleted"]);
    let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    assert!(
        state["deployment"]["resources"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{state}"
    );
}

/// A program with `@pulumi/random` 4.21.2 (npm, unmodified) using the resource types every
/// guest-language random example serves; `RandomPassword` only when `password` is set.
const NODE_SUBSET: &str = r#"
"use strict";
const pulumi = require("@pulumi/pulumi");
const random = require("@pulumi/random");

const config = new pulumi.Config();
const n = new random.RandomInteger("n", { min: 1, max: 6 });
const s = new random.RandomString("s", { length: config.getNumber("length") || 16, special: false, minNumeric: 2 });
const u = new random.RandomUuid("u");
exports.integer = n.result;
exports.string = s.result;
exports.uuid = u.result;
if (config.getBoolean("password")) {
    exports.password = new random.RandomPassword("pw", { length: 24, minSpecial: 3 }).result;
}
if (config.get("bad") === "check") {
    new random.RandomString("bad", { length: 2, minUpper: 3 });
}
"#;

#[test]
fn at_pulumi_random_runs_on_the_typescript_and_go_random_providers() {
    for (example, password) in [("typescript-random", true), ("go-random", false)] {
        guest_random_lifecycle(example, password);
    }
}

/// The published Node.js SDK against a random provider built from `examples/providers/{example}`
/// by `cairn up`: create, no change, a replacing change, bad input named, destroy.
fn guest_random_lifecycle(example: &str, password: bool) {
    let sandbox = Sandbox::new("uses-random");
    std::os::unix::fs::symlink(node_modules(), sandbox.project.join("node_modules")).unwrap();
    sandbox.write("index.js", NODE_SUBSET);
    sandbox.write(
        "package.json",
        r#"{"name": "uses-random", "main": "index.js"}"#,
    );
    let source = repo().join("examples/providers").join(example);
    sandbox.write(
        "Pulumi.yaml",
        &format!(
            "name: uses-random\nruntime: nodejs\nplugins:\n  providers:\n    - name: random\n      path: {}\n",
            source.display()
        ),
    );
    sandbox.ok(&["stack", "init", "dev"]);
    if password {
        sandbox.ok(&["config", "set", "password", "true"]);
    }

    let out = sandbox.ok(&["up", "--yes"]);
    let created = if password { "5 created" } else { "4 created" };
    assert_contains(&out, &["random:index/randomUuid:RandomUuid", created]);
    let first = outputs(&sandbox, true);
    let integer = first["integer"]
        .as_i64()
        .unwrap_or_else(|| panic!("{example}: {first}"));
    assert!((1..=6).contains(&integer), "{example}: {first}");
    let string = text(&first["string"]);
    assert_eq!(string.chars().count(), 16, "{example}: {string}");
    assert!(
        string.chars().all(|c| c.is_ascii_alphanumeric()),
        "{example}: {string}"
    );
    assert!(
        string.chars().filter(char::is_ascii_digit).count() >= 2,
        "{example}: {string}"
    );
    let uuid = text(&first["uuid"]);
    assert_eq!(
        (uuid.len(), uuid.chars().nth(14)),
        (36, Some('4')),
        "{example}: {uuid}"
    );
    if password {
        assert_eq!(
            outputs(&sandbox, false)["password"],
            "[secret]",
            "{example}"
        );
        let secret = text(&first["password"]);
        assert_eq!(secret.chars().count(), 24, "{example}: {secret}");
        let state = std::fs::read_to_string(sandbox.state_file("uses-random", "dev")).unwrap();
        assert!(
            !state.contains(secret),
            "{example}: the password is in the state"
        );
    }

    // No change: every resource stays; a changed length replaces only the string.
    sandbox.ok(&["preview", "--expect-no-changes"]);
    sandbox.ok(&["config", "set", "length", "20"]);
    let run = finished_steps(&sandbox.ok(&["up", "--yes", "--json"]));
    assert!(
        ops_of(&run, "s").iter().any(|op| op == "replace"),
        "{example}: {run:?}"
    );
    assert_eq!(ops_of(&run, "n"), ["same"], "{example}: {run:?}");
    let after = outputs(&sandbox, true);
    assert_eq!(text(&after["string"]).chars().count(), 20, "{example}");
    assert_eq!(
        (&after["integer"], &after["uuid"]),
        (&first["integer"], &first["uuid"])
    );

    // The provider's own check failure reaches the user naming the property.
    sandbox.ok(&["config", "set", "bad", "check"]);
    assert_contains(
        &failure(&sandbox, &["up", "--yes"]),
        &["RandomString (bad)", "length"],
    );
    sandbox.ok(&["config", "rm", "bad"]);

    let out = sandbox.ok(&["destroy", "--yes"]);
    assert_contains(&out, &[if password { "5 deleted" } else { "4 deleted" }]);
}

/// An import ID that is a secret — a `RandomPassword` imported by its value, with the `import`
/// option or `cairn import` — is stored nowhere in plain text: not as the state's `importID`
/// (Pulumi stores it there), not in the journal, not in what the commands print. A later `up`
/// still recognises the imported password (no second import).
#[test]
fn a_password_imported_by_its_value_is_never_stored_in_plain_text() {
    const OPTION: &str = "opt-imported-pw!";
    const COMMAND: &str = "cmd-imported-pw!";
    let sandbox = project(Sdk::Python);
    sandbox.write(
        "__main__.py",
        &format!(
            "import pulumi\nimport pulumi_random as random\n\
             pw = random.RandomPassword(\"imp-pw\", length=16, opts=pulumi.ResourceOptions(import_=\"{OPTION}\"))\n\
             pulumi.export(\"password\", pw.result)\n"
        ),
    );
    let journal = sandbox
        .state_file("uses-random", "dev")
        .with_extension("journal");
    let scan = |what: &str, printed: &str| {
        let state = std::fs::read_to_string(sandbox.state_file("uses-random", "dev")).unwrap();
        let journal = std::fs::read_to_string(&journal).unwrap_or_default();
        for secret in [OPTION, COMMAND] {
            assert!(
                !state.contains(secret),
                "{what}: {secret} in the state:\n{state}"
            );
            assert!(!journal.contains(secret), "{what}: {secret} in the journal");
            assert!(
                !printed.contains(secret),
                "{what}: {secret} printed:\n{printed}"
            );
        }
    };
    let run = |args: &[&str]| {
        let out = sandbox.run(args);
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "cairn {args:?} failed:\n{printed}");
        printed
    };

    let printed = run(&["up", "--yes", "--json"]);
    assert_eq!(ops_of(&finished_steps(&printed), "imp-pw"), ["import"]);
    scan("up", &printed);
    assert_eq!(outputs(&sandbox, true)["password"], OPTION);

    // Recognised as imported: no step, and still nothing in plain text.
    let printed = run(&["up", "--yes", "--json"]);
    assert_eq!(ops_of(&finished_steps(&printed), "imp-pw"), ["same"]);
    scan("the second up", &printed);

    let printed = run(&[
        "import",
        "random:index/randomPassword:RandomPassword",
        "cli-pw",
        COMMAND,
        "--yes",
    ]);
    scan("cairn import", &printed);
    let printed = run(&["stack", "export"]);
    scan("stack export", &printed);
}
