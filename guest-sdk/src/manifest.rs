//! The provider manifest, embedded in the component's `cairn:manifest` custom section.
//!
//! # Format
//!
//! A provider crate keeps its manifest as a JSON file (conventionally `cairn.json` next to its
//! `Cargo.toml`) and names it in [`export_provider!`](crate::export_provider):
//!
//! ```json
//! {
//!   "name": "random",
//!   "version": "1.2.3",
//!   "schema": { "name": "random", "resources": { "random:index:RandomPet": { } } },
//!   "capabilities": {
//!     "http": ["api.example.com"],
//!     "tcp": ["*:5432"],
//!     "directories": [{ "guest": "/work", "write": true }],
//!     "env": ["TZ"]
//!   },
//!   "wit": "0.3.0"
//! }
//! ```
//!
//! * `name` (required): the package name, `^[a-zA-Z][-a-zA-Z0-9_]*$`.
//! * `version`: semver; when absent the crate's `CARGO_PKG_VERSION` is inserted at build time.
//! * `schema`: the package schema (Pulumi package metaschema); `get-schema` returns it unless
//!   the provider overrides [`Provider::get_schema`](crate::Provider::get_schema). Its `name`
//!   and `version`, when absent, are filled from the manifest's when it is served.
//! * `capabilities` (all optional): outbound HTTP hosts (`host` or `host:port`, no scheme),
//!   outbound TCP destinations (`host:port`, where `host` may be `*` for any host and `port`
//!   may be `*` for any port: a database provider asks for `*:*` and the user grants the one
//!   server), directories the provider wants mounted (`guest` is the absolute path it will use; `write`
//!   defaults to false) and environment variables it wants to read. These are *requests*: the
//!   user's stack configuration decides what is granted.
//! * `wit`: the WIT package version the component was built against; when absent the SDK's
//!   ([`WIT_VERSION`]) is inserted at build time.
//!
//! The section holds the file's bytes with only those two insertions (made right after the
//! opening `{`), computed at compile time. [`validate`] checks a manifest more thoroughly;
//! call it from a unit test of the provider crate.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The version of the `cairn:deploy` WIT package this SDK implements.
pub const WIT_VERSION: &str = "0.3.0";

/// The name of the custom section holding the manifest.
pub const SECTION: &str = "cairn:manifest";

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Json>,
    #[serde(default)]
    pub capabilities: Capabilities,
    pub wit: String,
}

/// What the provider asks to be granted.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Outbound HTTP hosts (`host` or `host:port`).
    #[serde(default)]
    pub http: Vec<String>,
    /// Outbound TCP destinations (`host:port`; `*` for any host or any port).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp: Vec<String>,
    #[serde(default)]
    pub directories: Vec<Directory>,
    /// Environment variable names.
    #[serde(default)]
    pub env: Vec<String>,
}

/// A directory the provider wants mounted at `guest`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Directory {
    pub guest: String,
    #[serde(default)]
    pub write: bool,
}

impl Manifest {
    /// Parses manifest JSON (as stored in the section).
    pub fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("invalid manifest: {e}"))
    }

    /// The schema as served by `get-schema`: with `name` and `version` filled in when absent.
    pub fn schema_json(&self) -> Option<String> {
        let schema = self.schema.as_ref()?;
        let Json::Object(map) = schema else {
            return Some(schema.to_string());
        };
        // `name` and `version` first, then the schema's own keys in order (its own `name` and
        // `version`, if any, keep their values: `validate` checks they agree).
        let mut served = serde_json::Map::new();
        served.insert("name".into(), Json::from(self.name.clone()));
        served.insert("version".into(), Json::from(self.version.clone()));
        for (k, v) in map {
            served.insert(k.clone(), v.clone());
        }
        Some(Json::Object(served).to_string())
    }
}

/// Parses and checks a manifest: name and version syntax, the WIT version, capability
/// syntax, and the schema's structure (tokens belong to the package, required properties exist,
/// every property has a type). Returns every problem found.
pub fn validate(bytes: &[u8]) -> Result<Manifest, Vec<String>> {
    let manifest = Manifest::parse(bytes).map_err(|e| vec![e])?;
    let mut errors = Vec::new();
    if !is_package_name(&manifest.name) {
        errors.push(format!(
            "name {:?} is not a valid package name",
            manifest.name
        ));
    }
    if !is_semver(&manifest.version) {
        errors.push(format!("version {:?} is not semver", manifest.version));
    }
    if manifest.wit != WIT_VERSION {
        errors.push(format!(
            "wit {:?} is not the SDK's WIT version {WIT_VERSION}",
            manifest.wit
        ));
    }
    let caps = &manifest.capabilities;
    for host in &caps.http {
        if host.is_empty() || host.contains(['/', ' ', '@']) {
            errors.push(format!("capabilities.http: {host:?} is not a host name"));
        }
    }
    for destination in &caps.tcp {
        if !is_tcp_request(destination) {
            errors.push(format!(
                "capabilities.tcp: {destination:?} is not HOST:PORT (a host name, an IP address or *; a port or *)"
            ));
        }
    }
    for dir in &caps.directories {
        if !dir.guest.starts_with('/') || dir.guest.split('/').any(|c| c == "..") {
            errors.push(format!(
                "capabilities.directories: guest path {:?} must be absolute, without '..'",
                dir.guest
            ));
        }
    }
    for var in &caps.env {
        if var.is_empty() || var.contains(['=', '\0']) {
            errors.push(format!("capabilities.env: {var:?} is not a variable name"));
        }
    }
    if let Some(schema) = &manifest.schema {
        check_schema(&manifest, schema, &mut errors);
    }
    if errors.is_empty() {
        Ok(manifest)
    } else {
        Err(errors)
    }
}

/// The section bytes for manifest source `src` (a file as written, `version` and `wit` optional)
/// and crate version `version`: what [`export_provider!`](crate::export_provider) embeds.
pub fn expand(src: &[u8], version: &str) -> Result<Vec<u8>, String> {
    let parsed: Json =
        serde_json::from_slice(src).map_err(|e| format!("the manifest is not JSON: {e}"))?;
    if !parsed.get("name").is_some_and(Json::is_string) {
        return Err("the manifest must be an object with a \"name\"".into());
    }
    let mut out = vec![0u8; section_len(src, version)];
    write_section(src, version, &mut out);
    Ok(out)
}

/// [`validate`]s the manifest a crate embeds: `src` as written, `version` its
/// `CARGO_PKG_VERSION`. For a provider's unit test:
///
/// ```rust
/// // In src/lib.rs, beside the crate's cairn.json:
/// cairn_sdk::manifest::validate_source(include_bytes!("../cairn.json"), env!("CARGO_PKG_VERSION"))
///     .unwrap_or_else(|e| panic!("{}", e.join("\n")));
/// ```
pub fn validate_source(src: &[u8], version: &str) -> Result<Manifest, Vec<String>> {
    validate(&expand(src, version).map_err(|e| vec![e])?)
}

/// `host:port` with `host` a host name, an IP address (IPv6 in brackets) or `*`, and `port` a
/// port number or `*` (the host's rule, `cairn-wasm`'s grants, is the one that counts).
fn is_tcp_request(s: &str) -> bool {
    let Some((host, port)) = s.rsplit_once(':') else {
        return false;
    };
    let port_ok = port == "*" || port.parse::<u16>().is_ok_and(|p| p > 0);
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .map_or(host, |v6| v6);
    let host_ok = host == "*"
        || host.parse::<std::net::IpAddr>().is_ok()
        || (!host.is_empty()
            && host.len() <= 253
            && host.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            }));
    port_ok && host_ok
}

fn is_package_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `MAJOR.MINOR.PATCH[-pre][+build]` with numeric parts without leading zeros.
fn is_semver(s: &str) -> bool {
    let (rest, build) = s.split_once('+').map_or((s, None), |(a, b)| (a, Some(b)));
    let (core, pre) = rest
        .split_once('-')
        .map_or((rest, None), |(a, b)| (a, Some(b)));
    let ident_ok = |part: &str| {
        !part.is_empty()
            && part
                .split('.')
                .all(|i| !i.is_empty() && i.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    };
    let nums: Vec<&str> = core.split('.').collect();
    nums.len() == 3
        && nums.iter().all(|n| {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit())
                && (n.len() == 1 || !n.starts_with('0'))
        })
        && pre.is_none_or(ident_ok)
        && build.is_none_or(ident_ok)
}

fn check_schema(manifest: &Manifest, schema: &Json, errors: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        errors.push("schema: must be an object".into());
        return;
    };
    for (key, expected) in [("name", &manifest.name), ("version", &manifest.version)] {
        if let Some(v) = schema.get(key)
            && v.as_str() != Some(expected.as_str())
        {
            errors.push(format!(
                "schema.{key}: {v} differs from the manifest's {expected:?}"
            ));
        }
    }
    if let Some(config) = schema.get("config") {
        check_object_type("schema.config", config, "variables", "required", errors);
    }
    for (section, object_checks) in [
        (
            "resources",
            &[
                ("inputProperties", "requiredInputs"),
                ("properties", "required"),
            ][..],
        ),
        ("functions", &[][..]),
        ("types", &[("properties", "required")][..]),
    ] {
        let Some(entries) = schema.get(section) else {
            continue;
        };
        let Some(entries) = entries.as_object() else {
            errors.push(format!("schema.{section}: must be an object"));
            continue;
        };
        for (token, spec) in entries {
            let at = format!("schema.{section}[{token:?}]");
            if !is_token(token) {
                errors.push(format!("{at}: not a type token (package:module:Name)"));
            } else if token.split(':').next() != Some(manifest.name.as_str()) {
                errors.push(format!("{at}: token is not in package {:?}", manifest.name));
            }
            if !spec.is_object() {
                errors.push(format!("{at}: must be an object"));
                continue;
            }
            for (props, required) in object_checks {
                check_object_type(&at, spec, props, required, errors);
            }
            if section == "functions" {
                for part in ["inputs", "outputs"] {
                    if let Some(details) = spec.get(part) {
                        check_object_type(
                            &format!("{at}.{part}"),
                            details,
                            "properties",
                            "required",
                            errors,
                        );
                    }
                }
            }
        }
    }
}

/// Checks `spec[props]` (a map of property specs) and that `spec[required]` names its keys.
fn check_object_type(at: &str, spec: &Json, props: &str, required: &str, errors: &mut Vec<String>) {
    let mut names = BTreeSet::new();
    match spec.get(props) {
        None => {}
        Some(Json::Object(map)) => {
            for (name, prop) in map {
                names.insert(name.as_str());
                check_type_ref(&format!("{at}.{props}.{name}"), prop, errors);
            }
        }
        Some(_) => errors.push(format!("{at}.{props}: must be an object")),
    }
    match spec.get(required) {
        None => {}
        Some(Json::Array(items)) => {
            for item in items {
                match item.as_str() {
                    Some(name) if names.contains(name) => {}
                    _ => errors.push(format!("{at}.{required}: {item} is not one of the {props}")),
                }
            }
        }
        Some(_) => errors.push(format!("{at}.{required}: must be an array")),
    }
}

/// A type reference: a primitive, array (`items`), map (`additionalProperties`), `$ref` or
/// `oneOf`.
fn check_type_ref(at: &str, spec: &Json, errors: &mut Vec<String>) {
    let Some(obj) = spec.as_object() else {
        errors.push(format!("{at}: must be an object"));
        return;
    };
    if obj.contains_key("$ref") {
        if !obj["$ref"].is_string() {
            errors.push(format!("{at}.$ref: must be a string"));
        }
        return;
    }
    if let Some(one_of) = obj.get("oneOf") {
        match one_of.as_array() {
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    check_type_ref(&format!("{at}.oneOf[{i}]"), item, errors);
                }
            }
            None => errors.push(format!("{at}.oneOf: must be an array")),
        }
        return;
    }
    match obj.get("type").and_then(Json::as_str) {
        Some("boolean" | "integer" | "number" | "string") => {}
        Some("array") => match obj.get("items") {
            Some(items) => check_type_ref(&format!("{at}.items"), items, errors),
            None => errors.push(format!("{at}: an array type needs \"items\"")),
        },
        Some("object") => {
            if let Some(ap) = obj.get("additionalProperties") {
                check_type_ref(&format!("{at}.additionalProperties"), ap, errors);
            }
        }
        Some(other) => errors.push(format!("{at}.type: unknown type {other:?}")),
        None => errors.push(format!("{at}: needs \"type\", \"$ref\" or \"oneOf\"")),
    }
}

/// `package:module:Name` per the metaschema (the module may be empty).
fn is_token(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    let [pkg, module, name] = parts[..] else {
        return false;
    };
    let rest_ok = |p: &str| {
        p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'))
    };
    is_package_name(pkg)
        && !pkg.contains('_')
        && rest_ok(module)
        && !name.is_empty()
        && rest_ok(name)
}

// ---- Compile-time construction of the section (used by `export_provider!`). ----

/// What a scan of the manifest's top-level object found.
struct Scan {
    /// Index of the opening `{`.
    open: usize,
    version: bool,
    wit: bool,
}

const fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

const fn key_is(src: &[u8], start: usize, end: usize, key: &[u8]) -> bool {
    if end - start != key.len() {
        return false;
    }
    let mut i = 0;
    while i < key.len() {
        if src[start + i] != key[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Finds the top-level keys of a JSON object, tracking strings and nesting.
const fn scan(src: &[u8]) -> Scan {
    let mut i = 0;
    while i < src.len() && is_ws(src[i]) {
        i += 1;
    }
    if i >= src.len() || src[i] != b'{' {
        panic!("the cairn manifest must be a JSON object");
    }
    let open = i;
    let (mut name, mut version, mut wit) = (false, false, false);
    let mut depth = 0usize;
    let (mut in_string, mut escaped, mut expect_key) = (false, false, false);
    let mut key_start = 0usize;
    while i < src.len() {
        let c = src[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
                if key_start > 0 {
                    name |= key_is(src, key_start, i, b"name");
                    version |= key_is(src, key_start, i, b"version");
                    wit |= key_is(src, key_start, i, b"wit");
                    key_start = 0;
                }
            }
        } else {
            match c {
                b'"' => {
                    in_string = true;
                    if depth == 1 && expect_key {
                        key_start = i + 1;
                        expect_key = false;
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    if depth == 1 {
                        expect_key = true;
                    }
                }
                b'}' | b']' => {
                    if depth == 0 {
                        panic!("the cairn manifest has unbalanced brackets");
                    }
                    depth -= 1;
                }
                b',' if depth == 1 => expect_key = true,
                _ => {}
            }
        }
        i += 1;
    }
    if in_string || depth != 0 {
        panic!("the cairn manifest is not complete JSON");
    }
    if !name {
        panic!("the cairn manifest has no \"name\"");
    }
    Scan { open, version, wit }
}

const VERSION_KEY: &[u8] = b"\"version\":\"";
const WIT_KEY: &[u8] = b"\"wit\":\"";
const END: &[u8] = b"\",";

/// The length of the section for manifest source `src` and crate version `version`.
pub const fn section_len(src: &[u8], version: &str) -> usize {
    let s = scan(src);
    let mut len = src.len();
    if !s.version {
        len += VERSION_KEY.len() + version.len() + END.len();
    }
    if !s.wit {
        len += WIT_KEY.len() + WIT_VERSION.len() + END.len();
    }
    len
}

const fn put(out: &mut [u8], at: usize, bytes: &[u8]) -> usize {
    let mut i = 0;
    while i < bytes.len() {
        out[at + i] = bytes[i];
        i += 1;
    }
    at + bytes.len()
}

/// Writes the section for `src` into `out` (at least [`section_len`] long); returns its length.
const fn write_section(src: &[u8], version: &str, out: &mut [u8]) -> usize {
    let s = scan(src);
    let (head, tail) = src.split_at(s.open + 1);
    let mut at = put(out, 0, head);
    if !s.version {
        at = put(out, at, VERSION_KEY);
        at = put(out, at, version.as_bytes());
        at = put(out, at, END);
    }
    if !s.wit {
        at = put(out, at, WIT_KEY);
        at = put(out, at, WIT_VERSION.as_bytes());
        at = put(out, at, END);
    }
    put(out, at, tail)
}

/// The section's bytes: `src` with `"version"` and `"wit"` inserted when absent.
/// `N` must be [`section_len`]`(src, version)`.
pub const fn section<const N: usize>(src: &[u8], version: &str) -> [u8; N] {
    let mut out = [0u8; N];
    if write_section(src, version, &mut out) != N {
        panic!("section length mismatch");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(src: &str, version: &str) -> String {
        let mut out = vec![0u8; section_len(src.as_bytes(), version)];
        let len = write_section(src.as_bytes(), version, &mut out);
        assert_eq!(len, out.len());
        String::from_utf8(out).unwrap()
    }

    const SRC: &[u8] = br#" {"name": "x", "schema": {"version": "9.9.9", "wit": 1}}"#;
    const SECTION_BYTES: [u8; section_len(SRC, "1.2.3")] = section(SRC, "1.2.3");

    #[test]
    fn defaults_are_inserted_at_compile_time() {
        let m = Manifest::parse(&SECTION_BYTES).unwrap();
        assert_eq!(m.version, "1.2.3");
        assert_eq!(m.wit, WIT_VERSION);
        assert_eq!(m.schema.unwrap()["version"], "9.9.9");
    }

    #[test]
    fn present_keys_are_kept() {
        let out = build(
            r#"{"wit": "0.3.0", "name": "a", "version": "2.0.0"}"#,
            "1.0.0",
        );
        assert_eq!(out, r#"{"wit": "0.3.0", "name": "a", "version": "2.0.0"}"#);
        let out = build(r#"{"name": "a\"version\"", "x": ["version"]}"#, "1.0.0");
        let m: Json = serde_json::from_str(&out).unwrap();
        assert_eq!(m["version"], "1.0.0");
        assert_eq!(m["name"], "a\"version\"");
    }

    #[test]
    #[should_panic(expected = "no \"name\"")]
    fn a_name_is_required() {
        scan(br#"{"schema": {"name": "x"}}"#);
    }

    #[test]
    #[should_panic(expected = "must be a JSON object")]
    fn the_manifest_is_an_object() {
        scan(b"[1]");
    }

    #[test]
    fn schema_is_served_with_name_and_version() {
        let m = Manifest::parse(
            br#"{"name": "p", "version": "1.0.0", "wit": "0.3.0", "schema": {"resources": {}}}"#,
        )
        .unwrap();
        let served = m.schema_json().unwrap();
        assert_eq!(served, r#"{"name":"p","version":"1.0.0","resources":{}}"#);
        let m = Manifest::parse(
            br#"{"name": "p", "version": "1.0.0", "wit": "0.3.0", "schema": {"version": "1.0.0", "name": "p"}}"#,
        )
        .unwrap();
        assert_eq!(
            m.schema_json().unwrap(),
            r#"{"name":"p","version":"1.0.0"}"#
        );
    }

    #[test]
    fn expand_checks_before_splicing() {
        let out = expand(br#"{"name": "a"}"#, "3.0.0").unwrap();
        assert_eq!(Manifest::parse(&out).unwrap().version, "3.0.0");
        assert!(expand(b"{", "1.0.0").unwrap_err().contains("not JSON"));
        assert!(expand(b"[]", "1.0.0").unwrap_err().contains("\"name\""));
        assert!(validate_source(br#"{"name": "a"}"#, "1.0").is_err());
    }

    #[test]
    fn tcp_requests() {
        for ok in [
            "db.internal:5432",
            "*:5432",
            "*:*",
            "127.0.0.1:5432",
            "[::1]:5432",
            "h:*",
        ] {
            assert!(is_tcp_request(ok), "{ok}");
        }
        for bad in [
            "db", "db:", "db:0", "db:70000", "x/y:1", ":5432", "*.x:1", "a b:1",
        ] {
            assert!(!is_tcp_request(bad), "{bad}");
        }
    }

    #[test]
    fn semver() {
        for ok in [
            "0.0.0",
            "1.2.3",
            "10.20.30-alpha.1",
            "1.0.0+build.5",
            "1.0.0-rc-1+x",
        ] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in [
            "1.2", "1.2.3.4", "01.2.3", "1.2.x", "1.2.3-", "1.2.3+", "v1.2.3", "",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn validation_reports_every_problem() {
        let bad = br#"{
            "name": "9bad", "version": "1.0", "wit": "0.0.1",
            "capabilities": {"http": ["https://x/"], "tcp": ["db:5432", "x/y:1", "*:0", "[::1]:*"], "directories": [{"guest": "work"}], "env": ["A=B"]},
            "schema": {
                "name": "other",
                "resources": {
                    "x:index:R": {"inputProperties": {"a": {"type": "string"}}, "requiredInputs": ["b"]},
                    "notatoken": {"properties": {"p": {"type": "wat"}, "q": {"type": "array"}, "r": {}}}
                }
            }
        }"#;
        let errors = validate(bad).unwrap_err();
        let text = errors.join("\n");
        for expected in [
            "not a valid package name",
            "is not semver",
            "wit \"0.0.1\"",
            "capabilities.http",
            "capabilities.tcp: \"x/y:1\"",
            "capabilities.tcp: \"*:0\"",
            "capabilities.directories",
            "capabilities.env",
            "schema.name",
            "token is not in package",
            "requiredInputs: \"b\" is not one of the inputProperties",
            "not a type token",
            "unknown type \"wat\"",
            "needs \"items\"",
            "needs \"type\"",
        ] {
            assert!(
                text.contains(expected),
                "{expected:?} missing from:\n{text}"
            );
        }
    }

    #[test]
    fn unknown_fields_are_refused() {
        let errors =
            validate(br#"{"name": "a", "version": "1.0.0", "wit": "0.3.0", "capabilites": {}}"#)
                .unwrap_err();
        assert!(
            errors[0].contains("unknown field `capabilites`"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_good_manifest_validates() {
        let good = br##"{
            "name": "p", "version": "1.0.0", "wit": "0.3.0",
            "capabilities": {"http": ["api.example.com:443"], "directories": [{"guest": "/work", "write": true}], "env": ["TZ"]},
            "schema": {
                "name": "p",
                "config": {"variables": {"region": {"type": "string"}}, "required": ["region"]},
                "resources": {
                    "p:index:R": {
                        "inputProperties": {
                            "a": {"type": "string"},
                            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                            "list": {"type": "array", "items": {"$ref": "#/types/p:index:T"}}
                        },
                        "requiredInputs": ["a"],
                        "properties": {"a": {"type": "string"}, "any": {"$ref": "pulumi.json#/Any"}},
                        "required": ["a"]
                    }
                },
                "types": {"p:index:T": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                "functions": {"p:index:f": {"inputs": {"properties": {"q": {"type": "number"}}, "required": ["q"]}}}
            }
        }"##;
        let m = validate(good).unwrap();
        assert_eq!(m.capabilities.directories[0].guest, "/work");
        assert!(m.capabilities.directories[0].write);
    }
}
