//! The provider configuration (`postgresql:host`, ...): Terraform's keys, defaults and
//! environment fallbacks, read tolerantly (stack configuration gives every value as text).
//!
//! | key | default | notes |
//! | --- | --- | --- |
//! | `host` | `PGHOST`, else `localhost` | reachable only through the `tcp` grant |
//! | `port` | `PGPORT`, else 5432 | |
//! | `username` | `PGUSER`, else `postgres` | |
//! | `password` | `PGPASSWORD` | secret |
//! | `database` | `PGDATABASE`, else `postgres` | where cluster-wide work happens |
//! | `sslmode` (`sslMode`) | `PGSSLMODE`, else `require` | an unset mode is `require` in the Terraform provider's driver |
//! | `sslrootcert` | — | inline PEM, or a path inside a granted directory |
//! | `superuser` | `PGSUPERUSER`, else true | gates reading password hashes on refresh |
//! | `connectTimeout` | `PGCONNECT_TIMEOUT`, else 180 | seconds; 0 or -1: no limit |
//! | `expectedVersion` | 9.0.0 | used until the server reports its version |
//! | `maxConnections` | 20 | 0: no limit |
//! | `databaseUsername` | `username` | receives reassigned objects |
//! | `scheme` | `postgres` | the only one supported |
//!
//! Environment variables are read only when the user grants them
//! (`cairn:grants.postgresql.env`); the sandbox has none otherwise. `clientcert`,
//! `awsRdsIamAuth`, `azureIdentityAuth` and `gcpIamImpersonateServiceAccount` (and the
//! `awspostgres` / `gcppostgres` schemes) need credentials outside the sandbox and are refused
//! by `check_config`.

use std::time::Duration;

use cairn_sdk::{CheckFailure, CheckResult, PropertyMap, Value};

use crate::client::SslMode;

/// libpq's sslmode values.
pub(crate) const SSL_MODES: [&str; 6] = [
    "disable",
    "allow",
    "prefer",
    "require",
    "verify-ca",
    "verify-full",
];

/// A server version (as Terraform's feature checks compare them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub(crate) const fn new(major: u32, minor: u32, patch: u32) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// From `server_version_num` (150012 is 15.12, 90624 is 9.6.24); `None` for 0.
    pub(crate) fn from_num(n: u32) -> Option<Version> {
        match n {
            0 => None,
            n if n >= 100_000 => Some(Version::new(n / 10_000, n % 10_000, 0)),
            n => Some(Version::new(n / 10_000, (n / 100) % 100, n % 100)),
        }
    }

    /// A tolerant semver parse, as Terraform's `semver.ParseTolerant`: an optional `v`,
    /// one to three numbers, anything after a `-` or `+` ignored.
    pub(crate) fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        let core = text.split(['-', '+']).next().unwrap_or_default();
        let mut parts = core.split('.');
        let mut next = |required: bool| -> Option<u32> {
            match parts.next() {
                Some(p) => p.parse().ok(),
                None if required => None,
                None => Some(0),
            }
        };
        let version = Version::new(next(true)?, next(false)?, next(false)?);
        parts.next().is_none().then_some(version)
    }

    /// Whether the version is at least `major.minor`.
    pub(crate) fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The default `expectedVersion` (Terraform's).
pub(crate) const DEFAULT_VERSION: Version = Version::new(9, 0, 0);

/// The provider's configuration, as `configure` read it.
#[derive(Clone, PartialEq)]
pub(crate) struct Settings {
    pub host: String,
    pub port: u16,
    pub username: String,
    /// Secret: never printed.
    pub password: Option<String>,
    pub database: String,
    pub sslmode: SslMode,
    /// Inline PEM or a path.
    pub sslrootcert: Option<String>,
    pub connect_timeout: Duration,
    pub superuser: bool,
    pub expected_version: Version,
    /// 0: no limit.
    pub max_connections: usize,
    pub database_username: Option<String>,
    /// Keys whose values are not known yet (a preview): connecting is refused.
    pub unknown: Vec<String>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[secret]"))
            .field("database", &self.database)
            .field("sslmode", &self.sslmode)
            .finish_non_exhaustive()
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            host: "localhost".into(),
            port: 5432,
            username: "postgres".into(),
            password: None,
            database: "postgres".into(),
            sslmode: SslMode::Require,
            sslrootcert: None,
            connect_timeout: Duration::from_secs(180),
            superuser: true,
            expected_version: DEFAULT_VERSION,
            max_connections: 20,
            database_username: None,
            unknown: Vec::new(),
        }
    }
}

impl Settings {
    /// The user objects are reassigned to and memberships are granted to (Terraform's
    /// `getDatabaseUsername`).
    pub(crate) fn current_user(&self) -> &str {
        self.database_username
            .as_deref()
            .filter(|u| !u.is_empty())
            .unwrap_or(&self.username)
    }

    /// Reads the configuration; `env` gives environment variables (when granted).
    pub(crate) fn from_config(
        config: &PropertyMap,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, Vec<CheckFailure>> {
        let mut r = Reader {
            config,
            env: &env,
            failures: Vec::new(),
            unknown: Vec::new(),
        };
        let defaults = Settings::default();
        let host = r
            .string("host", Some("PGHOST"))
            .filter(|h| !h.is_empty())
            .unwrap_or(defaults.host);
        let port = match r.int("port", Some("PGPORT")) {
            None => defaults.port,
            Some(p) => u16::try_from(p).ok().filter(|p| *p > 0).unwrap_or_else(|| {
                r.fail("port", format!("expected a port number, got {p}"));
                defaults.port
            }),
        };
        let username = r
            .string("username", Some("PGUSER"))
            .unwrap_or(defaults.username);
        let password = r
            .string("password", Some("PGPASSWORD"))
            .filter(|p| !p.is_empty());
        let database = r
            .string("database", Some("PGDATABASE"))
            .unwrap_or(defaults.database);
        let mode_key = if r.present("sslmode") {
            "sslmode"
        } else {
            "sslMode"
        };
        let sslmode = match r
            .string(mode_key, Some("PGSSLMODE"))
            .filter(|m| !m.is_empty())
        {
            None => defaults.sslmode,
            Some(m) => SslMode::parse(&m).unwrap_or_else(|| {
                r.fail(
                    mode_key,
                    format!("expected one of {}, got {m:?}", SSL_MODES.join(", ")),
                );
                defaults.sslmode
            }),
        };
        let sslrootcert = r.string("sslrootcert", None).filter(|s| !s.is_empty());
        let connect_timeout = match r.int("connectTimeout", Some("PGCONNECT_TIMEOUT")) {
            None => defaults.connect_timeout,
            Some(n) if n < -1 => {
                r.fail(
                    "connectTimeout",
                    format!("expected to be at least (-1), got {n}"),
                );
                defaults.connect_timeout
            }
            // 0 (and -1) wait without limit: a day stands for that.
            Some(n) if n <= 0 => Duration::from_secs(86_400),
            Some(n) => Duration::from_secs(n.unsigned_abs()),
        };
        let superuser = r.boolean("superuser", Some("PGSUPERUSER")).unwrap_or(true);
        let expected_version = match r.string("expectedVersion", None) {
            None => DEFAULT_VERSION,
            Some(v) => Version::parse(&v).unwrap_or_else(|| {
                r.fail("expectedVersion", format!("invalid version ({v:?})"));
                DEFAULT_VERSION
            }),
        };
        let max_connections = match r.int("maxConnections", None) {
            None => defaults.max_connections,
            Some(n) if n < -1 => {
                r.fail(
                    "maxConnections",
                    format!("expected to be at least (-1), got {n}"),
                );
                defaults.max_connections
            }
            Some(n) => usize::try_from(n.max(0)).unwrap_or(usize::MAX),
        };
        let database_username = r.string("databaseUsername", None).filter(|u| !u.is_empty());
        if let Some(scheme) = r.string("scheme", None)
            && scheme != "postgres"
        {
            let reason = match scheme.as_str() {
                "awspostgres" | "gcppostgres" => format!(
                    "{scheme:?} is not supported by this provider: it needs cloud credentials outside the sandbox; use \"postgres\""
                ),
                _ => format!(
                    "expected one of postgres, awspostgres, gcppostgres, got {scheme:?} (and only postgres is supported here)"
                ),
            };
            r.fail("scheme", reason);
        }
        for key in ["awsRdsIamAuth", "azureIdentityAuth"] {
            if r.boolean(key, None) == Some(true) {
                r.fail(
                    key,
                    "is not supported by this provider: it needs cloud credentials outside the sandbox",
                );
            }
        }
        if r.string("gcpIamImpersonateServiceAccount", None)
            .is_some_and(|s| !s.is_empty())
        {
            r.fail(
                "gcpIamImpersonateServiceAccount",
                "is not supported by this provider: it needs cloud credentials outside the sandbox",
            );
        }
        if r.present("clientcert") {
            r.fail(
                "clientcert",
                "client certificates are not supported by this provider",
            );
        }
        if !r.failures.is_empty() {
            return Err(r.failures);
        }
        Ok(Settings {
            host,
            port,
            username,
            password,
            database,
            sslmode,
            sslrootcert,
            connect_timeout,
            superuser,
            expected_version,
            max_connections,
            database_username,
            unknown: r.unknown,
        })
    }
}

/// `check_config`: the configuration's failures, the inputs as given.
pub(crate) fn check(inputs: cairn_sdk::Properties) -> CheckResult {
    let failures = match Settings::from_config(&inputs, |_| None) {
        Ok(_) => Vec::new(),
        Err(failures) => failures,
    };
    CheckResult { inputs, failures }
}

/// Reads configuration values: numbers and booleans may come as text.
struct Reader<'a> {
    config: &'a PropertyMap,
    env: &'a dyn Fn(&str) -> Option<String>,
    failures: Vec<CheckFailure>,
    unknown: Vec<String>,
}

impl Reader<'_> {
    fn fail(&mut self, key: &str, reason: impl Into<String>) {
        self.failures.push(CheckFailure::new(key, reason));
    }

    fn present(&self, key: &str) -> bool {
        self.config.get(key).is_some_and(|v| !v.is_null())
    }

    /// The value, or `None` (absent, unknown: recorded, or from the environment as text).
    fn value(&mut self, key: &str, env: Option<&str>) -> Option<Value> {
        match self.config.get(key) {
            Some(v) if v.is_unknown() => {
                self.unknown.push(key.to_owned());
                None
            }
            Some(v) if !v.is_null() => Some(v.reveal().clone()),
            _ => env.and_then(|name| (self.env)(name)).map(Value::from),
        }
    }

    fn string(&mut self, key: &str, env: Option<&str>) -> Option<String> {
        match self.value(key, env)? {
            Value::String(s) => Some(s),
            Value::Number(n) => Some(format!("{n}")),
            Value::Bool(b) => Some(b.to_string()),
            other => {
                self.fail(key, format!("expected a string, found a {}", other.kind()));
                None
            }
        }
    }

    fn int(&mut self, key: &str, env: Option<&str>) -> Option<i64> {
        let value = self.value(key, env)?;
        let n = match &value {
            Value::Number(n) if n.fract() == 0.0 => Some(*n as i64),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        if n.is_none() {
            self.fail(key, format!("expected an integer, found {value:?}"));
        }
        n
    }

    fn boolean(&mut self, key: &str, env: Option<&str>) -> Option<bool> {
        let value = self.value(key, env)?;
        let b = match &value {
            Value::Bool(b) => Some(*b),
            Value::String(s) => match s.trim() {
                "true" | "1" | "t" | "TRUE" | "True" => Some(true),
                "false" | "0" | "f" | "FALSE" | "False" => Some(false),
                _ => None,
            },
            _ => None,
        };
        if b.is_none() {
            self.fail(key, format!("expected a boolean, found a {}", value.kind()));
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_sdk::props;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn terraform_defaults() {
        let s = Settings::from_config(&PropertyMap::new(), no_env).unwrap();
        assert_eq!(s, Settings::default());
        assert_eq!(s.host, "localhost");
        assert_eq!(s.port, 5432);
        assert_eq!(s.sslmode, SslMode::Require);
        assert_eq!(s.connect_timeout, Duration::from_secs(180));
        assert!(s.superuser);
        assert_eq!(s.current_user(), "postgres");
    }

    #[test]
    fn values_as_text_and_environment_fallbacks() {
        let config = props! {
            "host" => "db", "port" => "6543", "superuser" => "false",
            "connectTimeout" => 0, "sslMode" => "disable", "databaseUsername" => "admin",
            "password" => cairn_sdk::secret("pw"), "expectedVersion" => "14",
        };
        let env = |name: &str| (name == "PGUSER").then(|| "from-env".to_owned());
        let s = Settings::from_config(&config, env).unwrap();
        assert_eq!((s.host.as_str(), s.port), ("db", 6543));
        assert!(!s.superuser);
        assert_eq!(s.sslmode, SslMode::Disable);
        assert_eq!(s.username, "from-env");
        assert_eq!(s.current_user(), "admin");
        assert_eq!(s.password.as_deref(), Some("pw"));
        assert_eq!(s.expected_version, Version::new(14, 0, 0));
        assert_eq!(s.connect_timeout, Duration::from_secs(86_400));
        assert!(!format!("{s:?}").contains("pw"));
    }

    #[test]
    fn refusals_name_their_keys() {
        let config = props! {
            "scheme" => "awspostgres", "awsRdsIamAuth" => true, "sslmode" => "sometimes",
            "clientcert" => props! {"cert" => "c", "key" => "k"}, "connectTimeout" => -2,
            "expectedVersion" => "x.y",
        };
        let failures: Vec<String> = Settings::from_config(&config, no_env)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            failures,
            [
                "sslmode: expected one of disable, allow, prefer, require, verify-ca, verify-full, got \"sometimes\"",
                "connectTimeout: expected to be at least (-1), got -2",
                "expectedVersion: invalid version (\"x.y\")",
                "scheme: \"awspostgres\" is not supported by this provider: it needs cloud credentials outside the sandbox; use \"postgres\"",
                "awsRdsIamAuth: is not supported by this provider: it needs cloud credentials outside the sandbox",
                "clientcert: client certificates are not supported by this provider",
            ]
        );
    }

    #[test]
    fn unknown_values_are_recorded() {
        let s = Settings::from_config(&props! {"host" => Value::Unknown}, no_env).unwrap();
        assert_eq!(s.unknown, ["host"]);
    }

    #[test]
    fn versions() {
        assert_eq!(Version::from_num(150_012), Some(Version::new(15, 12, 0)));
        assert_eq!(Version::from_num(90_624), Some(Version::new(9, 6, 24)));
        assert_eq!(Version::from_num(0), None);
        assert_eq!(Version::parse("9.6"), Some(Version::new(9, 6, 0)));
        assert_eq!(Version::parse("v10.1.2"), Some(Version::new(10, 1, 2)));
        assert_eq!(Version::parse("16-beta"), Some(Version::new(16, 0, 0)));
        assert_eq!(Version::parse("1.2.3.4"), None);
        assert!(Version::new(9, 5, 0).at_least(9, 5));
        assert!(!Version::new(9, 4, 9).at_least(9, 5));
    }
}
