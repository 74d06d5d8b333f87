//! What reaches the terminal. Names, messages, values and file contents that come from a guest,
//! a plugin, a program, a state file or a settings file are untrusted: printed raw, an escape
//! sequence could clear the screen, set the title or fake a line of Cairn's own output. So
//! every byte the CLI writes to stdout or stderr passes through this module, which makes
//! control characters visible with `cairn_engine::text`:
//!
//! * [`outln!`] / [`errln!`] / [`prompt`]: human output. The whole text passes through
//!   `visible_text` (newlines and tabs kept); `clippy.toml` forbids `println!` and friends in
//!   this crate so nothing bypasses it. A single-line field inside it (a name, key, URN) is
//!   passed through [`field`] where it is formatted, so a newline in it cannot start a line.
//! * [`message`]: a multi-line message (an error, a log line) whose continuation lines are
//!   indented, so they cannot pass for lines of Cairn's own.
//! * [`json`] / [`json_pretty`]: JSON with every unsafe character inside strings escaped as
//!   `\uXXXX` (serde_json escapes C0 controls but leaves DEL, C1 controls and bidi overrides
//!   raw). The escape is JSON's own, so a reader decodes the exact original text.
//! * [`SafeStderr`]: the writer of the `tracing` subscriber (`CAIRN_LOG`): one visible line
//!   per event.
//!
//! [`crate::display`] renders engine events with the same functions, and its writer applies
//! `visible_text` to everything but its own cursor movements.
//!
//! # Terminal output never carries raw control characters from untrusted sources
//!
//! Names, types, values, log lines, errors and file contents from guests, plugins, programs and
//! state, settings or lock files are printed with control characters (C0, DEL, C1, bidi overrides)
//! made visible by `cairn_engine::text`. Enforced in `host/cli/src/terminal.rs`: every byte the CLI
//! prints goes through it (`outln!`/`errln!`/`prompt`; `host/cli/clippy.toml` refuses `println!`
//! and friends), every display mode writes through one `Output` (`display/mod.rs`:
//! `terminal::styled_text_of`: only the live area's own cursor movements are raw, and with colour
//! on only the SGR sequences `Style::paint` writes — reset, bold, underline, one of 16 foreground
//! colours — survive; any other escape, and every escape when colour is off, is made visible),
//! `--json` output and exports escape DEL/C1/bidi as `\uXXXX` too (lossless), the `tracing` writer
//! prints one visible line per event, and `main.rs` prints errors with every line inside a message
//! indented, so untrusted text cannot fake a line of Cairn's own.
//!
//! # Colour is decided once
//!
//! Colour is decided once (`--color`, `NO_COLOR`, `TERM=dumb`, stdout a terminal) in
//! `terminal::set_colors`, and applied where text is formatted (`Style::paint`); the writers keep
//! only those sequences. Log lines and `error:`/`warning:` prefixes are coloured the same.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use cairn_engine::text::{is_unsafe, visible_line};

/// Writes `text` and a newline to stdout with control characters made visible. Errors (a
/// closed pipe) are ignored, as a broken pipe must not turn into a panic.
pub fn out(text: &str) {
    let mut line = styled_text_of(text, colors()).into_owned();
    line.push('\n');
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(line.as_bytes());
    let _ = stdout.flush();
}

/// Like [`out`], to stderr.
pub fn err(text: &str) {
    let mut line = styled_text_of(&severity_colored(text), colors()).into_owned();
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A question without a newline (the answer is typed after it), flushed.
pub fn prompt(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(styled_text_of(text, colors()).as_bytes());
    let _ = stdout.flush();
}

/// `println!` with control characters made visible.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::terminal::out(&format!($($arg)*))
    };
}

/// `eprintln!` with control characters made visible.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::terminal::err(&format!($($arg)*))
    };
}

pub(crate) use {errln, outln};
/// Whether colour is on, decided once by [`set_colors`] (off until then).
static COLORS: AtomicBool = AtomicBool::new(false);

/// `--color`: always, never, or auto (a terminal, unless `NO_COLOR` or `TERM=dumb`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether this choice colours output: `auto` colours a terminal stdout unless
    /// `NO_COLOR` is set (to anything non-empty, as no-color.org says) or `TERM` is `dumb`.
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

/// Turns colour on or off for everything the CLI writes from now on.
pub fn set_colors(on: bool) {
    COLORS.store(on, Ordering::Relaxed);
}

/// Whether the CLI colours what it writes.
pub fn colors() -> bool {
    COLORS.load(Ordering::Relaxed)
}

/// A text style: Pulumi's colour for each kind of change and message (its `colors.Spec*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// An ANSI colour number (0–15), if any.
    fg: Option<u8>,
    bold: bool,
    underline: bool,
}

impl Style {
    const fn fg(n: u8) -> Style {
        Style {
            fg: Some(n),
            bold: false,
            underline: false,
        }
    }
    pub const PLAIN: Style = Style {
        fg: None,
        bold: false,
        underline: false,
    };
    pub const CREATE: Style = Style::fg(2);
    pub const UPDATE: Style = Style::fg(3);
    pub const DELETE: Style = Style::fg(1);
    pub const REPLACE: Style = Style::fg(13);
    pub const CREATE_REPLACEMENT: Style = Style::fg(10);
    pub const DELETE_REPLACED: Style = Style::fg(9);
    pub const READ: Style = Style::fg(14);
    pub const IMPORT: Style = Style::fg(12);
    pub const ERROR: Style = Style::fg(1);
    pub const WARNING: Style = Style::fg(3);
    pub const INFO: Style = Style::fg(5);
    pub const UNIMPORTANT: Style = Style::fg(8);
    pub const HEADLINE: Style = Style {
        fg: Some(13),
        bold: true,
        underline: false,
    };
    pub const COLUMN: Style = Style {
        fg: Some(12),
        bold: false,
        underline: true,
    };
    pub const PROMPT: Style = Style {
        fg: Some(6),
        bold: true,
        underline: false,
    };
    pub const BOLD: Style = Style {
        fg: None,
        bold: true,
        underline: false,
    };

    /// This style, bold too (a step in progress).
    pub const fn bold(self) -> Style {
        Style { bold: true, ..self }
    }

    /// `text` in this style when `on`, else as it is. `text` must already be safe to print:
    /// only the style's own escape sequences are added.
    pub fn paint(self, on: bool, text: &str) -> String {
        if !on || self == Style::PLAIN || text.is_empty() {
            return text.to_owned();
        }
        let mut codes: Vec<String> = Vec::new();
        if self.bold {
            codes.push("1".into());
        }
        if self.underline {
            codes.push("4".into());
        }
        match self.fg {
            Some(n @ 0..=7) => codes.push(format!("3{n}")),
            Some(n) => codes.push(format!("9{}", n.saturating_sub(8).min(7))),
            None => {}
        }
        format!("\x1b[{}m{text}{RESET}", codes.join(";"))
    }

    /// [`Style::paint`] with the CLI's colour setting.
    pub fn apply(self, text: &str) -> String {
        self.paint(colors(), text)
    }
}

/// Ends a style.
const RESET: &str = "\x1b[0m";

/// Whether `rest` (after an ESC) is one of the SGR sequences [`Style::paint`] writes (reset,
/// bold, underline, a foreground colour; no conceal, no background) and its length after the
/// ESC.
fn style_sequence_len(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix('[')?;
    let end = body.find('m')?;
    let known = |code: &str| {
        matches!(code, "0" | "1" | "4")
            || (code.len() == 2
                && (code.starts_with('3') || code.starts_with('9'))
                && matches!(code.as_bytes()[1], b'0'..=b'7'))
    };
    (end <= 12 && body[..end].split(';').all(known)).then_some(end + 2)
}

/// Like [`text_of`], but keeps the colour sequences [`Style::paint`] adds when `colors` is on
/// (and only those: any other escape is made visible). Fields inside were made visible where
/// they were formatted, so a sequence left here is one of Cairn's own.
pub fn styled_text_of(text: &str, colors: bool) -> Cow<'_, str> {
    if !colors || !text.contains('\x1b') {
        return text_of(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\x1b') {
        out.push_str(&text_of(&rest[..at]));
        let after = &rest[at + 1..];
        match style_sequence_len(after) {
            Some(len) => {
                out.push('\x1b');
                out.push_str(&after[..len]);
                rest = &after[len..];
            }
            None => {
                out.push_str(&text_of("\x1b"));
                rest = after;
            }
        }
    }
    out.push_str(&text_of(rest));
    Cow::Owned(out)
}

/// Multi-line text made visible: `\r\n` line ends become `\n`, then every control character
/// but newline and tab is escaped (one definition, the engine's: the backend's messages use it
/// too).
pub use cairn_engine::text::visible_lines as text_of;

/// A single-line field: every control character escaped, newlines included.
pub fn field(text: &str) -> Cow<'_, str> {
    visible_line(text)
}

/// A name for an error message: in double quotes, control characters escaped, and at most 64
/// characters of it (with the full length noted), so a hostile name cannot flood the message
/// (the engine's, which the backend's messages use too).
pub use cairn_engine::text::quoted;

/// `first` then `text`, multi-line: each further line of `text` starts with `indent`. Control
/// characters are made visible; trailing whitespace is dropped.
pub fn message(first: &str, indent: &str, text: &str) -> String {
    let text = text_of(text);
    let mut out = String::from(first);
    for (i, line) in text.trim_end().split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        out.push_str(line.trim_end());
    }
    out
}

/// `value` as indented JSON, control characters in strings escaped.
pub fn json_pretty(value: &impl serde::Serialize) -> serde_json::Result<String> {
    serde_json::to_string_pretty(value).map(escape_json)
}

/// `value` as compact JSON on one line (no newline), control characters in strings escaped.
pub fn json_line(value: &impl serde::Serialize) -> serde_json::Result<String> {
    serde_json::to_string(value).map(escape_json)
}

/// `value` as JSON indented by `indent` (Pulumi's documents use four spaces), control
/// characters in strings escaped.
pub fn json_indented(value: &impl serde::Serialize, indent: &[u8]) -> serde_json::Result<String> {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut serializer)?;
    // serde_json writes UTF-8 only.
    Ok(escape_json(String::from_utf8_lossy(&out).into_owned()))
}

/// A string as a JSON string literal (in double quotes), control characters escaped.
pub fn json_string(s: &str) -> String {
    escape_json(serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned()))
}

/// Escapes, as `\uXXXX`, what serde_json writes raw but a terminal would act on. Outside
/// strings serialised JSON holds only printable ASCII, spaces and (pretty) newlines, and inside
/// strings serde_json has already escaped newlines, so every other unsafe character is inside
/// a string, where the escape means the same character.
fn escape_json(json: String) -> String {
    if !json.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c != '\n' && is_unsafe(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The `tracing` subscriber's writer: each event (one formatted line) is written to stderr as
/// one visible line, so a field or message holding a newline or an escape sequence cannot
/// fake or hide log lines.
pub struct SafeStderr;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for SafeStderr {
    type Writer = EventLine;

    fn make_writer(&'a self) -> EventLine {
        EventLine(Vec::new())
    }
}

/// `error: …` and `warning: …` with the prefix coloured when colour is on.
fn severity_colored(text: &str) -> Cow<'_, str> {
    for (prefix, style) in [("error:", Style::ERROR), ("warning:", Style::WARNING)] {
        if colors()
            && let Some(rest) = text.strip_prefix(prefix)
        {
            return Cow::Owned(format!("{}{rest}", style.apply(prefix)));
        }
    }
    Cow::Borrowed(text)
}

/// A log line with its level word (`ERROR`, `WARN`, ...) coloured when colour is on.
fn level_colored(line: &str) -> String {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    for (level, style) in [
        ("ERROR", Style::ERROR),
        ("WARN", Style::WARNING),
        ("INFO", Style::INFO),
        ("DEBUG", Style::UNIMPORTANT),
        ("TRACE", Style::UNIMPORTANT),
    ] {
        if let Some(rest) = trimmed.strip_prefix(level) {
            return format!("{indent}{}{rest}", style.apply(level));
        }
    }
    line.to_owned()
}

/// One event's bytes, written out when the event is complete (on drop).
pub struct EventLine(Vec<u8>);

impl Write for EventLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventLine {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.0);
        let body = text.strip_suffix('\n').unwrap_or(&text);
        let mut line = level_colored(&visible_line(body));
        line.push('\n');
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_cairns_own_colours_survive() {
        let painted = Style::CREATE.paint(true, "created");
        assert_eq!(painted, "\x1b[32mcreated\x1b[0m");
        assert_eq!(
            Style::HEADLINE.paint(true, "Resources:"),
            "\x1b[1;95mResources:\x1b[0m"
        );
        assert_eq!(Style::CREATE.paint(false, "created"), "created");
        assert_eq!(styled_text_of(&painted, true), painted);
        assert_eq!(styled_text_of(&painted, false), "\\x1b[32mcreated\\x1b[0m");
        for hostile in [
            "\x1b[8mhidden",
            "\x1b[41mbg",
            "\x1b[2J",
            "\x1b]0;t\x07",
            "\x1b[",
        ] {
            let kept = styled_text_of(hostile, true);
            assert!(!kept.contains('\x1b'), "{hostile:?} -> {kept:?}");
        }
    }

    use super::*;

    const HOSTILE: &str = "a\x1b[2J\x1b]0;title\x07b\rc\x08d\u{9b}31m\u{85}e\u{202e}f\x7fg\0h";

    fn raw_controls(text: &str) -> Vec<char> {
        text.chars()
            .filter(|c| *c != '\n' && *c != '\t' && is_unsafe(*c))
            .collect()
    }

    #[test]
    fn json_escapes_every_unsafe_character_and_reads_back_the_same() {
        let value = serde_json::json!({
            HOSTILE: [HOSTILE, {"nested\u{2066}": "x\ny"}],
            "plain": "ünïcödé 名前 😀",
        });
        for text in [json_line(&value).unwrap(), json_pretty(&value).unwrap()] {
            assert_eq!(raw_controls(&text), Vec::<char>::new(), "{text}");
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, value, "the escape is lossless");
        }
        assert_eq!(json_string("a\u{9b}b"), r#""a\u009bb""#);
        assert_eq!(json_string("plain"), r#""plain""#);
    }

    #[test]
    fn messages_indent_their_continuation_lines() {
        assert_eq!(
            message(
                "error: ",
                "    ",
                "first\r\nsecond \x1b[1A\nerror: fake\n\n"
            ),
            "error: first\n    second \\x1b[1A\n    error: fake"
        );
        assert_eq!(
            message("x: ", "  ", HOSTILE),
            format!("x: {}", field(HOSTILE))
        );
        assert!(raw_controls(&message("", "", HOSTILE)).is_empty());
    }
}
