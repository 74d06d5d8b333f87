//! Bad input refused with the exact error, or handled: config keys over 1,024 characters (they
//! round-trip), deeply nested YAML files (refused at once), flags naming resources that are not
//! in the stack (an error, as in Pulumi), and a `CAIRN_HOME` that cannot be Cairn's home.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{self, Sandbox, assert_contains, finished_steps, ops_of, outputs};

/// A stack `dev` of project `prog` running `program-probe` (mode `parallel`, two things, no
/// sleeping) against the `probe` provider.
fn probe_stack() -> Sandbox {
    let sandbox = support::probe_stack("parallel");
    sandbox.ok(&["config", "set", "count", "2"]);
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    sandbox
}

#[test]
fn config_keys_over_1024_characters_round_trip() {
    let sandbox = probe_stack();
    let long = "k".repeat(1100);
    let nested = format!("obj.{}", "n".repeat(1100));
    sandbox.ok(&["config", "set", &long, "long value"]);
    sandbox.ok(&["config", "set", "--secret", &format!("s{long}"), "hidden"]);
    sandbox.ok(&["config", "set", "--path", &nested, "deep value"]);
    // Written so that YAML reads it back: an explicit key (`? key` / `: value`).
    assert_contains(
        &sandbox.read("Pulumi.dev.yaml"),
        &[&format!("\n  ? prog:{long}\n  : long value\n")],
    );
    assert_eq!(sandbox.ok(&["config", "get", &long]), "long value\n");
    assert_eq!(
        sandbox.ok(&["config", "get", &format!("s{long}")]),
        "hidden\n"
    );
    assert_eq!(
        sandbox.ok(&["config", "get", "--path", &nested]),
        "deep value\n"
    );
    let listed: Value = serde_json::from_str(&sandbox.ok(&["config", "--json"])).unwrap();
    assert_eq!(listed[format!("prog:{long}")]["value"], "long value");
    // Changing another key rewrites the file; the long ones survive.
    sandbox.ok(&["config", "set", "other", "x"]);
    assert_eq!(sandbox.ok(&["config", "get", &long]), "long value\n");
    // `up` reads the file and hands the configuration to the program.
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(outputs(&sandbox, false)["count"], 2);
}

#[test]
fn deeply_nested_yaml_files_are_refused_at_once() {
    let sandbox = probe_stack();
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let cases = [
        (
            "Pulumi.dev.yaml",
            format!("config:\n  prog:deep: {deep}\n"),
            2,
        ),
        (
            "Pulumi.yaml",
            format!("name: prog\nruntime: wasm\ndescription:\n  - {deep}\n"),
            4,
        ),
    ];
    for (file, text, line) in cases {
        let original = sandbox.read(file);
        let path = sandbox.write(file, &text);
        let started = Instant::now();
        let err = sandbox.fails(&["config", "get", "count"]);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{file}: took {:?}",
            started.elapsed()
        );
        // Pulumi.yaml is named by its path, the stack file relative to the project.
        let named = if file == "Pulumi.yaml" {
            path.display().to_string()
        } else {
            file.to_owned()
        };
        assert_eq!(
            err,
            format!(
                "error: {named}: line {line} is nested more than 128 levels deep; YAML files are \
                 limited to 128 levels of nesting\n"
            )
        );
        sandbox.write(file, &original);
    }
    sandbox.ok(&["config", "get", "count"]);
}

/// The flags that name resources, per command, each given a URN that is not in the stack.
#[test]
fn flags_naming_resources_not_in_the_stack_are_errors() {
    let sandbox = probe_stack();
    sandbox.ok(&["up", "--yes"]);
    // By URN: `up --target` runs the program, and the untargeted resources it registers again
    // are recorded in the order they came, which may differ (t0 and t1 are independent).
    let resources = |sandbox: &Sandbox| {
        let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
        let mut resources = state["deployment"]["resources"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        resources.sort_by_key(|r| r["urn"].as_str().unwrap_or_default().to_owned());
        resources
    };
    let before = resources(&sandbox);
    let nope = "urn:pulumi:dev::prog::probe:index:Thing::nope";
    let cases: [(&[&str], &str); 8] = [
        (&["destroy", "--yes", "--target", nope], "--target"),
        (&["destroy", "--yes", "--exclude", nope], "--exclude"),
        (&["refresh", "--yes", "--target", nope], "--target"),
        (&["refresh", "--yes", "--exclude", nope], "--exclude"),
        (&["up", "--yes", "--replace", nope], "--replace"),
        (
            &["up", "--yes", "--target-replace", nope],
            "--target-replace",
        ),
        (&["preview", "--target", nope], "--target"),
        (&["up", "--yes", "--target", nope], "--target"),
    ];
    for (args, flag) in cases {
        assert_eq!(
            sandbox.fails(args),
            format!("error: no resource named '{nope}' found in stack \"dev\" ({flag})\n"),
            "{args:?}"
        );
        assert_eq!(resources(&sandbox), before, "{args:?} changed the state");
    }
    // Several at once are listed together.
    let other = "urn:pulumi:dev::prog::probe:index:Thing::other";
    assert_eq!(
        sandbox.fails(&["destroy", "--yes", "--target", nope, "--exclude", other]),
        format!(
            "error: 2 resources named by flags were not found in stack \"dev\":\n      --target \
             '{nope}'\n      --exclude '{other}'\n"
        )
    );

    // For `up`, a target may be a resource the program is about to create.
    sandbox.ok(&["config", "set", "count", "3"]);
    let t2 = "urn:pulumi:dev::prog::probe:index:Thing::t2";
    let json = sandbox.ok(&["up", "--yes", "--json", "--target", t2]);
    assert_eq!(ops_of(&finished_steps(&json), "t2"), ["create"], "{json}");
    // Excluding one is not an error either.
    sandbox.ok(&["config", "set", "count", "4"]);
    let t3 = "urn:pulumi:dev::prog::probe:index:Thing::t3";
    let json = sandbox.ok(&["up", "--yes", "--json", "--exclude", t3]);
    assert!(ops_of(&finished_steps(&json), "t3").is_empty(), "{json}");
    // And an existing one, of course.
    let t0 = "urn:pulumi:dev::prog::probe:index:Thing::t0";
    sandbox.ok(&["destroy", "--yes", "--target", t0]);
}

/// Globs in the flags that name resources, as Pulumi's (TestUpdateTarget's and
/// TestGlobExcludes' globs, end to end): `**` matches anything, `*` anything but `:`; a glob
/// that matches nothing is no error.
#[test]
fn globs_name_every_resource_they_match_and_may_match_none() {
    let sandbox = probe_stack();
    sandbox.ok(&["up", "--yes"]);
    let things = |sandbox: &Sandbox| {
        let state: Value = serde_json::from_str(&sandbox.ok(&["stack", "export"])).unwrap();
        let mut names: Vec<String> = state["deployment"]["resources"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|r| r["urn"].as_str())
            .filter(|urn| urn.contains("probe:index:Thing::"))
            .map(|urn| urn.rsplit("::").next().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(things(&sandbox), ["t0", "t1"]);
    sandbox.ok(&["config", "set", "count", "4"]);
    // Excluded by a glob that spans parts: nothing new is created.
    sandbox.ok(&["up", "--yes", "--exclude", "**Thing**"]);
    assert_eq!(things(&sandbox), ["t0", "t1"]);
    // A glob selecting several resources.
    let json = sandbox.ok(&["up", "--yes", "--json", "--target", "**Thing**"]);
    for name in ["t2", "t3"] {
        assert_eq!(ops_of(&finished_steps(&json), name), ["create"], "{json}");
    }
    // Matching nothing is no error, and changes nothing: `*` does not cross the type's `:`.
    for glob in ["**nothing-matches**", "urn:pulumi:dev::prog::*::t0"] {
        sandbox.ok(&["destroy", "--yes", "--target", glob]);
        assert_eq!(things(&sandbox), ["t0", "t1", "t2", "t3"], "{glob}");
    }
    sandbox.ok(&[
        "destroy",
        "--yes",
        "--target",
        "urn:pulumi:dev::prog::probe:index:Thing::t*",
    ]);
    assert_eq!(things(&sandbox), Vec::<String>::new());
}

#[test]
fn a_cairn_home_that_cannot_be_one_is_named() {
    let sandbox = Sandbox::new("web");
    let file = sandbox.write("not-a-dir", "x");
    let under_file = file.join("home");
    let cases = [
        (
            file.clone(),
            format!(
                "error: CAIRN_HOME names {}, which is not a directory\n",
                file.display()
            ),
        ),
        (
            under_file.clone(),
            format!(
                "error: CAIRN_HOME names {}, which cannot be created: {} is not a directory\n",
                under_file.display(),
                file.display()
            ),
        ),
        // Not writable, even by root: nothing can be created in /proc (the cause depends on
        // who asks).
        (
            "/proc".into(),
            "error: CAIRN_HOME names /proc, which is not writable\n  caused by: ".to_owned(),
        ),
    ];
    for (home, expected) in cases {
        let output = sandbox
            .command(&["stack", "ls"])
            .env("CAIRN_HOME", &home)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{}", home.display());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with(&expected) && stderr.lines().count() == expected.lines().count(),
            "{}: {stderr}",
            home.display()
        );
    }
}
