//! Text from untrusted parties made safe to show a person: control characters become visible
//! escapes, so a name, log line or error cannot move the cursor, clear the screen, set the
//! terminal's title or fake a line of Cairn's own output.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as it is: C0 controls (including ESC, BEL, CR,
/// backspace, newline and tab), DEL, C1 controls (U+0080–U+009F, which some terminals read as
/// CSI/OSC introducers) and the Unicode formatting characters that reorder or hide text (bidi
/// overrides and isolates, zero-width joiners aside).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// A single-line field (a name, type, URN, ID, key) with every unsafe character escaped,
/// newlines and tabs included.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// Multi-line text (a log message, an error): newlines and tabs are kept, every other unsafe
/// character is escaped.
pub fn visible_text(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// Multi-line text made visible: `\r\n` line ends become `\n`, then [`visible_text`] (every
/// unsafe character but newline and tab escaped).
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(visible_text(&text.replace("\r\n", "\n")).into_owned())
    } else {
        visible_text(text)
    }
}

/// A name for an error message: in double quotes, control characters escaped, and at most 64
/// characters of it (with the full length noted), so a hostile name cannot flood the message.
pub fn quoted(name: &str) -> String {
    const MAX: usize = 64;
    let count = name.chars().count();
    if count <= MAX {
        return format!("\"{}\"", visible_line(name));
    }
    let head: String = name.chars().take(MAX).collect();
    format!("\"{}\"… ({} bytes)", visible_line(&head), name.len())
}

/// [`visible_line`], cut to at most `max` characters (with `…` when cut): untrusted text quoted
/// in an error.
pub fn shown(text: &str, max: usize) -> String {
    let visible = visible_line(text);
    if visible.chars().count() <= max {
        return visible.into_owned();
    }
    let mut out: String = visible.chars().take(max).collect();
    out.push('…');
    out
}

/// Whether `text` holds a character [`visible_line`] would escape.
pub fn has_unsafe(text: &str) -> bool {
    text.chars().any(is_unsafe)
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !is_unsafe(c) || keep(c) {
            out.push(c);
            continue;
        }
        let _ = match c {
            '\n' => out.write_str("\\n"),
            '\r' => out.write_str("\\r"),
            '\t' => out.write_str("\\t"),
            c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
            c => write!(out, "\\u{{{:x}}}", c as u32),
        };
    }
    Cow::Owned(out)
}

/// An error and its causes on one line, `: `-separated.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible() {
        let cases = [
            ("plain name-1", "plain name-1"),
            ("\x1b[2J\x1b]0;pwned\x07", "\\x1b[2J\\x1b]0;pwned\\x07"),
            ("a\rb\x08c\x00d\x7f", "a\\rb\\x08c\\x00d\\x7f"),
            ("line\nfake ✓ created", "line\\nfake ✓ created"),
            ("tab\there", "tab\\there"),
            ("c1 \u{9b}31m \u{9d}0;x", "c1 \\u{9b}31m \\u{9d}0;x"),
            ("bidi \u{202e}cod\u{2066}", "bidi \\u{202e}cod\\u{2066}"),
            ("ünïcödé 名前", "ünïcödé 名前"),
        ];
        for (input, expected) in cases {
            assert_eq!(visible_line(input), expected, "{input:?}");
            assert!(!visible_line(input).chars().any(is_unsafe));
        }
    }

    #[test]
    fn quoted_names_are_short_and_visible() {
        assert_eq!(quoted("../x"), r#""../x""#);
        assert_eq!(quoted("a\x1b[2J"), r#""a\x1b[2J""#);
        let long = "x".repeat(5000);
        assert_eq!(
            quoted(&long),
            format!("\"{}\"… (5000 bytes)", "x".repeat(64))
        );
    }

    #[test]
    fn lines_end_in_newlines_only() {
        assert_eq!(visible_lines("a\r\nb\rc"), "a\nb\\rc");
        assert!(matches!(visible_lines("no controls"), Cow::Borrowed(_)));
    }

    #[test]
    fn text_keeps_newlines_and_tabs_only() {
        assert_eq!(visible_text("one\n\ttwo\r\x1b[1A"), "one\n\ttwo\\r\\x1b[1A");
        assert!(matches!(visible_text("no controls"), Cow::Borrowed(_)));
    }
}
