//! Importing by ID (`read` with no recorded state): each resource's ID format, turned into the
//! inputs a program would declare (with the defaults `check` applies) and the outputs.
//!
//! | resource | import ID | resource ID after import |
//! | --- | --- | --- |
//! | RandomString, RandomPassword | the value | the value; `none` for a password |
//! | RandomInteger | `result,min,max` or `result,min,max,seed` | `result` |
//! | RandomId | the URL-safe base64 (unpadded) of the bytes, or `prefix,b64url` | the base64 |
//! | RandomBytes | the standard base64 (padded) of the bytes | `none` |
//! | RandomUuid | the UUID (`8-4-4-4-12`) | the UUID in lower case |
//! | RandomUuid4, RandomUuid7 | the UUID, also without hyphens, in braces or after `urn:uuid:` | the UUID in lower case |
//!
//! RandomPet and RandomShuffle cannot be imported (neither can they in the published package).

use cairn_sdk::{Error, PropertyMap, ReadResult, Result, Value, props};

use crate::encode::{self, UuidForms};
use crate::generate::Source;
use crate::inputs::{self, MAX_LENGTH};
use crate::{Kind, outputs};

/// Rebuilds the inputs and outputs of a `kind` resource from its import ID.
pub fn import(kind: Kind, id: &str, src: &mut dyn Source) -> Result<ReadResult> {
    let refuse = |why: String| {
        Error::failed(format!(
            "cannot import {} with ID {id:?}: {why}",
            kind.name()
        ))
    };
    let (resource_id, inputs, computed) = match kind {
        Kind::String | Kind::Password => {
            let length = id.chars().count();
            if length == 0 || length as i64 > MAX_LENGTH {
                return Err(refuse(format!(
                    "the ID is the value itself, of 1 to {MAX_LENGTH} characters"
                )));
            }
            let inputs = inputs::with_defaults(kind, props! {"length" => length});
            let generated = crate::Generated::string(kind, id.to_owned(), src).map_err(refuse)?;
            let resource_id = if kind == Kind::Password { "none" } else { id };
            (resource_id.to_owned(), inputs, generated)
        }
        Kind::Integer => {
            let parts: Vec<&str> = id.split(',').collect();
            if !(3..=4).contains(&parts.len()) {
                return Err(refuse(
                    "expected result,min,max or result,min,max,seed".into(),
                ));
            }
            let number = |i: usize, what: &str| {
                parts[i]
                    .parse::<i64>()
                    .map_err(|_| refuse(format!("the {what} {:?} is not an integer", parts[i])))
            };
            let (result, min, max) = (number(0, "result")?, number(1, "min")?, number(2, "max")?);
            if !(min..=max).contains(&result) {
                return Err(refuse(format!("{result} is not between {min} and {max}")));
            }
            let mut inputs = props! {"min" => min, "max" => max};
            if let Some(seed) = parts.get(3) {
                inputs.insert("seed".into(), Value::from(*seed));
            }
            (parts[0].to_owned(), inputs, props! {"result" => result})
        }
        Kind::Id => {
            let (prefix, b64) = match id.rsplit_once(',') {
                Some((prefix, b64)) => (Some(prefix), b64),
                None => (None, id),
            };
            let bytes = encode::from_b64_url(b64)
                .filter(|b| !b.is_empty() && b.len() as i64 <= MAX_LENGTH)
                .ok_or_else(|| {
                    refuse("expected the unpadded URL-safe base64 of the bytes, optionally after `prefix,`".into())
                })?;
            let mut inputs = props! {"byteLength" => bytes.len()};
            if let Some(prefix) = prefix.filter(|p| !p.is_empty()) {
                inputs.insert("prefix".into(), Value::from(prefix));
            }
            let computed = crate::Generated::id_encodings(&bytes, prefix.unwrap_or_default());
            (b64.to_owned(), inputs, computed)
        }
        Kind::Bytes => {
            let bytes = encode::from_b64_std(id)
                .filter(|b| !b.is_empty() && b.len() as i64 <= MAX_LENGTH)
                .ok_or_else(|| {
                    refuse("expected the standard base64 (padded) of the bytes".into())
                })?;
            let computed = props! {
                "base64" => Value::secret(id),
                "hex" => Value::secret(encode::hex(&bytes)),
            };
            (
                "none".to_owned(),
                props! {"length" => bytes.len()},
                computed,
            )
        }
        Kind::Uuid | Kind::Uuid4 | Kind::Uuid7 => {
            let forms = if kind == Kind::Uuid {
                UuidForms::Canonical
            } else {
                UuidForms::Lenient
            };
            let uuid = encode::parse_uuid(id, forms).ok_or_else(|| {
                refuse(match forms {
                    UuidForms::Canonical => "expected a UUID of 8-4-4-4-12 hex digits".into(),
                    UuidForms::Lenient => "expected a UUID".into(),
                })
            })?;
            (uuid.clone(), PropertyMap::new(), props! {"result" => uuid})
        }
        Kind::Pet | Kind::Shuffle => {
            return Err(refuse("this resource type cannot be imported".into()));
        }
    };
    Ok(ReadResult {
        id: resource_id,
        outputs: outputs(inputs.clone(), computed).into(),
        inputs: inputs.into(),
    })
}
