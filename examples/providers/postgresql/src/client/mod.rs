//! A synchronous PostgreSQL client over `std::net::TcpStream`, for use inside the wasm guest
//! (wasi:sockets, reached only through the user's `tcp` grant) and natively in tests.
//!
//! The resource code is written against this module's public items; keep them stable.
//!
//! ```no_run
//! use postgresql::client::{Client, ConnectConfig, SslMode, quote_ident, quote_literal};
//! # fn main() -> Result<(), postgresql::client::PgError> {
//! let mut client = Client::connect(&ConnectConfig {
//!     host: "db.internal".to_owned(),
//!     port: 5432,
//!     user: "admin".to_owned(),
//!     password: Some("...".to_owned()),
//!     database: "postgres".to_owned(),
//!     sslmode: SslMode::VerifyFull,
//!     sslrootcert: Some("-----BEGIN CERTIFICATE-----...".to_owned()),
//!     connect_timeout: std::time::Duration::from_secs(15),
//!     application_name: "cairn".to_owned(),
//! })?;
//! let name = "x\"; DROP ROLE postgres; --";
//! client.execute(&format!("CREATE ROLE {}", quote_ident(name)))?;
//! let rows = client.query(&format!(
//!     "SELECT rolname FROM pg_roles WHERE rolname = {}",
//!     quote_literal(name)
//! ))?;
//! assert_eq!(rows[0].get("rolname"), Some(name));
//! assert!(client.server_version_num() >= 90600); // e.g. 150012
//! # Ok(())
//! # }
//! ```
//!
//! Pieces: `connect.rs` (TCP, sslmode, startup and passwords), `tls.rs` (certificates; the
//! choice of TLS stack and its cost), `query.rs` (the simple query protocol), `wire.rs`
//! (framing and the byte stream).

mod connect;
mod query;
mod tls;
mod wire;

use std::collections::BTreeMap;
use std::time::Duration;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::ErrorFields;

/// How to reach and log in to a server (the provider's configuration).
#[derive(Clone)]
pub struct ConnectConfig {
    pub host: String,
    pub port: u16,
    pub user: String,
    /// Secret: never printed (Debug is hand-written to hide it).
    pub password: Option<String>,
    pub database: String,
    pub sslmode: SslMode,
    /// PEM text of the CA certificate(s) to trust for `verify-ca` / `verify-full`.
    pub sslrootcert: Option<String>,
    pub connect_timeout: Duration,
    pub application_name: String,
}

impl std::fmt::Debug for ConnectConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "[secret]"))
            .field("database", &self.database)
            .field("sslmode", &self.sslmode)
            .finish_non_exhaustive()
    }
}

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// Parses libpq's spelling (`disable`, `allow`, `prefer`, `require`, `verify-ca`,
    /// `verify-full`).
    pub fn parse(s: &str) -> Option<SslMode> {
        Some(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }
}

/// What went wrong talking to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgError {
    pub kind: ErrorKind,
    /// SQLSTATE for server errors (`42704`, ...).
    pub code: Option<String>,
    /// Human-readable text; never contains the password.
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Could not reach the server (refused, unreachable, not granted, timed out).
    Connect,
    /// TLS negotiation or certificate verification failed.
    Tls,
    /// The server refused the login (wrong password, unsupported method).
    Auth,
    /// The server answered a statement with an error (`code` is set).
    Server,
    /// The server said something this client does not understand, or the connection broke.
    Protocol,
}

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{} (SQLSTATE {code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PgError {}

/// One result row of a simple query: text values by column name.
#[derive(Debug, Clone)]
pub struct Row {
    columns: std::sync::Arc<[String]>,
    values: Vec<Option<String>>,
}

impl Row {
    /// The value of column `name` (None for SQL NULL or an unknown column; the first of
    /// several columns with that name).
    pub fn get(&self, name: &str) -> Option<&str> {
        let i = self.columns.iter().position(|c| c == name)?;
        self.values.get(i)?.as_deref()
    }

    /// The column names, in the statement's order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The value of the `index`th column (None for SQL NULL or past the last column).
    pub fn value(&self, index: usize) -> Option<&str> {
        self.values.get(index)?.as_deref()
    }
}

/// An open session. Dropping it ends the session (Terminate); [`Client::close`] does the same
/// explicitly.
pub struct Client {
    wire: wire::Wire,
    /// ParameterStatus values (`server_version`, `TimeZone`, ...), kept current.
    parameters: BTreeMap<String, String>,
    /// The process id and secret of the session (BackendKeyData), for cancel requests.
    backend_key: Option<(i32, i32)>,
    server_version_num: u32,
    /// Notices (NOTICE, WARNING, ...) not yet taken.
    notices: Vec<String>,
    /// Why the connection can no longer be used (a broken socket or a message this client does
    /// not understand): later calls fail instead of guessing where the conversation stands.
    broken: Option<String>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.wire.peer)
            .field("tls", &self.wire.is_tls())
            .field("server_version_num", &self.server_version_num)
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects, negotiates TLS as `sslmode` says, and logs in (SCRAM-SHA-256, md5, or
    /// cleartext over TLS only).
    pub fn connect(config: &ConnectConfig) -> Result<Client, PgError> {
        let session = connect::connect(config)?;
        let mut client = Client {
            wire: session.wire,
            parameters: session.parameters,
            backend_key: session.backend_key,
            server_version_num: 0,
            notices: session.notices,
            broken: None,
        };
        client.server_version_num = match client
            .parameter("server_version")
            .and_then(parse_server_version)
        {
            Some(number) => number,
            // Servers always report server_version; ask if it is missing or unusual.
            None => {
                let rows = client.query("SHOW server_version_num")?;
                rows.first()
                    .and_then(|row| row.value(0))
                    .and_then(|text| text.trim().parse().ok())
                    .ok_or_else(|| {
                        client
                            .wire
                            .protocol("SHOW server_version_num returned no number".to_owned())
                    })?
            }
        };
        Ok(client)
    }

    /// Runs one statement (or several separated by `;`) with the simple query protocol and
    /// returns the rows of the last one that returned rows (had a result set, even an empty
    /// one). After a server error the session stays usable; in an explicit transaction block
    /// the server then rejects statements until ROLLBACK, as always.
    pub fn query(&mut self, sql: &str) -> Result<Vec<Row>, PgError> {
        self.simple_query(sql)
    }

    /// Runs statements that return no rows.
    pub fn execute(&mut self, sql: &str) -> Result<(), PgError> {
        self.query(sql).map(|_| ())
    }

    /// The server's `server_version_num` (e.g. 150012).
    pub fn server_version_num(&self) -> u32 {
        self.server_version_num
    }

    /// A run-time parameter the server reports (`server_version`, `server_encoding`,
    /// `TimeZone`, `standard_conforming_strings`, `is_superuser`, ...).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters.get(name).map(String::as_str)
    }

    /// Whether the session is encrypted (TLS).
    pub fn is_tls(&self) -> bool {
        self.wire.is_tls()
    }

    /// The session's process id on the server (BackendKeyData).
    pub fn backend_pid(&self) -> Option<i32> {
        self.backend_key.map(|(pid, _)| pid)
    }

    /// The notices (`NOTICE: role "x" does not exist, skipping`, ...) received since the last
    /// call, oldest first.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Ends the session (what dropping the client does too).
    pub fn close(self) {}
}

impl Drop for Client {
    fn drop(&mut self) {
        self.wire.terminate();
    }
}

/// `server_version` as `server_version_num`, as libpq computes it: `15.12 (Debian ...)` →
/// 150012, `9.6.24` → 90624, `16beta1` → 160000.
fn parse_server_version(text: &str) -> Option<u32> {
    let numeric: &str = text
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()?;
    let mut parts = numeric.split('.').filter(|p| !p.is_empty());
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    if major >= 10 {
        return major.checked_mul(10000)?.checked_add(minor);
    }
    let revision: u32 = parts.next().map_or(Some(0), |p| p.parse().ok())?;
    Some(major * 10000 + minor * 100 + revision)
}

/// An ErrorResponse, read.
struct ServerError {
    /// `Server` kind, the SQLSTATE, and the message with the DETAIL and HINT lines psql would
    /// show.
    error: PgError,
    /// FATAL or PANIC: the server ends the session after sending it.
    ends_session: bool,
}

fn server_error(mut fields: ErrorFields<'_>) -> std::io::Result<ServerError> {
    let mut code = None;
    let mut message = String::new();
    let mut detail = None;
    let mut hint = None;
    let mut ends_session = false;
    while let Some(field) = fields.next()? {
        let value = String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            b'C' => code = Some(value),
            b'M' => message = value,
            b'D' => detail = Some(value),
            b'H' => hint = Some(value),
            // V: the severity never translated (S may be localized).
            b'V' => ends_session = value == "FATAL" || value == "PANIC",
            _ => {}
        }
    }
    if let Some(detail) = detail {
        message.push_str("\nDETAIL: ");
        message.push_str(&detail);
    }
    if let Some(hint) = hint {
        message.push_str("\nHINT: ");
        message.push_str(&hint);
    }
    Ok(ServerError {
        error: PgError {
            kind: ErrorKind::Server,
            code,
            message,
        },
        ends_session,
    })
}

/// A NoticeResponse as one line: `NOTICE: text`.
fn notice_text(mut fields: ErrorFields<'_>) -> std::io::Result<String> {
    let mut severity = String::from("NOTICE");
    let mut message = String::new();
    while let Some(field) = fields.next()? {
        match field.type_() {
            // V: the severity never translated (S may be localized).
            b'V' => severity = String::from_utf8_lossy(field.value_bytes()).into_owned(),
            b'M' => message = String::from_utf8_lossy(field.value_bytes()).into_owned(),
            _ => {}
        }
    }
    Ok(format!("{severity}: {message}"))
}

/// `"name"` with `"` doubled: an identifier that can never end the quotes. Like lib/pq's
/// `QuoteIdentifier` (what the Terraform provider uses), the name is cut at a NUL byte, which
/// PostgreSQL identifiers cannot hold.
pub fn quote_ident(name: &str) -> String {
    let name = name.split('\0').next().unwrap_or_default();
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `'text'` with `'` doubled: a literal that can never end the quotes.
///
/// Text with a backslash becomes `E'...'` with `\` doubled too, as lib/pq's `QuoteLiteral`
/// does. That form means the same whatever `standard_conforming_strings` is: with it on (the
/// default since 9.1) a plain `'a\b'` would be right too, but with it off the backslash would
/// escape, and `'a\'` would not even end. lib/pq (and libpq's `PQescapeLiteral`) put a space
/// before the `E` so it cannot fuse with a preceding identifier; here the caller places the
/// literal, so there is none (`WHERE x=E'..'` reads fine). A NUL byte is kept: the server (and
/// [`Client::query`]) reject text holding one, rather than act on a shortened value.
pub fn quote_literal(text: &str) -> String {
    if text.contains('\\') {
        format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_ident_doubles_quotes_and_cuts_at_nul() {
        assert_eq!(quote_ident("plain"), "\"plain\"");
        assert_eq!(
            quote_ident("x\"; DROP ROLE postgres; --"),
            "\"x\"\"; DROP ROLE postgres; --\""
        );
        assert_eq!(quote_ident("a\"\"b"), "\"a\"\"\"\"b\"");
        assert_eq!(quote_ident("back\\slash"), "\"back\\slash\"");
        assert_eq!(quote_ident("cut\0\"; DROP"), "\"cut\"");
        assert_eq!(quote_ident(""), "\"\"");
    }

    #[test]
    fn quote_literal_doubles_quotes_and_escapes_backslashes() {
        assert_eq!(quote_literal("plain"), "'plain'");
        assert_eq!(quote_literal("it's"), "'it''s'");
        assert_eq!(
            quote_literal("'; DROP ROLE postgres; --"),
            "'''; DROP ROLE postgres; --'"
        );
        assert_eq!(quote_literal("a\\b"), "E'a\\\\b'");
        assert_eq!(quote_literal("\\'"), "E'\\\\'''");
        assert_eq!(quote_literal("nul\0kept"), "'nul\0kept'");
        assert_eq!(quote_literal(""), "''");
    }

    #[test]
    fn server_version_as_libpq_reads_it() {
        assert_eq!(
            parse_server_version("15.12 (Debian 15.12-1.pgdg120+1)"),
            Some(150012)
        );
        assert_eq!(parse_server_version("15.4"), Some(150004));
        assert_eq!(parse_server_version("16beta1"), Some(160000));
        assert_eq!(parse_server_version("9.6.24"), Some(90624));
        assert_eq!(parse_server_version("10.23"), Some(100023));
        assert_eq!(parse_server_version("devel"), None);
    }

    #[test]
    fn debug_output_hides_the_password() {
        let config = ConnectConfig {
            host: "db".to_owned(),
            port: 5432,
            user: "u".to_owned(),
            password: Some("hunter2-secret".to_owned()),
            database: "d".to_owned(),
            sslmode: SslMode::Require,
            sslrootcert: None,
            connect_timeout: Duration::from_secs(1),
            application_name: "a".to_owned(),
        };
        assert!(!format!("{config:?}").contains("hunter2-secret"));
    }
}
