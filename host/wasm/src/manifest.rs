//! The provider manifest: the JSON document a provider component embeds in a custom section
//! named `cairn:manifest` (in the component itself or in one of its nested core modules).
//!
//! ```json
//! {
//!   "name": "random",
//!   "version": "1.2.3",
//!   "schema": { "name": "random", "resources": { … }, "functions": { … } },
//!   "capabilities": {
//!     "http": ["api.example.com", "*.example.org"],
//!     "tcp": ["*:5432"],
//!     "directories": [{ "guest": "/work", "write": true }],
//!     "env": ["TZ"]
//!   },
//!   "wit": "0.3.0"
//! }
//! ```
//!
//! `name` is the package name (letters, digits, `-`, `_` and `.`, starting with a letter or
//! digit, since it names a directory of the plugin store); `version` is a semantic version;
//! `schema` is the package schema (any JSON value, usually an object); `capabilities` is what the
//! provider *asks* for — it gets only what the user also grants (see [`crate::grants`]); `wit` is
//! the version of the `cairn:deploy` WIT package the component was built against, which must be
//! compatible with [`SUPPORTED_WIT`]. Unknown top-level fields are ignored; unknown capability
//! kinds are errors, so a provider never silently runs without something it asked for.

use serde::{Deserialize, Serialize};

/// The custom section that holds the manifest.
pub const MANIFEST_SECTION: &str = "cairn:manifest";

/// The `cairn:deploy` WIT version this host implements; manifests must name a compatible one.
pub const SUPPORTED_WIT: &str = "0.3.0";

/// A provider's manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    /// The package the provider implements.
    pub name: String,
    pub version: semver::Version,
    /// The package schema.
    pub schema: serde_json::Value,
    /// What the provider asks for; it gets the part the user grants.
    pub capabilities: Capabilities,
    /// The `cairn:deploy` WIT version it was built against.
    pub wit: String,
}

/// Capabilities a provider requests.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Outbound HTTP hosts (exact host names or `*.suffix`), reached through `wasi:http`.
    #[serde(default)]
    pub http: Vec<String>,
    /// Outbound TCP destinations (`host:port`; `*` for any host or any port), reached through
    /// `wasi:sockets`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp: Vec<String>,
    /// Directories the provider wants to see, by guest path.
    #[serde(default)]
    pub directories: Vec<DirRequest>,
    /// Environment variables the provider wants to read.
    #[serde(default)]
    pub env: Vec<String>,
}

/// A requested directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirRequest {
    /// The absolute path the provider sees, e.g. `/work`.
    pub guest: String,
    /// Whether it asks to write there.
    #[serde(default)]
    pub write: bool,
}

/// Why a file is not a loadable provider.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{file}: not a WebAssembly file: {reason}")]
    NotWasm { file: String, reason: String },
    #[error(
        "{file}: is a core WebAssembly module, not a component (build providers for wasm32-wasip2)"
    )]
    NotAComponent { file: String },
    #[error("{file}: has no `{MANIFEST_SECTION}` custom section (is it a Cairn provider?)")]
    Missing { file: String },
    #[error("{file}: has {count} `{MANIFEST_SECTION}` sections; expected one")]
    Duplicate { file: String, count: usize },
    #[error("{file}: the `{MANIFEST_SECTION}` section is not valid JSON: {reason}")]
    BadJson { file: String, reason: String },
    #[error("{file}: manifest field {field:?}: {reason}")]
    BadField {
        file: String,
        field: &'static str,
        reason: String,
    },
    #[error(
        "{file}: built against cairn:deploy WIT {found}, but this host implements {SUPPORTED_WIT}"
    )]
    UnsupportedWit { file: String, found: String },
}

/// The manifest as written, before validation.
#[derive(Deserialize)]
struct RawManifest {
    name: Option<String>,
    version: Option<String>,
    #[serde(default)]
    schema: serde_json::Value,
    #[serde(default)]
    capabilities: Option<serde_json::Value>,
    wit: Option<String>,
}

impl Manifest {
    /// The package schema as the provider serves it (the guest SDK's rule): the manifest's
    /// `schema` with `name` and `version` taken from the manifest when it has none of its own.
    /// `None` when the manifest carries no schema.
    pub fn served_schema(&self) -> Option<serde_json::Value> {
        let serde_json::Value::Object(schema) = &self.schema else {
            return (!self.schema.is_null()).then(|| self.schema.clone());
        };
        let mut served = serde_json::Map::new();
        served.insert("name".into(), self.name.clone().into());
        served.insert("version".into(), self.version.to_string().into());
        for (key, value) in schema {
            served.insert(key.clone(), value.clone());
        }
        Some(serde_json::Value::Object(served))
    }

    /// Finds and parses the manifest of a component. `file` names the file in errors.
    pub fn from_component(file: &str, bytes: &[u8]) -> Result<Manifest, ManifestError> {
        let data = find_manifest_section(file, bytes)?;
        Manifest::parse(file, data)
    }

    /// Parses manifest JSON (the contents of the custom section).
    pub fn parse(file: &str, data: &[u8]) -> Result<Manifest, ManifestError> {
        let raw: RawManifest =
            serde_json::from_slice(data).map_err(|e| ManifestError::BadJson {
                file: file.to_owned(),
                reason: e.to_string(),
            })?;
        let bad = |field: &'static str, reason: String| ManifestError::BadField {
            file: file.to_owned(),
            field,
            reason,
        };
        let name = raw.name.ok_or_else(|| bad("name", "missing".into()))?;
        validate_package_name(&name).map_err(|reason| bad("name", reason))?;
        let version = raw
            .version
            .ok_or_else(|| bad("version", "missing".into()))?;
        let version = semver::Version::parse(&version).map_err(|e| {
            bad(
                "version",
                format!("{version:?} is not a semantic version: {e}"),
            )
        })?;
        let capabilities = match raw.capabilities {
            None | Some(serde_json::Value::Null) => Capabilities::default(),
            Some(value) => {
                serde_json::from_value(value).map_err(|e| bad("capabilities", e.to_string()))?
            }
        };
        for dir in &capabilities.directories {
            validate_guest_path(&dir.guest).map_err(|reason| {
                bad(
                    "capabilities",
                    format!("directory {:?}: {reason}", dir.guest),
                )
            })?;
        }
        for host in &capabilities.http {
            crate::grants::validate_host_pattern(host)
                .map_err(|reason| bad("capabilities", format!("http host {host:?}: {reason}")))?;
        }
        for destination in &capabilities.tcp {
            crate::tcp::TcpPattern::parse_request(destination).map_err(|reason| {
                bad(
                    "capabilities",
                    format!("tcp destination {destination:?}: {reason}"),
                )
            })?;
        }
        let wit = raw.wit.ok_or_else(|| bad("wit", "missing".into()))?;
        let wit_version = semver::Version::parse(&wit)
            .map_err(|e| bad("wit", format!("{wit:?} is not a semantic version: {e}")))?;
        if !wit_supported(&wit_version) {
            return Err(ManifestError::UnsupportedWit {
                file: file.to_owned(),
                found: wit,
            });
        }
        Ok(Manifest {
            name,
            version,
            schema: raw.schema,
            capabilities,
            wit,
        })
    }

    /// `name@version`, as errors and logs name the provider.
    pub fn id(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// Whether a manifest's WIT version is one this host implements (`^0.1.0`: same minor while 0.x).
fn wit_supported(version: &semver::Version) -> bool {
    let supported =
        semver::VersionReq::parse(&format!("^{SUPPORTED_WIT}")).unwrap_or(semver::VersionReq::STAR);
    supported.matches(version)
}

/// Package names become directory names in the plugin store, so they are kept plain.
pub(crate) fn validate_package_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    match chars.next() {
        None => return Err("is empty".into()),
        Some(c) if !c.is_ascii_alphanumeric() => {
            return Err(format!("{name:?} must start with a letter or digit"));
        }
        _ => {}
    }
    if name.len() > 128 {
        return Err(format!("{name:?} is longer than 128 characters"));
    }
    if let Some(c) = chars.find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))) {
        return Err(format!(
            "{name:?} contains {c:?} (allowed: letters, digits, '-', '_', '.')"
        ));
    }
    Ok(())
}

/// A guest directory path: absolute, `/`-separated, with no `.`/`..` components.
pub(crate) fn validate_guest_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') {
        return Err("must be an absolute path such as /work".into());
    }
    if path.split('/').any(|c| c == "." || c == "..") {
        return Err("must not contain . or .. components".into());
    }
    Ok(())
}

/// The guest path in a canonical form (no trailing or doubled slashes) for comparisons.
pub(crate) fn normalize_guest_path(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

/// Finds the manifest section's contents: in the component or any nested module or component.
fn find_manifest_section<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a [u8], ManifestError> {
    use wasmparser::{Encoding, Parser, Payload};

    let not_wasm = |reason: String| ManifestError::NotWasm {
        file: file.to_owned(),
        reason,
    };
    let mut found: Vec<&'a [u8]> = Vec::new();
    let mut first = true;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| not_wasm(e.to_string()))?;
        match payload {
            Payload::Version { encoding, .. } if first => {
                first = false;
                if encoding == Encoding::Module {
                    return Err(ManifestError::NotAComponent {
                        file: file.to_owned(),
                    });
                }
            }
            Payload::CustomSection(reader) if reader.name() == MANIFEST_SECTION => {
                found.push(reader.data());
            }
            _ => {}
        }
    }
    if first {
        return Err(not_wasm("empty file".into()));
    }
    match found.len() {
        0 => Err(ManifestError::Missing {
            file: file.to_owned(),
        }),
        1 => Ok(found[0]),
        count => {
            // The same manifest embedded twice (e.g. by two link steps) is harmless.
            if found.iter().all(|d| *d == found[0]) {
                Ok(found[0])
            } else {
                Err(ManifestError::Duplicate {
                    file: file.to_owned(),
                    count,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component_with(sections: &[&str]) -> Vec<u8> {
        let customs: String = sections
            .iter()
            .map(|s| {
                let escaped: String = s.bytes().map(|b| format!("\\{b:02x}")).collect();
                format!("(@custom \"{MANIFEST_SECTION}\" \"{escaped}\")")
            })
            .collect();
        wat::parse_str(format!("(component (core module {customs}))")).unwrap()
    }

    const GOOD: &str = r#"{"name":"random","version":"1.2.3","schema":{"name":"random"},
        "capabilities":{"http":["api.example.com","*.example.org"],
        "directories":[{"guest":"/work","write":true}],"env":["TZ"]},"wit":"0.3.0"}"#;

    #[test]
    fn finds_the_manifest_in_a_nested_core_module() {
        let m = Manifest::from_component("p.wasm", &component_with(&[GOOD])).unwrap();
        assert_eq!(m.name, "random");
        assert_eq!(m.version, semver::Version::new(1, 2, 3));
        assert_eq!(m.schema["name"], "random");
        assert_eq!(m.capabilities.http, ["api.example.com", "*.example.org"]);
        assert_eq!(
            m.capabilities.directories,
            [DirRequest {
                guest: "/work".into(),
                write: true
            }]
        );
        assert_eq!(m.capabilities.env, ["TZ"]);
        assert_eq!(m.id(), "random@1.2.3");
    }

    #[test]
    fn the_served_schema_takes_name_and_version_from_the_manifest_when_absent() {
        let m = Manifest::parse(
            "t",
            br#"{"name":"p","version":"1.2.3","wit":"0.3.0","schema":{"resources":{}}}"#,
        )
        .unwrap();
        assert_eq!(
            m.served_schema().unwrap(),
            serde_json::json!({"name": "p", "version": "1.2.3", "resources": {}})
        );
        let m = Manifest::parse(
            "t",
            br#"{"name":"p","version":"1.2.3","wit":"0.3.0","schema":{"name":"q","version":"2.0.0"}}"#,
        )
        .unwrap();
        assert_eq!(m.served_schema().unwrap()["name"], "q");
        assert_eq!(m.served_schema().unwrap()["version"], "2.0.0");
        let m = Manifest::parse("t", br#"{"name":"p","version":"1.2.3","wit":"0.3.0"}"#).unwrap();
        assert_eq!(m.served_schema(), None);
    }

    #[test]
    fn capabilities_and_schema_are_optional() {
        let m = Manifest::parse("p", br#"{"name":"a","version":"0.1.0","wit":"0.3.7"}"#).unwrap();
        assert_eq!(m.capabilities, Capabilities::default());
        assert!(m.schema.is_null());
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"not wasm".to_vec(), "p.wasm: not a WebAssembly file"),
            (
                wat::parse_str("(module)").unwrap(),
                "p.wasm: is a core WebAssembly module, not a component",
            ),
            (
                wat::parse_str("(component)").unwrap(),
                "p.wasm: has no `cairn:manifest` custom section",
            ),
            (
                component_with(&["{"]),
                "p.wasm: the `cairn:manifest` section is not valid JSON",
            ),
            (
                component_with(&[r#"{"name":"a","version":"one","wit":"0.3.0"}"#]),
                "p.wasm: manifest field \"version\": \"one\" is not a semantic version",
            ),
            (
                component_with(&[r#"{"version":"1.0.0","wit":"0.3.0"}"#]),
                "p.wasm: manifest field \"name\": missing",
            ),
            (
                component_with(&[r#"{"name":"../x","version":"1.0.0","wit":"0.3.0"}"#]),
                "p.wasm: manifest field \"name\": \"../x\" must start with a letter or digit",
            ),
            (
                component_with(&[r#"{"name":"a","version":"1.0.0","wit":"0.1.0"}"#]),
                "p.wasm: built against cairn:deploy WIT 0.1.0, but this host implements 0.3.0",
            ),
            (
                component_with(&[
                    r#"{"name":"a","version":"1.0.0","wit":"0.3.0","capabilities":{"sockets":true}}"#,
                ]),
                "p.wasm: manifest field \"capabilities\": unknown field `sockets`",
            ),
            (
                component_with(&[
                    r#"{"name":"a","version":"1.0.0","wit":"0.3.0","capabilities":{"directories":[{"guest":"work"}]}}"#,
                ]),
                "must be an absolute path",
            ),
            (
                component_with(&[GOOD, r#"{"name":"b","version":"1.0.0","wit":"0.3.0"}"#]),
                "p.wasm: has 2 `cairn:manifest` sections",
            ),
        ];
        for (bytes, expected) in cases {
            let err = Manifest::from_component("p.wasm", &bytes)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(expected),
                "{err:?} does not contain {expected:?}"
            );
        }
    }

    #[test]
    fn guest_paths_normalize() {
        assert_eq!(normalize_guest_path("/work/"), "/work");
        assert_eq!(normalize_guest_path("//a//b"), "/a/b");
        assert_eq!(normalize_guest_path("/"), "/");
    }
}
