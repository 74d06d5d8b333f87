//! URNs (`urn:pulumi:<stack>::<project>::<qualified type>::<name>`) and type tokens.
//!
//! Parsing follows the spec's EBNF; every error names the part at fault.
//!
//! # Type tokens
//!
//! What a provider manages — custom resources, providers, remote components, reads, function tokens
//! — has a module-member type following the metaschema pattern (`TypeToken::parse_member`; two-part
//! tokens, `pkg:Type`, too, since the URN grammar allows them): its package names the provider. A
//! component's type may be anything a URN can hold (`TypeToken::parse`: printable, no white space,
//! no `$` or `::`, not starting or ending with `:`, ≤ 1 KiB), since Pulumi accepts any format for
//! components (`"component"`) and its states hold such URNs.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

const URN_PREFIX: &str = "urn:pulumi:";
const SEPARATOR: &str = "::";

/// Why a URN or type token was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrnError {
    #[error("invalid URN {urn:?}: it must start with \"urn:pulumi:\"")]
    MissingPrefix { urn: String },
    #[error(
        "invalid URN {urn:?}: expected \"urn:pulumi:<stack>::<project>::<type>::<name>\", found {found} \"::\"-separated parts"
    )]
    WrongPartCount { urn: String, found: usize },
    #[error("invalid URN {urn:?}: the {part} is empty")]
    EmptyPart { urn: String, part: &'static str },
    #[error("invalid URN {urn:?}: {source}")]
    BadType {
        urn: String,
        #[source]
        source: TypeTokenError,
    },
    #[error("invalid URN part: the {part} {value:?} contains \"::\"")]
    SeparatorInPart { part: &'static str, value: String },
    #[error(
        "invalid URN \"{urn}\": the {part} contains a control character; names, types, stacks and projects must be printable"
    )]
    ControlCharacter { urn: String, part: &'static str },
    #[error("invalid URN: it is {len} bytes long; URNs may be at most {max} bytes", max = crate::limits::MAX_URN_BYTES)]
    TooLong { len: usize },
}

/// Why a type token was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeTokenError {
    #[error(
        "type token {token:?} must have the form \"<package>:<module>:<name>\" (module may be empty)"
    )]
    Shape { token: String },
    #[error(
        "type token {token:?} has an invalid package {package:?}: it must start with a letter and contain only letters, digits and '-'"
    )]
    Package { token: String, package: String },
    #[error(
        "type token {token:?} has an invalid module {module:?}: it must not start with a digit and may contain only letters, digits and '.', '_', '/', '-'"
    )]
    Module { token: String, module: String },
    #[error(
        "type token {token:?} has an invalid type name {name:?}: it must be non-empty, not start with a digit, and contain only letters, digits and '.', '_', '/', '-'"
    )]
    Name { token: String, name: String },
    #[error("type token {token:?}… is {len} bytes long; type tokens may be at most {max} bytes", max = crate::limits::MAX_TYPE_BYTES)]
    TooLong { token: String, len: usize },
    #[error("type {token:?} cannot be a resource type: {problem}")]
    Unusable {
        token: String,
        problem: &'static str,
    },
}

/// A resource's type.
///
/// Custom resources, providers, remote components, reads and functions need a module member,
/// `<package>:<module>:<name>`, validated against the package metaschema's token pattern
/// `^[a-zA-Z][-a-zA-Z0-9]*:([^0-9][a-zA-Z0-9._/-]*)?:[^0-9][a-zA-Z0-9._/-]*$` (two-part
/// tokens, `<package>:<name>`, which the URN grammar allows, too): the package names the
/// provider ([`TypeToken::parse_member`], [`TypeToken::check_member`]). A component's type may
/// be anything, as in Pulumi (`"component"`, `"my:Thing"`), so long as a URN can hold it
/// ([`TypeToken::parse`]).
///
/// Immutable and shared: a clone (every state, event and index holds some) copies a pointer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeToken(Arc<str>);

impl TypeToken {
    /// Any resource type a URN can hold: printable text without white space, at most
    /// [`MAX_TYPE_BYTES`](crate::limits::MAX_TYPE_BYTES), holding neither of the URN's
    /// separators (`::`, and `$` between parent types) nor starting or ending with `:` (which
    /// would run into a separator).
    pub fn parse(token: &str) -> Result<TypeToken, TypeTokenError> {
        check_type_len(token)?;
        let unusable = |problem| {
            Err(TypeTokenError::Unusable {
                token: crate::text::visible_line(token).into_owned(),
                problem,
            })
        };
        if token.is_empty() {
            return unusable("it is empty");
        }
        if token
            .chars()
            .any(|c| crate::text::is_unsafe(c) || c.is_whitespace())
        {
            return unusable("it contains white space or a control character");
        }
        if token.contains('$') || token.contains("::") {
            return unusable("it contains a URN separator ('$' or \"::\")");
        }
        if token.starts_with(':') || token.ends_with(':') {
            return unusable("it starts or ends with ':'");
        }
        Ok(TypeToken(token.into()))
    }

    /// A module member, `<package>:<module>:<name>` (module may be empty) or `<package>:<name>`:
    /// what the type of anything a provider manages must be.
    pub fn parse_member(token: &str) -> Result<TypeToken, TypeTokenError> {
        check_type_len(token)?;
        let parts: Vec<&str> = token.split(':').collect();
        let (package, module, name) = match parts.as_slice() {
            [package, name] => (*package, "", *name),
            [package, module, name] => (*package, *module, *name),
            _ => {
                return Err(TypeTokenError::Shape {
                    token: token.to_owned(),
                });
            }
        };
        if !is_package_name(package) {
            return Err(TypeTokenError::Package {
                token: token.to_owned(),
                package: package.to_owned(),
            });
        }
        if !module.is_empty() && !is_module_or_name(module) {
            return Err(TypeTokenError::Module {
                token: token.to_owned(),
                module: module.to_owned(),
            });
        }
        if !is_module_or_name(name) {
            return Err(TypeTokenError::Name {
                token: token.to_owned(),
                name: name.to_owned(),
            });
        }
        Ok(TypeToken(token.into()))
    }

    /// Refuses a type that is not a module member (see [`TypeToken::parse_member`]).
    pub fn check_member(&self) -> Result<(), TypeTokenError> {
        TypeToken::parse_member(&self.0).map(|_| ())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The package part: `aws` in `aws:s3/bucket:Bucket`.
    pub fn package(&self) -> &str {
        self.0.split(':').next().unwrap_or_default()
    }

    /// The module part (empty for two-part tokens): `s3/bucket` in `aws:s3/bucket:Bucket`.
    pub fn module(&self) -> &str {
        let parts: Vec<&str> = self.0.split(':').collect();
        if parts.len() == 3 { parts[1] } else { "" }
    }

    /// The type name: `Bucket` in `aws:s3/bucket:Bucket`.
    pub fn name(&self) -> &str {
        self.0.rsplit(':').next().unwrap_or_default()
    }
}

/// Refuses a type token over [`MAX_TYPE_BYTES`](crate::limits::MAX_TYPE_BYTES).
fn check_type_len(token: &str) -> Result<(), TypeTokenError> {
    if token.len() > crate::limits::MAX_TYPE_BYTES {
        return Err(TypeTokenError::TooLong {
            token: crate::text::visible_line(&token.chars().take(64).collect::<String>())
                .into_owned(),
            len: token.len(),
        });
    }
    Ok(())
}

/// The package grammar of type tokens (`[a-zA-Z][-a-zA-Z0-9]*`); package names are looked up
/// and may become file names, so they are checked wherever one enters on its own (the name of
/// a provider type, say).
pub fn is_package_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// `[^0-9][a-zA-Z0-9._/-]*`: the first character is anything but a digit, and (beyond the
/// metaschema) neither a separator of the URN grammar (`:`, `$`), white space nor a character
/// that would act on a terminal.
fn is_module_or_name(part: &str) -> bool {
    let mut chars = part.chars();
    chars.next().is_some_and(|c| {
        !c.is_ascii_digit()
            && !matches!(c, ':' | '$')
            && !c.is_whitespace()
            && !crate::text::is_unsafe(c)
    }) && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'))
}

impl fmt::Display for TypeToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for TypeToken {
    type Err = TypeTokenError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TypeToken::parse(s)
    }
}

/// A resource's uniform resource name.
///
/// Stored in its canonical string form; the parts are sliced out on demand. The qualified type is
/// `[<parent type>$]*<type>`; the name may contain `:` (but not `::`).
///
/// Immutable and shared, like [`TypeToken`]: the engine clones URNs into every index, event
/// and journal record it keeps, and a clone copies a pointer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Urn(Arc<str>);

impl Urn {
    /// Parses and validates a URN.
    pub fn parse(urn: &str) -> Result<Urn, UrnError> {
        if urn.len() > crate::limits::MAX_URN_BYTES {
            return Err(UrnError::TooLong { len: urn.len() });
        }
        let Some(rest) = urn.strip_prefix(URN_PREFIX) else {
            return Err(UrnError::MissingPrefix {
                urn: urn.to_owned(),
            });
        };
        // The name is last and may itself contain "::"-free colons; split from the left into at
        // most four parts so that the name keeps everything after the type.
        let parts: Vec<&str> = rest.splitn(4, SEPARATOR).collect();
        if parts.len() != 4 {
            return Err(UrnError::WrongPartCount {
                urn: urn.to_owned(),
                found: parts.len(),
            });
        }
        let (stack, project, qualified_type, name) = (parts[0], parts[1], parts[2], parts[3]);
        for (part, value) in [
            ("stack", stack),
            ("project", project),
            ("type", qualified_type),
        ] {
            if value.is_empty() {
                return Err(UrnError::EmptyPart {
                    urn: urn.to_owned(),
                    part,
                });
            }
        }
        for (part, value) in [("stack", stack), ("project", project), ("name", name)] {
            if value.chars().any(crate::text::is_unsafe) {
                return Err(UrnError::ControlCharacter {
                    urn: crate::text::visible_line(urn).into_owned(),
                    part,
                });
            }
        }
        if name.contains(SEPARATOR) {
            return Err(UrnError::WrongPartCount {
                urn: urn.to_owned(),
                found: rest.split(SEPARATOR).count(),
            });
        }
        for token in qualified_type.split('$') {
            TypeToken::parse(token).map_err(|source| UrnError::BadType {
                urn: urn.to_owned(),
                source,
            })?;
        }
        Ok(Urn(urn.into()))
    }

    /// Builds a URN from its parts. `parent_type` is the parent's qualified type, if any; the
    /// built-in root stack resource (`pulumi:pulumi:Stack`) is never included as a parent type.
    pub fn new(
        stack: &str,
        project: &str,
        parent_type: Option<&str>,
        resource_type: &TypeToken,
        name: &str,
    ) -> Result<Urn, UrnError> {
        for (part, value) in [("stack", stack), ("project", project), ("name", name)] {
            if value.contains(SEPARATOR) {
                return Err(UrnError::SeparatorInPart {
                    part,
                    value: value.to_owned(),
                });
            }
        }
        let qualified = match parent_type {
            Some(parent) if parent != ROOT_STACK_TYPE => format!("{parent}${resource_type}"),
            _ => resource_type.to_string(),
        };
        Urn::parse(&format!(
            "{URN_PREFIX}{stack}{SEPARATOR}{project}{SEPARATOR}{qualified}{SEPARATOR}{name}"
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn part(&self, index: usize) -> &str {
        self.0[URN_PREFIX.len()..]
            .splitn(4, SEPARATOR)
            .nth(index)
            .unwrap_or_default()
    }

    pub fn stack(&self) -> &str {
        self.part(0)
    }

    pub fn project(&self) -> &str {
        self.part(1)
    }

    /// The full qualified type, including parent types: `a:b:Parent$c:d:Child`.
    pub fn qualified_type(&self) -> &str {
        self.part(2)
    }

    /// The resource's own type: the last `$`-separated element of the qualified type.
    pub fn resource_type(&self) -> &str {
        self.qualified_type().rsplit('$').next().unwrap_or_default()
    }

    /// The qualified type of the parent, if the URN records one.
    pub fn parent_type(&self) -> Option<&str> {
        self.qualified_type().rsplit_once('$').map(|(p, _)| p)
    }

    pub fn name(&self) -> &str {
        self.part(3)
    }
}

/// The type of the implicit root resource of every stack.
pub const ROOT_STACK_TYPE: &str = "pulumi:pulumi:Stack";

impl fmt::Display for Urn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Urn {
    type Err = UrnError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Urn::parse(s)
    }
}

impl Serialize for Urn {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Urn {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Urn::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_parts_including_parent_chain_and_colons_in_name() {
        let urn = Urn::parse("urn:pulumi:dev::web::my:mod:Comp$aws:s3/bucket:Bucket::site:assets")
            .unwrap();
        assert_eq!(urn.stack(), "dev");
        assert_eq!(urn.project(), "web");
        assert_eq!(urn.qualified_type(), "my:mod:Comp$aws:s3/bucket:Bucket");
        assert_eq!(urn.resource_type(), "aws:s3/bucket:Bucket");
        assert_eq!(urn.parent_type(), Some("my:mod:Comp"));
        assert_eq!(urn.name(), "site:assets");
    }

    #[test]
    fn formats_what_it_parses() {
        let token = TypeToken::parse("random:index/randomString:RandomString").unwrap();
        let urn = Urn::new("dev", "proj", Some("pkg:index:Group"), &token, "pw").unwrap();
        assert_eq!(
            urn.as_str(),
            "urn:pulumi:dev::proj::pkg:index:Group$random:index/randomString:RandomString::pw"
        );
        assert_eq!(Urn::parse(urn.as_str()).unwrap(), urn);
        let top = Urn::new("dev", "proj", Some(ROOT_STACK_TYPE), &token, "pw").unwrap();
        assert_eq!(top.parent_type(), None);
    }

    #[test]
    fn rejects_malformed_urns_naming_the_part() {
        let cases = [
            ("urn:other:dev::p::a:b:C::n", "must start with"),
            ("urn:pulumi:dev::p::a:b:C", "found 3"),
            ("urn:pulumi:::p::a:b:C::n", "the stack is empty"),
            ("urn:pulumi:dev::::a:b:C::n", "the project is empty"),
            ("urn:pulumi:dev::p::::n", "the type is empty"),
            ("urn:pulumi:dev::p::a:b:C::n::extra", "found 5"),
            ("urn:pulumi:dev::p::a:b c:C::n", "white space"),
            ("urn:pulumi:dev::p::x:y:P$::n", "it is empty"),
            ("urn:pulumi:dev::p::x:y:P$:z::n", "starts or ends with ':'"),
            (
                "urn:pulumi:dev::p::a:b:C::n\x1b[2J",
                "the name contains a control character",
            ),
            (
                "urn:pulumi:dev::p::a:b:C::line\nfake",
                "the name contains a control character",
            ),
            (
                "urn:pulumi:d\u{9b}v::p::a:b:C::n",
                "the stack contains a control character",
            ),
            (
                "urn:pulumi:dev::p\x07::a:b:C::n",
                "the project contains a control character",
            ),
            ("urn:pulumi:dev::p::a:b:\x1bC::n", "control character"),
            ("urn:pulumi:dev::p::a:\u{202e}b:C::n", "control character"),
        ];
        for (input, expected) in cases {
            let err = Urn::parse(input).unwrap_err().to_string();
            assert!(err.contains(expected), "{input}: {err}");
        }
    }

    #[test]
    fn empty_name_is_allowed_by_the_grammar() {
        let urn = Urn::parse("urn:pulumi:dev::p::a:b:C::").unwrap();
        assert_eq!(urn.name(), "");
    }

    #[test]
    fn builder_rejects_separator_in_parts() {
        let token = TypeToken::parse("a:b:C").unwrap();
        let err = Urn::new("dev", "p", None, &token, "bad::name").unwrap_err();
        assert!(err.to_string().contains("the name \"bad::name\""), "{err}");
    }

    #[test]
    fn members_follow_the_metaschema_pattern() {
        let token = TypeToken::parse_member("aws:s3/bucket:Bucket").unwrap();
        assert_eq!(
            (token.package(), token.module(), token.name()),
            ("aws", "s3/bucket", "Bucket")
        );
        for ok in [
            "pulumi:providers:aws",
            "pulumi-python:dynamic:Resource",
            "pkg::Type",
            "pkg:Type",
            "k8s:apps/v1:Deployment",
        ] {
            TypeToken::parse_member(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            // A URN cannot hold an empty module ("::" is its separator).
            if ok != "pkg::Type" {
                TypeToken::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            }
        }
        let long = format!("pkg:m:{}", "T".repeat(crate::limits::MAX_TYPE_BYTES));
        for bad in [
            "",
            "pkg",
            "component",
            "-pkg:m:T",
            "pkg:m:",
            "a:b:c:d",
            "pkg:m:T!",
            "pkg:m:\x1b",
            "pkg:m:$T",
            "pkg: m:T",
            long.as_str(),
        ] {
            assert!(
                TypeToken::parse_member(bad).is_err(),
                "{bad} should be rejected"
            );
        }
        assert!(
            TypeToken::parse("component")
                .unwrap()
                .check_member()
                .is_err()
        );
    }

    /// Pulumi lets a component's type be anything; Cairn takes anything a URN can hold.
    #[test]
    fn any_type_a_urn_can_hold_is_a_component_type() {
        for ok in [
            "component",
            "ParentComponent",
            "my:Thing",
            "a:b:c:d",
            "pkg:m:T!",
        ] {
            let token = TypeToken::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            let urn = Urn::new("dev", "p", Some("parent"), &token, "n").unwrap();
            assert_eq!(urn.resource_type(), ok);
            assert_eq!(urn.parent_type(), Some("parent"));
            assert_eq!(Urn::parse(urn.as_str()).unwrap(), urn);
        }
        let long = "T".repeat(crate::limits::MAX_TYPE_BYTES + 1);
        for bad in [
            "",
            "a$b",
            "a::b",
            ":a",
            "a:",
            "a b",
            "a\x1b",
            "a\u{202e}b",
            long.as_str(),
        ] {
            assert!(TypeToken::parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
