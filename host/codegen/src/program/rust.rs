//! Rust: statements for a wasm program's `main` using the guest SDK — `custom(type, name,
//! Args::new().set(..), ResourceOptions::new()..)`, `provider(..)`, `component(..)` — with
//! nested values as `Value`s and secrets as `secret(..)`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{Archive, ArchiveMember, Asset, Declaration, Expr, Kind, number, quoted};

/// Rust's keywords (a variable named so gets a `_` suffix).
pub(crate) const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "try",
    "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "ctx",
];

/// What the statements use from the SDK, for the `use` lines.
#[derive(Default)]
struct Uses {
    program: BTreeSet<&'static str>,
    root: BTreeSet<&'static str>,
}

pub(crate) fn render(declarations: &[Declaration]) -> String {
    let mut uses = Uses::default();
    let mut body = String::new();
    for d in declarations {
        body.push('\n');
        body.push_str(&declaration(d, &mut uses));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "use cairn_sdk::program::{{{}}};",
        uses.program.iter().copied().collect::<Vec<_>>().join(", ")
    );
    if !uses.root.is_empty() {
        let _ = writeln!(
            out,
            "use cairn_sdk::{{{}}};",
            uses.root.iter().copied().collect::<Vec<_>>().join(", ")
        );
    }
    out.push_str(&body);
    out
}

fn declaration(d: &Declaration, uses: &mut Uses) -> String {
    uses.program.insert("ResourceOptions");
    let mut options = String::from("ResourceOptions::new()");
    if let Some((parent, is_provider)) = &d.parent {
        let target = if *is_provider {
            format!("&{parent}.resource")
        } else {
            format!("&{parent}")
        };
        let _ = write!(options, ".parent({target})");
    }
    if let Some(provider) = &d.provider {
        let _ = write!(options, ".provider(&{provider})");
    }
    if d.protect {
        options.push_str(".protect(true)");
    }
    let (function, mut args) = match &d.kind {
        Kind::Component => {
            uses.program.insert("component");
            ("component", vec![quoted(&d.token, true)])
        }
        Kind::Provider { package } => {
            uses.program.insert("provider");
            ("provider", vec![quoted(package, true)])
        }
        Kind::Custom => {
            uses.program.insert("custom");
            ("custom", vec![quoted(&d.token, true)])
        }
    };
    args.push(quoted(&d.logical_name, true));
    if d.kind != Kind::Component {
        uses.program.insert("Args");
        let mut built = String::from("Args::new()");
        for (name, value) in &d.properties {
            let _ = write!(
                built,
                "\n        .set({}, {})",
                quoted(name, true),
                top(value, uses)
            );
        }
        args.push(built);
    }
    args.push(options);
    format!(
        "let {} = {function}(\n    {},\n);\n",
        d.variable,
        args.join(",\n    ")
    )
}

/// A value given to `Args::set`: plain strings, numbers and booleans as they are.
fn top(e: &Expr, uses: &mut Uses) -> String {
    match e {
        Expr::String(s) => quoted(s, true),
        Expr::Bool(b) => b.to_string(),
        Expr::Number(n) => typed_number(*n),
        other => value(other, uses, 2),
    }
}

/// `42_i64` or `1.5_f64`.
fn typed_number(n: f64) -> String {
    let text = number(n);
    if text.contains(['.', 'e', 'E']) || text.contains("inf") || text.contains("NaN") {
        format!("{text}_f64")
    } else {
        format!("{text}_i64")
    }
}

/// An expression of type `Value`.
fn value(e: &Expr, uses: &mut Uses, depth: usize) -> String {
    match e {
        Expr::Null => {
            uses.root.insert("Value");
            "Value::Null".to_owned()
        }
        Expr::Bool(b) => {
            uses.root.insert("Value");
            format!("Value::from({b})")
        }
        Expr::Number(n) => {
            uses.root.insert("Value");
            format!("Value::from({})", typed_number(*n))
        }
        Expr::String(s) => {
            uses.root.insert("Value");
            format!("Value::from({})", quoted(s, true))
        }
        Expr::Array(items) => {
            uses.root.insert("Value");
            let items: Vec<String> = items.iter().map(|i| value(i, uses, depth + 1)).collect();
            format!("Value::Array(vec![{}])", list(&items, depth))
        }
        Expr::Typed(items) | Expr::Map(items) => {
            uses.root.insert("Value");
            uses.root.insert("props");
            let items: Vec<String> = items
                .iter()
                .map(|(k, v)| format!("{} => {}", quoted(k, true), value(v, uses, depth + 1)))
                .collect();
            format!("Value::Object(props! {{{}}})", list(&items, depth))
        }
        Expr::Secret(inner) => {
            uses.root.insert("secret");
            format!("secret({})", value(inner, uses, depth))
        }
        Expr::Asset(a) => {
            uses.root.insert("Value");
            format!("Value::from({})", asset(a, uses))
        }
        Expr::Archive(a) => {
            uses.root.insert("Value");
            format!("Value::from({})", archive(a, uses, depth))
        }
    }
}

/// Items inline when short, else one per line.
fn list(items: &[String], depth: usize) -> String {
    let inline = items.join(", ");
    if inline.len() <= 60 && !inline.contains('\n') {
        return inline;
    }
    let pad = "    ".repeat(depth + 1);
    let end = "    ".repeat(depth);
    format!("\n{pad}{},\n{end}", items.join(&format!(",\n{pad}")))
}

fn asset(asset: &Asset, uses: &mut Uses) -> String {
    uses.root.insert("Asset");
    match asset {
        Asset::Text(text) => format!("Asset::from_text({})", quoted(text, true)),
        Asset::Path(path) => format!("Asset::from_path({})", quoted(path, true)),
        Asset::Uri(uri) => format!("Asset::from_uri({})", quoted(uri, true)),
    }
}

fn archive(archive: &Archive, uses: &mut Uses, depth: usize) -> String {
    uses.root.insert("Archive");
    match archive {
        Archive::Path(path) => format!("Archive::from_path({})", quoted(path, true)),
        Archive::Uri(uri) => format!("Archive::from_uri({})", quoted(uri, true)),
        Archive::Assets(members) => {
            uses.root.insert("ArchiveMember");
            let items: Vec<String> = members
                .iter()
                .map(|(name, member)| {
                    let inner = match member {
                        ArchiveMember::Asset(a) => {
                            format!("ArchiveMember::Asset({})", self::asset(a, uses))
                        }
                        ArchiveMember::Archive(a) => format!(
                            "ArchiveMember::Archive({})",
                            self::archive(a, uses, depth + 1)
                        ),
                    };
                    format!("({}.to_owned(), {inner})", quoted(name, true))
                })
                .collect();
            format!(
                "Archive::from_assets([{}].into_iter().collect())",
                list(&items, depth)
            )
        }
    }
}
