//! What the user grants providers: the `cairn:grants` stack configuration value.
//!
//! A provider runs with the *intersection* of what its manifest requests and what the user
//! grants here; everything else is denied. See the crate documentation for the format.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::manifest::{Manifest, normalize_guest_path, validate_guest_path};
use crate::tcp::{TcpHost, TcpPattern, TcpPolicy};

/// The stack configuration key grants are read from.
pub const GRANTS_KEY: &str = "cairn:grants";

/// The stack configuration key a program's grant is read from (same format as one package's).
pub const PROGRAM_KEY: &str = "cairn:program";

/// Memory limit per instance when the grant sets none.
pub const DEFAULT_MEMORY_MIB: u64 = 256;

/// Per-call deadline when neither the request nor the grant sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The largest `memoryMiB` a grant may give (64 GiB).
pub const MAX_MEMORY_MIB: u64 = 65536;

/// The longest `timeoutSeconds` a grant may give (7 days).
pub const MAX_TIMEOUT_SECONDS: f64 = 7.0 * 86400.0;

/// Grants for every package, parsed from `cairn:grants`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grants {
    packages: BTreeMap<String, PackageGrant>,
}

/// What one package is granted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PackageGrant {
    /// Outbound HTTP hosts: exact names or IP addresses, `*.suffix`, or `*` (any public host),
    /// each optionally with `:port`.
    pub http: Vec<String>,
    /// Outbound TCP destinations: `host:port`, the host an exact name, an IP address or `*`
    /// (any public address).
    pub tcp: Vec<TcpPattern>,
    pub directories: Vec<DirGrant>,
    /// Environment variables: a value given here, or `None` to pass the host's value.
    pub env: Vec<(String, Option<String>)>,
    pub memory_mib: Option<u64>,
    pub timeout_seconds: Option<f64>,
}

/// A granted directory: a host directory shown to the guest at `guest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGrant {
    /// The host directory, resolved against the base directory given to [`Grants::parse`].
    pub host: PathBuf,
    pub guest: String,
    pub write: bool,
}

/// A malformed `cairn:grants` value; the message names the offending key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}{path}: {reason}")]
pub struct GrantsError {
    /// The configuration key: [`GRANTS_KEY`] or [`PROGRAM_KEY`].
    pub key: &'static str,
    /// Where in the value, e.g. `.random.directories[0].host`.
    pub path: String,
    pub reason: String,
}

fn error(path: impl Into<String>, reason: impl Into<String>) -> GrantsError {
    GrantsError {
        key: GRANTS_KEY,
        path: path.into(),
        reason: reason.into(),
    }
}

impl Grants {
    /// No grants: every provider runs with nothing but its own memory.
    pub fn none() -> Grants {
        Grants::default()
    }

    /// Parses the `cairn:grants` value (`null` means no grants). Relative host directories
    /// resolve against `base_dir` (the project directory).
    pub fn parse(value: &Value, base_dir: &Path) -> Result<Grants, GrantsError> {
        let map = match value {
            Value::Null => return Ok(Grants::none()),
            Value::Object(map) => map,
            other => {
                return Err(error(
                    "",
                    format!(
                        "expected an object of package names, found {}",
                        json_kind(other)
                    ),
                ));
            }
        };
        let mut packages = BTreeMap::new();
        for (package, grant) in map {
            let at = format!(".{package}");
            crate::manifest::validate_package_name(package)
                .map_err(|reason| error(&at, format!("invalid package name: {reason}")))?;
            packages.insert(package.clone(), parse_package(&at, grant, base_dir)?);
        }
        Ok(Grants { packages })
    }

    /// Parses a program's grant, the `cairn:program` value (`null`: nothing granted).
    pub fn parse_program(value: &Value, base_dir: &Path) -> Result<PackageGrant, GrantsError> {
        if value.is_null() {
            return Ok(PackageGrant::default());
        }
        parse_package("", value, base_dir).map_err(|mut e| {
            e.key = PROGRAM_KEY;
            e
        })
    }

    /// Adds or replaces one package's grant.
    pub fn insert(&mut self, package: impl Into<String>, grant: PackageGrant) {
        self.packages.insert(package.into(), grant);
    }

    /// The grant for `package` (empty when none was given).
    pub fn package(&self, package: &str) -> PackageGrant {
        self.packages.get(package).cloned().unwrap_or_default()
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_package(at: &str, value: &Value, base_dir: &Path) -> Result<PackageGrant, GrantsError> {
    let Value::Object(map) = value else {
        return Err(error(
            at,
            format!("expected an object, found {}", json_kind(value)),
        ));
    };
    let mut grant = PackageGrant::default();
    for (key, value) in map {
        let at = format!("{at}.{key}");
        match key.as_str() {
            "http" => {
                for (i, host) in strings(&at, value)?.into_iter().enumerate() {
                    validate_host_pattern(&host)
                        .map_err(|reason| error(format!("{at}[{i}]"), reason))?;
                    grant.http.push(host.to_ascii_lowercase());
                }
            }
            "tcp" => {
                for (i, destination) in strings(&at, value)?.into_iter().enumerate() {
                    let pattern = TcpPattern::parse_grant(&destination)
                        .map_err(|reason| error(format!("{at}[{i}]"), reason))?;
                    grant.tcp.push(pattern);
                }
            }
            "directories" => {
                let Value::Array(items) = value else {
                    return Err(error(
                        &at,
                        format!("expected an array, found {}", json_kind(value)),
                    ));
                };
                for (i, item) in items.iter().enumerate() {
                    grant
                        .directories
                        .push(parse_dir(&format!("{at}[{i}]"), item, base_dir)?);
                }
            }
            "env" => match value {
                Value::Array(_) => {
                    for (i, name) in strings(&at, value)?.into_iter().enumerate() {
                        validate_env_name(&name)
                            .map_err(|reason| error(format!("{at}[{i}]"), reason))?;
                        grant.env.push((name, None));
                    }
                }
                Value::Object(vars) => {
                    for (name, v) in vars {
                        validate_env_name(name)
                            .map_err(|reason| error(format!("{at}.{name}"), reason))?;
                        let Value::String(v) = v else {
                            return Err(error(
                                format!("{at}.{name}"),
                                format!("expected a string, found {}", json_kind(v)),
                            ));
                        };
                        grant.env.push((name.clone(), Some(v.clone())));
                    }
                }
                other => {
                    return Err(error(
                        &at,
                        format!(
                            "expected an array of names or an object of values, found {}",
                            json_kind(other)
                        ),
                    ));
                }
            },
            "memoryMiB" => {
                let mib = value
                    .as_u64()
                    .filter(|m| valid_memory(*m))
                    .ok_or_else(|| error(&at, memory_expected(value)))?;
                grant.memory_mib = Some(mib);
            }
            "timeoutSeconds" => {
                let secs = value
                    .as_f64()
                    .filter(|s| valid_timeout(*s))
                    .ok_or_else(|| error(&at, timeout_expected(value)))?;
                grant.timeout_seconds = Some(secs);
            }
            other => {
                return Err(error(
                    &at,
                    format!(
                        "unknown grant {other:?} (expected http, tcp, directories, env, memoryMiB or timeoutSeconds)"
                    ),
                ));
            }
        }
    }
    Ok(grant)
}

fn valid_memory(mib: u64) -> bool {
    (1..=MAX_MEMORY_MIB).contains(&mib)
}

fn valid_timeout(seconds: f64) -> bool {
    seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT_SECONDS
}

fn memory_expected(found: impl std::fmt::Display) -> String {
    format!("expected a whole number of MiB from 1 to {MAX_MEMORY_MIB}, found {found}")
}

fn timeout_expected(found: impl std::fmt::Display) -> String {
    format!(
        "expected a number of seconds greater than 0 and at most {MAX_TIMEOUT_SECONDS} (7 days), found {found}"
    )
}

fn strings(at: &str, value: &Value) -> Result<Vec<String>, GrantsError> {
    let Value::Array(items) = value else {
        return Err(error(
            at,
            format!("expected an array of strings, found {}", json_kind(value)),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(s.clone()),
            other => Err(error(
                format!("{at}[{i}]"),
                format!("expected a string, found {}", json_kind(other)),
            )),
        })
        .collect()
}

fn parse_dir(at: &str, value: &Value, base_dir: &Path) -> Result<DirGrant, GrantsError> {
    let Value::Object(map) = value else {
        return Err(error(
            at,
            format!(
                "expected an object {{\"host\", \"guest\", \"write\"}}, found {}",
                json_kind(value)
            ),
        ));
    };
    let mut host = None;
    let mut guest = None;
    let mut write = false;
    for (key, value) in map {
        let at = format!("{at}.{key}");
        match (key.as_str(), value) {
            ("host", Value::String(s)) if !s.is_empty() => host = Some(base_dir.join(s)),
            ("guest", Value::String(s)) => {
                validate_guest_path(s).map_err(|reason| error(&at, reason))?;
                guest = Some(normalize_guest_path(s));
            }
            ("write", Value::Bool(b)) => write = *b,
            ("host", _) => return Err(error(at, "expected a non-empty path")),
            ("guest", _) => return Err(error(at, "expected an absolute path such as /work")),
            ("write", _) => return Err(error(at, "expected true or false")),
            (other, _) => {
                return Err(error(
                    at,
                    format!("unknown field {other:?} (expected host, guest, write)"),
                ));
            }
        }
    }
    Ok(DirGrant {
        host: host.ok_or_else(|| error(format!("{at}.host"), "missing"))?,
        guest: guest.ok_or_else(|| error(format!("{at}.guest"), "missing"))?,
        write,
    })
}

fn validate_env_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(format!("{name:?} is not a valid environment variable name"));
    }
    Ok(())
}

/// Splits `host[:port]` (IPv6 literals as `[::1]:443` or bare `::1`).
fn split_port(pattern: &str) -> Result<(&str, Option<u16>), String> {
    let parse_port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .map(Some)
            .ok_or_else(|| format!("invalid port {p:?}"))
    };
    if let Some(rest) = pattern.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| "unclosed [ in an IPv6 address".to_string())?;
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, parse_port(port)?)),
                None => Err(format!("unexpected {after:?} after the IPv6 address")),
            },
        };
    }
    match pattern.matches(':').count() {
        1 => {
            let (host, port) = pattern.split_once(':').unwrap_or((pattern, ""));
            Ok((host, parse_port(port)?))
        }
        _ => Ok((pattern, None)),
    }
}

/// A host pattern: `*`, `*.suffix`, a host name or an IP address, optionally with `:port`.
pub(crate) fn validate_host_pattern(pattern: &str) -> Result<(), String> {
    const EXPECTED: &str = "expected a host name (api.example.com), *.suffix, * or an IP address, optionally with :port; no scheme or path";
    let (host, _port) = split_port(pattern).map_err(|e| format!("{e}; {EXPECTED}"))?;
    if host == "*" || (host.parse::<IpAddr>().is_ok() && !host.starts_with("*.")) {
        return Ok(());
    }
    let name = host.strip_prefix("*.").unwrap_or(host);
    if is_host_name(name) {
        Ok(())
    } else {
        Err(EXPECTED.into())
    }
}

/// Whether `name` is a DNS host name: dot-separated labels of 1 to 63 letters, digits, `-` or
/// `_`, at most 253 bytes in all.
pub(crate) fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

/// Whether the host part of a pattern matches the (lower-case) `host`.
fn host_part_matches(pattern: &str, host: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    match pattern.strip_prefix("*.") {
        Some(suffix) => host
            .strip_suffix(suffix)
            .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
        None => pattern.eq_ignore_ascii_case(host),
    }
}

/// Whether `pattern` (`host[:port]`) matches a request to `host` on `port`.
pub(crate) fn host_matches(pattern: &str, host: &str, port: u16) -> bool {
    match split_port(pattern) {
        Ok((p, pattern_port)) => {
            pattern_port.is_none_or(|pp| pp == port) && host_part_matches(p, host)
        }
        Err(_) => false,
    }
}

/// Whether some request matches both patterns (so a request for `requested` is at least partly
/// granted by `granted`).
fn patterns_overlap(requested: &str, granted: &str) -> bool {
    let (Ok((r, rp)), Ok((g, gp))) = (split_port(requested), split_port(granted)) else {
        return false;
    };
    if rp.zip(gp).is_some_and(|(a, b)| a != b) {
        return false;
    }
    let (r, g) = (r.to_ascii_lowercase(), g.to_ascii_lowercase());
    match (r.strip_prefix("*."), g.strip_prefix("*.")) {
        _ if r == "*" || g == "*" || r == g => true,
        (None, _) => host_part_matches(&g, &r),
        (Some(_), None) => host_part_matches(&r, &g),
        // Two wildcards overlap when one suffix lies within the other.
        (Some(rs), Some(gs)) => host_part_matches(&g, rs) || host_part_matches(&r, gs),
    }
}

/// Whether some destination is both requested by `request` and granted by `grant` (for the
/// list of what was requested but not granted; connections are checked one by one).
fn tcp_overlap(request: &TcpPattern, grant: &TcpPattern) -> bool {
    let ports = request.port.is_none() || request.port == grant.port;
    let hosts = match (&request.host, &grant.host) {
        (TcpHost::Any, _) | (_, TcpHost::Any) => true,
        (r, g) => r == g,
    };
    ports && hosts
}

/// What a provider actually gets: its manifest's requests intersected with the user's grant.
#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    /// `name@version`, for messages.
    pub provider: String,
    pub package: String,
    /// Where the user grants this guest's capabilities, for messages: `cairn:grants.<package>`
    /// for a provider, `cairn:program` for a program.
    pub grant_key: String,
    pub http: HttpPolicy,
    pub tcp: TcpPolicy,
    /// Directories preopened for the guest.
    pub directories: Vec<DirGrant>,
    /// Environment variables the guest sees.
    pub env: Vec<(String, String)>,
    pub memory_bytes: u64,
    /// Deadline of a call whose request sets none.
    pub timeout: Duration,
    /// What the manifest requested but the user did not grant (for diagnostics).
    pub not_granted: Vec<String>,
}

/// The outbound HTTP allow-list: a host must match both lists.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HttpPolicy {
    pub requested: Vec<String>,
    pub granted: Vec<String>,
}

/// Why an HTTP request is refused before any connection is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HttpDecision {
    /// Allowed; `explicit` when the user granted this exact host (then private addresses are
    /// allowed too).
    Allow {
        explicit: bool,
    },
    NotRequested,
    NotGranted,
}

impl HttpPolicy {
    pub(crate) fn decide(&self, host: &str, port: u16) -> HttpDecision {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if !self.requested.iter().any(|p| host_matches(p, &host, port)) {
            return HttpDecision::NotRequested;
        }
        if !self.granted.iter().any(|p| host_matches(p, &host, port)) {
            return HttpDecision::NotGranted;
        }
        let explicit = self.granted.iter().any(|p| {
            host_matches(p, &host, port)
                && split_port(p).is_ok_and(|(h, _)| h.eq_ignore_ascii_case(&host))
        });
        HttpDecision::Allow { explicit }
    }
}

impl Sandbox {
    /// Whether the guest can change anything outside its sandbox: it may send HTTP requests,
    /// open TCP connections or write to a granted directory. A guest that cannot, and whose
    /// call dies, changed nothing: the outcome of that call is known.
    pub fn reaches_out(&self) -> bool {
        let http = !self.http.requested.is_empty() && !self.http.granted.is_empty();
        http || self.tcp.enabled() || self.directories.iter().any(|d| d.write)
    }

    /// Intersects `manifest`'s requests with `grant`. Fails when a granted host directory does not
    /// exist or is not a directory.
    /// A program's sandbox: everything in `grant` (the user wrote the program and the grant;
    /// there is no separate request to intersect with).
    pub fn for_program(name: &str, grant: &PackageGrant) -> Result<Sandbox, GrantsError> {
        let manifest = Manifest {
            name: name.to_owned(),
            version: semver::Version::new(0, 0, 0),
            capabilities: crate::manifest::Capabilities {
                http: grant.http.clone(),
                tcp: grant.tcp.iter().map(ToString::to_string).collect(),
                directories: grant
                    .directories
                    .iter()
                    .map(|d| crate::manifest::DirRequest {
                        guest: d.guest.clone(),
                        write: d.write,
                    })
                    .collect(),
                env: grant.env.iter().map(|(name, _)| name.clone()).collect(),
            },
            schema: Value::Null,
            wit: crate::manifest::SUPPORTED_WIT.to_owned(),
        };
        let mut sandbox = Sandbox::new(&manifest, grant).map_err(|mut e| {
            e.path = e.path.replacen(&format!(".{name}"), "", 1);
            e.key = PROGRAM_KEY;
            e
        })?;
        sandbox.provider = format!("program {name}");
        sandbox.grant_key = PROGRAM_KEY.to_owned();
        Ok(sandbox)
    }

    pub fn new(manifest: &Manifest, grant: &PackageGrant) -> Result<Sandbox, GrantsError> {
        let package = &manifest.name;
        let requested = &manifest.capabilities;
        let mut not_granted = Vec::new();

        for host in &requested.http {
            if !grant.http.iter().any(|g| patterns_overlap(host, g)) {
                not_granted.push(format!("http {host}"));
            }
        }

        let tcp_requested: Vec<TcpPattern> = requested
            .tcp
            .iter()
            .filter_map(|r| TcpPattern::parse_request(r).ok())
            .collect();
        for request in &tcp_requested {
            if !grant.tcp.iter().any(|g| tcp_overlap(request, g)) {
                not_granted.push(format!("tcp {request}"));
            }
        }

        let mut directories = Vec::new();
        for (i, dir) in grant.directories.iter().enumerate() {
            let Some(req) = requested
                .directories
                .iter()
                .find(|r| normalize_guest_path(&r.guest) == dir.guest)
            else {
                continue;
            };
            if !dir.host.is_dir() {
                return Err(error(
                    format!(".{package}.directories[{i}].host"),
                    format!("{} is not a directory", dir.host.display()),
                ));
            }
            directories.push(DirGrant {
                host: dir.host.clone(),
                guest: dir.guest.clone(),
                write: dir.write && req.write,
            });
        }
        for req in &requested.directories {
            let guest = normalize_guest_path(&req.guest);
            if !directories.iter().any(|d| d.guest == guest) {
                not_granted.push(format!("directory {guest}"));
            }
        }

        let mut env = Vec::new();
        for name in &requested.env {
            match grant.env.iter().find(|(n, _)| n == name) {
                Some((_, Some(value))) => env.push((name.clone(), value.clone())),
                Some((_, None)) => {
                    if let Ok(value) = std::env::var(name) {
                        env.push((name.clone(), value));
                    }
                }
                None => not_granted.push(format!("env {name}")),
            }
        }

        // Grants built in code (not parsed) get the same checks: a NaN, negative or huge
        // timeout would otherwise panic in `Duration::from_secs_f64` or print as "NaN s".
        let memory_mib = grant.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB);
        if !valid_memory(memory_mib) {
            return Err(error(
                format!(".{package}.memoryMiB"),
                memory_expected(memory_mib),
            ));
        }
        if let Some(seconds) = grant.timeout_seconds
            && !valid_timeout(seconds)
        {
            return Err(error(
                format!(".{package}.timeoutSeconds"),
                timeout_expected(seconds),
            ));
        }
        Ok(Sandbox {
            provider: manifest.id(),
            package: package.clone(),
            grant_key: format!("{GRANTS_KEY}.{package}"),
            http: HttpPolicy {
                requested: requested
                    .http
                    .iter()
                    .map(|h| h.to_ascii_lowercase())
                    .collect(),
                granted: grant.http.clone(),
            },
            tcp: TcpPolicy {
                requested: tcp_requested,
                granted: grant.tcp.clone(),
            },
            directories,
            env,
            memory_bytes: memory_mib * 1024 * 1024,
            timeout: grant
                .timeout_seconds
                .map(Duration::from_secs_f64)
                .unwrap_or(DEFAULT_TIMEOUT),
            not_granted,
        })
    }

    /// The memory limit in MiB, for messages.
    pub fn memory_mib(&self) -> u64 {
        self.memory_bytes / (1024 * 1024)
    }

    /// Whether this is a program's sandbox (granted under `cairn:program`).
    pub fn is_program(&self) -> bool {
        self.grant_key == PROGRAM_KEY
    }

    /// What the guest is, for messages: `"program"` or `"provider"`.
    pub fn kind(&self) -> &'static str {
        if self.is_program() {
            "program"
        } else {
            "provider"
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::manifest::{Capabilities, DirRequest};

    fn manifest(capabilities: Capabilities) -> Manifest {
        Manifest {
            name: "site".into(),
            version: semver::Version::new(1, 0, 0),
            schema: Value::Null,
            capabilities,
            wit: "0.3.0".into(),
        }
    }

    #[test]
    fn parses_the_documented_format() {
        let base = Path::new("/project");
        let grants = Grants::parse(
            &json!({"site": {
                "http": ["API.example.com", "*.example.org"],
                "directories": [{"host": "./public", "guest": "/work/", "write": true}],
                "env": ["TZ"],
                "memoryMiB": 512,
                "timeoutSeconds": 60
            }, "other": {"env": {"MODE": "test"}}}),
            base,
        )
        .unwrap();
        let site = grants.package("site");
        assert_eq!(site.http, ["api.example.com", "*.example.org"]);
        assert_eq!(
            site.directories,
            [DirGrant {
                host: base.join("./public"),
                guest: "/work".into(),
                write: true
            }]
        );
        assert_eq!(site.env, [("TZ".to_string(), None)]);
        assert_eq!(site.memory_mib, Some(512));
        assert_eq!(site.timeout_seconds, Some(60.0));
        assert_eq!(
            grants.package("other").env,
            [("MODE".to_string(), Some("test".to_string()))]
        );
        assert_eq!(grants.package("absent"), PackageGrant::default());
        assert_eq!(Grants::parse(&Value::Null, base).unwrap(), Grants::none());
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            (
                json!([]),
                "cairn:grants: expected an object of package names, found an array",
            ),
            (
                json!({"a": 1}),
                "cairn:grants.a: expected an object, found a number",
            ),
            (
                json!({"a": {"http": "x"}}),
                "cairn:grants.a.http: expected an array of strings",
            ),
            (
                json!({"a": {"http": ["https://x.com"]}}),
                "cairn:grants.a.http[0]: invalid port \"//x.com\"",
            ),
            (
                json!({"a": {"http": ["x.com/p"]}}),
                "cairn:grants.a.http[0]: expected a host name",
            ),
            (
                json!({"a": {"tcp": ["db.internal"]}}),
                "cairn:grants.a.tcp[0]: no port; expected HOST:PORT",
            ),
            (
                json!({"a": {"tcp": ["127.0.0.1:5432", "*:*"]}}),
                "cairn:grants.a.tcp[1]: a grant names its port",
            ),
            (
                json!({"a": {"tcp": "127.0.0.1:5432"}}),
                "cairn:grants.a.tcp: expected an array of strings",
            ),
            (
                json!({"a": {"directories": [{"guest": "/w"}]}}),
                "cairn:grants.a.directories[0].host: missing",
            ),
            (
                json!({"a": {"directories": [{"host": "x", "guest": "w"}]}}),
                "cairn:grants.a.directories[0].guest: must be an absolute path",
            ),
            (
                json!({"a": {"directories": [{"host": "x", "guest": "/w", "mode": 1}]}}),
                "cairn:grants.a.directories[0].mode: unknown field",
            ),
            (
                json!({"a": {"memoryMiB": 0}}),
                "cairn:grants.a.memoryMiB: expected a whole number of MiB from 1 to 65536, found 0",
            ),
            (
                json!({"a": {"memoryMiB": 1.5}}),
                "cairn:grants.a.memoryMiB: expected a whole number of MiB from 1 to 65536, found 1.5",
            ),
            (
                json!({"a": {"timeoutSeconds": -1}}),
                "cairn:grants.a.timeoutSeconds: expected a number of seconds greater than 0 and at most 604800 (7 days), found -1",
            ),
            (
                json!({"a": {"timeoutSeconds": 1e300}}),
                "cairn:grants.a.timeoutSeconds: expected a number of seconds greater than 0 and at most 604800 (7 days), found 1e+300",
            ),
            (
                json!({"a": {"timeoutSeconds": "NaN"}}),
                "cairn:grants.a.timeoutSeconds: expected a number of seconds greater than 0 and at most 604800 (7 days), found \"NaN\"",
            ),
            (
                json!({"a": {"sockets": true}}),
                "cairn:grants.a.sockets: unknown grant \"sockets\"",
            ),
            (
                json!({"a": {"env": [""]}}),
                "cairn:grants.a.env[0]: \"\" is not a valid",
            ),
            (
                json!({"../a": {}}),
                "cairn:grants.../a: invalid package name",
            ),
        ];
        for (value, expected) in cases {
            let err = Grants::parse(&value, Path::new("/"))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(expected),
                "{err:?} does not start with {expected:?}"
            );
        }
    }

    #[test]
    fn host_patterns_match() {
        assert!(host_matches("api.example.com", "api.example.com", 443));
        assert!(!host_matches("api.example.com", "example.com", 443));
        assert!(host_matches("*.example.com", "a.example.com", 443));
        assert!(host_matches("*.example.com", "a.b.example.com", 80));
        assert!(!host_matches("*.example.com", "example.com", 443));
        assert!(!host_matches("*.example.com", "evilexample.com", 443));
        assert!(host_matches("*", "anything.test", 8080));
        assert!(host_matches(
            "api.example.com:8443",
            "api.example.com",
            8443
        ));
        assert!(!host_matches(
            "api.example.com:8443",
            "api.example.com",
            443
        ));
        assert!(host_matches("[::1]:8080", "::1", 8080));
        assert!(host_matches("::1", "::1", 1));
        assert!(host_matches("127.0.0.1", "127.0.0.1", 9));
        for bad in [
            "https://x.com",
            "x.com/path",
            "x.com:0",
            "x.com:http",
            "[::1",
            "a..b",
            "",
        ] {
            assert!(validate_host_pattern(bad).is_err(), "{bad}");
        }
        for good in [
            "x.com:8080",
            "[::1]:443",
            "::1",
            "10.0.0.1:80",
            "*.x.com:443",
            "*",
        ] {
            assert!(validate_host_pattern(good).is_ok(), "{good}");
        }
        assert!(patterns_overlap("api.example.com", "*.example.com"));
        assert!(patterns_overlap("*.example.com", "api.example.com"));
        assert!(patterns_overlap("*.a.example.com", "*.example.com"));
        assert!(!patterns_overlap(
            "api.example.com:80",
            "api.example.com:443"
        ));
        assert!(!patterns_overlap("api.example.com", "other.example.com"));
    }

    #[test]
    fn the_sandbox_is_the_intersection() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(Capabilities {
            http: vec![
                "api.example.com".into(),
                "*.cdn.test".into(),
                "asked.test".into(),
            ],
            directories: vec![
                DirRequest {
                    guest: "/work".into(),
                    write: true,
                },
                DirRequest {
                    guest: "/cache".into(),
                    write: false,
                },
                DirRequest {
                    guest: "/ungranted".into(),
                    write: true,
                },
            ],
            env: vec!["TZ".into(), "HOME_NOT_GRANTED".into()],
            tcp: vec!["*:5432".into(), "cache.internal:6379".into()],
        });
        let grant = PackageGrant {
            http: vec![
                "api.example.com".into(),
                "*.cdn.test".into(),
                "granted-only.test".into(),
            ],
            tcp: vec![
                TcpPattern::parse_grant("127.0.0.1:5432").unwrap(),
                TcpPattern::parse_grant("127.0.0.1:22").unwrap(),
            ],
            directories: vec![
                DirGrant {
                    host: dir.path().into(),
                    guest: "/work".into(),
                    write: false,
                },
                DirGrant {
                    host: dir.path().into(),
                    guest: "/cache".into(),
                    write: true,
                },
                DirGrant {
                    host: dir.path().into(),
                    guest: "/not-requested".into(),
                    write: true,
                },
            ],
            env: vec![
                ("TZ".into(), Some("UTC".into())),
                ("NOT_REQUESTED".into(), Some("x".into())),
            ],
            memory_mib: Some(64),
            timeout_seconds: Some(5.0),
        };
        let s = Sandbox::new(&m, &grant).unwrap();
        // Directories: only requested AND granted; write only when both say so.
        let dirs: Vec<_> = s
            .directories
            .iter()
            .map(|d| (d.guest.as_str(), d.write))
            .collect();
        assert_eq!(dirs, [("/work", false), ("/cache", false)]);
        assert_eq!(s.env, [("TZ".to_string(), "UTC".to_string())]);
        assert_eq!(s.memory_bytes, 64 << 20);
        assert_eq!(s.timeout, Duration::from_secs(5));
        assert_eq!(
            s.http.decide("api.example.com", 443),
            HttpDecision::Allow { explicit: true }
        );
        assert_eq!(
            s.http.decide("x.cdn.test", 443),
            HttpDecision::Allow { explicit: false }
        );
        assert_eq!(s.http.decide("asked.test", 443), HttpDecision::NotGranted);
        assert_eq!(s.tcp.requested.len(), 2);
        assert_eq!(s.tcp.granted, grant.tcp);
        assert_eq!(
            s.http.decide("granted-only.test", 443),
            HttpDecision::NotRequested
        );
        assert_eq!(
            s.http.decide("evil.example", 443),
            HttpDecision::NotRequested
        );
        assert_eq!(
            s.not_granted,
            [
                "http asked.test",
                "tcp cache.internal:6379",
                "directory /ungranted",
                "env HOME_NOT_GRANTED"
            ]
        );
    }

    #[test]
    fn a_missing_granted_directory_is_an_error_naming_the_key() {
        let m = manifest(Capabilities {
            directories: vec![DirRequest {
                guest: "/work".into(),
                write: false,
            }],
            ..Capabilities::default()
        });
        let grant = PackageGrant {
            directories: vec![DirGrant {
                host: "/definitely/not/here".into(),
                guest: "/work".into(),
                write: false,
            }],
            ..PackageGrant::default()
        };
        let err = Sandbox::new(&m, &grant).unwrap_err().to_string();
        assert_eq!(
            err,
            "cairn:grants.site.directories[0].host: /definitely/not/here is not a directory"
        );
    }

    #[test]
    fn grants_built_in_code_are_checked_too() {
        let m = manifest(Capabilities::default());
        for (grant, expected) in [
            (
                PackageGrant {
                    timeout_seconds: Some(f64::NAN),
                    ..PackageGrant::default()
                },
                "cairn:grants.site.timeoutSeconds: expected a number of seconds greater than 0 and at most 604800 (7 days), found NaN",
            ),
            (
                PackageGrant {
                    timeout_seconds: Some(-3.0),
                    ..PackageGrant::default()
                },
                "cairn:grants.site.timeoutSeconds: expected a number of seconds greater than 0 and at most 604800 (7 days), found -3",
            ),
            (
                PackageGrant {
                    memory_mib: Some(u64::MAX),
                    ..PackageGrant::default()
                },
                "cairn:grants.site.memoryMiB: expected a whole number of MiB from 1 to 65536, found 18446744073709551615",
            ),
        ] {
            assert_eq!(Sandbox::new(&m, &grant).unwrap_err().to_string(), expected);
        }
        let err = Sandbox::for_program(
            "proj",
            &PackageGrant {
                timeout_seconds: Some(f64::INFINITY),
                ..PackageGrant::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "cairn:program.timeoutSeconds: expected a number of seconds greater than 0 and at most 604800 (7 days), found inf"
        );
    }

    #[test]
    fn defaults_apply_without_a_grant() {
        let s = Sandbox::new(&manifest(Capabilities::default()), &PackageGrant::default()).unwrap();
        assert_eq!(s.memory_mib(), DEFAULT_MEMORY_MIB);
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert!(s.directories.is_empty() && s.env.is_empty());
    }
}
