//! Rust identifiers from schema names: `snake_case` for fields, setters, functions and modules,
//! `PascalCase` for types and enum variants, with keywords, leading digits and collisions
//! escaped so every schema yields code that compiles.

use std::collections::BTreeSet;

/// Words Rust reserves (strict and reserved keywords of edition 2024).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers (`r#self` is not allowed): suffixed with `_`.
const NOT_RAW: &[&str] = &["crate", "self", "Self", "super"];

/// Splits a name into words at separators and case changes: `privateKeyPEM` → `private`,
/// `Key`, `PEM`; `x509Cert` → `x509`, `Cert`.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let chars: Vec<char> = part.chars().collect();
        let mut current = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let boundary = c.is_ascii_uppercase()
                && match prev {
                    Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                    Some(p) if p.is_ascii_uppercase() => {
                        next.is_some_and(|n| n.is_ascii_lowercase())
                    }
                    _ => false,
                };
            if boundary && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            current.push(c);
        }
        if !current.is_empty() {
            words.push(current);
        }
    }
    words
}

/// `snake_case`, escaped to a valid identifier.
pub fn snake(name: &str) -> String {
    let joined = words(name)
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("_");
    escape(
        if joined.is_empty() {
            "value".to_owned()
        } else {
            joined
        },
        "_",
    )
}

/// `PascalCase`, escaped to a valid identifier. All-capital words become capitalised
/// (`SHA256` → `Sha256`) as Rust's naming lints expect.
pub fn pascal(name: &str) -> String {
    let joined: String = words(name)
        .iter()
        .map(|w| {
            let mut chars = w.chars();
            let Some(first) = chars.next() else {
                return String::new();
            };
            let rest: String = chars.collect();
            let rest = if w.chars().any(|c| c.is_ascii_lowercase()) {
                rest
            } else {
                rest.to_ascii_lowercase()
            };
            format!("{}{rest}", first.to_ascii_uppercase())
        })
        .collect();
    escape(
        if joined.is_empty() {
            "Value".to_owned()
        } else {
            joined
        },
        "V",
    )
}

/// Makes `ident` valid: a leading digit gets `digit_prefix`; keywords become raw identifiers,
/// or get a `_` suffix where Rust allows no raw form.
fn escape(ident: String, digit_prefix: &str) -> String {
    let ident = if ident.starts_with(|c: char| c.is_ascii_digit()) {
        format!("{digit_prefix}{ident}")
    } else {
        ident
    };
    if NOT_RAW.contains(&ident.as_str()) {
        format!("{ident}_")
    } else if KEYWORDS.contains(&ident.as_str()) {
        format!("r#{ident}")
    } else {
        ident
    }
}

/// The identifier without a raw prefix (for deriving other names from it).
pub fn bare(ident: &str) -> &str {
    ident.strip_prefix("r#").unwrap_or(ident)
}

/// Hands out identifiers unique within one scope: a taken one gets a suffix (`_2`, `_3`, …
/// for snake case; `2`, `3`, … for Pascal case).
#[derive(Debug, Default, Clone)]
pub struct Scope {
    taken: BTreeSet<String>,
}

impl Scope {
    /// A scope where `reserved` are already taken.
    pub fn with(reserved: &[&str]) -> Scope {
        Scope {
            taken: reserved.iter().map(|r| (*r).to_owned()).collect(),
        }
    }

    /// `ident`, or the first free suffixed form of it.
    pub fn claim(&mut self, ident: String) -> String {
        let base = bare(&ident).trim_end_matches('_').to_owned();
        let separator = if base.starts_with(|c: char| c.is_ascii_uppercase()) {
            ""
        } else {
            "_"
        };
        let mut candidate = ident;
        let mut n = 2;
        while self.taken.contains(bare(&candidate)) {
            candidate = format!("{base}{separator}{n}");
            n += 1;
        }
        self.taken.insert(bare(&candidate).to_owned());
        candidate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_and_escapes_names() {
        let snake_cases = [
            ("overrideSpecial", "override_special"),
            ("privateKeyPem", "private_key_pem"),
            ("privateKeyPEM", "private_key_pem"),
            ("IPAddresses", "ip_addresses"),
            ("isCA", "is_ca"),
            ("x509", "x509"),
            ("sha256Digest", "sha256_digest"),
            ("type", "r#type"),
            ("self", "self_"),
            ("Self", "self_"),
            ("crate", "crate_"),
            ("super", "super_"),
            ("async", "r#async"),
            ("gen", "r#gen"),
            ("2fa", "_2fa"),
            ("kebab-case.name", "kebab_case_name"),
            ("", "value"),
            ("$", "value"),
        ];
        for (name, expected) in snake_cases {
            assert_eq!(snake(name), expected, "{name:?}");
        }
        let pascal_cases = [
            ("RandomString", "RandomString"),
            ("randomString", "RandomString"),
            ("SHA256", "Sha256"),
            ("ECDSA", "Ecdsa"),
            ("P224", "P224"),
            ("Self", "Self_"),
            ("self", "Self_"),
            ("2048", "V2048"),
            ("max-value", "MaxValue"),
        ];
        for (name, expected) in pascal_cases {
            assert_eq!(pascal(name), expected, "{name:?}");
        }
    }

    #[test]
    fn scopes_resolve_collisions() {
        let mut scope = Scope::with(&["resource", "new"]);
        assert_eq!(scope.claim(snake("resource")), "resource_2");
        assert_eq!(scope.claim(snake("fooBar")), "foo_bar");
        assert_eq!(scope.claim(snake("foo_bar")), "foo_bar_2");
        assert_eq!(scope.claim(snake("type")), "r#type");
        assert_eq!(scope.claim(snake("type")), "type_2");
        let mut types = Scope::default();
        assert_eq!(types.claim(pascal("Thing")), "Thing");
        assert_eq!(types.claim(pascal("thing")), "Thing2");
    }
}
