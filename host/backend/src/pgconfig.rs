//! How a `postgres://` backend URL becomes a connection: the URL, then the libpq environment
//! variables for what it leaves out (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`,
//! `PGPASSFILE` / `~/.pgpass`, `PGCONNECT_TIMEOUT`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGAPPNAME`),
//! as libpq reads
//! them. The password is never shown: every URL printed goes through [`redact`] or is rebuilt
//! without it ([`PgTarget::display`]).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use postgres::config::Host;

use crate::pgtls::{SslMode, TlsSettings};
use crate::{BackendError, Result};

/// How long connecting may take unless `connect_timeout` or `PGCONNECT_TIMEOUT` says otherwise.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `url` names a PostgreSQL backend.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The URL with any password (in the user part or a `password=` parameter) replaced by `****`.
pub fn redact(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:****@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=****")
                    }
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    match scheme {
        Some(scheme) => format!("{scheme}://{authority}{tail}"),
        None => format!("{authority}{tail}"),
    }
}

/// A resolved connection: the driver's configuration and how to name it to people.
#[derive(Clone)]
pub struct PgTarget {
    pub config: postgres::Config,
    /// `sslmode` and `sslrootcert`, which Cairn handles itself (the driver knows fewer modes).
    pub tls: TlsSettings,
    /// `postgres://user@host:port/database`: no password, whatever the URL held.
    pub display: String,
    pub user: String,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The configuration holds the password: only the display form is shown.
        f.debug_struct("PgTarget")
            .field("display", &self.display)
            .finish()
    }
}

/// Where the environment's values come from (the process's, or a test's).
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

/// Resolves a backend URL against the libpq environment.
pub fn resolve(url: &str, env: &dyn Env) -> Result<PgTarget> {
    let shown = redact(url);
    let (url, tls) = &take_tls_parameters(url, env)?;
    // The driver's parser gives hosts without a port 5432; libpq gives them PGPORT.
    let url = &match env.var("PGPORT") {
        Some(port) => {
            port.parse::<u16>().map_err(|_| {
                BackendError::Config(format!("PGPORT must be a port number, got {port:?}"))
            })?;
            with_default_port(url, &port)
        }
        None => url.to_owned(),
    };
    let mut config = postgres::Config::from_str(url).map_err(|e| {
        BackendError::Config(format!(
            "backend URL {shown} is not a valid PostgreSQL connection URL: {e}"
        ))
    })?;
    if config.get_hosts().is_empty() {
        let hosts = env.var("PGHOST").unwrap_or_else(|| "localhost".to_owned());
        for host in hosts.split(',') {
            if host.starts_with('/') {
                config.host_path(host);
            } else {
                config.host(host);
            }
        }
    }
    if config.get_ports().is_empty()
        && let Some(port) = env.var("PGPORT")
        && let Ok(port) = port.parse()
    {
        config.port(port);
    }
    let user = match config.get_user() {
        Some(user) => user.to_owned(),
        None => env.var("PGUSER").unwrap_or_else(crate::os_user),
    };
    config.user(&user);
    let database = match config.get_dbname() {
        Some(db) => db.to_owned(),
        None => env.var("PGDATABASE").unwrap_or_else(|| user.clone()),
    };
    config.dbname(&database);
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".to_owned());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    if config.get_password().is_none() {
        if let Some(password) = env.var("PGPASSWORD") {
            config.password(password);
        } else if let Some(password) = pgpass_password(env, &host, port, &database, &user) {
            config.password(password);
        }
    }
    if config.get_connect_timeout().is_none() {
        let timeout = match env.var("PGCONNECT_TIMEOUT") {
            Some(seconds) => Duration::from_secs(seconds.parse::<u64>().map_err(|_| {
                BackendError::Config(format!(
                    "PGCONNECT_TIMEOUT must be a number of seconds, got {seconds:?}"
                ))
            })?),
            None => DEFAULT_CONNECT_TIMEOUT,
        };
        config.connect_timeout(timeout);
    }
    config.ssl_mode(tls.mode.driver());
    if config.get_application_name().is_none() {
        config.application_name(&env.var("PGAPPNAME").unwrap_or_else(|| "cairn".to_owned()));
    }
    // A vanished client is noticed by keepalives; see `postgres.rs` for the server side.
    config.keepalives(true);
    config.keepalives_idle(Duration::from_secs(10));
    let scheme = url.split("://").next().unwrap_or("postgres");
    let host_part = if host.starts_with('/') {
        format!("?host={host}&port={port}")
    } else {
        format!("{host}:{port}")
    };
    let display = if host.starts_with('/') {
        format!("{scheme}://{user}@/{database}{host_part}")
    } else {
        format!("{scheme}://{user}@{host_part}/{database}")
    };
    Ok(PgTarget {
        config,
        tls: tls.clone(),
        display,
        user,
    })
}

/// Takes `sslmode` and `sslrootcert` out of the URL's parameters (else `PGSSLMODE` and
/// `PGSSLROOTCERT`; the mode defaults to `prefer`), returning the URL without them.
fn take_tls_parameters(url: &str, env: &dyn Env) -> Result<(String, TlsSettings)> {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, query),
        None => (url, ""),
    };
    let mut mode = None;
    let mut root_cert = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslmode", value)) => mode = Some(SslMode::parse(value)?),
            Some(("sslrootcert", value)) => root_cert = Some(PathBuf::from(value)),
            _ => kept.push(pair),
        }
    }
    let mode = match mode {
        Some(mode) => mode,
        None => match env.var("PGSSLMODE") {
            Some(value) => SslMode::parse(&value)
                .map_err(|e| BackendError::Config(format!("PGSSLMODE: {e}")))?,
            None => SslMode::Prefer,
        },
    };
    let root_cert = root_cert.or_else(|| env.var("PGSSLROOTCERT").map(PathBuf::from));
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, TlsSettings { mode, root_cert }))
}

/// The URL with `port` given to each host that names none (and, if it names no host, as a
/// `port` parameter unless it has one).
fn with_default_port(url: &str, port: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (format!("{userinfo}@"), hosts),
        None => (String::new(), authority),
    };
    if hosts.is_empty() {
        if tail.contains("port=") {
            return url.to_owned();
        }
        let separator = if tail.contains('?') { '&' } else { '?' };
        return format!("{scheme}://{authority}{tail}{separator}port={port}");
    }
    let hosts: Vec<String> = hosts
        .split(',')
        .map(|host| {
            let has_port = match host.strip_prefix('[') {
                Some(v6) => v6.contains("]:"),
                None => host.contains(':'),
            };
            if has_port {
                host.to_owned()
            } else {
                format!("{host}:{port}")
            }
        })
        .collect();
    format!("{scheme}://{userinfo}{}{tail}", hosts.join(","))
}

/// The password `.pgpass` gives for a connection, as libpq finds it: `PGPASSFILE` or
/// `~/.pgpass`, ignored (with a warning) if others can read it; `host:port:db:user:password`
/// lines, `*` matching anything, `\` escaping `:` and `\`, the first match winning.
fn pgpass_password(
    env: &dyn Env,
    host: &str,
    port: u16,
    database: &str,
    user: &str,
) -> Option<String> {
    let path = match env.var("PGPASSFILE") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env.var("HOME")?).join(".pgpass"),
    };
    let text = std::fs::read_to_string(&path).ok()?;
    if !private(&path) {
        tracing::warn!(
            "ignoring the password file {}: others can read it (it should be u=rw, 0600)",
            path.display()
        );
        return None;
    }
    // libpq matches `localhost` for connections through the default socket too.
    let host = if host.starts_with('/') {
        "localhost"
    } else {
        host
    };
    let port = port.to_string();
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split_pgpass_line(line);
            let [h, p, d, u, password] = fields.as_slice() else {
                return None;
            };
            let matches = |pattern: &str, value: &str| pattern == "*" || pattern == value;
            (matches(h, host) && matches(p, &port) && matches(d, database) && matches(u, user))
                .then(|| password.clone())
        })
}

fn split_pgpass_line(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next()
                    && let Some(field) = fields.last_mut()
                {
                    field.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => {
                if let Some(field) = fields.last_mut() {
                    field.push(c);
                }
            }
        }
    }
    fields
}

fn private(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o077 == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct TestEnv(HashMap<&'static str, String>);

    impl Env for TestEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).cloned()
        }
    }

    fn env(pairs: &[(&'static str, &str)]) -> TestEnv {
        TestEnv(pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect())
    }

    #[test]
    fn passwords_are_redacted_wherever_they_are() {
        let cases = [
            (
                "postgres://u:s3cret@h:5432/db",
                "postgres://u:****@h:5432/db",
            ),
            ("postgres://u@h/db", "postgres://u@h/db"),
            (
                "postgresql://h/db?user=u&password=s3cret&sslmode=disable",
                "postgresql://h/db?user=u&password=****&sslmode=disable",
            ),
            ("postgres://u:p@ss:w@h/db", "postgres://u:****@h/db"),
            ("s3://bucket", "s3://bucket"),
        ];
        for (url, shown) in cases {
            assert_eq!(redact(url), shown, "{url}");
        }
    }

    #[test]
    fn the_url_wins_then_the_libpq_variables_then_defaults() {
        let target = resolve(
            "postgres://alice:pw@db.example:6543/state",
            &env(&[("PGHOST", "other"), ("PGUSER", "bob"), ("PGPASSWORD", "x")]),
        )
        .unwrap();
        assert_eq!(target.display, "postgres://alice@db.example:6543/state");
        assert_eq!(target.config.get_password(), Some(&b"pw"[..]));

        let target = resolve(
            "postgres://",
            &env(&[
                ("PGHOST", "pg.internal"),
                ("PGPORT", "5433"),
                ("PGUSER", "bob"),
                ("PGDATABASE", "cairn"),
                ("PGPASSWORD", "from-env"),
                ("PGCONNECT_TIMEOUT", "3"),
            ]),
        )
        .unwrap();
        assert_eq!(target.display, "postgres://bob@pg.internal:5433/cairn");
        assert_eq!(target.user, "bob");
        assert_eq!(target.config.get_password(), Some(&b"from-env"[..]));
        assert_eq!(
            target.config.get_connect_timeout(),
            Some(&Duration::from_secs(3))
        );
        assert!(!format!("{target:?}").contains("from-env"));

        let target = resolve("postgres://u@/db?host=/run/pg", &env(&[])).unwrap();
        assert_eq!(target.display, "postgres://u@/db?host=/run/pg&port=5432");
        let target = resolve("postgres://u@/db?host=/run/pg", &env(&[("PGPORT", "7")])).unwrap();
        assert_eq!(target.display, "postgres://u@/db?host=/run/pg&port=7");
        let target = resolve("postgres://u@a,b:9,[::1]/db", &env(&[("PGPORT", "7")])).unwrap();
        assert_eq!(target.config.get_ports(), [7, 9, 7]);
    }

    #[test]
    fn pgpass_is_read_as_libpq_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:*:*:*:wrong\nh:5432:db:u\\:x:escaped\nh:*:*:u:right\n*:*:*:*:fallback\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let env = env(&[("PGPASSFILE", file.to_str().unwrap())]);
        let password = |url: &str| {
            resolve(url, &env)
                .unwrap()
                .config
                .get_password()
                .map(|p| String::from_utf8(p.to_vec()).unwrap())
        };
        assert_eq!(password("postgres://u@h/db").as_deref(), Some("right"));
        assert_eq!(
            password("postgres://u%3Ax@h/db").as_deref(),
            Some("escaped")
        );
        assert_eq!(password("postgres://v@z/db").as_deref(), Some("fallback"));
        assert_eq!(
            password("postgres://u:given@h/db").as_deref(),
            Some("given")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert_eq!(
                password("postgres://u@h/db"),
                None,
                "a readable file is ignored"
            );
        }
    }

    #[test]
    fn bad_settings_are_named() {
        for (url, vars, expected) in [
            (
                "postgres://h:notaport/db",
                vec![],
                "not a valid PostgreSQL connection URL",
            ),
            (
                "postgres://h/db",
                vec![("PGPORT", "x")],
                "PGPORT must be a port number",
            ),
            (
                "postgres://h/db?sslmode=on",
                vec![],
                "sslmode \"on\" is not an SSL mode",
            ),
            (
                "postgres://h/db",
                vec![("PGSSLMODE", "bogus")],
                "PGSSLMODE: sslmode \"bogus\"",
            ),
        ] {
            let err = match resolve(url, &env(&vars)) {
                Ok(t) => panic!("{url} {vars:?}: accepted as {t:?}"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains(expected), "{url}: {err}");
        }
    }
}
