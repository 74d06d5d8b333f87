//! `random`: a Cairn provider for random values, modelled on Pulumi's `random` package.
//!
//! | resource | inputs | `result` | ID |
//! | --- | --- | --- | --- |
//! | `random:index:RandomString` | `length` (required), `lower`/`upper`/`numeric`/`special` (default true), `minLower`/`minUpper`/`minNumeric`/`minSpecial` (default 0), `overrideSpecial` | the string | the string |
//! | `random:index:RandomPassword` | as `RandomString` | the password, **secret** | `none` |
//! | `random:index:RandomInteger` | `min`, `max` (required, inclusive) | the integer | `result,min,max` |
//! | `random:index:RandomUuid` | — | a version 4 UUID | the UUID |
//! | `random:index:RandomPet` | `length` (words, default 2), `separator` (default `-`), `prefix` | e.g. `brave-ant` | the name |
//!
//! Every resource also takes `keepers`, an object of arbitrary values: changing it (or any other
//! input) replaces the resource, i.e. generates a new value. Outputs are the inputs (with
//! defaults) plus `result`.
//!
//! Values are generated in `create` from the system's entropy (WASI `random`; the
//! `random-seed` of `check` is not used). A preview reports `result` as unknown. `read` returns
//! the recorded state; importing works for `RandomString` (ID: the string), `RandomInteger`
//! (ID: `result,min,max`) and `RandomUuid` (ID: the UUID).

mod generate;
mod words;

use cairn_sdk::{
    CheckRequest, CheckResult, Checker, CreateRequest, CreateResult, DeleteRequest, Error,
    PropertyMap, PropertyMapExt, Provider, ReadRequest, ReadResult, Result, UpdateRequest,
    UpdateResult, Value, props,
};

use generate::{Class, Entropy, Source};

/// The longest string or password generated (characters).
const MAX_LENGTH: i64 = 65_536;
/// The most words in a pet name.
const MAX_WORDS: i64 = 64;
/// Integers must be exact as doubles.
const MAX_SAFE: i64 = (1 << 53) - 1;

/// The resource kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Password,
    Integer,
    Uuid,
    Pet,
}

impl Kind {
    fn of(resource_type: &str) -> Result<Kind> {
        Ok(match resource_type {
            "random:index:RandomString" => Kind::String,
            "random:index:RandomPassword" => Kind::Password,
            "random:index:RandomInteger" => Kind::Integer,
            "random:index:RandomUuid" => Kind::Uuid,
            "random:index:RandomPet" => Kind::Pet,
            other => return Err(Error::failed(format!("unknown resource type {other:?}"))),
        })
    }
}

/// The `random` provider.
#[derive(Default)]
pub struct Random;

/// The string classes with their enable flags and minimum keys.
const CLASSES: [(&str, &str, &str); 4] = [
    ("lower", "minLower", generate::LOWER),
    ("upper", "minUpper", generate::UPPER),
    ("numeric", "minNumeric", generate::NUMERIC),
    ("special", "minSpecial", generate::SPECIAL),
];

/// Validates a string/password's inputs and applies defaults.
fn check_string(c: &mut Checker) {
    let length = c.required_integer("length");
    if let Some(len) = length
        && !(1..=MAX_LENGTH).contains(&len)
    {
        c.fail("length", format!("must be between 1 and {MAX_LENGTH}"));
    }
    let special = c.string("overrideSpecial");
    let mut enabled = Vec::new();
    let mut min_total = Some(0i64);
    for (flag, min_key, _) in CLASSES {
        c.default(flag, true);
        c.default(min_key, 0);
        let on = c.bool(flag);
        let min = c.integer(min_key);
        if let Some(m) = min {
            if m < 0 {
                c.fail(min_key, "must not be negative");
            } else if m > 0 && on == Some(false) {
                c.fail(min_key, format!("is {m}, but {flag} is false"));
            }
        }
        min_total = min_total.zip(min).map(|(t, m)| t + m.max(0));
        let empty = flag == "special" && special.as_deref() == Some("");
        enabled.push(on.map(|on| on && !empty));
    }
    if enabled.iter().all(|e| *e == Some(false)) {
        c.fail(
            "",
            "no characters to choose from: enable lower, upper, numeric or special",
        );
    }
    if let (Some(len), Some(total)) = (length, min_total)
        && total > len
    {
        c.fail(
            "length",
            format!("is {len}, less than the sum of the minimums ({total})"),
        );
    }
}

fn check_integer(c: &mut Checker) {
    let min = c.required_integer("min");
    let max = c.required_integer("max");
    for (key, v) in [("min", min), ("max", max)] {
        if let Some(v) = v
            && v.abs() > MAX_SAFE
        {
            c.fail(key, format!("must be within ±{MAX_SAFE}"));
        }
    }
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        c.fail("max", format!("is {max}, less than min ({min})"));
    }
}

fn check_pet(c: &mut Checker) {
    c.default("length", 2);
    c.default("separator", "-");
    if let Some(len) = c.integer("length")
        && !(1..=MAX_WORDS).contains(&len)
    {
        c.fail("length", format!("must be between 1 and {MAX_WORDS}"));
    }
    c.string("separator");
    c.string("prefix");
}

/// Generates `result` for validated inputs.
fn generate(kind: Kind, inputs: &PropertyMap, src: &mut dyn Source) -> Result<Value> {
    let int = |key: &str| inputs.require_i64(key).map_err(Error::from);
    let generated = match kind {
        Kind::String | Kind::Password => {
            let length = usize::try_from(int("length")?).unwrap_or(0);
            let mut classes = Vec::new();
            for (flag, min_key, chars) in CLASSES {
                if !inputs.get_bool(flag).unwrap_or(true) {
                    continue;
                }
                let chars = match (flag, inputs.get_str("overrideSpecial")) {
                    ("special", Some(custom)) => custom,
                    _ => chars,
                };
                classes.push(Class {
                    chars: chars.chars().collect(),
                    min: usize::try_from(inputs.get_i64(min_key).unwrap_or(0)).unwrap_or(0),
                });
            }
            generate::string(src, length, &classes).map(Value::from)
        }
        Kind::Integer => generate::integer(src, int("min")?, int("max")?).map(Value::from),
        Kind::Uuid => generate::uuid(src).map(Value::from),
        Kind::Pet => {
            let length = usize::try_from(inputs.get_i64("length").unwrap_or(2)).unwrap_or(2);
            let separator = inputs.get_str("separator").unwrap_or("-");
            generate::pet(src, length, separator, inputs.get_str("prefix")).map(Value::from)
        }
    }
    .map_err(Error::failed)?;
    Ok(if kind == Kind::Password {
        Value::secret(generated)
    } else {
        generated
    })
}

/// The resource ID for a result.
fn id_of(kind: Kind, inputs: &PropertyMap, result: &Value) -> String {
    match kind {
        Kind::Password => "none".into(),
        Kind::Integer => format!(
            "{},{},{}",
            result.as_i64().unwrap_or_default(),
            inputs.get_i64("min").unwrap_or_default(),
            inputs.get_i64("max").unwrap_or_default()
        ),
        _ => result.as_str().unwrap_or_default().to_owned(),
    }
}

/// Outputs: the inputs plus `result`.
fn outputs(inputs: PropertyMap, result: Value) -> PropertyMap {
    let mut outputs = inputs;
    outputs.insert("result".into(), result);
    outputs
}

/// Rebuilds inputs and outputs from an ID, for `import`.
fn import(kind: Kind, id: &str) -> Result<ReadResult> {
    let refuse = |why: &str| Err(Error::failed(format!("cannot import {id:?}: {why}")));
    let inputs = match kind {
        Kind::String => {
            let mut inputs = props! {"length" => id.chars().count()};
            for (flag, min_key, chars) in CLASSES {
                let has = id.chars().any(|c| chars.contains(c));
                inputs.insert(flag.into(), Value::from(has || flag == "special"));
                inputs.insert(min_key.into(), Value::from(0));
            }
            inputs
        }
        Kind::Integer => {
            let parts: Vec<Option<i64>> = id.split(',').map(|p| p.trim().parse().ok()).collect();
            let [Some(result), Some(min), Some(max)] = parts[..] else {
                return refuse("the ID of a RandomInteger is `result,min,max`");
            };
            if !(min..=max).contains(&result) {
                return refuse("the result is not between min and max");
            }
            return Ok(ReadResult {
                id: id.to_owned(),
                inputs: props! {"min" => min, "max" => max}.into(),
                outputs: props! {"min" => min, "max" => max, "result" => result}.into(),
            });
        }
        Kind::Uuid if generate::is_uuid(id) => PropertyMap::new(),
        Kind::Uuid => return refuse("not a UUID"),
        Kind::Password | Kind::Pet => {
            return refuse("this resource type cannot be imported");
        }
    };
    Ok(ReadResult {
        id: id.to_owned(),
        inputs: inputs.clone().into(),
        outputs: outputs(inputs, Value::from(id)).into(),
    })
}

impl Random {
    /// `create` with an explicit source of randomness.
    fn create_with(&self, r: CreateRequest, src: &mut dyn Source) -> Result<CreateResult> {
        let kind = Kind::of(r.resource_type())?;
        let result = generate(kind, &r.properties, src)?;
        let id = id_of(kind, &r.properties, &result);
        Ok(CreateResult {
            id,
            outputs: outputs(r.properties.into_map(), result).into(),
        })
    }
}

/// The news with the recorded `result`.
fn kept(r: UpdateRequest) -> UpdateResult {
    let result = r
        .old_outputs
        .get("result")
        .cloned()
        .unwrap_or(Value::Unknown);
    UpdateResult {
        outputs: outputs(r.news.into_map(), result).into(),
    }
}

impl Provider for Random {
    fn check(&self, r: CheckRequest) -> Result<CheckResult> {
        let kind = Kind::of(r.resource_type())?;
        let mut c = Checker::new(r.news);
        c.object("keepers");
        match kind {
            Kind::String | Kind::Password => check_string(&mut c),
            Kind::Integer => check_integer(&mut c),
            Kind::Uuid => {}
            Kind::Pet => check_pet(&mut c),
        }
        Ok(c.finish())
    }

    /// Any change regenerates the value, as in Pulumi's `random`.
    fn replace_on_change(&self, _resource_type: &str) -> &[&str] {
        &["*"]
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        self.create_with(r, &mut Entropy)
    }

    /// The value is generated only when the resource is created: unknown until then.
    fn preview_create(&self, r: CreateRequest) -> Result<CreateResult> {
        Kind::of(r.resource_type())?;
        Ok(CreateResult {
            id: String::new(),
            outputs: outputs(r.properties.into_map(), Value::Unknown).into(),
        })
    }

    fn read(&self, r: ReadRequest) -> Result<ReadResult> {
        if r.state.is_empty() {
            return import(Kind::of(r.resource_type())?, &r.id);
        }
        Ok(ReadResult {
            id: r.id,
            inputs: r.inputs,
            outputs: r.state,
        })
    }

    /// Only reached when nothing that matters changed: keep the result.
    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(kept(r))
    }

    /// An update acts on nothing, so its preview is the update itself.
    fn preview_update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(kept(r))
    }

    /// Nothing exists outside the state.
    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }
}

cairn_sdk::export_provider!(Random, manifest = "cairn.json");

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_sdk::{DiffRequest, manifest, secret};
    use generate::tests::Seq;

    fn urn(ty: &str) -> String {
        format!("urn:pulumi:dev::proj::random:index:{ty}::r")
    }

    fn check(ty: &str, news: PropertyMap) -> CheckResult {
        Random
            .check(CheckRequest {
                urn: urn(ty),
                news: news.into(),
                ..CheckRequest::default()
            })
            .unwrap()
    }

    fn failures(result: &CheckResult) -> Vec<String> {
        result.failures.iter().map(ToString::to_string).collect()
    }

    fn create(ty: &str, properties: PropertyMap, seed: u64) -> CreateResult {
        Random
            .create_with(
                CreateRequest {
                    urn: urn(ty),
                    properties: properties.into(),
                    ..CreateRequest::default()
                },
                &mut Seq(seed),
            )
            .unwrap()
    }

    #[test]
    fn string_defaults_and_generation() {
        let checked = check("RandomString", props! {"length" => 10, "minNumeric" => 3});
        assert!(checked.failures.is_empty(), "{:?}", checked.failures);
        assert_eq!(checked.inputs["special"], Value::Bool(true));
        assert_eq!(checked.inputs["minUpper"], Value::from(0));
        let created = create("RandomString", checked.inputs.into_map(), 1);
        let result = created.outputs["result"].as_str().unwrap().to_owned();
        assert_eq!(result.chars().count(), 10);
        assert!(result.chars().filter(char::is_ascii_digit).count() >= 3);
        assert_eq!(created.id, result);
        assert_eq!(created.outputs["length"], Value::from(10));
    }

    #[test]
    fn string_check_failures_name_the_property() {
        let r = check(
            "RandomString",
            props! {"length" => 3, "minUpper" => 2, "minLower" => 2},
        );
        assert_eq!(
            failures(&r),
            ["length: is 3, less than the sum of the minimums (4)"]
        );
        let r = check("RandomString", props! {"length" => 0});
        assert_eq!(failures(&r), ["length: must be between 1 and 65536"]);
        let r = check("RandomString", props! {});
        assert_eq!(failures(&r), ["length: missing required property"]);
        let r = check(
            "RandomString",
            props! {"length" => 4, "upper" => false, "minUpper" => 1},
        );
        assert_eq!(failures(&r), ["minUpper: is 1, but upper is false"]);
        let r = check(
            "RandomPassword",
            props! {"length" => 4, "lower" => false, "upper" => false, "numeric" => false, "overrideSpecial" => ""},
        );
        assert_eq!(
            failures(&r),
            ["no characters to choose from: enable lower, upper, numeric or special"]
        );
        let r = check(
            "RandomString",
            props! {"length" => 8, "keepers" => "not an object"},
        );
        assert_eq!(
            failures(&r),
            ["keepers: expected an object, found a string"]
        );
    }

    #[test]
    fn unknown_inputs_pass_check() {
        let r = check(
            "RandomString",
            props! {"length" => Value::Unknown, "minUpper" => Value::Unknown},
        );
        assert!(r.failures.is_empty(), "{:?}", r.failures);
    }

    #[test]
    fn passwords_are_secret_and_keep_their_id_out() {
        let checked = check(
            "RandomPassword",
            props! {"length" => 20, "overrideSpecial" => "_%"},
        );
        let created = create("RandomPassword", checked.inputs.into_map(), 2);
        assert_eq!(created.id, "none");
        let result = &created.outputs["result"];
        assert!(result.is_secret());
        let text = result.as_str().unwrap();
        assert_eq!(text.len(), 20);
        assert!(
            text.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '%')
        );
    }

    #[test]
    fn integers() {
        let r = check("RandomInteger", props! {"min" => 5, "max" => 1});
        assert_eq!(failures(&r), ["max: is 1, less than min (5)"]);
        let r = check("RandomInteger", props! {"min" => 1.5, "max" => 1e300});
        assert_eq!(
            failures(&r),
            [
                "min: expected an integer, found the number 1.5",
                "max: expected an integer, found the number 1e300"
            ]
        );
        let checked = check("RandomInteger", props! {"min" => -3, "max" => 3});
        let created = create("RandomInteger", checked.inputs.into_map(), 3);
        let n = created.outputs["result"].as_i64().unwrap();
        assert!((-3..=3).contains(&n));
        assert_eq!(created.id, format!("{n},-3,3"));
    }

    #[test]
    fn uuids_and_pets() {
        let created = create("RandomUuid", props! {}, 4);
        assert!(generate::is_uuid(&created.id));
        let checked = check("RandomPet", props! {"prefix" => "dev"});
        assert_eq!(checked.inputs["length"], Value::from(2));
        let created = create("RandomPet", checked.inputs.into_map(), 5);
        let name = created.outputs["result"].as_str().unwrap();
        assert_eq!(name.split('-').count(), 3, "{name}");
        assert!(name.starts_with("dev-"));
        let r = check("RandomPet", props! {"length" => 0});
        assert_eq!(failures(&r), ["length: must be between 1 and 64"]);
    }

    #[test]
    fn previews_leave_the_result_unknown() {
        let inputs = check("RandomString", props! {"length" => 8}).inputs;
        let created = Random
            .preview_create(CreateRequest {
                urn: urn("RandomString"),
                properties: inputs.clone(),
                ..CreateRequest::default()
            })
            .unwrap();
        assert!(created.outputs["result"].is_unknown());
        assert_eq!(created.outputs["length"], Value::from(8));
        assert!(created.id.is_empty());
        // An update's preview keeps the recorded result, as the update does.
        let old = create("RandomString", inputs.clone().into_map(), 3);
        let updated = Random
            .preview_update(UpdateRequest {
                urn: urn("RandomString"),
                id: old.id.clone(),
                old_inputs: inputs.clone(),
                old_outputs: old.outputs.clone(),
                news: inputs,
                ..UpdateRequest::default()
            })
            .unwrap();
        assert_eq!(updated.outputs["result"], old.outputs["result"]);
        assert!(
            Random
                .preview_create(CreateRequest {
                    urn: urn("RandomNothing"),
                    ..CreateRequest::default()
                })
                .is_err()
        );
    }

    #[test]
    fn the_system_source_works() {
        let created = Random
            .create(CreateRequest {
                urn: urn("RandomPassword"),
                properties: check("RandomPassword", props! {"length" => 32}).inputs,
                ..CreateRequest::default()
            })
            .unwrap();
        assert_eq!(created.outputs["result"].as_str().unwrap().len(), 32);
    }

    #[test]
    fn every_change_replaces() {
        let olds = check(
            "RandomString",
            props! {"length" => 8, "keepers" => props!{"v" => 1}},
        )
        .inputs;
        let diff = |news: PropertyMap| {
            Random
                .diff(DiffRequest {
                    urn: urn("RandomString"),
                    old_inputs: olds.clone(),
                    news: check("RandomString", news).inputs,
                    ..DiffRequest::default()
                })
                .unwrap()
        };
        let same = diff(props! {"length" => 8, "keepers" => props!{"v" => secret(1)}});
        assert_eq!(same.changes, cairn_sdk::DiffChanges::None);
        let keepers = diff(props! {"length" => 8, "keepers" => props!{"v" => 2}});
        assert_eq!(keepers.replace_keys, ["keepers"]);
        let length = diff(props! {"length" => 9, "keepers" => props!{"v" => 1}});
        assert_eq!(length.replace_keys, ["length"]);
    }

    #[test]
    fn read_returns_state_and_imports_by_id() {
        let state = props! {"length" => 2, "result" => "ab"};
        let read = Random
            .read(ReadRequest {
                urn: urn("RandomString"),
                id: "ab".into(),
                inputs: props! {"length" => 2}.into(),
                state: state.clone().into(),
            })
            .unwrap();
        assert_eq!(read.outputs, state);
        let imported = Random
            .read(ReadRequest {
                urn: urn("RandomString"),
                id: "aB3".into(),
                ..ReadRequest::default()
            })
            .unwrap();
        assert_eq!(imported.outputs["result"], Value::from("aB3"));
        assert_eq!(imported.inputs["length"], Value::from(3));
        assert_eq!(imported.inputs["numeric"], Value::Bool(true));
        let int = Random
            .read(ReadRequest {
                urn: urn("RandomInteger"),
                id: "4,1,9".into(),
                ..ReadRequest::default()
            })
            .unwrap();
        assert_eq!(int.outputs["result"], Value::from(4));
        for (ty, id) in [
            ("RandomInteger", "12,1,9"),
            ("RandomUuid", "nope"),
            ("RandomPet", "brave-ant"),
        ] {
            assert!(
                Random
                    .read(ReadRequest {
                        urn: urn(ty),
                        id: id.into(),
                        ..ReadRequest::default()
                    })
                    .is_err(),
                "{ty} {id}"
            );
        }
    }

    #[test]
    fn unknown_types_are_errors() {
        let err = Random
            .check(CheckRequest {
                urn: "urn:pulumi:dev::proj::random:index:Nope::r".into(),
                ..CheckRequest::default()
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown resource type \"random:index:Nope\""
        );
    }

    #[test]
    fn the_manifest_is_valid() {
        let m =
            manifest::validate_source(include_bytes!("../cairn.json"), env!("CARGO_PKG_VERSION"))
                .unwrap_or_else(|e| {
                    panic!("{}", e.join("\n"));
                });
        let schema = m.schema.unwrap();
        let resources = schema["resources"].as_object().unwrap();
        for ty in [
            "RandomString",
            "RandomPassword",
            "RandomInteger",
            "RandomUuid",
            "RandomPet",
        ] {
            let token = format!("random:index:{ty}");
            assert!(resources.contains_key(&token), "{token}");
            Kind::of(&token).unwrap();
        }
        assert_eq!(
            schema["resources"]["random:index:RandomPassword"]["properties"]["result"]["secret"],
            true
        );
    }
}
