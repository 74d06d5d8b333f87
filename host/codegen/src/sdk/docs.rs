//! Doc comments from schema descriptions, made safe for rustdoc: code fences become ```text
//! (rustdoc would compile un-annotated or foreign-language fences as Rust doctests), Pulumi's
//! per-language example blocks and `{{% … %}}` shortcodes go, `<span pulumi-lang-…>` wrappers
//! keep only their text, and indentation that Markdown reads as a code block is capped.

/// The lines of a doc comment for `description` (no `///`), trailing blank lines removed.
pub fn doc_lines(description: &str) -> Vec<String> {
    let text = description.replace("\r\n", "\n").replace(['\r'], "\n");
    let text = unwrap_language_spans(&text);
    let mut lines: Vec<String> = Vec::new();
    let mut fence: Option<String> = None;
    let mut skipping: Option<&str> = None;
    for raw in text.split('\n') {
        let line = raw.replace('\t', "    ");
        let trimmed = line.trim();
        if let Some(end) = skipping {
            if trimmed.contains(end) {
                skipping = None;
            }
            continue;
        }
        if fence.is_none() {
            if trimmed.starts_with("<!--Start PulumiCodeChooser") {
                skipping = Some("<!--End PulumiCodeChooser");
                continue;
            }
            if is_shortcode(trimmed, "examples") {
                skipping = Some("{{% /examples %}}");
                continue;
            }
            if trimmed.starts_with("{{%") && trimmed.ends_with("%}}") {
                continue;
            }
        }
        if let Some(marker) = fence_marker(trimmed) {
            match &fence {
                Some(open)
                    if trimmed.starts_with(open.as_str()) && trimmed.len() == marker.len() =>
                {
                    fence = None;
                    lines.push(marker);
                }
                Some(_) => lines.push(line.trim_end().to_owned()),
                None => {
                    lines.push(format!("{marker}text"));
                    fence = Some(marker);
                }
            }
            continue;
        }
        if fence.is_some() {
            lines.push(line.trim_end().to_owned());
        } else {
            lines.push(cap_indent(line.trim_end()));
        }
    }
    if let Some(open) = fence {
        lines.push(open);
    }
    let mut lines = tidy(lines);
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    lines
}

/// One blank line at most between paragraphs, and no heading left without a body (an
/// "Example Usage" whose examples were dropped).
fn tidy(lines: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fence: Option<String> = None;
    for line in lines {
        match (&fence, fence_marker(line.trim())) {
            (None, Some(marker)) => fence = Some(marker),
            (Some(open), Some(_)) if line == *open => fence = None,
            _ => {}
        }
        let outside = fence.is_none() || fence_marker(line.trim()).is_some();
        if outside && line.is_empty() && out.last().is_some_and(|l| l.is_empty()) {
            continue;
        }
        if fence.is_none() && heading_level(&line) > 0 {
            drop_empty_heading(&mut out, &line);
        }
        out.push(line);
    }
    drop_empty_heading(&mut out, "");
    out
}

/// The level of a Markdown heading line (`## Import` → 2), 0 for other lines.
fn heading_level(line: &str) -> usize {
    let hashes = line.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        hashes
    } else {
        0
    }
}

/// Removes a trailing heading (and the blank line after it) when what follows is a heading
/// of the same or a higher level, or the end (`next` empty).
fn drop_empty_heading(out: &mut Vec<String>, next: &str) {
    let mut end = out.len();
    while end > 0 && out[end - 1].is_empty() {
        end -= 1;
    }
    let Some(level) = end.checked_sub(1).map(|i| heading_level(&out[i])) else {
        return;
    };
    let next_level = heading_level(next);
    if level > 0 && (next.is_empty() || next_level <= level) {
        out.truncate(end - 1);
    }
}

/// ```` ``` ```` or `~~~` (and longer runs) opening or closing a fence.
fn fence_marker(trimmed: &str) -> Option<String> {
    for c in ['`', '~'] {
        let run = trimmed.chars().take_while(|&x| x == c).count();
        if run >= 3 {
            return Some(std::iter::repeat_n(c, run).collect());
        }
    }
    None
}

/// `{{% name %}}` (with any arguments).
fn is_shortcode(trimmed: &str, name: &str) -> bool {
    trimmed
        .strip_prefix("{{%")
        .and_then(|rest| rest.strip_suffix("%}}"))
        .is_some_and(|inner| inner.split_whitespace().next() == Some(name))
}

/// At most three leading spaces outside fences: four would make an indented code block,
/// which rustdoc tests as Rust.
fn cap_indent(line: &str) -> String {
    let indent = line.len() - line.trim_start().len();
    if indent > 3 {
        format!("   {}", line.trim_start())
    } else {
        line.to_owned()
    }
}

/// `<span pulumi-lang-nodejs="…" …>TEXT</span>` → `TEXT`.
fn unwrap_language_spans(text: &str) -> String {
    const OPEN: &str = "<span pulumi-lang-";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start..];
        let Some(tag_end) = after.find('>') else {
            break;
        };
        let inner = &after[tag_end + 1..];
        let Some(close) = inner.find("</span>") else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&inner[..close]);
        rest = &inner[close + "</span>".len()..];
    }
    out.push_str(rest);
    out
}

/// Renders doc lines as `///` comments at `indent`.
pub fn render(lines: &[String], indent: &str) -> String {
    let mut out = String::new();
    for line in lines {
        if line.is_empty() {
            out.push_str(&format!("{indent}///\n"));
        } else {
            out.push_str(&format!("{indent}/// {line}\n"));
        }
    }
    out
}

/// A Rust string literal holding `text` (for `#[deprecated(note = …)]`).
pub fn string_literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_descriptions_for_rustdoc() {
        let cases: &[(&str, &[&str])] = &[
            ("plain text\n", &["plain text"]),
            (
                "Use it:\n```\nlet x = 1;\n```\n",
                &["Use it:", "```text", "let x = 1;", "```"],
            ),
            (
                "```typescript\nnew X();\n```",
                &["```text", "new X();", "```"],
            ),
            (
                "intro\n{{% examples %}}\n## Example Usage\n{{% example %}}\n```go\nx\n```\n{{% /example %}}\n{{% /examples %}}\nafter",
                &["intro", "after"],
            ),
            (
                "Intro.\n\n## Example Usage\n\n<!--Start PulumiCodeChooser -->\n```go\nx\n```\n<!--End PulumiCodeChooser -->\n\n## Import\n\nBy ID.\n\n\n\nEnd.",
                &["Intro.", "", "## Import", "", "By ID.", "", "End."],
            ),
            (
                "## Example Usage\n\n### Basic\n\ntext",
                &["## Example Usage", "", "### Basic", "", "text"],
            ),
            ("```\na\n\n\nb\n```", &["```text", "a", "", "", "b", "```"]),
            (
                "A\n<!--Start PulumiCodeChooser -->\n```python\nx\n```\n<!--End PulumiCodeChooser -->\nB",
                &["A", "B"],
            ),
            (
                "The <span pulumi-lang-nodejs=\"`a.B`\" pulumi-lang-go=\"`B`\">`a.B`</span> thing",
                &["The `a.B` thing"],
            ),
            (
                "text\n\n        indented code\n",
                &["text", "", "   indented code"],
            ),
            ("tab\n\tx\r\ny  \n\n\n", &["tab", "   x", "y"]),
            ("```sh\nunclosed", &["```text", "unclosed", "```"]),
            (
                "````md\n```\ninner\n```\n````",
                &["````text", "```", "inner", "```", "````"],
            ),
        ];
        for (description, expected) in cases {
            assert_eq!(doc_lines(description), *expected, "{description:?}");
        }
    }

    #[test]
    fn escapes_string_literals() {
        assert_eq!(string_literal("say \"x\"\\n\n"), r#""say \"x\"\\n\n""#);
    }
}
