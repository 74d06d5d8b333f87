//! Program code for imported resources (Rust, Python, TypeScript): `cairn import`.
//!
//! Follows Pulumi's import code generator: a resource is declared with the input properties
//! its schema lists (in name order), taken from its recorded inputs; an absent or null one is
//! left out, or given its type's zero value when it is required; secrets are wrapped in the
//! language's secret call; a parent other than the stack and an explicit provider become
//! references to the variables that declare them; `protect` is set when the resource is
//! protected. A type the schema does not list is an error. The languages render the same
//! [`Expr`] trees: [`rust`] (the guest SDK's `custom`/`Args`), [`python`] (`pulumi_<pkg>`),
//! [`typescript`] (`@pulumi/<pkg>`).

mod python;
mod rust;
mod typescript;

use std::collections::HashSet;

use cairn_schema::{PackageSpec, PropertySpec, ResourceSpec, Token, Type};
use indexmap::IndexMap;
use thiserror::Error;

/// A language program code can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// A wasm program using the guest SDK (`cairn_sdk::program`).
    Rust,
    /// A Python program using the Pulumi SDK and the package's `pulumi_<pkg>` module.
    Python,
    /// A Node.js program (TypeScript) using `@pulumi/pulumi` and `@pulumi/<pkg>`.
    TypeScript,
}

/// A value as recorded in the state, in the terms code generation needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(IndexMap<String, Value>),
    Secret(Box<Value>),
    Asset(Asset),
    Archive(Archive),
    /// A value not known (never recorded after an import; treated as absent).
    Unknown,
}

/// An asset, by where its contents come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Asset {
    Text(String),
    Path(String),
    Uri(String),
}

/// An archive, by where its contents come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Archive {
    Assets(IndexMap<String, ArchiveMember>),
    Path(String),
    Uri(String),
}

/// A member of an archive of assets.
#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveMember {
    Asset(Asset),
    Archive(Archive),
}

/// What kind of resource a declaration makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A resource managed by its package's provider.
    Custom,
    /// A local component (no provider).
    Component,
    /// An explicit provider of `package` (type `pulumi:providers:<package>`).
    Provider { package: String },
}

/// One imported resource, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The name the import gave it; the variable that declares it is named after it.
    pub name: String,
    /// Its logical name (the last part of its URN).
    pub logical_name: String,
    pub resource_type: String,
    pub kind: Kind,
    /// The recorded inputs.
    pub inputs: IndexMap<String, Value>,
    /// The name (in this list or the caller's names) of its parent; `None` for the stack.
    pub parent: Option<String>,
    /// The name of its explicit provider; `None` for a default provider.
    pub provider: Option<String>,
    pub protect: bool,
}

/// Why code could not be generated.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ProgramError {
    #[error("no schema for package {package:?}, so the inputs of {name:?} ({token}) are unknown")]
    NoSchema {
        package: String,
        name: String,
        token: String,
    },
    #[error("unknown resource type {token:?}: the schema of package {package:?} does not list it")]
    UnknownType { package: String, token: String },
    #[error("{token:?} is not a type token (pkg:module:Name)")]
    BadToken { token: String },
    #[error("{name:?}: property {property:?}: {message}")]
    BadProperty {
        name: String,
        property: String,
        message: String,
    },
    #[error("{name:?} refers to {target:?} as its {role}, which no declaration names")]
    UnknownReference {
        name: String,
        target: String,
        role: &'static str,
    },
}

/// A value as the code writes it: schema-typed objects keep property names (the language
/// cases them), maps keep their keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Expr>),
    /// An object of a schema type: keys are property names.
    Typed(Vec<(String, Expr)>),
    /// A map (or an untyped object): keys as recorded.
    Map(Vec<(String, Expr)>),
    Secret(Box<Expr>),
    Asset(Asset),
    Archive(Archive),
}

/// A declaration ready to render.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Declaration {
    /// The variable, in the language's casing and unique.
    pub variable: String,
    pub logical_name: String,
    pub token: String,
    pub kind: Kind,
    /// The package (of the type, or the provider's).
    pub package: String,
    /// The module (`index` for the package's root).
    pub module: String,
    /// The type's name (`File`; `Provider` for providers).
    pub type_name: String,
    pub properties: Vec<(String, Expr)>,
    /// The variable of the parent, and whether it is a provider (Rust takes its `resource`).
    pub parent: Option<(String, bool)>,
    pub provider: Option<String>,
    pub protect: bool,
}

/// The code declaring `resources` (parents and providers before what refers to them) in
/// `language`, with the inputs `schemas` (by package name) list. `known` names resources
/// declared elsewhere (nameTable entries) that references may use as they are.
pub fn generate(
    language: Language,
    resources: &[Resource],
    schemas: &IndexMap<String, PackageSpec>,
    known: &[String],
) -> Result<String, ProgramError> {
    let declarations = declarations(language, resources, schemas, known)?;
    Ok(match language {
        Language::Rust => rust::render(&declarations),
        Language::Python => python::render(&declarations),
        Language::TypeScript => typescript::render(&declarations),
    })
}

fn declarations(
    language: Language,
    resources: &[Resource],
    schemas: &IndexMap<String, PackageSpec>,
    known: &[String],
) -> Result<Vec<Declaration>, ProgramError> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut variables: IndexMap<&str, String> = IndexMap::new();
    for name in known {
        let variable = unique(variable_name(language, name), &mut taken);
        variables.insert(name, variable);
    }
    for resource in resources {
        let variable = unique(variable_name(language, &resource.name), &mut taken);
        variables.insert(&resource.name, variable);
    }
    let providers: HashSet<&str> = resources
        .iter()
        .filter(|r| matches!(r.kind, Kind::Provider { .. }))
        .map(|r| r.name.as_str())
        .collect();
    let reference = |resource: &Resource, target: &str, role: &'static str| {
        variables
            .get(target)
            .cloned()
            .ok_or_else(|| ProgramError::UnknownReference {
                name: resource.name.clone(),
                target: target.to_owned(),
                role,
            })
    };
    let mut out = Vec::with_capacity(resources.len());
    for resource in ordered(resources) {
        let variable = variables[resource.name.as_str()].clone();
        let parent = match &resource.parent {
            Some(target) => Some((
                reference(resource, target, "parent")?,
                providers.contains(target.as_str()),
            )),
            None => None,
        };
        let provider = match &resource.provider {
            Some(target) => Some(reference(resource, target, "provider")?),
            None => None,
        };
        let (package, module, type_name, properties) = match &resource.kind {
            Kind::Component => (
                String::new(),
                String::new(),
                String::new(),
                untyped_properties(&resource.inputs),
            ),
            Kind::Provider { package } => {
                let schema = schema_of(schemas, package, resource)?;
                let spec = schema.provider.clone().unwrap_or_default();
                let properties = typed_properties(resource, &spec, schema)?;
                (
                    package.clone(),
                    "index".to_owned(),
                    "Provider".to_owned(),
                    properties,
                )
            }
            Kind::Custom => {
                let token = Token::parse(&resource.resource_type).ok_or_else(|| {
                    ProgramError::BadToken {
                        token: resource.resource_type.clone(),
                    }
                })?;
                let schema = schema_of(schemas, token.package, resource)?;
                let spec = schema
                    .resources
                    .get(&resource.resource_type)
                    .ok_or_else(|| ProgramError::UnknownType {
                        package: token.package.to_owned(),
                        token: resource.resource_type.clone(),
                    })?;
                let properties = typed_properties(resource, spec, schema)?;
                (
                    token.package.to_owned(),
                    token.module_name().to_owned(),
                    token.name.to_owned(),
                    properties,
                )
            }
        };
        out.push(Declaration {
            variable,
            logical_name: resource.logical_name.clone(),
            token: resource.resource_type.clone(),
            kind: resource.kind.clone(),
            package,
            module,
            type_name,
            properties,
            parent,
            provider,
            protect: resource.protect,
        });
    }
    Ok(out)
}

/// `resources` with each after the parent and provider it names (stable otherwise).
fn ordered(resources: &[Resource]) -> Vec<&Resource> {
    let mut out: Vec<&Resource> = Vec::with_capacity(resources.len());
    let mut placed: HashSet<&str> = HashSet::new();
    let names: HashSet<&str> = resources.iter().map(|r| r.name.as_str()).collect();
    let ready = |r: &Resource, placed: &HashSet<&str>| {
        [&r.parent, &r.provider]
            .into_iter()
            .flatten()
            .all(|t| !names.contains(t.as_str()) || placed.contains(t.as_str()) || *t == r.name)
    };
    while out.len() < resources.len() {
        let before = out.len();
        for r in resources {
            if !placed.contains(r.name.as_str()) && ready(r, &placed) {
                placed.insert(&r.name);
                out.push(r);
            }
        }
        if out.len() == before {
            // A cycle (the importer refuses these): keep the rest in their given order.
            for r in resources {
                if placed.insert(&r.name) {
                    out.push(r);
                }
            }
        }
    }
    out
}

fn schema_of<'a>(
    schemas: &'a IndexMap<String, PackageSpec>,
    package: &str,
    resource: &Resource,
) -> Result<&'a PackageSpec, ProgramError> {
    schemas.get(package).ok_or_else(|| ProgramError::NoSchema {
        package: package.to_owned(),
        name: resource.name.clone(),
        token: resource.resource_type.clone(),
    })
}

/// A component's inputs as they are (components have no schema here).
fn untyped_properties(inputs: &IndexMap<String, Value>) -> Vec<(String, Expr)> {
    let mut keys: Vec<&String> = inputs.keys().collect();
    keys.sort();
    keys.into_iter()
        .filter_map(|k| untyped(&inputs[k]).map(|e| (k.clone(), e)))
        .collect()
}

/// The schema's input properties, in name order, with the recorded values (see the module
/// docs for what is left out and what is zeroed).
fn typed_properties(
    resource: &Resource,
    spec: &ResourceSpec,
    schema: &PackageSpec,
) -> Result<Vec<(String, Expr)>, ProgramError> {
    let mut names: Vec<&String> = spec.input_properties.keys().collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let property = &spec.input_properties[name];
        let required = spec.required_inputs.contains(name);
        let fail = |message: String| ProgramError::BadProperty {
            name: resource.name.clone(),
            property: name.clone(),
            message,
        };
        let ty = Type::bind(&property.type_spec, schema).map_err(|e| fail(e.to_string()))?;
        if let Some(expr) = property_value(resource.inputs.get(name), &ty, required, schema) {
            out.push((name.clone(), expr));
        }
    }
    Ok(out)
}

/// A property's expression: its value, or (absent, null or unknown) its zero value when
/// required and nothing otherwise.
fn property_value(
    value: Option<&Value>,
    ty: &Type,
    required: bool,
    schema: &PackageSpec,
) -> Option<Expr> {
    match value {
        None | Some(Value::Null) | Some(Value::Unknown) => {
            required.then(|| zero_value(ty, schema, 0))
        }
        Some(value) => Some(typed(value, ty, schema)),
    }
}

/// How deep zero values of nested required objects go (a recursive type stops here).
const MAX_ZERO_DEPTH: usize = 8;

/// The zero value of a type, as Pulumi writes it for a required input the resource lacks.
fn zero_value(ty: &Type, schema: &PackageSpec, depth: usize) -> Expr {
    match ty {
        Type::Boolean => Expr::Bool(false),
        Type::Integer | Type::Number => Expr::Number(0.0),
        Type::String => Expr::String(String::new()),
        Type::Array(_) => Expr::Array(vec![]),
        Type::Map(_) | Type::Any | Type::Json => Expr::Map(vec![]),
        Type::Asset | Type::Archive | Type::Resource(_) | Type::External { .. } => Expr::Null,
        Type::Enum(token) => schema
            .types
            .get(token)
            .and_then(|t| t.enum_values.as_ref())
            .and_then(|values| values.first())
            .map(|v| json_expr(&v.value))
            .unwrap_or(Expr::Null),
        Type::Object(token) => {
            let Some(object) = schema.types.get(token).filter(|_| depth < MAX_ZERO_DEPTH) else {
                return Expr::Typed(vec![]);
            };
            let mut names: Vec<&String> = object.object.properties.keys().collect();
            names.sort();
            let items = names
                .into_iter()
                .filter(|n| object.object.required.contains(n))
                .map(|n| {
                    let spec: &PropertySpec = &object.object.properties[n];
                    let inner = Type::bind(&spec.type_spec, schema).unwrap_or(Type::Any);
                    (n.clone(), zero_value(&inner, schema, depth + 1))
                })
                .collect();
            Expr::Typed(items)
        }
        Type::Union(choices) => choices
            .iter()
            .min_by_key(|t| simplicity(t))
            .map(|t| zero_value(t, schema, depth))
            .unwrap_or(Expr::Null),
    }
}

/// Pulumi's order of "simpler" types, for the zero value of a union.
fn simplicity(ty: &Type) -> u8 {
    match ty {
        Type::Boolean => 1,
        Type::Integer => 2,
        Type::Number => 3,
        Type::String => 4,
        Type::Asset => 5,
        Type::Archive => 6,
        Type::Json => 7,
        Type::Enum(_) => 8,
        Type::Array(_) => 9,
        Type::Map(_) => 10,
        Type::Object(_) => 11,
        Type::Union(_) => 12,
        _ => 13,
    }
}

fn json_expr(value: &serde_json::Value) -> Expr {
    match value {
        serde_json::Value::Null => Expr::Null,
        serde_json::Value::Bool(b) => Expr::Bool(*b),
        serde_json::Value::Number(n) => Expr::Number(n.as_f64().unwrap_or_default()),
        serde_json::Value::String(s) => Expr::String(s.clone()),
        serde_json::Value::Array(items) => Expr::Array(items.iter().map(json_expr).collect()),
        serde_json::Value::Object(map) => {
            Expr::Map(map.iter().map(|(k, v)| (k.clone(), json_expr(v))).collect())
        }
    }
}

/// A recorded value as an expression of type `ty`: objects of a schema type keep only the
/// type's properties (absent optional ones left out, required ones zeroed).
fn typed(value: &Value, ty: &Type, schema: &PackageSpec) -> Expr {
    let ty = match ty {
        Type::Union(choices) => choices
            .iter()
            .find(|t| fits(value, t, schema))
            .unwrap_or(ty),
        other => other,
    };
    match (value, ty) {
        (Value::Secret(inner), _) => Expr::Secret(Box::new(typed(inner, ty, schema))),
        (Value::Array(items), Type::Array(element)) => {
            Expr::Array(items.iter().map(|v| typed(v, element, schema)).collect())
        }
        (Value::Object(map), Type::Map(element)) => Expr::Map(
            map.iter()
                .map(|(k, v)| (k.clone(), typed(v, element, schema)))
                .collect(),
        ),
        (Value::Object(map), Type::Object(token)) => match schema.types.get(token) {
            Some(object) => {
                let mut names: Vec<&String> = object.object.properties.keys().collect();
                names.sort();
                let items = names
                    .into_iter()
                    .filter_map(|n| {
                        let spec = &object.object.properties[n];
                        let inner = Type::bind(&spec.type_spec, schema).unwrap_or(Type::Any);
                        let required = object.object.required.contains(n);
                        property_value(map.get(n), &inner, required, schema).map(|e| (n.clone(), e))
                    })
                    .collect();
                Expr::Typed(items)
            }
            None => untyped(value).unwrap_or(Expr::Null),
        },
        // A string where an asset or archive is expected names a file, as in Pulumi.
        (Value::String(path), Type::Asset) => Expr::Asset(Asset::Path(path.clone())),
        (Value::String(path), Type::Archive) => Expr::Archive(Archive::Path(path.clone())),
        _ => untyped(value).unwrap_or(Expr::Null),
    }
}

/// Whether `value` has the shape of `ty` (for choosing a union's member).
fn fits(value: &Value, ty: &Type, schema: &PackageSpec) -> bool {
    match (value, ty) {
        (Value::Secret(inner), _) => fits(inner, ty, schema),
        (_, Type::Any | Type::Json) => true,
        (Value::Bool(_), Type::Boolean) => true,
        (Value::Number(_), Type::Integer | Type::Number) => true,
        (Value::String(_), Type::String | Type::Enum(_)) => true,
        (Value::Array(items), Type::Array(element)) => {
            items.iter().all(|v| fits(v, element, schema))
        }
        (Value::Object(map), Type::Map(element)) => map.values().all(|v| fits(v, element, schema)),
        (Value::Object(map), Type::Object(token)) => schema.types.get(token).is_some_and(|t| {
            map.keys().all(|k| t.object.properties.contains_key(k))
                && t.object.required.iter().all(|r| map.contains_key(r))
        }),
        (Value::Asset(_), Type::Asset) => true,
        (Value::Archive(_), Type::Archive) => true,
        (_, Type::Union(choices)) => choices.iter().any(|t| fits(value, t, schema)),
        _ => false,
    }
}

/// A value with no type to guide it (components, `Any`): objects become maps.
fn untyped(value: &Value) -> Option<Expr> {
    Some(match value {
        Value::Null => Expr::Null,
        Value::Unknown => return None,
        Value::Bool(b) => Expr::Bool(*b),
        Value::Number(n) => Expr::Number(*n),
        Value::String(s) => Expr::String(s.clone()),
        Value::Array(items) => Expr::Array(items.iter().filter_map(untyped).collect()),
        Value::Object(map) => Expr::Map(
            map.iter()
                .filter_map(|(k, v)| untyped(v).map(|e| (k.clone(), e)))
                .collect(),
        ),
        Value::Secret(inner) => Expr::Secret(Box::new(untyped(inner)?)),
        Value::Asset(asset) => Expr::Asset(asset.clone()),
        Value::Archive(archive) => Expr::Archive(archive.clone()),
    })
}

/// `name` as a variable of `language`: snake_case (Rust, Python) or camelCase (TypeScript),
/// only identifier characters, never a keyword.
fn variable_name(language: Language, name: &str) -> String {
    let words = words(name);
    let mut out = match language {
        Language::Rust | Language::Python => words.join("_"),
        Language::TypeScript => words
            .iter()
            .enumerate()
            .map(|(i, w)| if i == 0 { w.clone() } else { capitalized(w) })
            .collect(),
    };
    if out.is_empty() {
        out.push_str("resource");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    let reserved = match language {
        Language::Rust => rust::KEYWORDS,
        Language::Python => python::KEYWORDS,
        Language::TypeScript => typescript::KEYWORDS,
    };
    if reserved.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// The lower-case words of a name: split at non-alphanumerics and where camelCase turns.
pub(crate) fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !current.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                words.push(std::mem::take(&mut current));
            }
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// `base`, or `base2`, `base3`… if taken; marks the result taken.
fn unique(base: String, taken: &mut HashSet<String>) -> String {
    let mut candidate = base.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{base}{n}");
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

/// A number as code writes it: integers without a fraction.
pub(crate) fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n:?}")
    }
}

/// A double-quoted string literal with the escapes Rust, Python and JavaScript share, and
/// every other control character as `\u{..}` (Rust) or `\uXXXX` (Python, JavaScript).
pub(crate) fn quoted(text: &str, rust_unicode: bool) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => {
                if rust_unicode {
                    out.push_str(&format!("\\u{{{:x}}}", c as u32));
                } else {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests;
