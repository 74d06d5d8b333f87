//! The project templates `cairn new` writes, embedded in the binary from `host/cli/templates/`
//! (one directory per template), and the names a project's name is turned into for them.
//!
//! Template files are text with placeholders, replaced as Pulumi's templates' are
//! (`${PROJECT}`, `${DESCRIPTION}`) plus Cairn's own; values that land inside a string of
//! YAML, TOML or JSON use the `_STRING` forms (a JSON string literal, which is also a valid
//! YAML double-quoted scalar and TOML basic string). Unknown `${…}` text (a TypeScript template
//! literal) is left alone.

use std::path::Path;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/template_files.rs"));
}

/// What kind of project a template makes (which decides what `cairn new` installs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Rust program built to a wasm component (`runtime: wasm`).
    RustProgram,
    /// A Rust wasm provider, with an example program that uses it.
    RustProvider,
    /// A Pulumi Python SDK program (a virtualenv with `requirements.txt`).
    Python,
    /// A Pulumi Node.js SDK program in TypeScript (`npm install`).
    TypeScript,
    /// A program in Python, TypeScript or Go built to a wasm component by `cairn up` with
    /// Cairn's SDK for that language (embedded in `cairn`; nothing to install first).
    GuestProgram,
    /// A provider in Python, TypeScript or Go built by `cairn up`, with an example program.
    GuestProvider,
}

impl Kind {
    /// A provider template: the project's name is also the provider's package name.
    pub fn is_provider(self) -> bool {
        matches!(self, Kind::RustProvider | Kind::GuestProvider)
    }
}

/// A configuration value a template's stack starts with (Pulumi templates' `config:`).
pub struct ConfigValue {
    pub key: &'static str,
    pub default: &'static str,
    pub description: &'static str,
}

pub struct Template {
    pub name: &'static str,
    pub description: &'static str,
    pub kind: Kind,
    pub config: &'static [ConfigValue],
}

const GREETING_CONFIG: &[ConfigValue] = &[ConfigValue {
    key: "name",
    default: "world",
    description: "Who the greeting is for",
}];

/// Every template, in the order `cairn new --list` shows them.
pub const TEMPLATES: &[Template] = &[
    Template {
        name: "rust",
        description: "A minimal Cairn program in Rust, compiled to a WebAssembly component",
        kind: Kind::RustProgram,
        config: GREETING_CONFIG,
    },
    Template {
        name: "rust-provider",
        description: "A Cairn provider in Rust (a sandboxed WebAssembly component) and a program that uses it",
        kind: Kind::RustProvider,
        config: GREETING_CONFIG,
    },
    Template {
        name: "python-wasm",
        description: "A minimal Cairn program in Python, compiled to a WebAssembly component",
        kind: Kind::GuestProgram,
        config: GREETING_CONFIG,
    },
    Template {
        name: "python-provider",
        description: "A Cairn provider in Python (a sandboxed WebAssembly component) and a program that uses it",
        kind: Kind::GuestProvider,
        config: GREETING_CONFIG,
    },
    Template {
        name: "typescript-wasm",
        description: "A minimal Cairn program in TypeScript, compiled to a WebAssembly component",
        kind: Kind::GuestProgram,
        config: GREETING_CONFIG,
    },
    Template {
        name: "typescript-provider",
        description: "A Cairn provider in TypeScript (a sandboxed WebAssembly component) and a program that uses it",
        kind: Kind::GuestProvider,
        config: GREETING_CONFIG,
    },
    Template {
        name: "go-wasm",
        description: "A minimal Cairn program in Go, compiled to a WebAssembly component",
        kind: Kind::GuestProgram,
        config: GREETING_CONFIG,
    },
    Template {
        name: "go-provider",
        description: "A Cairn provider in Go (a sandboxed WebAssembly component) and a program that uses it",
        kind: Kind::GuestProvider,
        config: GREETING_CONFIG,
    },
    Template {
        name: "python",
        description: "A minimal program with the Pulumi Python SDK",
        kind: Kind::Python,
        config: GREETING_CONFIG,
    },
    Template {
        name: "typescript",
        description: "A minimal program with the Pulumi Node.js SDK in TypeScript",
        kind: Kind::TypeScript,
        config: GREETING_CONFIG,
    },
];

/// The template called `name`.
pub fn find(name: &str) -> Option<&'static Template> {
    TEMPLATES.iter().find(|t| t.name == name)
}

/// The template names, comma-separated.
pub fn names() -> String {
    TEMPLATES
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Template {
    /// The template's files: `(path relative to the project, contents)`.
    pub fn files(&self) -> impl Iterator<Item = (&'static str, &'static [u8])> + '_ {
        let prefix = format!("{}/", self.name);
        embedded::TEMPLATE_FILES
            .iter()
            .filter_map(move |(path, bytes)| {
                path.strip_prefix(prefix.as_str()).map(|p| (p, *bytes))
            })
    }
}

/// The values a template's placeholders are replaced with.
pub struct Values {
    pub project: String,
    pub description: String,
    /// The guest SDK crate's directory (Rust templates).
    pub sdk_path: Option<String>,
}

impl Values {
    /// `text` with every placeholder replaced.
    pub fn render(&self, text: &str) -> String {
        let crate_name = crate_name(&self.project);
        let replacements = [
            ("${PROJECT}", self.project.clone()),
            ("${DESCRIPTION_STRING}", json_string(&self.description)),
            ("${DESCRIPTION}", self.description.clone()),
            ("${PACKAGE}", package_name(&self.project)),
            ("${LIB}", crate_name.replace('-', "_")),
            ("${CRATE}", crate_name),
            ("${NPM_NAME}", npm_name(&self.project)),
            (
                "${SDK_PATH_STRING}",
                json_string(self.sdk_path.as_deref().unwrap_or_default()),
            ),
            ("${CAIRN_VERSION}", env!("CARGO_PKG_VERSION").to_owned()),
        ];
        let mut out = text.to_owned();
        for (placeholder, value) in replacements {
            out = out.replace(placeholder, &value);
        }
        out
    }
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// Whether `name` is a package name providers may have (the manifest's rule,
/// `^[a-zA-Z][-a-zA-Z0-9_]*$`).
pub fn is_package_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The package part of the project's type tokens (`<package>:index:App`): the project's name
/// when it is a package name, else the name with other characters turned into `-` and `app-`
/// in front when it does not start with a letter.
pub fn package_name(project: &str) -> String {
    if is_package_name(project) {
        return project.to_owned();
    }
    let mut name: String = project
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.insert_str(0, "app-");
    }
    name
}

/// The cargo package name: the package name in lower case (cargo warns about others), with a
/// suffix when it is one cargo or rustc refuses.
pub fn crate_name(project: &str) -> String {
    const RESERVED: &[&str] = &[
        "alloc",
        "core",
        "proc-macro",
        "proc_macro",
        "std",
        "test",
        "self",
        "super",
        "crate",
        "build",
        "deps",
        "examples",
        "incremental",
        "cairn-sdk",
        "cairn_sdk",
    ];
    let name = package_name(project).to_ascii_lowercase();
    if RESERVED.contains(&name.as_str()) || is_keyword(&name) {
        format!("{name}-app")
    } else {
        name
    }
}

fn is_keyword(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do",
        "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in",
        "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
        "return", "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe",
        "unsized", "use", "virtual", "where", "while", "yield",
    ];
    KEYWORDS.contains(&name)
}

/// The npm package name: lower case, not starting with `.` or `_`.
pub fn npm_name(project: &str) -> String {
    let name = project.to_ascii_lowercase();
    if name.starts_with(['.', '_']) {
        format!("app{name}")
    } else {
        name
    }
}

/// A project name made from a directory's name, as Pulumi makes one: the name if it is valid,
/// else the name without the characters a project name cannot have, else `project`.
pub fn project_name_from_dir(dir: &Path) -> String {
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if cairn_backend::names::is_project_name(&base) {
        return base;
    }
    let stripped: String = base
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(100)
        .collect();
    if cairn_backend::names::is_project_name(&stripped) {
        stripped
    } else {
        "project".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_has_files_and_a_project_file() {
        for template in TEMPLATES {
            let files: Vec<_> = template.files().map(|(p, _)| p).collect();
            assert!(
                files.contains(&"Pulumi.yaml"),
                "{}: {files:?}",
                template.name
            );
            assert!(files.contains(&"README.md"), "{}: {files:?}", template.name);
            assert!(
                files.contains(&".gitignore"),
                "{}: {files:?}",
                template.name
            );
            for (path, bytes) in template.files() {
                assert!(
                    std::str::from_utf8(bytes).is_ok(),
                    "{}/{path}",
                    template.name
                );
            }
        }
        assert_eq!(
            names(),
            "rust, rust-provider, python-wasm, python-provider, typescript-wasm, \
             typescript-provider, go-wasm, go-provider, python, typescript"
        );
        assert!(find("rust-provider").is_some());
        assert!(find("go").is_none());
    }

    #[test]
    fn placeholders_are_replaced_and_strings_escaped() {
        let values = Values {
            project: "My.App".to_owned(),
            description: "say \"hi\"\n".to_owned(),
            sdk_path: Some("/home/x/.cairn/sdk/cairn-sdk-0.1.0-abc/guest-sdk".to_owned()),
        };
        let text = "${PROJECT} ${PACKAGE} ${CRATE} ${LIB} ${NPM_NAME} ${DESCRIPTION_STRING} ${SDK_PATH_STRING} `${name}`";
        assert_eq!(
            values.render(text),
            "My.App My-App my-app my_app my.app \"say \\\"hi\\\"\\n\" \"/home/x/.cairn/sdk/cairn-sdk-0.1.0-abc/guest-sdk\" `${name}`"
        );
        // Every rendered project file of every template parses (YAML, JSON, TOML-ish).
        for template in TEMPLATES {
            for (path, bytes) in template.files() {
                let rendered = values.render(std::str::from_utf8(bytes).unwrap());
                if path.ends_with(".yaml") {
                    serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&rendered)
                        .unwrap_or_else(|e| panic!("{}/{path}: {e}\n{rendered}", template.name));
                }
                if path.ends_with(".json") {
                    serde_json::from_str::<serde_json::Value>(&rendered)
                        .unwrap_or_else(|e| panic!("{}/{path}: {e}\n{rendered}", template.name));
                }
                assert!(
                    !rendered.contains("${PROJECT}") && !rendered.contains("${PACKAGE}"),
                    "{}/{path}",
                    template.name
                );
            }
        }
    }

    #[test]
    fn names_derived_from_the_project() {
        assert_eq!(package_name("web"), "web");
        assert_eq!(package_name("1st.site"), "app-1st-site");
        assert_eq!(crate_name("Std"), "std-app");
        assert_eq!(crate_name("fn"), "fn-app");
        assert_eq!(crate_name("My_Site"), "my_site");
        assert_eq!(npm_name("_x"), "app_x");
        assert!(is_package_name("greeter-2"));
        assert!(!is_package_name("2greeter"));
        assert!(!is_package_name("a.b"));
        assert_eq!(project_name_from_dir(Path::new("/tmp/my app!")), "myapp");
        assert_eq!(project_name_from_dir(Path::new("/tmp/ok-name")), "ok-name");
        assert_eq!(project_name_from_dir(Path::new("/tmp/名前")), "project");
    }
}
