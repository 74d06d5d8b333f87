//! Python: the Pulumi SDK (`pulumi`) and the package's module (`pulumi_<pkg>`), snake_case
//! names, `opts=pulumi.ResourceOptions(...)`, secrets as `pulumi.Output.secret(...)`.

use std::fmt::Write as _;

use super::{Archive, ArchiveMember, Asset, Declaration, Expr, Kind, number, quoted, words};

/// Python's keywords and the names a program must not shadow.
pub(crate) const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "pulumi", "opts",
];

pub(crate) fn render(declarations: &[Declaration]) -> String {
    let mut out = String::from("import pulumi\n");
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
            "import pulumi_{} as {}",
            python_name(package),
            python_name(package)
        );
    }
    for d in declarations {
        out.push('\n');
        out.push_str(&declaration(d));
    }
    out
}

fn declaration(d: &Declaration) -> String {
    let mut args: Vec<String> = vec![quoted(&d.logical_name, false)];
    let constructor = match d.kind {
        Kind::Component => {
            args.insert(0, quoted(&d.token, false));
            args.push("None".to_owned());
            "pulumi.ComponentResource".to_owned()
        }
        _ => qualified(d),
    };
    if d.kind != Kind::Component {
        for (name, value) in &d.properties {
            args.push(format!("{}={}", property_name(name), expr(value, 1)));
        }
    }
    let mut options = Vec::new();
    if let Some((parent, _)) = &d.parent {
        options.push(format!("parent={parent}"));
    }
    if let Some(provider) = &d.provider {
        options.push(format!("provider={provider}"));
    }
    if d.protect {
        options.push("protect=True".to_owned());
    }
    if !options.is_empty() {
        args.push(format!(
            "opts=pulumi.ResourceOptions({})",
            options.join(", ")
        ));
    }
    format!("{} = {constructor}({})\n", d.variable, args.join(",\n    "))
}

/// `pkg.Type` (the package's index module) or `pkg.module.Type`.
fn qualified(d: &Declaration) -> String {
    let package = python_name(&d.package);
    if d.module == "index" || d.module.is_empty() {
        format!("{package}.{}", d.type_name)
    } else {
        let module: Vec<String> = d.module.split('/').map(python_name).collect();
        format!("{package}.{}.{}", module.join("."), d.type_name)
    }
}

/// A package or module name as a Python module name.
fn python_name(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A schema property name as a keyword argument or key: snake_case, never a keyword.
fn property_name(name: &str) -> String {
    let mut out = words(name).join("_");
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

fn expr(e: &Expr, depth: usize) -> String {
    match e {
        Expr::Null => "None".to_owned(),
        Expr::Bool(true) => "True".to_owned(),
        Expr::Bool(false) => "False".to_owned(),
        Expr::Number(n) => number(*n),
        Expr::String(s) => quoted(s, false),
        Expr::Array(items) => {
            let items: Vec<String> = items.iter().map(|i| expr(i, depth + 1)).collect();
            block("[", "]", &items, depth)
        }
        Expr::Typed(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        quoted(&property_name(k), false),
                        expr(v, depth + 1)
                    )
                })
                .collect();
            block("{", "}", &items, depth)
        }
        Expr::Map(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|(k, v)| format!("{}: {}", quoted(k, false), expr(v, depth + 1)))
                .collect();
            block("{", "}", &items, depth)
        }
        Expr::Secret(inner) => format!("pulumi.Output.secret({})", expr(inner, depth)),
        Expr::Asset(asset) => self::asset(asset),
        Expr::Archive(archive) => self::archive(archive, depth),
    }
}

/// Items inline when short, else one per line.
fn block(open: &str, close: &str, items: &[String], depth: usize) -> String {
    let inline = items.join(", ");
    if items.is_empty() {
        return format!("{open}{close}");
    }
    if inline.len() <= 60 && !inline.contains('\n') {
        return format!("{open}{inline}{close}");
    }
    let pad = "    ".repeat(depth + 1);
    let end = "    ".repeat(depth);
    format!(
        "{open}\n{pad}{},\n{end}{close}",
        items.join(&format!(",\n{pad}"))
    )
}

fn asset(asset: &Asset) -> String {
    match asset {
        Asset::Text(text) => format!("pulumi.StringAsset({})", quoted(text, false)),
        Asset::Path(path) => format!("pulumi.FileAsset({})", quoted(path, false)),
        Asset::Uri(uri) => format!("pulumi.RemoteAsset({})", quoted(uri, false)),
    }
}

fn archive(archive: &Archive, depth: usize) -> String {
    match archive {
        Archive::Path(path) => format!("pulumi.FileArchive({})", quoted(path, false)),
        Archive::Uri(uri) => format!("pulumi.RemoteArchive({})", quoted(uri, false)),
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
            format!("pulumi.AssetArchive({})", block("{", "}", &items, depth))
        }
    }
}
