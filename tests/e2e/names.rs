//! Names never become paths unchecked: hostile plugin, stack, project and stack-reference
//! names on every command that takes one are refused with an error naming the argument and
//! the rule, and nothing outside (or inside) the Cairn home and the project is touched.

use crate::support::{Sandbox, assert_no_raw_controls, probe_stack, run_clean, test_wasm, tree};

const PLUGIN_RULE: &str =
    "plugin names are 1 to 128 letters, digits, '-', '_' or '.', starting with a letter or digit";
const STACK_RULE: &str =
    "stack names are 1 to 100 letters, digits, '-', '_' or '.', and not \".\" or \"..\"";
const PROJECT_RULE: &str =
    "project names are 1 to 100 letters, digits, '-', '_' or '.', and not \".\" or \"..\"";

/// `(name, as errors quote it)`: names that climb out of a directory, are absolute, have a
/// separator, carry control characters or a bidi override, or are very long or empty.
fn hostile_names() -> Vec<(String, String)> {
    let long = "x".repeat(5000);
    vec![
        ("..".into(), r#""..""#.into()),
        ("../../canary".into(), r#""../../canary""#.into()),
        ("/abs/canary".into(), r#""/abs/canary""#.into()),
        ("a/b".into(), r#""a/b""#.into()),
        ("\x1b]0;pwned\x07".into(), r#""\x1b]0;pwned\x07""#.into()),
        ("a\u{9b}2Jb".into(), r#""a\u{9b}2Jb""#.into()),
        ("a\u{202e}b".into(), r#""a\u{202e}b""#.into()),
        ("a\rb".into(), r#""a\rb""#.into()),
        (long, format!("\"{}\"… (5000 bytes)", "x".repeat(64))),
        (String::new(), r#""""#.into()),
    ]
}

/// A sandbox with the `probe` provider installed, stack `dev`, a canary directory beside the
/// home shaped like a plugin store entry (so `<store>/../../canary` would list and remove
/// it), and a checkpoint-shaped canary in the home; returns it with a snapshot of everything.
fn guarded() -> (
    Sandbox,
    std::collections::BTreeMap<std::path::PathBuf, Option<Vec<u8>>>,
) {
    let sandbox = Sandbox::new("names");
    sandbox.ok(&["plugin", "install", test_wasm("probe").to_str().unwrap()]);
    sandbox.ok(&["stack", "init", "dev"]);
    let canary = sandbox.root().join("canary/1.0.0");
    std::fs::create_dir_all(&canary).unwrap();
    std::fs::write(canary.join("sha256"), "00").unwrap();
    std::fs::write(sandbox.root().join("canary-1.0.0.wasm"), "not a component").unwrap();
    std::fs::copy(
        sandbox.state_file("names", "dev"),
        sandbox.home.join("canary.json"),
    )
    .unwrap();
    let before = tree(sandbox.root());
    (sandbox, before)
}

/// Runs a command that must fail with exactly `expected` on stderr, print nothing raw and
/// touch nothing.
fn refused(
    sandbox: &Sandbox,
    before: &std::collections::BTreeMap<std::path::PathBuf, Option<Vec<u8>>>,
    args: &[&str],
    expected: &str,
) {
    let output = run_clean(sandbox, args);
    assert!(!output.status.success(), "cairn {args:?} succeeded");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        expected,
        "cairn {args:?}"
    );
    assert!(output.stdout.is_empty(), "cairn {args:?} printed to stdout");
    assert!(
        tree(sandbox.root()) == *before,
        "cairn {args:?} changed files"
    );
}

#[test]
fn plugin_commands_refuse_hostile_names_and_versions() {
    let (sandbox, before) = guarded();
    for (name, quoted) in hostile_names() {
        for (args, command) in [
            (vec!["plugin", "rm", &name], "rm"),
            (vec!["plugin", "rm", &name, "1.0.0"], "rm"),
            (vec!["plugin", "inspect", &name], "inspect"),
            (vec!["plugin", "inspect", "--json", &name], "inspect"),
        ] {
            let expected = format!(
                "error: invalid plugin name {quoted} given to `cairn plugin {command}`: {PLUGIN_RULE}\n"
            );
            refused(&sandbox, &before, &args, &expected);
        }
        let at_version = format!("{name}@0.3.0");
        if !name.contains('@') {
            refused(
                &sandbox,
                &before,
                &["plugin", "inspect", &at_version],
                &format!(
                    "error: invalid plugin name {quoted} given to `cairn plugin inspect`: {PLUGIN_RULE}\n"
                ),
            );
        }
    }
    // Versions are semantic versions, never paths.
    for (version, quoted) in [
        ("../..", r#""../..""#),
        ("0.3.0/../..", r#""0.3.0/../..""#),
        ("\x1b[2J", r#""\x1b[2J""#),
        ("", r#""""#),
    ] {
        for (args, command) in [
            (
                vec![
                    "plugin".to_owned(),
                    "rm".into(),
                    "probe".into(),
                    version.into(),
                ],
                "rm",
            ),
            (
                vec![
                    "plugin".to_owned(),
                    "inspect".into(),
                    format!("probe@{version}"),
                ],
                "inspect",
            ),
        ] {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let output = run_clean(&sandbox, &args);
            assert!(!output.status.success());
            let stderr = String::from_utf8_lossy(&output.stderr);
            let expected = format!(
                "error: invalid plugin version {quoted} given to `cairn plugin {command}`: versions are semantic versions such as 1.2.3 ("
            );
            assert!(stderr.starts_with(&expected), "{args:?}: {stderr}");
            assert!(tree(sandbox.root()) == before, "{args:?} changed files");
        }
    }
    // The store still works, and removing by a valid name removes only what it installed.
    assert!(
        sandbox
            .ok(&["plugin", "inspect", "probe"])
            .starts_with("probe@0.3.0\n")
    );
    assert_eq!(
        sandbox.ok(&["plugin", "rm", "probe", "0.3.0"]),
        "Removed probe@0.3.0\n"
    );
    assert!(sandbox.root().join("canary/1.0.0/sha256").is_file());
}

#[test]
fn a_plugin_directory_that_is_a_link_is_not_followed_on_removal() {
    let sandbox = Sandbox::new("names");
    let outside = sandbox.root().join("outside/1.0.0");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("sha256"), "00").unwrap();
    std::fs::write(outside.join("linked-1.0.0.wasm"), "x").unwrap();
    std::fs::create_dir_all(sandbox.home.join("plugins")).unwrap();
    std::os::unix::fs::symlink(
        sandbox.root().join("outside"),
        sandbox.home.join("plugins/linked"),
    )
    .unwrap();
    let err = sandbox.fails(&["plugin", "rm", "linked"]);
    assert_eq!(
        err,
        format!(
            "error: plugin store {}: {} is a symbolic link; Cairn removes only what it installed (remove the link by hand)\n",
            sandbox.home.join("plugins").display(),
            sandbox.home.join("plugins/linked").display()
        )
    );
    assert!(outside.join("sha256").is_file());
}

#[test]
fn stack_names_are_checked_wherever_they_enter() {
    let (sandbox, before) = guarded();
    for (name, quoted) in hostile_names() {
        // Two or three parts are read as a qualified name; one as a plain name.
        let form = if name.contains('/') {
            "use a name like \"dev\" or \"organization/names/dev\"; "
        } else {
            ""
        };
        let expect = |source: &str| {
            format!("error: invalid stack name {quoted} given to {source}: {form}{STACK_RULE}\n")
        };
        for (args, source) in [
            (vec!["stack", "init", &name], "`cairn stack init`"),
            (vec!["stack", "select", &name], "`cairn stack select`"),
            (
                vec!["stack", "select", "--create", &name],
                "`cairn stack select`",
            ),
            (
                vec!["stack", "rm", "--yes", "--force", &name],
                "`cairn stack rm`",
            ),
            (vec!["--stack", &name, "stack"], "--stack"),
            (vec!["--stack", &name, "stack", "output"], "--stack"),
            (vec!["--stack", &name, "stack", "export"], "--stack"),
            (vec!["--stack", &name, "stack", "import"], "--stack"),
            (vec!["--stack", &name, "stack", "rm", "--yes"], "--stack"),
            (vec!["--stack", &name, "config", "set", "k", "v"], "--stack"),
            (vec!["--stack", &name, "config"], "--stack"),
            (
                vec!["--stack", &name, "state", "protect", "--all"],
                "--stack",
            ),
            (vec!["--stack", &name, "preview"], "--stack"),
            (vec!["--stack", &name, "up", "--yes"], "--stack"),
            (vec!["--stack", &name, "destroy", "--yes"], "--stack"),
        ] {
            refused(&sandbox, &before, &args, &expect(source));
        }
    }
    // Another project's stack is named as such.
    refused(
        &sandbox,
        &before,
        &["--stack", "organization/other/dev", "stack"],
        "error: stack \"organization/other/dev\" given to --stack belongs to project \"other\", but this is project \"names\"\n",
    );
    sandbox.ok(&["--stack", "organization/names/dev", "stack"]);
}

#[test]
fn a_project_whose_name_names_a_directory_is_refused() {
    for name in ["..", "."] {
        let sandbox = Sandbox::new("names");
        sandbox.write("Pulumi.yaml", &format!("name: \"{name}\"\nruntime: wasm\n"));
        let before = tree(sandbox.root());
        let file = sandbox.project.join("Pulumi.yaml");
        refused(
            &sandbox,
            &before,
            &["stack", "init", "dev"],
            &format!(
                "error: {}: invalid project name \"{name}\": \"{name}\" names a directory; project names are letters, digits, '-', '_' and '.', but not \".\" or \"..\"\n",
                file.display()
            ),
        );
    }
}

#[test]
fn a_selection_file_naming_no_valid_stack_selects_nothing() {
    let (sandbox, _) = guarded();
    let selections: Vec<_> = std::fs::read_dir(sandbox.home.join("workspaces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(selections.len(), 1, "{selections:?}");
    // `../../canary` resolves, from the project's stack directory, to the checkpoint-shaped
    // canary in the home: read as a stack, `stack rm` would delete it.
    for stack in ["../../canary", "a\u{0}b", "\u{1b}[2J", ".."] {
        std::fs::write(
            &selections[0],
            serde_json::to_vec(&serde_json::json!({ "stack": stack })).unwrap(),
        )
        .unwrap();
        let before = tree(sandbox.root());
        refused(
            &sandbox,
            &before,
            &["stack", "rm", "--yes", "--force"],
            "error: no stack selected for project \"names\": run `cairn stack init <name>`, `cairn stack select <name>`, or pass --stack\n",
        );
    }
    assert!(sandbox.home.join("canary.json").is_file());
}

#[test]
fn stack_references_name_only_stacks_of_the_backend() {
    let sandbox = probe_stack("parallel");
    sandbox.ok(&["config", "set", "sleepMs", "0"]);
    sandbox.ok(&["up", "--yes"]);
    // A readable checkpoint outside the backend's stacks: `../dev` would resolve to it.
    std::fs::copy(
        sandbox.state_file("prog", "dev"),
        sandbox.home.join("dev.json"),
    )
    .unwrap();
    sandbox.ok(&["stack", "init", "consumer"]);
    sandbox.ok(&["config", "set", "mode", "stackref"]);
    let not_a_stack = |quoted: &str| {
        format!(
            "stack reference {quoted} is not a stack name: use <stack>, <project>/<stack> or <organization>/<project>/<stack>, where {STACK_RULE} and {PROJECT_RULE}"
        )
    };
    // The reference's name is also the resource's name, so control characters are refused
    // at registration already.
    let unprintable = "contains control characters; it must be printable".to_owned();
    for (reference, expected) in [
        ("../dev", not_a_stack(r#""../dev""#)),
        ("..", not_a_stack(r#""..""#)),
        ("org/../dev", not_a_stack(r#""org/../dev""#)),
        ("./dev", not_a_stack(r#""./dev""#)),
        ("a\u{0}b", unprintable.clone()),
        ("d\u{1b}[2Jv", unprintable),
    ] {
        let set = sandbox.run_with_stdin(&["config", "set", "ref"], reference.as_bytes());
        assert!(
            set.status.success(),
            "{}",
            String::from_utf8_lossy(&set.stderr)
        );
        let output = run_clean(&sandbox, &["up", "--yes"]);
        assert!(
            !output.status.success(),
            "{reference:?}: the reference was followed"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&expected), "{reference:?}:\n{stderr}");
    }
    // A valid reference still works afterwards.
    sandbox.ok(&["config", "set", "ref", "dev"]);
    sandbox.ok(&["up", "--yes"]);
    assert_eq!(crate::support::outputs(&sandbox, false)["refCount"], 4);
}

#[test]
fn stack_ls_skips_files_that_are_not_stacks() {
    let sandbox = Sandbox::new("names");
    sandbox.ok(&["stack", "init", "dev"]);
    let dir = sandbox.home.join("stacks/names");
    let bogus = dir.join("\u{1b}]0;pwned\u{7}.json");
    std::fs::copy(dir.join("dev.json"), &bogus).unwrap();
    std::fs::copy(dir.join("dev.json"), dir.join("..json")).unwrap();
    let output = run_clean(&sandbox, &["stack", "ls"]);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.lines().count(),
        2,
        "a header and dev only:\n{stdout}"
    );
    assert!(stdout.contains("dev*"), "{stdout}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    for file in ["\\x1b]0;pwned\\x07.json", "..json"] {
        assert!(
            stderr.contains(&format!("ignoring {}", dir.join(file).display())),
            "{stderr}"
        );
    }
    assert_no_raw_controls("stack ls", stderr.as_bytes());
}
