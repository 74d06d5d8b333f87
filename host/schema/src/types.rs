//! Binding: a [`TypeSpec`] of a schema resolved to a [`Type`] — primitives, arrays, maps,
//! unions, the built-in `pulumi.json` types, and references to the package's own object, enum
//! and resource types or to another package's. Tokens (`pkg:module:Name`) parse here too.

use thiserror::Error;

use crate::model::{PackageSpec, TypeSpec};

/// A resolved type.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    Boolean,
    Integer,
    Number,
    String,
    /// `pulumi.json#/Any`, or an object with neither properties nor a map type.
    Any,
    Archive,
    Asset,
    Json,
    Array(Box<Type>),
    Map(Box<Type>),
    /// An object type of this package (`#/types/TOKEN`).
    Object(String),
    /// An enum type of this package (`#/types/TOKEN` whose entry has `enum`).
    Enum(String),
    /// A resource of this package (`#/resources/TOKEN`): passed as a resource reference.
    Resource(String),
    /// A type or resource of another package (`/aws/v4.0.0/schema.json#/types/TOKEN`).
    External {
        /// The package's name, when the path names one (`/NAME/vX.Y.Z/schema.json`).
        package: Option<String>,
        /// The version the path names, without the `v`.
        version: Option<String>,
        /// `types` or `resources`.
        section: String,
        token: String,
    },
    /// `oneOf`: a value of any of these types.
    Union(Vec<Type>),
}

/// Why a type reference does not bind.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TypeError {
    #[error(
        "unknown primitive type {0:?} (expected boolean, integer, number, string, array or object)"
    )]
    UnknownPrimitive(String),
    #[error("an array type needs \"items\"")]
    ArrayWithoutItems,
    #[error("the type needs \"type\", \"$ref\" or \"oneOf\"")]
    Missing,
    #[error(
        "reference {0:?} is not of the form pulumi.json#/NAME, #/types/TOKEN, #/resources/TOKEN or PATH#/types/TOKEN"
    )]
    MalformedReference(String),
    #[error(
        "reference {0:?} names a built-in type Pulumi does not have (Any, Archive, Asset, Json)"
    )]
    UnknownBuiltin(String),
    #[error("reference {reference:?}: the package has no type {token:?}")]
    UnknownType { reference: String, token: String },
    #[error("reference {reference:?}: the package has no resource {token:?}")]
    UnknownResource { reference: String, token: String },
}

impl Type {
    /// Binds `spec` against `package` (whose `types` and `resources` local references name).
    pub fn bind(spec: &TypeSpec, package: &PackageSpec) -> Result<Type, TypeError> {
        if let Some(reference) = &spec.reference {
            return bind_reference(reference, package);
        }
        if let Some(choices) = &spec.one_of {
            let bound = choices
                .iter()
                .map(|choice| Type::bind(choice, package))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Type::Union(bound));
        }
        let Some(name) = spec.type_name.as_deref() else {
            return Err(TypeError::Missing);
        };
        Ok(match name {
            "boolean" => Type::Boolean,
            "integer" => Type::Integer,
            "number" => Type::Number,
            "string" => Type::String,
            "array" => match &spec.items {
                Some(items) => Type::Array(Box::new(Type::bind(items, package)?)),
                None => return Err(TypeError::ArrayWithoutItems),
            },
            "object" => match &spec.additional_properties {
                Some(values) => Type::Map(Box::new(Type::bind(values, package)?)),
                None => Type::Map(Box::new(Type::Any)),
            },
            other => return Err(TypeError::UnknownPrimitive(other.to_owned())),
        })
    }

    /// The object, enum or resource token this type names directly, if any.
    pub fn token(&self) -> Option<&str> {
        match self {
            Type::Object(t) | Type::Enum(t) | Type::Resource(t) => Some(t),
            Type::External { token, .. } => Some(token),
            _ => None,
        }
    }
}

fn bind_reference(reference: &str, package: &PackageSpec) -> Result<Type, TypeError> {
    let malformed = || TypeError::MalformedReference(reference.to_owned());
    let (path, fragment) = reference.split_once('#').ok_or_else(malformed)?;
    if path == "pulumi.json" {
        return match fragment {
            "/Any" => Ok(Type::Any),
            "/Archive" => Ok(Type::Archive),
            "/Asset" => Ok(Type::Asset),
            "/Json" => Ok(Type::Json),
            _ => Err(TypeError::UnknownBuiltin(reference.to_owned())),
        };
    }
    // `#/provider`: this package's provider resource.
    if path.is_empty() && fragment == "/provider" {
        return Ok(Type::Resource(provider_token(package)));
    }
    let (section, token) = fragment
        .strip_prefix('/')
        .and_then(|f| f.split_once('/'))
        .ok_or_else(malformed)?;
    if token.is_empty() || !matches!(section, "types" | "resources") {
        return Err(malformed());
    }
    // Tokens may be percent-encoded (`aws:s3%2Fbucket:Bucket`).
    let decoded = percent_decode(token).ok_or_else(malformed)?;
    let token = decoded.as_str();
    if !path.is_empty() {
        let (package_name, version) = external_package(path);
        return Ok(Type::External {
            package: package_name,
            version,
            section: section.to_owned(),
            token: token.to_owned(),
        });
    }
    if section == "resources" {
        // The provider by its resource token: Pulumi still reads it (`#/provider` is preferred).
        return if package.resources.contains_key(token) || token == provider_token(package) {
            Ok(Type::Resource(token.to_owned()))
        } else {
            Err(TypeError::UnknownResource {
                reference: reference.to_owned(),
                token: token.to_owned(),
            })
        };
    }
    match package.types.get(token) {
        Some(t) if t.enum_values.is_some() => Ok(Type::Enum(token.to_owned())),
        Some(_) => Ok(Type::Object(token.to_owned())),
        None => Err(TypeError::UnknownType {
            reference: reference.to_owned(),
            token: token.to_owned(),
        }),
    }
}

/// The token of the package's provider resource, `pulumi:providers:NAME`.
pub fn provider_token(package: &PackageSpec) -> String {
    format!("pulumi:providers:{}", package.name)
}

/// `%XX` escapes decoded; `None` when an escape is malformed or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `/aws/v4.0.0/schema.json` or `https://host/aws/v4.0.0/schema.json` → (`aws`, `4.0.0`).
fn external_package(path: &str) -> (Option<String>, Option<String>) {
    let parts: Vec<&str> = path.trim_end_matches('/').rsplit('/').collect();
    match parts.as_slice() {
        [file, version, name, ..] if file.ends_with(".json") && version.starts_with('v') => (
            Some((*name).to_owned()),
            Some(version.trim_start_matches('v').to_owned()),
        ),
        _ => (None, None),
    }
}

/// A type token, `package:module:Name` (`random:index/randomString:RandomString`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    pub package: &'a str,
    pub module: &'a str,
    pub name: &'a str,
}

impl<'a> Token<'a> {
    /// Splits a token into its three parts; `None` unless it has exactly three non-empty parts
    /// (the module may be empty only as `pkg::Name`, which Pulumi treats as `index`).
    pub fn parse(token: &'a str) -> Option<Token<'a>> {
        let mut parts = token.splitn(3, ':');
        let package = parts.next()?;
        let module = parts.next()?;
        let name = parts.next()?;
        if package.is_empty() || name.is_empty() || name.contains(':') {
            return None;
        }
        Some(Token {
            package,
            module,
            name,
        })
    }

    /// The module with the member part of bridged-provider tokens removed: `index/randomString`
    /// → `index` (Pulumi's usual `moduleFormat`, `(.*)(?:/[^/]*)`); `""` → `index`.
    pub fn module_name(&self) -> &'a str {
        let module = match self.module.rsplit_once('/') {
            Some((head, _member)) => head,
            None => self.module,
        };
        if module.is_empty() { "index" } else { module }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package() -> PackageSpec {
        PackageSpec::from_json(
            r##"{"name": "p",
                "types": {"p:index:E": {"type": "string", "enum": [{"value": "a"}]},
                          "p:index:O": {"type": "object", "properties": {}}},
                "resources": {"p:index:R": {}}}"##,
        )
        .unwrap()
    }

    fn bind(json: &str) -> Result<Type, TypeError> {
        Type::bind(&serde_json::from_str(json).unwrap(), &package())
    }

    #[test]
    fn binds_every_kind_of_reference() {
        let cases = [
            (r#"{"type": "string"}"#, Type::String),
            (r#"{"type": "integer"}"#, Type::Integer),
            (
                r#"{"type": "array", "items": {"type": "number"}}"#,
                Type::Array(Box::new(Type::Number)),
            ),
            (
                r#"{"type": "object", "additionalProperties": {"type": "boolean"}}"#,
                Type::Map(Box::new(Type::Boolean)),
            ),
            (r#"{"$ref": "pulumi.json#/Any"}"#, Type::Any),
            (r#"{"$ref": "pulumi.json#/Archive"}"#, Type::Archive),
            (
                r##"{"$ref": "#/types/p:index:E"}"##,
                Type::Enum("p:index:E".into()),
            ),
            (
                r##"{"$ref": "#/types/p:index:O"}"##,
                Type::Object("p:index:O".into()),
            ),
            (
                r##"{"$ref": "#/resources/p:index:R"}"##,
                Type::Resource("p:index:R".into()),
            ),
            (
                r##"{"$ref": "/aws/v4.2.0/schema.json#/types/aws:index:Tag"}"##,
                Type::External {
                    package: Some("aws".into()),
                    version: Some("4.2.0".into()),
                    section: "types".into(),
                    token: "aws:index:Tag".into(),
                },
            ),
            (
                r##"{"$ref": "#/provider"}"##,
                Type::Resource("pulumi:providers:p".into()),
            ),
            (
                r##"{"$ref": "#/types/p:index%3AE"}"##,
                Type::Enum("p:index:E".into()),
            ),
            (
                r#"{"oneOf": [{"type": "string"}, {"type": "integer"}]}"#,
                Type::Union(vec![Type::String, Type::Integer]),
            ),
        ];
        for (json, expected) in cases {
            assert_eq!(bind(json).unwrap(), expected, "{json}");
        }
    }

    #[test]
    fn names_what_does_not_bind() {
        let cases = [
            (r#"{"type": "float"}"#, "unknown primitive type \"float\""),
            (r#"{"type": "array"}"#, "needs \"items\""),
            (r#"{}"#, "needs \"type\""),
            (r#"{"$ref": "pulumi.json#/Thing"}"#, "built-in type"),
            (
                r##"{"$ref": "#/types/p:index:Nope"}"##,
                "no type \"p:index:Nope\"",
            ),
            (r##"{"$ref": "#/resources/p:index:Nope"}"##, "no resource"),
            (r##"{"$ref": "#/functions/x"}"##, "is not of the form"),
        ];
        for (json, expected) in cases {
            let error = bind(json).unwrap_err().to_string();
            assert!(error.contains(expected), "{json}: {error}");
        }
    }

    #[test]
    fn tokens_split_into_package_module_and_name() {
        let t = Token::parse("random:index/randomString:RandomString").unwrap();
        assert_eq!(
            (t.package, t.module, t.name),
            ("random", "index/randomString", "RandomString")
        );
        assert_eq!(t.module_name(), "index");
        assert_eq!(
            Token::parse("tls:index:PrivateKey").unwrap().module_name(),
            "index"
        );
        assert_eq!(Token::parse("p::X").unwrap().module_name(), "index");
        for bad in ["nocolons", "a:b", ":m:N", "a:b:", "a:b:c:d"] {
            assert!(Token::parse(bad).is_none(), "{bad}");
        }
    }
}
