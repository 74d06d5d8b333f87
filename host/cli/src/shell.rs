//! Values as POSIX shell words, for `cairn stack output --shell`: the rules of go-shellquote,
//! which Pulumi's `--shell` uses (plain when nothing needs quoting, backslashes before special
//! characters, single quotes once a space appears), except that a value holding control
//! characters is written in ANSI-C quoting (`$'…'`, bash, zsh and ksh), so no raw control
//! character reaches the terminal or the script.

/// Characters escaped with a backslash.
const SPECIAL: &str = "\\'\"`${[|&;<>()*?!";
/// Characters that switch to single quotes (go-shellquote's list also has tab and newline,
/// which are written in ANSI-C quoting here).
const EXTRA_SPECIAL: &str = " ";
/// Characters escaped only at the start of a word.
const PREFIX: &str = "~";

/// `text` as one shell word.
pub fn quote(text: &str) -> String {
    if text.is_empty() {
        return "''".to_owned();
    }
    // Newlines and tabs too: each output stays one line of the script.
    if text.chars().any(is_control) {
        return ansi_c(text);
    }
    let mut out = String::with_capacity(text.len() + 2);
    for (i, c) in text.chars().enumerate() {
        if SPECIAL.contains(c) || (i == 0 && PREFIX.contains(c)) {
            out.push('\\');
            out.push(c);
        } else if EXTRA_SPECIAL.contains(c) {
            return single_quoted(text);
        } else {
            out.push(c);
        }
    }
    out
}

fn is_control(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Single quotes, a quote inside written as `'\''`.
fn single_quoted(text: &str) -> String {
    let mut out = String::new();
    let mut in_quote = false;
    for c in text.chars() {
        if c == '\'' {
            if in_quote {
                out.push('\'');
                in_quote = false;
            }
            out.push_str("\\'");
        } else {
            if !in_quote {
                out.push('\'');
                in_quote = true;
            }
            out.push(c);
        }
    }
    if in_quote {
        out.push('\'');
    }
    out
}

/// `$'…'` with every control character escaped.
fn ansi_c(text: &str) -> String {
    let mut out = String::from("$'");
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if is_control(c) && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_control(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After pulumi/pulumi pkg/cmd/pulumi/stack/stack_output_test.go
    /// (TestShellStackOutputWriter_quoting, TestStackOutputCmd_shell), plus Cairn's cases for
    /// empty words and control characters.
    #[test]
    fn words_are_quoted_as_pulumi_quotes_them() {
        let cases = [
            ("foo", "foo"),
            ("42", "42"),
            ("foo bar", "'foo bar'"),
            (r#"foo "bar" baz"#, r#"'foo "bar" baz'"#),
            ("foo 'bar' baz", r"'foo '\''bar'\'' baz'"),
            (r#"foo "bar" 'baz' qux"#, r#"'foo "bar" '\''baz'\'' qux'"#),
            ("[secret]", r"\[secret]"),
            ("mybucket-1234", "mybucket-1234"),
            ("a$b", r"a\$b"),
            ("~home", r"\~home"),
            ("a~b", "a~b"),
            ("", "''"),
            ("two\nlines", "$'two\\nlines'"),
            ("bell\x07 and ' quote", "$'bell\\x07 and \\' quote'"),
            ("rtl\u{202e}x", "$'rtl\\u202ex'"),
        ];
        for (text, quoted) in cases {
            assert_eq!(quote(text), quoted, "{text:?}");
        }
    }
}
