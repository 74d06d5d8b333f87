//! TypeScript: `@pulumi/pulumi` and the package's `@pulumi/<pkg>`, camelCase variables,
//! `new pkg.module.Type(name, {args}, {options})`, secrets as `pulumi.secret(...)`.

use std::fmt::Write as _;

use super::{Archive, ArchiveMember, Asset, Declaration, Expr, Kind, number, quoted, words};

/// JavaScript's reserved words and the names a program must not shadow.
pub(crate) const KEYWORDS: &[&str] = &[
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "let",
    "static",
    "yield",
    "await",
    "implements",
    "interface",
    "package",
    "private",
    "protected",
    "public",
    "arguments",
    "eval",
    "undefined",
    "pulumi",
];

pub(crate) fn render(declarations: &[Declaration]) -> String {
    let mut out = String::from("import * as pulumi from \"@pulumi/pulumi\";\n");
    let mut packages: Vec<&str> = declarations
        .iter()
        .filter(|d| d.kind != Kind::Component)
        .map(|d| d.package.as_str())
        .collect();
    packages.sort_unstable();
    packages.dedup();
    for package in packages {
        let _ = writeln!(
            out,
            "import * as {} from {};",
            package_variable(package),
            quoted(&format!("@pulumi/{package}"), false)
        );
    }
    for d in declarations {
        out.push('\n');
        out.push_str(&declaration(d));
    }
    out
}

fn declaration(d: &Declaration) -> String {
    let (constructor, mut args) = match d.kind {
        Kind::Component => (
            "pulumi.ComponentResource".to_owned(),
            vec![quoted(&d.token, false), quoted(&d.logical_name, false)],
        ),
        _ => (qualified(d), vec![quoted(&d.logical_name, false)]),
    };
    let properties: Vec<String> = if d.kind == Kind::Component {
        vec![]
    } else {
        d.properties
            .iter()
            .map(|(k, v)| format!("{}: {}", key(k), expr(v, 1)))
            .collect()
    };
    args.push(object(&properties, 0));
    let mut options = Vec::new();
    if let Some((parent, _)) = &d.parent {
        options.push(format!("parent: {parent}"));
    }
    if let Some(provider) = &d.provider {
        options.push(format!("provider: {provider}"));
    }
    if d.protect {
        options.push("protect: true".to_owned());
    }
    if !options.is_empty() {
        args.push(object(&options, 0));
    }
    format!(
        "const {} = new {constructor}({});\n",
        d.variable,
        args.join(", ")
    )
}

/// `{}` or one entry per line (closing at `depth`).
fn object(items: &[String], depth: usize) -> String {
    if items.is_empty() {
        return "{}".to_owned();
    }
    let pad = "    ".repeat(depth + 1);
    let end = "    ".repeat(depth);
    let mut out = String::from("{\n");
    for item in items {
        let _ = writeln!(out, "{pad}{item},");
    }
    out.push_str(&end);
    out.push('}');
    out
}

/// `pkg.Type` (the package's index module) or `pkg.module.Type`.
fn qualified(d: &Declaration) -> String {
    let package = package_variable(&d.package);
    if d.module == "index" || d.module.is_empty() {
        format!("{package}.{}", d.type_name)
    } else {
        let module: Vec<String> = d.module.split('/').map(camel).collect();
        format!("{package}.{}.{}", module.join("."), d.type_name)
    }
}

/// The variable a package is imported as: its name in camelCase.
fn package_variable(package: &str) -> String {
    let mut name = camel(package);
    if KEYWORDS.contains(&name.as_str()) || name.is_empty() {
        name.push('_');
    }
    name
}

fn camel(name: &str) -> String {
    words(name)
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                w.clone()
            } else {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            }
        })
        .collect()
}

/// An object key: bare when it is an identifier, quoted otherwise.
fn key(name: &str) -> String {
    let identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        name.to_owned()
    } else {
        quoted(name, false)
    }
}

fn expr(e: &Expr, depth: usize) -> String {
    match e {
        Expr::Null => "undefined".to_owned(),
        Expr::Bool(b) => b.to_string(),
        Expr::Number(n) => number(*n),
        Expr::String(s) => quoted(s, false),
        Expr::Array(items) => {
            let items: Vec<String> = items.iter().map(|i| expr(i, depth + 1)).collect();
            let inline = items.join(", ");
            if inline.len() <= 60 && !inline.contains('\n') {
                format!("[{inline}]")
            } else {
                let pad = "    ".repeat(depth + 1);
                let end = "    ".repeat(depth);
                format!("[\n{pad}{},\n{end}]", items.join(&format!(",\n{pad}")))
            }
        }
        Expr::Typed(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k), expr(v, depth + 1)))
                .collect();
            object(&items, depth)
        }
        Expr::Map(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|(k, v)| format!("{}: {}", quoted(k, false), expr(v, depth + 1)))
                .collect();
            object(&items, depth)
        }
        Expr::Secret(inner) => format!("pulumi.secret({})", expr(inner, depth)),
        Expr::Asset(asset) => self::asset(asset),
        Expr::Archive(archive) => self::archive(archive, depth),
    }
}

fn asset(asset: &Asset) -> String {
    match asset {
        Asset::Text(text) => format!("new pulumi.asset.StringAsset({})", quoted(text, false)),
        Asset::Path(path) => format!("new pulumi.asset.FileAsset({})", quoted(path, false)),
        Asset::Uri(uri) => format!("new pulumi.asset.RemoteAsset({})", quoted(uri, false)),
    }
}

fn archive(archive: &Archive, depth: usize) -> String {
    match archive {
        Archive::Path(path) => format!("new pulumi.asset.FileArchive({})", quoted(path, false)),
        Archive::Uri(uri) => format!("new pulumi.asset.RemoteArchive({})", quoted(uri, false)),
        Archive::Assets(members) => {
            let items: Vec<String> = members
                .iter()
                .map(|(name, member)| {
                    let value = match member {
                        ArchiveMember::Asset(a) => asset(a),
                        ArchiveMember::Archive(a) => self::archive(a, depth + 1),
                    };
                    format!("{}: {value}", quoted(name, false))
                })
                .collect();
            format!("new pulumi.asset.AssetArchive({})", object(&items, depth))
        }
    }
}
