//! `Pulumi.yaml` (`host/engine/src/project.rs`).

use cairn_engine::project::{Project, validate_project_name};
use cairn_fuzz_driver::{Outcome, Target};

pub const TARGET: Target = Target {
    name: "project",
    about: "Pulumi.yaml: what parses has a valid name and runtime, and its config declarations evaluate without panics",
    run,
    seeds,
    dictionary: &[
        "name: ",
        "runtime: ",
        "main: ",
        "config:\n  ",
        "type: ",
        "default: ",
        "items:",
        "secret: true",
        "options:",
        "stackConfigDir: ",
        "backend:",
        "plugins:",
        "\n  ",
        "\n    ",
        "- ",
        ": ",
        "&a ",
        "*a",
        "!!binary",
        "<<: ",
        "{",
        "}",
        "[",
        "]",
        "'",
        "\"",
        "~",
        "0x10",
        ".inf",
        ".nan",
    ],
    max_len: 2048,
};

fn seeds() -> Vec<Vec<u8>> {
    crate::seed_files(
        "project",
        &[
            "examples/programs/quickstart/Pulumi.yaml",
            "examples/programs/lifecycle/Pulumi.yaml",
            "examples/programs/nodejs/Pulumi.yaml",
            "examples/programs/python/Pulumi.yaml",
            "tests/data/python-provider/greeter/PulumiPlugin.yaml",
        ],
    )
}

fn run(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Outcome::Rejected;
    };
    let project = Project::from_yaml(text, "Pulumi.yaml");
    if let Ok(p) = &project {
        if let Err(e) = validate_project_name(&p.name) {
            panic!("project name {:?} was accepted: {e}", p.name);
        }
        assert!(!p.runtime.name.is_empty(), "an empty runtime was accepted");
        for (key, declaration) in p.config_declarations() {
            let _ = key.map(|k| k.to_string());
            let _ = declaration.type_name();
            for value in [
                serde_json::json!(1),
                serde_json::json!("s"),
                serde_json::json!([1, "a"]),
                serde_json::json!({"a": true}),
                serde_json::Value::Null,
            ] {
                let _ = declaration.accepts(&value);
            }
        }
        let _ = p.is_project_namespaced("x:y");
    }
    crate::outcome(&project)
}
