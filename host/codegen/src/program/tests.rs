//! Data-driven cases: each directory of `tests/program/` holds `case.json` (schemas by package,
//! resources, known names) and the expected code per language (`expected.rs`, `expected.py`,
//! `expected.ts`), or `error.txt` when generation must fail. `CAIRN_BLESS=1` rewrites the
//! expectations from what is generated. The Python expectations must compile (`python3`), the
//! TypeScript ones parse (`node`, with the types stripped by the TypeScript compiler when it
//! is installed).

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value as Json;

use super::*;

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/program")
}

/// A test value from JSON: `{"$secret": v}`, `{"$asset": {"text"|"path"|"uri": s}}`,
/// `{"$archive": {"path"|"uri": s}}`, `{"$unknown": true}`; anything else as it is.
fn value(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Value::Number(n.as_f64().unwrap()),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(value).collect()),
        Json::Object(map) => {
            if let Some(inner) = map.get("$secret") {
                return Value::Secret(Box::new(value(inner)));
            }
            if map.contains_key("$unknown") {
                return Value::Unknown;
            }
            if let Some(Json::Object(a)) = map.get("$asset") {
                let (kind, text) = a.iter().next().unwrap();
                let text = text.as_str().unwrap().to_owned();
                return Value::Asset(match kind.as_str() {
                    "text" => Asset::Text(text),
                    "path" => Asset::Path(text),
                    _ => Asset::Uri(text),
                });
            }
            if let Some(Json::Object(a)) = map.get("$archive") {
                let (kind, text) = a.iter().next().unwrap();
                let text = text.as_str().unwrap().to_owned();
                return Value::Archive(match kind.as_str() {
                    "path" => Archive::Path(text),
                    _ => Archive::Uri(text),
                });
            }
            Value::Object(map.iter().map(|(k, v)| (k.clone(), value(v))).collect())
        }
    }
}

fn resource(json: &Json) -> Resource {
    let text = |key: &str| json.get(key).and_then(Json::as_str).map(str::to_owned);
    let resource_type = text("type").unwrap();
    let kind = match json.get("kind").and_then(Json::as_str) {
        Some("component") => Kind::Component,
        Some("provider") => Kind::Provider {
            package: resource_type
                .trim_start_matches("pulumi:providers:")
                .to_owned(),
        },
        _ => Kind::Custom,
    };
    let name = text("name").unwrap();
    Resource {
        logical_name: text("logicalName").unwrap_or_else(|| name.clone()),
        name,
        resource_type,
        kind,
        inputs: json
            .get("inputs")
            .and_then(Json::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), value(v))).collect())
            .unwrap_or_default(),
        parent: text("parent"),
        provider: text("provider"),
        protect: json.get("protect").and_then(Json::as_bool).unwrap_or(false),
    }
}

struct Case {
    resources: Vec<Resource>,
    schemas: IndexMap<String, PackageSpec>,
    known: Vec<String>,
}

fn read_case(dir: &Path) -> Case {
    let text = std::fs::read_to_string(dir.join("case.json")).unwrap();
    let json: Json = serde_json::from_str(&text).unwrap();
    let schemas = json["schemas"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), PackageSpec::from_value(v.clone()).unwrap()))
                .collect()
        })
        .unwrap_or_default();
    Case {
        resources: json["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(resource)
            .collect(),
        schemas,
        known: json["known"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default(),
    }
}

const LANGUAGES: [(Language, &str); 3] = [
    (Language::Rust, "rs"),
    (Language::Python, "py"),
    (Language::TypeScript, "ts"),
];

fn case_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty());
    dirs
}

#[test]
fn generates_the_expected_code_per_language() {
    let bless = std::env::var_os("CAIRN_BLESS").is_some();
    let mut failures = Vec::new();
    for dir in case_dirs() {
        let case = read_case(&dir);
        for (language, extension) in LANGUAGES {
            let got = generate(language, &case.resources, &case.schemas, &case.known);
            let (file, got) = match got {
                Ok(code) => (dir.join(format!("expected.{extension}")), code),
                Err(e) => (dir.join("error.txt"), format!("{e}\n")),
            };
            if bless {
                std::fs::write(&file, &got).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&file).unwrap_or_default();
            if expected != got {
                failures.push(format!(
                    "{} ({language:?}):\n--- expected\n{expected}\n--- got\n{got}",
                    file.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn generated_python_compiles() {
    let Ok(status) = std::process::Command::new("python3")
        .arg("--version")
        .output()
    else {
        return; // No Python here; the TypeScript and Rust expectations still run.
    };
    assert!(status.status.success());
    for dir in case_dirs() {
        let file = dir.join("expected.py");
        if !file.exists() {
            continue;
        }
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')",
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn generated_typescript_parses() {
    // Without types, what is generated is JavaScript too (no annotations are written), so
    // `node --check` on a copy named .mjs checks its syntax.
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        return;
    }
    let scratch = std::env::temp_dir().join(format!("cairn-codegen-ts-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    for dir in case_dirs() {
        let file = dir.join("expected.ts");
        if !file.exists() {
            continue;
        }
        let copy = scratch.join(format!(
            "{}.mjs",
            dir.file_name().unwrap().to_string_lossy()
        ));
        std::fs::copy(&file, &copy).unwrap();
        let out = std::process::Command::new("node")
            .arg("--check")
            .arg(&copy)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn variable_names_follow_each_language() {
    let cases = [
        ("my-file", "my_file", "myFile"),
        ("myBucket2", "my_bucket2", "myBucket2"),
        ("HTTPServer", "http_server", "httpServer"),
        ("class", "class_", "class_"),
        ("2nd", "_2nd", "_2nd"),
        ("---", "resource", "resource"),
    ];
    for (name, snake, camel) in cases {
        assert_eq!(variable_name(Language::Python, name), snake, "{name}");
        assert_eq!(variable_name(Language::TypeScript, name), camel, "{name}");
    }
    assert_eq!(variable_name(Language::Rust, "type"), "type_");
}
