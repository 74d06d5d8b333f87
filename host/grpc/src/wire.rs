//! What the bridge accepts from the wire, beyond property values (those are checked in
//! [`crate::convert`]): message sizes, log volumes, and the checks every string from a plugin or
//! an SDK program passes before it becomes a name, type, URN, ID, key, property path or
//! provider reference in the engine.
//!
//! Settings (environment variables, read when a plugin or monitor starts):
//!
//! * `CAIRN_GRPC_MAX_MESSAGE_MB` (default 64): the largest message a plugin may answer with, and
//!   the largest request an SDK program may send. A plugin's `GetSchema` may be larger, up to
//!   [`SCHEMA_MESSAGE_BYTES`] (Pulumi's own limit), or the setting if it is higher.
//! * `CAIRN_GRPC_LOG_MB` (default 8): how much log output is shown from each plugin process
//!   (its stdout and stderr), from each SDK program process, and from `Engine.Log` calls in one
//!   deployment, each line counting [`LINE_COST`] bytes more than its length. What is over is
//!   dropped, with one note saying so.

use std::sync::atomic::{AtomicU64, Ordering};

use cairn_engine::limits::{
    MAX_ID_BYTES, MAX_KEY_BYTES, MAX_MESSAGE_BYTES, MAX_NAME_BYTES, check_len,
};
use cairn_engine::path::PropertyPath;
use cairn_engine::state::ProviderReference;
use cairn_engine::text::has_unsafe;
use cairn_engine::urn::{TypeToken, Urn};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::convert::shown;

/// Default for `CAIRN_GRPC_MAX_MESSAGE_MB`.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// The largest message Pulumi's servers and clients accept (`rpcutil.MaxRPCMessageSize`).
pub const PULUMI_MESSAGE_BYTES: usize = 400 * 1024 * 1024;

/// The largest `GetSchema` answer accepted whatever the setting: large providers' schemas run to
/// tens of megabytes, and Pulumi accepts messages up to this size.
pub const SCHEMA_MESSAGE_BYTES: usize = PULUMI_MESSAGE_BYTES;

/// The largest set of response headers and trailers accepted (as gRPC-Go's default): a
/// status's message and its details (a partial resource state) travel in trailers.
pub const MAX_HEADER_LIST_BYTES: u32 = 16 * 1024 * 1024;

/// Default for `CAIRN_GRPC_LOG_MB`.
pub const DEFAULT_LOG_BYTES: u64 = 8 * 1024 * 1024;

/// Check failures kept from one reply; more are summarised in one failure.
pub const MAX_CHECK_FAILURES: usize = 100;

/// The largest message accepted from a plugin or an SDK program (`CAIRN_GRPC_MAX_MESSAGE_MB`).
pub fn max_message_bytes() -> usize {
    megabytes("CAIRN_GRPC_MAX_MESSAGE_MB")
        .map_or(DEFAULT_MAX_MESSAGE_BYTES, |b| {
            usize::try_from(b).unwrap_or(usize::MAX)
        })
        .max(1024 * 1024)
}

/// Log bytes shown per plugin, program or deployment (`CAIRN_GRPC_LOG_MB`).
pub fn log_bytes() -> u64 {
    megabytes("CAIRN_GRPC_LOG_MB").unwrap_or(DEFAULT_LOG_BYTES)
}

fn megabytes(variable: &str) -> Option<u64> {
    let text = std::env::var(variable).ok()?;
    let mb = text.trim().parse::<f64>().ok()?;
    (mb.is_finite() && mb >= 0.0).then_some((mb * 1024.0 * 1024.0) as u64)
}

/// `bytes` in MiB for messages (`64 MiB`, `0.5 MiB`).
pub fn mib(bytes: u64) -> String {
    let value = bytes as f64 / (1024.0 * 1024.0);
    if value.fract() == 0.0 {
        format!("{value} MiB")
    } else {
        format!("{value:.2} MiB")
    }
}

/// If `status` says a message was over the size limit: the sizes, for an error that names the
/// limit and the setting.
pub fn oversized(status: &tonic::Status) -> Option<String> {
    if status.code() != tonic::Code::OutOfRange {
        return None;
    }
    let message = status.message();
    let rest = message.strip_prefix("Error, decoded message length too large: found ")?;
    let (found, rest) = rest.split_once(" bytes, the limit is: ")?;
    let limit = rest.strip_suffix(" bytes")?;
    let found: u64 = found.parse().ok()?;
    let limit: u64 = limit.parse().ok()?;
    Some(format!(
        "the message is {} bytes ({}), more than the limit of {} (CAIRN_GRPC_MAX_MESSAGE_MB raises it)",
        found,
        mib(found),
        mib(limit)
    ))
}

/// A string from the wire that cannot be accepted, naming the field it came in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    pub field: String,
    pub problem: String,
}

fn field_error(field: &str, problem: impl Into<String>) -> FieldError {
    FieldError {
        field: field.to_owned(),
        problem: problem.into(),
    }
}

/// A resource name: at most [`MAX_NAME_BYTES`], printable, without the URN separator `::`.
pub fn name(field: &str, text: &str) -> Result<(), FieldError> {
    check_len("name", text, MAX_NAME_BYTES).map_err(|e| field_error(field, e.to_string()))?;
    if has_unsafe(text) {
        return Err(field_error(
            field,
            format!(
                "the name {:?} contains a control character; names must be printable",
                shown(text, 200)
            ),
        ));
    }
    if text.contains("::") {
        return Err(field_error(
            field,
            format!("the name {:?} contains \"::\"", shown(text, 200)),
        ));
    }
    Ok(())
}

/// A resource ID: at most [`MAX_ID_BYTES`]. IDs are opaque, so any text is kept as it is (it is
/// printed with control characters made visible).
pub fn id(field: &str, text: &str) -> Result<(), FieldError> {
    check_len("ID", text, MAX_ID_BYTES).map_err(|e| field_error(field, e.to_string()))
}

/// A property key (`additionalSecretOutputs`, a dependency map's key, a diff's keys).
pub fn key(field: &str, text: &str) -> Result<(), FieldError> {
    check_len("key", text, MAX_KEY_BYTES).map_err(|e| field_error(field, e.to_string()))
}

/// A URN.
pub fn urn(field: &str, text: &str) -> Result<Urn, FieldError> {
    Urn::parse(text).map_err(|e| field_error(field, e.to_string()))
}

/// A URN, or nothing when empty.
pub fn optional_urn(field: &str, text: &str) -> Result<Option<Urn>, FieldError> {
    if text.is_empty() {
        Ok(None)
    } else {
        urn(field, text).map(Some)
    }
}

/// A list of URNs.
pub fn urns(field: &str, texts: &[String]) -> Result<Vec<Urn>, FieldError> {
    texts.iter().map(|u| urn(field, u)).collect()
}

/// A type token (a resource type, or an invoke's or call's function token).
pub fn type_token(field: &str, text: &str) -> Result<TypeToken, FieldError> {
    TypeToken::parse(text).map_err(|e| field_error(field, e.to_string()))
}

/// A property path (`ignoreChanges`, `replaceOnChanges`).
pub fn path(field: &str, text: &str) -> Result<(), FieldError> {
    if text.len() > MAX_KEY_BYTES * 4 {
        return Err(field_error(
            field,
            format!(
                "the property path is {} bytes long; at most {} bytes are allowed",
                text.len(),
                MAX_KEY_BYTES * 4
            ),
        ));
    }
    PropertyPath::parse(text)
        .map(|_| ())
        .map_err(|e| field_error(field, e.to_string()))
}

/// A provider reference (`<provider URN>::<ID>`).
pub fn provider_reference(field: &str, text: &str) -> Result<(), FieldError> {
    let reference =
        ProviderReference::parse(text).map_err(|e| field_error(field, e.to_string()))?;
    id(field, &reference.id)
}

/// A package version (`version` options): a semantic version.
pub fn version(field: &str, text: &str) -> Result<(), FieldError> {
    semver::Version::parse(text.trim_start_matches('v'))
        .map(|_| ())
        .map_err(|e| {
            field_error(
                field,
                format!("{:?} is not a semantic version: {e}", shown(text, 64)),
            )
        })
}

/// A package name (the key of a `providers` map): what a provider type's package may be.
pub fn package(field: &str, text: &str) -> Result<(), FieldError> {
    let mut chars = text.chars();
    let valid = text.len() <= MAX_NAME_BYTES
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-');
    if valid {
        Ok(())
    } else {
        Err(field_error(
            field,
            format!(
                "{:?} is not a package name (a letter, then letters, digits and '-')",
                shown(text, 64)
            ),
        ))
    }
}

/// Where a program's callback runs (`Callback.target`): a port on this machine's loopback
/// interface (`127.0.0.1:port`, `[::1]:port`, `localhost:port`), where the SDKs serve their
/// `Callbacks` service. Anything else would have the engine connect wherever a program (or a
/// component's provider) says.
pub fn callback_target(field: &str, text: &str) -> Result<(), FieldError> {
    let loopback = match text.rsplit_once(':') {
        Some(("localhost", port)) => port.parse::<u16>().is_ok_and(|p| p != 0),
        _ => text
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.ip().is_loopback() && a.port() != 0),
    };
    if loopback {
        Ok(())
    } else {
        Err(field_error(
            field,
            format!(
                "{:?} is not a loopback address with a port (127.0.0.1:<port>, [::1]:<port> or localhost:<port>); callbacks run in the program, on this machine",
                shown(text, 200)
            ),
        ))
    }
}

/// A callback's token (`Callback.token`): the program's name for it, printable, non-empty, at
/// most [`MAX_NAME_BYTES`].
pub fn callback_token(field: &str, text: &str) -> Result<(), FieldError> {
    check_len("callback token", text, MAX_NAME_BYTES)
        .map_err(|e| field_error(field, e.to_string()))?;
    if text.is_empty() || has_unsafe(text) {
        return Err(field_error(
            field,
            format!(
                "{:?} is not a callback token (printable, not empty)",
                shown(text, 200)
            ),
        ));
    }
    Ok(())
}

/// A resource hook's name (`RegisterResourceHookRequest.name`, a binding's names): printable,
/// non-empty, at most [`MAX_NAME_BYTES`] (it is recorded in the state and shown in messages).
pub fn hook_name(field: &str, text: &str) -> Result<(), FieldError> {
    check_len("hook name", text, MAX_NAME_BYTES).map_err(|e| field_error(field, e.to_string()))?;
    if text.is_empty() || has_unsafe(text) {
        return Err(field_error(
            field,
            format!(
                "{:?} is not a hook name (printable, not empty)",
                shown(text, 200)
            ),
        ));
    }
    Ok(())
}

/// A stack or project name in an alias: printable, without `::`, at most [`MAX_NAME_BYTES`].
pub fn stack_or_project(field: &str, text: &str) -> Result<(), FieldError> {
    name(field, text)
}

/// What each log line costs beyond its text (about what showing it adds): 8 MiB of budget is
/// at most 131,072 lines.
pub const LINE_COST: usize = 64;

/// Whether a log line is shown, dropped after a note, or dropped silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    Show,
    /// The budget ran out with this line: show the note instead.
    FirstDropped,
    Dropped,
}

/// A budget of log bytes (per plugin process, program process or deployment).
#[derive(Debug)]
pub struct LogBudget {
    limit: u64,
    used: AtomicU64,
    dropped_lines: AtomicU64,
}

impl LogBudget {
    pub fn new(limit: u64) -> LogBudget {
        LogBudget {
            limit,
            used: AtomicU64::new(0),
            dropped_lines: AtomicU64::new(0),
        }
    }

    /// A budget of [`log_bytes`].
    pub fn from_settings() -> LogBudget {
        LogBudget::new(log_bytes())
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Counts a line of `len` bytes against the budget, as `len + LINE_COST` bytes: short lines
    /// cost something too, so a flood of empty lines is bounded as well.
    pub fn admit(&self, len: usize) -> Admit {
        let len = (len + LINE_COST) as u64;
        let before = self.used.fetch_add(len, Ordering::Relaxed);
        if before.saturating_add(len) <= self.limit {
            return Admit::Show;
        }
        let dropped = self.dropped_lines.fetch_add(1, Ordering::Relaxed);
        if dropped == 0 {
            Admit::FirstDropped
        } else {
            Admit::Dropped
        }
    }

    /// Lines dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped_lines.load(Ordering::Relaxed)
    }

    /// The note shown in place of the first dropped line; `whose` names the source ("plugin
    /// pulumi-resource-x's output").
    pub fn note(&self, whose: &str) -> String {
        format!(
            "{whose} exceeded {} (the log limit; CAIRN_GRPC_LOG_MB raises it): further lines are dropped",
            mib(self.limit)
        )
    }
}

/// Reads one line of at most [`MAX_MESSAGE_BYTES`] (without its `\n` or `\r\n`); a longer line
/// is cut, the rest of it skipped, and the cut noted. `None` at the end of the stream.
///
/// Unlike `AsyncBufReadExt::lines`, memory stays bounded whatever the other side writes (a
/// plugin printing gigabytes without a newline), and bytes that are not UTF-8 are shown as
/// replacement characters instead of ending the stream.
pub async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Option<String>> {
    read_line_within(reader, MAX_MESSAGE_BYTES).await
}

/// [`read_line`] with a limit of `max` bytes.
pub async fn read_line_within<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<String>> {
    let mut line = Vec::new();
    let mut skipped: u64 = 0;
    let mut read_any = false;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            if !read_any {
                return Ok(None);
            }
            break;
        }
        read_any = true;
        let (chunk, found_newline) = match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => (&buffer[..i], true),
            None => (buffer, false),
        };
        let room = max.saturating_sub(line.len());
        let take = chunk.len().min(room);
        line.extend_from_slice(&chunk[..take]);
        skipped += (chunk.len() - take) as u64;
        let consumed = chunk.len() + usize::from(found_newline);
        reader.consume(consumed);
        if found_newline {
            break;
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if skipped > 0 {
        // The cut may have split a character: drop its first bytes too.
        let kept = incomplete_tail(&line);
        skipped += (line.len() - kept) as u64;
        line.truncate(kept);
    }
    let mut text = String::from_utf8_lossy(&line).into_owned();
    if skipped > 0 {
        text.push_str(&format!("… [{skipped} more bytes of this line dropped]"));
    }
    Ok(Some(text))
}

/// The length of `bytes` without a UTF-8 sequence cut short at its end.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let start = bytes.len() - back;
        let b = bytes[start];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let expected = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if expected > back { start } else { bytes.len() };
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_from_the_wire_are_checked_naming_their_field() {
        let long = "n".repeat(MAX_NAME_BYTES + 1);
        let cases: Vec<(Result<(), FieldError>, &str)> = vec![
            (
                name("name", "a\x1b[2Jb"),
                "name: the name \"a\\\\x1b[2Jb\" contains a control character",
            ),
            (
                name("name", "a::b"),
                "name: the name \"a::b\" contains \"::\"",
            ),
            (
                name("aliases[0].name", &long),
                "aliases[0].name: the name is 1025 bytes long; at most 1024 bytes are allowed",
            ),
            (
                id("importId", &"i".repeat(MAX_ID_BYTES + 1)),
                "importId: the ID is 8193 bytes long",
            ),
            (
                path("ignoreChanges[0]", "a[\"b"),
                "ignoreChanges[0]: invalid property path",
            ),
            (
                provider_reference("provider", "urn:pulumi:dev::p::aws:s3:Bucket::b::id"),
                "provider: invalid provider reference",
            ),
            (
                version("version", "latest"),
                "version: \"latest\" is not a semantic version",
            ),
            (
                package("providers", "a b"),
                "providers: \"a b\" is not a package name",
            ),
            (
                urn("parent", "urn:pulumi:dev::p::a:b:C::x\x07").map(|_| ()),
                "parent: invalid URN",
            ),
            (
                callback_target("transforms[0].target", "10.0.0.8:4000"),
                "transforms[0].target: \"10.0.0.8:4000\" is not a loopback address",
            ),
            (
                callback_target("target", "example.com:443"),
                "target: \"example.com:443\" is not a loopback address",
            ),
            (
                callback_target("target", "127.0.0.1"),
                "target: \"127.0.0.1\" is not",
            ),
            (
                callback_target("target", "127.0.0.1:0"),
                "target: \"127.0.0.1:0\" is not",
            ),
            (
                callback_token("token", ""),
                "token: \"\" is not a callback token",
            ),
        ];
        for (result, expected) in cases {
            let error = result.unwrap_err().to_string();
            assert!(error.starts_with(expected), "{error}\nexpected: {expected}");
        }
        name("name", "my-bucket: v2 ✓").unwrap();
        provider_reference(
            "provider",
            "urn:pulumi:dev::p::pulumi:providers:aws::default::0b1c-2d",
        )
        .unwrap();
        version("version", "v6.1.0-alpha.1").unwrap();
        path("ignoreChanges", "tags[\"a b\"][0]").unwrap();
        for target in [
            "127.0.0.1:4000",
            "[::1]:4000",
            "localhost:4000",
            "127.1.2.3:9",
        ] {
            callback_target("target", target).unwrap();
        }
        callback_token("token", "0b4ae6f2-7c1d-4d5e-9a4b-1f2e3d4c5b6a").unwrap();
    }

    #[test]
    fn oversized_messages_name_the_limit_and_the_setting() {
        let status = tonic::Status::out_of_range(
            "Error, decoded message length too large: found 100663296 bytes, the limit is: 67108864 bytes",
        );
        assert_eq!(
            oversized(&status).unwrap(),
            "the message is 100663296 bytes (96 MiB), more than the limit of 64 MiB (CAIRN_GRPC_MAX_MESSAGE_MB raises it)"
        );
        assert_eq!(oversized(&tonic::Status::out_of_range("other")), None);
    }

    #[test]
    fn a_log_budget_notes_the_first_drop_only() {
        let budget = LogBudget::new(10 + 3 * LINE_COST as u64);
        assert_eq!(budget.admit(6), Admit::Show);
        assert_eq!(budget.admit(4), Admit::Show);
        assert_eq!(budget.admit(0), Admit::Show);
        assert_eq!(budget.admit(0), Admit::FirstDropped);
        assert_eq!(budget.admit(0), Admit::Dropped);
        assert_eq!(budget.dropped(), 2);
        assert!(
            budget
                .note("plugin x's output")
                .contains("CAIRN_GRPC_LOG_MB")
        );
    }

    #[tokio::test]
    async fn lines_are_bounded_whatever_is_written() {
        let mut input: Vec<u8> = Vec::new();
        input.extend_from_slice(b"short\r\n");
        input.extend_from_slice(&[b'x'; 100]);
        input.push(b'\n');
        input.extend_from_slice(b"bad \xff utf8\n");
        input.extend_from_slice(b"no newline at the end");
        let mut reader = tokio::io::BufReader::with_capacity(16, input.as_slice());
        let mut lines = Vec::new();
        while let Some(line) = read_line_within(&mut reader, 40).await.unwrap() {
            lines.push(line);
        }
        assert_eq!(
            lines,
            [
                "short".to_owned(),
                format!("{}… [60 more bytes of this line dropped]", "x".repeat(40)),
                "bad \u{FFFD} utf8".to_owned(),
                "no newline at the end".to_owned(),
            ]
        );
    }

    #[tokio::test]
    async fn a_cut_never_splits_a_character() {
        let input = "ééééé\n".as_bytes();
        let mut reader = tokio::io::BufReader::new(input);
        let line = read_line_within(&mut reader, 5).await.unwrap().unwrap();
        assert_eq!(line, "éé… [6 more bytes of this line dropped]");
    }
}
