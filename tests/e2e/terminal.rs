//! Terminal safety: text from programs, providers, plugins and state, settings and lock files
//! reaches stdout and stderr with every control character made visible, in every output mode
//! (progress view, summary, `--json`, diagnostics, errors, `stack` listings, exports, logs).
//! Every command's stdout and stderr is scanned byte by byte (`assert_no_raw_controls`).

use std::process::Output;

use serde_json::Value;

use crate::support::{
    Sandbox, assert_contains, assert_no_raw_controls, probe_stack, run_clean, test_wasm, tree,
};

/// What `program-probe` sends in its `hostile*` modes (tests/guests/program-probe).
const HOSTILE: &str =
    "\x1b[2J\x1b]0;pwned\x07\rX\x08\u{9b}31m\u{85}\u{202e}\x7f\0\nResources:\n    + 99 created";
/// [`HOSTILE`] as a single-line field shows it.
const FIELD: &str =
    r"\x1b[2J\x1b]0;pwned\x07\rX\x08\u{9b}31m\u{85}\u{202e}\x7f\x00\nResources:\n    + 99 created";
/// The first line of [`HOSTILE`] as a message shows it (its other lines are indented).
const FIRST: &str = r"\x1b[2J\x1b]0;pwned\x07\rX\x08\u{9b}31m\u{85}\u{202e}\x7f\x00";
/// [`HOSTILE`] as a quoted value (a JSON string literal with every control escaped).
const QUOTED: &str = r#""\u001b[2J\u001b]0;pwned\u0007\rX\b\u009b31m\u0085\u202e\u007f\u0000\nResources:\n    + 99 created""#;

/// Runs a command that must succeed and print nothing raw; returns its stdout.
fn clean_ok(sandbox: &Sandbox, args: &[&str]) -> String {
    let output = run_clean(sandbox, args);
    assert!(
        output.status.success(),
        "cairn {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Runs a command that must fail (with an error, not a crash) and print nothing raw.
fn clean_failure(sandbox: &Sandbox, args: &[&str]) -> Output {
    let output = run_clean(sandbox, args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "cairn {args:?} did not fail with an error:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The engine events of `--json` output (each line of the stream is one object; a preview's
/// digest before them is left out).
fn json_lines(text: &str) -> Vec<Value> {
    for line in text.lines().skip_while(|l| !l.starts_with("{\"sequence\"")) {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    crate::support::json_events(text)
}

/// Lines that begin like a line of Cairn's own that [`HOSTILE`] fakes.
fn faked(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("    + 99 created"))
        .collect()
}

#[test]
fn text_from_programs_and_providers_is_shown_escaped_in_every_mode() {
    let sandbox = probe_stack("hostile");

    // Planned creates show the inputs as quoted values.
    let preview = clean_ok(&sandbox, &["preview", "--diff"]);
    assert_contains(
        &preview,
        &[
            &format!("+ note: {QUOTED}"),
            &format!("+ [\"{FIELD}\"]: {QUOTED}"),
        ],
    );
    // The preview digest, one document, keeps the exact text too.
    let digest: Value = serde_json::from_str(&clean_ok(&sandbox, &["preview", "--json"])).unwrap();
    assert!(
        digest["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["newState"]["inputs"]["note"] == HOSTILE),
        "{digest:#}"
    );

    // Engine events carry the exact text (escaped as JSON, which decodes to it); so does the
    // event log.
    let log = sandbox.project.join("events.jsonl");
    let events = json_lines(&clean_ok(
        &sandbox,
        &[
            "up",
            "--yes",
            "--json",
            "--event-log",
            log.to_str().unwrap(),
        ],
    ));
    let logged = std::fs::read(&log).unwrap();
    assert_no_raw_controls("the event log", &logged);
    let logged = json_lines(&String::from_utf8(logged).unwrap());
    assert!(logged.len() >= events.len(), "the log has every event");
    let messages: Vec<&str> = events
        .iter()
        .filter_map(|e| e["diagnosticEvent"]["message"].as_str())
        .collect();
    assert!(
        messages.contains(&format!("probe@0.3.0: {HOSTILE}\n").as_str()),
        "the provider's log line: {messages:#?}"
    );
    assert!(
        messages
            .contains(&format!("program prog: {}\n", HOSTILE.split('\n').next().unwrap()).as_str()),
        "the program's stdout, line by line: {messages:#?}"
    );
    let outputs = &events
        .iter()
        .rfind(|e| e["resOutputsEvent"]["metadata"]["type"] == "pulumi:pulumi:Stack")
        .expect("stack outputs")["resOutputsEvent"]["metadata"]["new"]["outputs"];
    assert_eq!(outputs[HOSTILE], HOSTILE);
    assert_eq!(outputs["note"], HOSTILE);

    // Stack outputs from the state file: one row each, one value alone, or JSON.
    let listed = clean_ok(&sandbox, &["stack", "output"]);
    assert_contains(&listed, &[&format!("    {FIELD}  {FIELD}\n")]);
    assert_eq!(
        listed.lines().count(),
        4,
        "a title, a header and two rows:\n{listed}"
    );
    assert_eq!(
        clean_ok(&sandbox, &["stack", "output", "note"]),
        format!("{FIRST}\nResources:\n    + 99 created\n"),
        "a value alone keeps its lines"
    );
    let json: Value =
        serde_json::from_str(&clean_ok(&sandbox, &["stack", "output", "--json"])).unwrap();
    assert_eq!(json[HOSTILE], HOSTILE);
    let one: Value =
        serde_json::from_str(&clean_ok(&sandbox, &["stack", "output", "note", "--json"])).unwrap();
    assert_eq!(one, HOSTILE);
    assert_contains(
        &clean_ok(&sandbox, &["stack"]),
        &["probe:index:Thing", "loud"],
    );
    let exported: Value = serde_json::from_str(&clean_ok(&sandbox, &["stack", "export"])).unwrap();
    let root = exported["deployment"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["type"] == "pulumi:pulumi:Stack")
        .unwrap();
    assert_eq!(root["outputs"][HOSTILE], HOSTILE, "the export is lossless");
    clean_ok(&sandbox, &["stack", "ls"]);
    clean_ok(&sandbox, &["stack", "ls", "--json"]);
    clean_ok(&sandbox, &["refresh", "--yes"]);
    json_lines(&clean_ok(&sandbox, &["refresh", "--yes", "--json"]));
    clean_ok(&sandbox, &["destroy", "--yes"]);

    // The progress view and the Diagnostics section: messages keep their lines, indented
    // under their first, grouped under their resource (the program's under the stack).
    let up = clean_ok(&sandbox, &["up", "--yes", "--skip-preview"]);
    assert_contains(
        &up,
        &[
            "\nDiagnostics:\n  pulumi:pulumi:Stack (prog-dev):\n",
            &format!("    program prog: {FIRST}\n    program prog: Resources:\n"),
            "  probe:index:Thing (loud):\n",
            &format!("    probe@0.3.0: {FIRST}\n      Resources:\n          + 99 created\n"),
            &format!("    warning: probe@0.3.0: {FIRST}\n"),
            // Sorted and aligned, as Pulumi prints outputs (the escape sorts first).
            &format!(
                "Outputs:\n    {FIELD}: {QUOTED}\n    {:<width$}: {QUOTED}\n",
                "note",
                width = FIELD.len()
            ),
        ],
    );
    assert_eq!(faked(&up), Vec::<&str>::new(), "{up}");
    assert_eq!(
        up.lines().filter(|l| *l == "Resources:").count(),
        1,
        "only Cairn's own summary starts a line with `Resources:`:\n{up}"
    );

    // Logs (CAIRN_LOG) are one visible line per event.
    let output = sandbox
        .command(&["preview"])
        .env("CAIRN_LOG", "debug")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_no_raw_controls("CAIRN_LOG=debug preview (stdout)", &output.stdout);
    assert_no_raw_controls("CAIRN_LOG=debug preview (stderr)", &output.stderr);
    clean_ok(&sandbox, &["destroy", "--yes"]);
}

#[test]
fn errors_quoting_providers_and_programs_are_escaped_and_indented() {
    let sandbox = probe_stack("hostile-fail");
    let output = clean_failure(&sandbox, &["up", "--yes"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "error: create urn:pulumi:dev::prog::probe:index:Thing::bad: {FIRST}\n    Resources:\n        + 99 created\n"
        )
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_contains(
        &stdout,
        &[&format!(
            "    error: {FIRST}\n      Resources:\n          + 99 created\n"
        )],
    );
    assert_eq!(faked(&stdout), Vec::<&str>::new(), "{stdout}");
    let events = json_lines(
        &String::from_utf8(clean_failure(&sandbox, &["up", "--yes", "--json"]).stdout).unwrap(),
    );
    let failed = events
        .iter()
        .position(|e| e.get("resOpFailedEvent").is_some())
        .expect("a failed step");
    assert_eq!(
        events[failed - 1]["diagnosticEvent"]["message"],
        format!("{HOSTILE}\n"),
        "JSON keeps the exact text"
    );

    sandbox.ok(&["config", "set", "mode", "hostile-panic"]);
    for args in [
        &["up", "--yes"][..],
        &["up", "--yes", "--json"],
        &["preview"],
    ] {
        let output = clean_failure(&sandbox, args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with("error: the program failed: program prog: "),
            "{stderr}"
        );
        assert!(stderr.contains(FIRST), "{stderr}");
        assert_eq!(faked(&stderr), Vec::<&str>::new(), "{stderr}");
    }

    // The stack is usable afterwards.
    sandbox.ok(&["config", "set", "mode", "parallel"]);
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    clean_ok(&sandbox, &["up", "--yes"]);
}

#[test]
fn names_and_types_with_control_characters_are_refused_at_registration() {
    for (mode, expected) in [
        (
            "hostile-name",
            [
                r"probe:index:Thing evil\x1b]0;pwned\x07: invalid register-resource request",
                "contains control characters; it must be printable",
            ],
        ),
        (
            "hostile-type",
            [
                r"probe:index:Thing\x1b[2J evil: invalid register-resource request",
                "it contains white space or a control character",
            ],
        ),
    ] {
        let sandbox = probe_stack(mode);
        for args in [
            &["preview"][..],
            &["up", "--yes"],
            &["up", "--yes", "--json"],
        ] {
            let output = clean_failure(&sandbox, args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.starts_with("error: the program failed: "),
                "{stderr}"
            );
            assert_contains(&stderr, &expected);
        }
        let state = std::fs::read_to_string(sandbox.state_file("prog", "dev")).unwrap();
        assert!(!state.contains("evil"), "{mode}: nothing was registered");
        sandbox.ok(&["config", "set", "mode", "parallel"]);
        sandbox.ok(&["config", "set", "sleepMs", "0"]);
        clean_ok(&sandbox, &["up", "--yes"]);
    }
}

/// Rewrites the stack's checkpoint with `edit`.
fn edit_state(sandbox: &Sandbox, edit: impl FnOnce(&mut Value)) {
    let path = sandbox.state_file("prog", "dev");
    let mut state: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut state);
    std::fs::write(&path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
}

fn resources(state: &mut Value) -> &mut Vec<Value> {
    state["checkpoint"]["latest"]["resources"]
        .as_array_mut()
        .unwrap()
}

#[test]
fn hand_edited_state_is_shown_escaped_or_refused_with_a_clear_error() {
    let sandbox = probe_stack("parallel");
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    sandbox.ok(&["up", "--yes"]);
    let good = std::fs::read(sandbox.state_file("prog", "dev")).unwrap();

    // Text anywhere a state file holds free text, and a large value.
    edit_state(&sandbox, |state| {
        state["checkpoint"]["latest"]["manifest"]["time"] = HOSTILE.into();
        let root = &mut resources(state)[0];
        assert_eq!(root["type"], "pulumi:pulumi:Stack");
        root["outputs"][HOSTILE] = HOSTILE.into();
        root["outputs"]["big"] = "x".repeat(1 << 20).into();
    });
    assert_contains(
        &clean_ok(&sandbox, &["stack"]),
        &[&format!("Last update: {FIELD}\n")],
    );
    assert_contains(&clean_ok(&sandbox, &["stack", "ls"]), &[FIELD]);
    let listed: Value =
        serde_json::from_str(&clean_ok(&sandbox, &["stack", "ls", "--json"])).unwrap();
    assert_eq!(listed[0]["lastUpdate"], HOSTILE);
    assert_contains(
        &clean_ok(&sandbox, &["stack", "output"]),
        &[&format!("    {FIELD}  {FIELD}\n")],
    );
    let outputs: Value =
        serde_json::from_str(&clean_ok(&sandbox, &["stack", "output", "--json"])).unwrap();
    assert_eq!(outputs[HOSTILE], HOSTILE);
    assert_eq!(outputs["big"].as_str().unwrap().len(), 1 << 20);
    clean_ok(&sandbox, &["stack", "export"]);
    clean_ok(&sandbox, &["preview"]);
    clean_ok(&sandbox, &["up", "--yes"]);

    // Names, types and URNs with control characters, and nesting serde refuses: each command
    // fails with an error naming the file, and prints nothing raw.
    let path = sandbox.state_file("prog", "dev");
    for (field, value) in [
        (
            "urn",
            "urn:pulumi:dev::prog::probe:index:Thing::t\u{1b}]0;pwned\u{7}",
        ),
        ("type", "probe:index:Thing\u{9b}2J"),
        ("parent", "urn:pulumi:dev::prog::a:b:C::\r\u{202e}"),
    ] {
        std::fs::write(&path, &good).unwrap();
        edit_state(&sandbox, |s| resources(s)[2][field] = value.into());
        for args in [
            &["stack"][..],
            &["stack", "ls"],
            &["stack", "output"],
            &["stack", "export"],
            &["preview"],
            &["up", "--yes"],
        ] {
            let output = clean_failure(&sandbox, args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains(&format!(
                    "{} is not a valid stack checkpoint",
                    path.display()
                )),
                "{field}: cairn {args:?}:\n{stderr}"
            );
        }
    }
    std::fs::write(
        &path,
        format!(
            "{{\"version\": 3, \"checkpoint\": {{\"latest\": {{\"resources\": [{{\"outputs\": {{\"deep\": {}{}}}}}]}}}}}}",
            "[".repeat(5000),
            "]".repeat(5000)
        ),
    )
    .unwrap();
    let output = clean_failure(&sandbox, &["stack"]);
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        &[
            "is not a valid stack checkpoint",
            "recursion limit exceeded",
        ],
    );
}

#[test]
fn importing_a_hostile_deployment_is_refused_and_the_state_kept() {
    let sandbox = probe_stack("parallel");
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    sandbox.ok(&["up", "--yes"]);
    let exported: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
    let state = std::fs::read(sandbox.state_file("prog", "dev")).unwrap();
    let file = sandbox.project.join("import.json");
    for (field, value) in [
        ("urn", "urn:pulumi:dev::prog::probe:index:Thing::t\u{1b}[2J"),
        ("type", "probe:index:Thing\u{7}"),
        (
            "parent",
            "urn:pulumi:dev::prog::pulumi:pulumi:Stack::\u{85}",
        ),
    ] {
        let mut hostile = exported.clone();
        hostile["deployment"]["resources"][2][field] = value.into();
        std::fs::write(&file, serde_json::to_vec(&hostile).unwrap()).unwrap();
        let output = clean_failure(
            &sandbox,
            &["stack", "import", "--file", file.to_str().unwrap()],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with(&format!(
                "error: refusing to import {} (the stack's state is unchanged): ",
                file.display()
            )),
            "{field}: {stderr}"
        );
        assert_eq!(
            std::fs::read(sandbox.state_file("prog", "dev")).unwrap(),
            state,
            "{field}"
        );
    }
    // Hostile values are data: imported, and shown escaped.
    let mut hostile = exported.clone();
    hostile["deployment"]["resources"][0]["outputs"][HOSTILE] = HOSTILE.into();
    std::fs::write(&file, serde_json::to_vec(&hostile).unwrap()).unwrap();
    clean_ok(
        &sandbox,
        &["stack", "import", "--file", file.to_str().unwrap()],
    );
    assert_contains(&clean_ok(&sandbox, &["stack", "output"]), &[FIELD]);
    clean_ok(&sandbox, &["up", "--yes"]);
}

#[test]
fn lock_files_config_files_and_store_entries_are_shown_escaped() {
    let sandbox = probe_stack("parallel");
    sandbox.ok(&["config", "set", "sleepMs", "0"]);

    // A lock held by a live process (this test) whose holder fields are hostile.
    let lock = sandbox.home.join("locks/prog/dev.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let holder = serde_json::json!({
        "pid": std::process::id(),
        "host": gethostname::gethostname().to_string_lossy(),
        "user": HOSTILE,
        "command": HOSTILE,
        "time": HOSTILE,
    });
    std::fs::write(&lock, serde_json::to_vec(&holder).unwrap()).unwrap();
    let held = std::fs::File::open(&lock).unwrap();
    held.lock().unwrap();
    let output = clean_failure(&sandbox, &["up", "--yes"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: stack \"dev\" is locked by `{FIRST}\n    Resources:\n"
        )),
        "{stderr}"
    );
    assert_eq!(faked(&stderr), Vec::<&str>::new(), "{stderr}");
    drop(held);

    // A settings file with hostile values (YAML escapes) is listed one row per key.
    let mut settings: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&sandbox.read("Pulumi.dev.yaml")).unwrap();
    settings["config"]["prog:note"] = HOSTILE.into();
    sandbox.write(
        "Pulumi.dev.yaml",
        &serde_yaml_ng::to_string(&settings).unwrap(),
    );
    let listed = clean_ok(&sandbox, &["config"]);
    assert_contains(&listed, &[&format!("\nnote     {FIELD}\n")]);
    let json: Value = serde_json::from_str(&clean_ok(&sandbox, &["config", "--json"])).unwrap();
    assert_eq!(json["prog:note"]["value"], HOSTILE);
    assert_eq!(
        clean_ok(&sandbox, &["config", "get", "note"]),
        format!("{FIRST}\nResources:\n    + 99 created\n")
    );
    clean_ok(&sandbox, &["up", "--yes"]);

    // A plugin store directory whose name is no plugin name is skipped with a visible warning.
    let entry = sandbox.home.join("plugins/\u{1b}]0;pwned\u{7}/1.0.0");
    std::fs::create_dir_all(&entry).unwrap();
    let before = tree(sandbox.root());
    let output = run_clean(&sandbox, &["plugin", "ls"]);
    assert!(output.status.success());
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        &[
            "ignoring a plugin store entry whose name is not a plugin name",
            r"\x1b]0;pwned\x07",
        ],
    );
    assert_contains(&String::from_utf8_lossy(&output.stdout), &["probe"]);
    assert!(tree(sandbox.root()) == before);
}

#[test]
fn manifest_fields_of_an_untrusted_component_are_shown_escaped() {
    // The probe provider with escape sequences in its manifest's schema: a resource type and a
    // configuration variable (same-length edits of the JSON, so the component stays valid).
    let mut bytes = std::fs::read(test_wasm("probe")).unwrap();
    let edits: [(&[u8], &[u8]); 2] = [
        (br#""probe:index:Widget""#, br#""\u001b[2J\u009bXYZ""#),
        (br#""region""#, br#""\u009b""#),
    ];
    for (from, to) in edits {
        assert_eq!(from.len(), to.len());
        let mut found = 0;
        while let Some(at) = bytes.windows(from.len()).position(|w| w == from) {
            bytes[at..at + from.len()].copy_from_slice(to);
            found += 1;
        }
        assert!(found > 0, "{}", String::from_utf8_lossy(from));
    }
    let sandbox = Sandbox::new("prog");
    let file = sandbox.project.join("hostile.wasm");
    std::fs::write(&file, &bytes).unwrap();
    let file = file.to_str().unwrap();

    let shown = clean_ok(&sandbox, &["plugin", "inspect", file]);
    assert_contains(
        &shown,
        &[
            r"  resources:  probe:index:Thing, \x1b[2J\u{9b}XYZ",
            r"  config:     \u{9b}",
        ],
    );
    let json: Value =
        serde_json::from_str(&clean_ok(&sandbox, &["plugin", "inspect", "--json", file])).unwrap();
    assert_eq!(json["resources"][1], "\u{1b}[2J\u{9b}XYZ");
    assert_eq!(json["config"][0], "\u{9b}");
    // Such a type is no token: the schema check refuses the install, quoting it escaped.
    let output = run_clean(&sandbox, &["plugin", "install", file]);
    assert!(!output.status.success());
    assert_contains(
        &String::from_utf8_lossy(&output.stderr),
        &[
            r#"resources["\u001b[2J\u009bXYZ"]: the key"#,
            "[metaschema: propertyNames]",
        ],
    );
    assert!(!clean_ok(&sandbox, &["plugin", "ls"]).contains("probe"));
    clean_ok(&sandbox, &["plugin", "ls", "--json"]);
}
