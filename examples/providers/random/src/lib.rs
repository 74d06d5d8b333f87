//! `random`: the `random` package as Pulumi users know it (pulumi-random 4.21.4: its tokens,
//! properties, defaults, secrets, import IDs and replacement rules), as a sandboxed Cairn
//! provider, so that programs written with the published `pulumi_random` / `@pulumi/random`
//! SDKs run on it unchanged.
//!
//! | resource (`random:index/…`) | required inputs | computed outputs | resource ID |
//! | --- | --- | --- | --- |
//! | `randomString:RandomString` | `length` | `result` | the string |
//! | `randomPassword:RandomPassword` | `length` | `result`, `bcryptHash` (both secret) | `none` |
//! | `randomInteger:RandomInteger` | `min`, `max` | `result` | the integer |
//! | `randomPet:RandomPet` | — | — (the name is the ID) | the name |
//! | `randomShuffle:RandomShuffle` | `inputs` | `results` | `-` |
//! | `randomBytes:RandomBytes` | `length` | `base64`, `hex` (both secret) | `none` |
//! | `randomId:RandomId` | `byteLength` | `b64Std`, `b64Url`, `hex`, `dec` | the unpadded URL-safe base64 |
//! | `randomUuid:RandomUuid`, `randomUuid4:RandomUuid4`, `randomUuid7:RandomUuid7` | — | `result` | the UUID |
//!
//! Every resource also takes `keepers` (a map of strings). Any change of any input, `keepers`
//! included, replaces the resource: values are generated once, in `create`, from WASI random
//! (or, for RandomInteger and RandomShuffle with a `seed`, from a stream derived from the
//! seed, so the same seed gives the same result); `update` only ever carries them over. A
//! preview reports them as unknown. Outputs are the checked inputs plus the computed values.
//! Input rules and defaults are in [`inputs`]; import ID formats in [`import`].

mod encode;
mod generate;
mod import;
mod inputs;
mod words;

use cairn_sdk::{
    CheckRequest, CheckResult, Checker, CreateRequest, CreateResult, DeleteRequest, DiffRequest,
    DiffResult, Error, PropertyMap, PropertyMapExt, Provider, ReadRequest, ReadResult, Result,
    UpdateRequest, UpdateResult, Value, diff_inputs, props,
};

use generate::{Alphabet, Entropy, Seeded, Source};

/// The resource kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bytes,
    Id,
    Integer,
    Password,
    Pet,
    Shuffle,
    String,
    Uuid,
    Uuid4,
    Uuid7,
}

impl Kind {
    const ALL: [Kind; 10] = [
        Kind::Bytes,
        Kind::Id,
        Kind::Integer,
        Kind::Password,
        Kind::Pet,
        Kind::Shuffle,
        Kind::String,
        Kind::Uuid,
        Kind::Uuid4,
        Kind::Uuid7,
    ];

    /// The type token, `random:index/<camel>:<Name>`.
    fn token(self) -> &'static str {
        match self {
            Kind::Bytes => "random:index/randomBytes:RandomBytes",
            Kind::Id => "random:index/randomId:RandomId",
            Kind::Integer => "random:index/randomInteger:RandomInteger",
            Kind::Password => "random:index/randomPassword:RandomPassword",
            Kind::Pet => "random:index/randomPet:RandomPet",
            Kind::Shuffle => "random:index/randomShuffle:RandomShuffle",
            Kind::String => "random:index/randomString:RandomString",
            Kind::Uuid => "random:index/randomUuid:RandomUuid",
            Kind::Uuid4 => "random:index/randomUuid4:RandomUuid4",
            Kind::Uuid7 => "random:index/randomUuid7:RandomUuid7",
        }
    }

    /// The resource name, e.g. `RandomString`.
    fn name(self) -> &'static str {
        self.token().rsplit(':').next().unwrap_or_default()
    }

    fn of(resource_type: &str) -> Result<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.token() == resource_type)
            .ok_or_else(|| {
                Error::failed(format!(
                    "unknown resource type {resource_type:?}: the random package has {}",
                    Kind::ALL.map(Kind::token).join(", ")
                ))
            })
    }

    /// The outputs `create` computes (beyond the inputs).
    fn computed(self) -> &'static [&'static str] {
        match self {
            Kind::Bytes => &["base64", "hex"],
            Kind::Id => &["b64Std", "b64Url", "hex", "dec"],
            Kind::Password => &["result", "bcryptHash"],
            Kind::Pet => &[],
            Kind::Shuffle => &["results"],
            Kind::Integer | Kind::String | Kind::Uuid | Kind::Uuid4 | Kind::Uuid7 => &["result"],
        }
    }
}

/// The `random` provider.
#[derive(Default)]
pub struct Random;

/// bcrypt's cost for `bcryptHash` (the published package's, Go's default).
const BCRYPT_COST: u32 = 10;
/// bcrypt reads at most this many bytes of a password.
const BCRYPT_MAX_BYTES: usize = 72;

/// Builders of computed outputs shared by `create` and import.
pub(crate) struct Generated;

impl Generated {
    /// `result` for a string; `result` and `bcryptHash`, both secret, for a password.
    fn string(kind: Kind, result: String, src: &mut dyn Source) -> Result<PropertyMap, String> {
        if kind != Kind::Password {
            return Ok(props! {"result" => result});
        }
        let hash = bcrypt_hash(&result, src)?;
        Ok(props! {
            "result" => Value::secret(result),
            "bcryptHash" => Value::secret(hash),
        })
    }

    /// RandomId's encodings of `bytes`, each after `prefix`.
    fn id_encodings(bytes: &[u8], prefix: &str) -> PropertyMap {
        props! {
            "b64Std" => format!("{prefix}{}", encode::b64_std(bytes)),
            "b64Url" => format!("{prefix}{}", encode::b64_url(bytes)),
            "hex" => format!("{prefix}{}", encode::hex(bytes)),
            "dec" => format!("{prefix}{}", encode::decimal(bytes)),
        }
    }
}

/// A bcrypt hash (`$2a$`, cost 10) of the first 72 bytes of `password`, salted from `src`.
fn bcrypt_hash(password: &str, src: &mut dyn Source) -> Result<String, String> {
    let bytes = password.as_bytes();
    let bytes = &bytes[..bytes.len().min(BCRYPT_MAX_BYTES)];
    let mut salt = [0u8; 16];
    salt.copy_from_slice(&generate::bytes(src, 16)?);
    bcrypt::hash_with_salt(bytes, BCRYPT_COST, salt)
        .map(|parts| parts.format_for_version(bcrypt::Version::TwoA))
        .map_err(|e| format!("hashing the password: {e}"))
}

/// The outputs: the inputs, then the computed values.
pub(crate) fn outputs(inputs: PropertyMap, computed: PropertyMap) -> PropertyMap {
    let mut outputs = inputs;
    outputs.extend(computed);
    outputs
}

/// A source for a seeded resource: the seed's stream when `seed` is set and not empty, else
/// `fallback`.
fn seeded<'a>(
    inputs: &PropertyMap,
    fallback: &'a mut dyn Source,
    seeded: &'a mut Option<Seeded>,
) -> &'a mut dyn Source {
    match inputs.get_str("seed").filter(|s| !s.is_empty()) {
        Some(seed) => seeded.insert(Seeded::from_text(seed)),
        None => fallback,
    }
}

/// Milliseconds since the Unix epoch (WASI wall clock in a component).
fn unix_millis() -> Result<u64, String> {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .map_err(|_| "the clock is before 1970".to_owned())
}

/// Generates a resource from its checked inputs: its ID and computed outputs.
fn generate(
    kind: Kind,
    inputs: &PropertyMap,
    src: &mut dyn Source,
    now: impl FnOnce() -> Result<u64, String>,
) -> Result<(String, PropertyMap), String> {
    let int = |key: &str| {
        inputs
            .require_i64(key)
            .map_err(|failure| failure.to_string())
    };
    let count = |key: &str| int(key).map(|n| usize::try_from(n).unwrap_or(0));
    let uuid = |bytes: [u8; 16]| {
        let text = encode::uuid(&bytes);
        (text.clone(), props! {"result" => text})
    };
    Ok(match kind {
        Kind::String | Kind::Password => {
            let result = generate::string(src, count("length")?, &alphabet(inputs))?;
            let id = match kind {
                Kind::Password => "none".to_owned(),
                _ => result.clone(),
            };
            (id, Generated::string(kind, result, src)?)
        }
        Kind::Integer => {
            let mut stream = None;
            let src = seeded(inputs, src, &mut stream);
            let n = generate::integer(src, int("min")?, int("max")?)?;
            (n.to_string(), props! {"result" => n})
        }
        Kind::Pet => {
            let length = count("length")?;
            let separator = inputs.get_str("separator").unwrap_or("-");
            let prefix = inputs.get_str("prefix").filter(|p| !p.is_empty());
            (generate::pet(src, length, separator, prefix)?, props! {})
        }
        Kind::Shuffle => {
            let items: Vec<String> = inputs
                .get_array("inputs")
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            let wanted = match inputs.get_i64("resultCount") {
                Some(n) => usize::try_from(n).unwrap_or(0),
                None => items.len(),
            };
            let mut stream = None;
            let src = seeded(inputs, src, &mut stream);
            let results = generate::shuffle(src, &items, wanted)?;
            let results: Vec<Value> = results.into_iter().map(Value::from).collect();
            ("-".to_owned(), props! {"results" => results})
        }
        Kind::Bytes => {
            let bytes = generate::bytes(src, count("length")?)?;
            // The published package's ID is the base64, which would put the secret in plain
            // text into the state: the ID says nothing, as a password's does.
            (
                "none".to_owned(),
                props! {
                    "base64" => Value::secret(encode::b64_std(&bytes)),
                    "hex" => Value::secret(encode::hex(&bytes)),
                },
            )
        }
        Kind::Id => {
            let bytes = generate::bytes(src, count("byteLength")?)?;
            let prefix = inputs.get_str("prefix").unwrap_or_default();
            (
                encode::b64_url(&bytes),
                Generated::id_encodings(&bytes, prefix),
            )
        }
        Kind::Uuid | Kind::Uuid4 => uuid(generate::uuid4(src)?),
        Kind::Uuid7 => uuid(generate::uuid7(src, now()?)?),
    })
}

/// What a string or password is drawn from: the enabled classes (`overrideSpecial`, when set
/// and not empty, replaces the special characters), and every class's minimum.
fn alphabet(inputs: &PropertyMap) -> Alphabet {
    let special = inputs
        .get_str("overrideSpecial")
        .filter(|s| !s.is_empty())
        .unwrap_or(generate::SPECIAL);
    let mut alphabet = Alphabet::default();
    for ((flag, min_key), chars) in inputs::CLASSES.into_iter().zip([
        generate::LOWER,
        generate::UPPER,
        generate::NUMERIC,
        special,
    ]) {
        let chars: Vec<char> = chars.chars().collect();
        if inputs.get_bool(flag).unwrap_or(true) {
            alphabet.pool.extend(&chars);
        }
        let min = usize::try_from(inputs.get_i64(min_key).unwrap_or(0)).unwrap_or(0);
        alphabet.minimums.push((chars, min));
    }
    alphabet
}

impl Random {
    /// `create` with explicit sources of randomness and time.
    fn create_with(
        &self,
        r: CreateRequest,
        src: &mut dyn Source,
        now: impl FnOnce() -> Result<u64, String>,
    ) -> Result<CreateResult> {
        let kind = Kind::of(r.resource_type())?;
        let inputs = r.inputs.into_map();
        let (id, computed) = generate(kind, &inputs, src, now)
            .map_err(|e| Error::failed(format!("generating a {}: {e}", kind.name())))?;
        Ok(CreateResult {
            id,
            outputs: outputs(inputs, computed).into(),
        })
    }
}

/// An update's outputs: the new inputs with the recorded computed values.
fn kept(kind: Kind, r: UpdateRequest) -> UpdateResult {
    let computed = kind
        .computed()
        .iter()
        .filter_map(|key| Some(((*key).to_owned(), r.old_outputs.get(*key)?.clone())))
        .collect();
    UpdateResult {
        outputs: outputs(r.inputs.into_map(), computed).into(),
    }
}

impl Provider for Random {
    fn check(&self, r: CheckRequest) -> Result<CheckResult> {
        let kind = Kind::of(r.resource_type())?;
        let mut c = Checker::new(r.inputs);
        inputs::check(kind, &mut c);
        Ok(c.finish())
    }

    /// Every change replaces (the value is generated anew). The recorded inputs get today's
    /// defaults first, so inputs recorded without them are not a change.
    fn diff(&self, r: DiffRequest) -> Result<DiffResult> {
        let kind = Kind::of(r.resource_type())?;
        let olds = inputs::with_defaults(kind, r.old_inputs.into_map()).into();
        Ok(diff_inputs(&olds, &r.inputs, &["*"], &r.ignore_changes))
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        self.create_with(r, &mut Entropy, unix_millis)
    }

    /// Values are generated only when the resource is created: unknown until then.
    fn preview_create(&self, r: CreateRequest) -> Result<CreateResult> {
        let kind = Kind::of(r.resource_type())?;
        let computed = kind
            .computed()
            .iter()
            .map(|key| ((*key).to_owned(), Value::Unknown))
            .collect();
        Ok(CreateResult {
            id: String::new(),
            outputs: outputs(r.inputs.into_map(), computed).into(),
        })
    }

    /// A refresh returns the recorded state (nothing exists outside it); with no state, the
    /// ID is an import ID.
    fn read(&self, r: ReadRequest) -> Result<ReadResult> {
        if r.old_outputs.is_empty() {
            return import::import(Kind::of(r.resource_type())?, &r.id, &mut Entropy);
        }
        Ok(ReadResult {
            id: r.id,
            inputs: r.old_inputs,
            outputs: r.old_outputs,
        })
    }

    /// Only reached when no input changed in substance: keep the values.
    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(kept(Kind::of(r.resource_type())?, r))
    }

    /// An update acts on nothing, so its preview is the update itself.
    fn preview_update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        self.update(r)
    }

    /// Nothing exists outside the state.
    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Random, manifest = "cairn.json");

#[cfg(test)]
mod tests;
