//! Structure-aware generators: engine values, URNs, paths and strings built from fuzz bytes
//! with [`arbitrary::Unstructured`], biased towards the characters and shapes decoders treat
//! specially (separators, quotes, signatures, sentinels, deep nesting).

use arbitrary::{Result, Unstructured};
use cairn_engine::asset::{Archive, ArchiveMember, ArchiveSource, Asset, AssetSource, Members};
use cairn_engine::path::{PathElement, PropertyPath};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::urn::{TypeToken, Urn};
use cairn_engine::value::{OutputValue, PropertyMap, PropertyValue, ResourceReference};

/// Characters that mean something to one decoder or another.
const SPECIAL: &[char] = &[
    'a', 'b', 'z', 'A', '0', '9', '.', '[', ']', '"', '\\', '*', ':', '$', '/', '-', '_', ' ',
    '\n', '\t', '#', '\'', '{', '}', ',', '&', '!', '%', '@', '|', '>', '?', 'é', '\u{1b}',
    '\u{9b}', '\u{202e}', '\u{0}', '~', '=', '+',
];

/// A short string, usually from [`SPECIAL`], sometimes arbitrary Unicode.
pub fn text(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=3)? {
        0 => u.arbitrary::<String>()?.chars().take(40).collect(),
        1 => {
            let n = u.int_in_range(0..=12)?;
            (0..n)
                .map(|_| u.choose(SPECIAL).copied())
                .collect::<Result<_>>()?
        }
        2 => u
            .choose(&[
                "",
                "name",
                "*",
                "a.b",
                "[0]",
                "x y",
                cairn_engine::state::codec::UNKNOWN_SENTINEL,
                cairn_engine::state::codec::SIG_KEY,
                "true",
                "1.10",
                "null",
                "~",
                "- a",
                "&anchor",
                "'q'",
                "\"",
                "#c",
            ])?
            .to_string(),
        _ => {
            let n = u.int_in_range(1..=10)?;
            (0..n)
                .map(|_| Ok(char::from(b'a' + u.int_in_range(0..=25)?)))
                .collect::<Result<_>>()?
        }
    })
}

/// An identifier-like string (`[a-z][a-z0-9-]*`).
pub fn ident(u: &mut Unstructured<'_>) -> Result<String> {
    let n = u.int_in_range(1..=8)?;
    let mut s = String::from(char::from(b'a' + u.int_in_range(0..=25)?));
    for _ in 1..n {
        s.push(*u.choose(&['a', 'k', 'z', '0', '7', '-'])?);
    }
    Ok(s)
}

/// A valid type token: `pkg:module:Name` or `pkg:Name`.
pub fn type_token(u: &mut Unstructured<'_>) -> Result<TypeToken> {
    let package = ident(u)?;
    let module = if u.ratio(1, 4)? {
        String::new()
    } else {
        let n = u.int_in_range(1..=6)?;
        let mut m = String::from(*u.choose(&['i', 's', 'x', '_', '.'])?);
        for _ in 1..n {
            m.push(*u.choose(&['a', 'b', '/', '.', '_', '-', '3'])?);
        }
        m
    };
    let name = ident(u)?;
    let token = if u.ratio(1, 8)? {
        format!("{package}:{name}")
    } else {
        format!("{package}:{module}:{name}")
    };
    Ok(TypeToken::parse(&token).unwrap_or_else(|_| fallback_type()))
}

fn fallback_type() -> TypeToken {
    TypeToken::parse("pkg:index:Thing").unwrap_or_else(|e| panic!("fixed token: {e}"))
}

/// A valid URN, with a parent chain and names holding single colons and odd characters.
pub fn urn(u: &mut Unstructured<'_>) -> Result<Urn> {
    let stack = ident(u)?;
    let project = ident(u)?;
    let ty = type_token(u)?;
    let parents = u.int_in_range(0..=2)?;
    let mut parent_type: Option<String> = None;
    for _ in 0..parents {
        let t = type_token(u)?.to_string();
        parent_type = Some(match parent_type {
            Some(p) => format!("{p}${t}"),
            None => t,
        });
    }
    let name: String = text(u)?
        .chars()
        .filter(|c| !cairn_engine::text::is_unsafe(*c))
        .collect();
    let name = name.replace("::", ":");
    Ok(
        Urn::new(&stack, &project, parent_type.as_deref(), &ty, &name).unwrap_or_else(|_| {
            Urn::parse("urn:pulumi:dev::proj::pkg:index:Thing::fallback")
                .unwrap_or_else(|e| panic!("fixed URN: {e}"))
        }),
    )
}

/// A property path. A key named `*` is left out: in the path grammar (as in Pulumi's) it is
/// the wildcard.
pub fn path(u: &mut Unstructured<'_>) -> Result<PropertyPath> {
    let n = u.int_in_range(1..=5)?;
    let mut elements = Vec::with_capacity(n);
    for _ in 0..n {
        elements.push(match u.int_in_range(0..=5)? {
            0 => PathElement::Index(u.int_in_range(0..=12)?),
            1 => PathElement::Index(u.arbitrary::<u32>()? as usize),
            2 => PathElement::Wildcard,
            _ => {
                let key = text(u)?;
                if key == "*" {
                    PathElement::Wildcard
                } else {
                    PathElement::Key(key)
                }
            }
        });
    }
    Ok(PropertyPath::from(elements))
}

/// Which values [`value`] may build.
#[derive(Debug, Clone, Copy)]
pub struct Kinds {
    /// Output values (state keeps no output metadata, so the state codec drops them).
    pub outputs: bool,
    /// Secrets directly inside secrets (codecs fold them into one).
    pub nested_secrets: bool,
    /// NaN and infinities.
    pub non_finite: bool,
    /// Strings equal to the unknown sentinel (codecs read them back as unknowns), empty IDs,
    /// hashes and versions (read back as absent), and objects keyed by the signature key.
    pub ambiguous: bool,
    pub max_depth: usize,
}

impl Kinds {
    /// Everything a decoder might see.
    pub const ALL: Kinds = Kinds {
        outputs: true,
        nested_secrets: true,
        non_finite: true,
        ambiguous: true,
        max_depth: 12,
    };
    /// Values each codec promises to give back unchanged.
    pub const EXACT: Kinds = Kinds {
        outputs: true,
        nested_secrets: false,
        non_finite: false,
        ambiguous: false,
        max_depth: 12,
    };
}

/// A property map.
pub fn map(u: &mut Unstructured<'_>, kinds: Kinds) -> Result<PropertyMap> {
    let n = u.int_in_range(0..=6)?;
    let mut out = PropertyMap::with_capacity(n);
    for _ in 0..n {
        let key = text(u)?;
        if !kinds.ambiguous && key == cairn_engine::state::codec::SIG_KEY {
            continue;
        }
        out.insert(key, value(u, kinds, 1)?);
    }
    Ok(out)
}

/// A property value of any kind, nested at most `kinds.max_depth` levels.
pub fn value(u: &mut Unstructured<'_>, kinds: Kinds, depth: usize) -> Result<PropertyValue> {
    let leaf = depth >= kinds.max_depth;
    let choice = if leaf {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=13)?
    };
    Ok(match choice {
        0 => PropertyValue::Null,
        1 => PropertyValue::Bool(u.arbitrary()?),
        2 => PropertyValue::Number(number(u, kinds)?),
        3 => {
            let s = text(u)?;
            if !kinds.ambiguous && s == cairn_engine::state::codec::UNKNOWN_SENTINEL {
                PropertyValue::Computed
            } else {
                PropertyValue::String(s)
            }
        }
        4 => PropertyValue::Computed,
        5 | 6 => {
            let n = u.int_in_range(0..=4)?;
            PropertyValue::Array(
                (0..n)
                    .map(|_| value(u, kinds, depth + 1))
                    .collect::<Result<_>>()?,
            )
        }
        7 | 8 => {
            let n = u.int_in_range(0..=4)?;
            let mut m = PropertyMap::with_capacity(n);
            for _ in 0..n {
                let key = text(u)?;
                if !kinds.ambiguous && key == cairn_engine::state::codec::SIG_KEY {
                    continue;
                }
                m.insert(key, value(u, kinds, depth + 1)?);
            }
            PropertyValue::Object(Box::new(m))
        }
        9 => {
            let inner = value(u, kinds, depth + 1)?;
            match inner {
                PropertyValue::Secret(_) if !kinds.nested_secrets => inner,
                PropertyValue::Output(_) if !kinds.nested_secrets => inner,
                other => PropertyValue::secret(other),
            }
        }
        10 => PropertyValue::Asset(Box::new(asset(u, kinds)?)),
        11 => PropertyValue::Archive(Box::new(archive(u, kinds, depth)?)),
        12 => {
            let id = match u.int_in_range(0..=3)? {
                0 => None,
                1 => Some(Box::new(PropertyValue::Computed)),
                _ => {
                    let id = text(u)?;
                    if !kinds.ambiguous
                        && (id.is_empty() || id == cairn_engine::state::codec::UNKNOWN_SENTINEL)
                    {
                        Some(Box::new(PropertyValue::String("id".into())))
                    } else {
                        Some(Box::new(PropertyValue::String(id)))
                    }
                }
            };
            PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: urn(u)?,
                id,
                package_version: package_version(u)?,
            }))
        }
        _ if kinds.outputs => {
            let value = if u.ratio(1, 3)? {
                None
            } else {
                let inner = value(u, kinds, depth + 1)?;
                let wrapper = matches!(inner, PropertyValue::Secret(_) | PropertyValue::Output(_));
                if wrapper && !kinds.nested_secrets {
                    Some(Box::new(PropertyValue::Null))
                } else {
                    Some(Box::new(inner))
                }
            };
            let n = u.int_in_range(0..=2)?;
            PropertyValue::Output(Box::new(OutputValue {
                value,
                secret: u.arbitrary()?,
                dependencies: (0..n).map(|_| urn(u)).collect::<Result<_>>()?,
            }))
        }
        _ => PropertyValue::Null,
    })
}

fn number(u: &mut Unstructured<'_>, kinds: Kinds) -> Result<f64> {
    let n = match u.int_in_range(0..=5)? {
        0 => f64::from(u.int_in_range(-1000..=1000)?),
        1 => *u.choose(&[
            0.0,
            -0.0,
            0.5,
            1e308,
            -1e308,
            9007199254740992.0,
            9007199254740993.0,
            1e-320,
            123456789.125,
        ])?,
        2 if kinds.non_finite => *u.choose(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY])?,
        _ => f64::from_bits(u.arbitrary()?),
    };
    Ok(if !kinds.non_finite && !n.is_finite() {
        0.25
    } else {
        n
    })
}

/// An optional string; without `ambiguous`, never the empty string.
/// A reference's package version: none, or a semantic version (the bridges refuse anything
/// else, naming the property).
fn package_version(u: &mut Unstructured<'_>) -> Result<Option<String>> {
    if u.arbitrary()? {
        return Ok(None);
    }
    let (major, minor, patch): (u8, u8, u16) = (u.arbitrary()?, u.arbitrary()?, u.arbitrary()?);
    Ok(Some(format!("{major}.{minor}.{patch}")))
}

fn optional(u: &mut Unstructured<'_>, kinds: Kinds) -> Result<Option<String>> {
    if u.arbitrary()? {
        return Ok(None);
    }
    let s = text(u)?;
    Ok(if !kinds.ambiguous && s.is_empty() {
        None
    } else {
        Some(s)
    })
}

/// Non-empty, unless `ambiguous` (codecs read empty sources back as absent).
fn source_text(u: &mut Unstructured<'_>, kinds: Kinds) -> Result<String> {
    let s = text(u)?;
    Ok(if s.is_empty() && !kinds.ambiguous {
        "x".into()
    } else {
        s
    })
}

pub fn asset(u: &mut Unstructured<'_>, kinds: Kinds) -> Result<Asset> {
    Ok(Asset {
        hash: optional(u, kinds)?,
        source: match u.int_in_range(0..=3)? {
            0 => AssetSource::Text(text(u)?),
            1 => AssetSource::Path(source_text(u, kinds)?),
            2 => AssetSource::Uri(source_text(u, kinds)?),
            _ => AssetSource::HashOnly,
        },
    })
}

pub fn archive(u: &mut Unstructured<'_>, kinds: Kinds, depth: usize) -> Result<Archive> {
    Ok(Archive {
        hash: optional(u, kinds)?,
        source: match u.int_in_range(0..=3)? {
            0 => {
                let n = u.int_in_range(0..=3)?;
                let mut members = Members::default();
                for _ in 0..n {
                    let member = if depth + 1 < kinds.max_depth && u.ratio(1, 4)? {
                        ArchiveMember::Archive(archive(u, kinds, depth + 1)?)
                    } else {
                        ArchiveMember::Asset(asset(u, kinds)?)
                    };
                    members.insert(text(u)?, member);
                }
                ArchiveSource::Assets(members)
            }
            1 => ArchiveSource::Path(source_text(u, kinds)?),
            2 => ArchiveSource::Uri(source_text(u, kinds)?),
            _ => ArchiveSource::HashOnly,
        },
    })
}

/// A reversible stand-in for the passphrase crypter (which takes a second to derive its key):
/// `fz:` and the plaintext's bytes in hex; anything else fails to decrypt.
pub struct TestCrypter;

impl Crypter for TestCrypter {
    fn encrypt(&self, plaintext: &str) -> std::result::Result<String, SecretsError> {
        let hex: String = plaintext.bytes().map(|b| format!("{b:02x}")).collect();
        Ok(format!("fz:{hex}"))
    }

    fn decrypt(&self, ciphertext: &str) -> std::result::Result<String, SecretsError> {
        let bad = || SecretsError::Decrypt;
        let hex = ciphertext.strip_prefix("fz:").ok_or_else(bad)?;
        if hex.len() % 2 != 0 || !hex.is_ascii() {
            return Err(bad());
        }
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| bad()))
            .collect::<std::result::Result<Vec<u8>, _>>()?;
        String::from_utf8(bytes).map_err(|_| bad())
    }
}

/// Structural equality in which NaN equals NaN (bit for bit): `Debug` spells every field.
pub fn same<T: std::fmt::Debug>(a: &T, b: &T) -> bool {
    format!("{a:?}") == format!("{b:?}")
}
