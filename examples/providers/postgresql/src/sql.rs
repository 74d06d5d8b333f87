//! SQL text helpers: quoting (from [`crate::client`]), the order Terraform's sets list their
//! items in, and the text forms of PostgreSQL arrays and booleans.
//!
//! Every name and value that reaches SQL goes through [`ident`] or [`literal`]; nothing a
//! program gives is ever formatted into a statement bare.

pub(crate) use crate::client::{quote_ident as ident, quote_literal as literal};

/// Items in the order Terraform's `schema.Set` lists strings (`Set.List()`): by the decimal
/// text of their CRC-32 (IEEE) checksum, compared as text; duplicates dropped. The Terraform
/// provider builds its statements and resource IDs in this order.
pub(crate) fn tf_set_order<S: AsRef<str>>(items: &[S]) -> Vec<String> {
    let mut keyed: Vec<(String, String)> = Vec::with_capacity(items.len());
    for item in items {
        let key = crc32(item.as_ref().as_bytes()).to_string();
        if !keyed.iter().any(|(k, _)| *k == key) {
            keyed.push((key, item.as_ref().to_owned()));
        }
    }
    keyed.sort();
    keyed.into_iter().map(|(_, item)| item).collect()
}

/// Items sorted and without duplicates: how a set of strings reads back from the state
/// (Terraform orders a set of strings lexically).
pub(crate) fn sorted_set<S: AsRef<str>>(items: &[S]) -> Vec<String> {
    let mut out: Vec<String> = items.iter().map(|s| s.as_ref().to_owned()).collect();
    out.sort();
    out.dedup();
    out
}

/// CRC-32 (IEEE 802.3, reflected, as Go's `crc32.ChecksumIEEE`).
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// Parses the text form of a one-dimensional array (`{a,"b c",NULL}`) into its items
/// (`None` for an unquoted `NULL`). Anything that is not an array reads as no items.
pub(crate) fn parse_array(text: &str) -> Vec<Option<String>> {
    let Some(inner) = text
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
    else {
        return Vec::new();
    };
    let mut items = Vec::new();
    if inner.is_empty() {
        return items;
    }
    let mut chars = inner.chars().peekable();
    loop {
        let mut item = String::new();
        let mut quoted = false;
        if chars.peek() == Some(&'"') {
            quoted = true;
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(escaped) = chars.next() {
                            item.push(escaped);
                        }
                    }
                    '"' => break,
                    other => item.push(other),
                }
            }
        }
        while let Some(&c) = chars.peek() {
            if c == ',' {
                break;
            }
            chars.next();
            if !quoted {
                item.push(c);
            }
        }
        if !quoted && item.eq_ignore_ascii_case("NULL") {
            items.push(None);
        } else {
            items.push(Some(item));
        }
        if chars.next().is_none() {
            break;
        }
    }
    items
}

/// The non-null items of an array's text form.
pub(crate) fn array_strings(text: Option<&str>) -> Vec<String> {
    text.map(parse_array)
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// A boolean in PostgreSQL's text output (`t` / `f`).
pub(crate) fn parse_bool(text: Option<&str>) -> bool {
    matches!(text, Some("t" | "true" | "TRUE" | "on" | "1"))
}

/// `ARRAY` keyword form Terraform uses in its data sources' IDs and filters:
/// `ANY (array['a','b'])`. `quote` renders each item (as a literal in SQL; as Terraform
/// writes it, bare between quotes, in an ID).
pub(crate) fn array_filter(
    items: &[String],
    keyword: &str,
    quote: impl Fn(&str) -> String,
) -> String {
    let items: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("{keyword} (array[{}])", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_go() {
        // Go: crc32.ChecksumIEEE([]byte("o1")) and friends.
        assert_eq!(crc32(b"o1"), 4_066_534_829);
        assert_eq!(crc32(b"o2"), 1_802_187_799);
        assert_eq!(crc32(b"SELECT"), 3_138_006_342);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn terraform_set_order() {
        // The order of the Terraform provider's own tests (TestCreateGrantQuery).
        assert_eq!(tf_set_order(&["o1", "o2"]), ["o2", "o1"]);
        assert_eq!(tf_set_order(&["INSERT", "UPDATE"]), ["UPDATE", "INSERT"]);
        assert_eq!(tf_set_order(&["col1", "col2", "col1"]), ["col2", "col1"]);
        assert_eq!(sorted_set(&["b", "a", "b"]), ["a", "b"]);
    }

    #[test]
    fn arrays_in_text_form() {
        let cases: &[(&str, &[Option<&str>])] = &[
            ("{}", &[]),
            ("{a}", &[Some("a")]),
            ("{a,b}", &[Some("a"), Some("b")]),
            (
                r#"{"search_path=bar, \"foo-with-hyphen\"",statement_timeout=30000}"#,
                &[
                    Some(r#"search_path=bar, "foo-with-hyphen""#),
                    Some("statement_timeout=30000"),
                ],
            ),
            (r#"{NULL,"NULL",""}"#, &[None, Some("NULL"), Some("")]),
            (r#"{"a\\b","x,y"}"#, &[Some(r"a\b"), Some("x,y")]),
            ("not an array", &[]),
        ];
        for (text, expected) in cases {
            let expected: Vec<Option<String>> =
                expected.iter().map(|s| s.map(str::to_owned)).collect();
            assert_eq!(parse_array(text), expected, "{text}");
        }
        assert_eq!(array_strings(Some("{a,NULL,b}")), ["a", "b"]);
        assert!(array_strings(None).is_empty());
    }

    #[test]
    fn quoting_cannot_be_escaped() {
        let hostile = r#"x"; DROP ROLE postgres; --"#;
        assert_eq!(ident(hostile), r#""x""; DROP ROLE postgres; --""#);
        assert_eq!(literal("it's"), "'it''s'");
        assert_eq!(literal(r"a\'b").trim_start(), "E'a\\\\''b'");
    }
}
