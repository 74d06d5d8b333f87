//! `check`: each resource's input rules and defaults. The defaults are also applied to
//! recorded inputs before a diff ([`with_defaults`]), so a state whose inputs lack them (one
//! written by Pulumi's bridge, which records the program's inputs as given) does not read as
//! changed.

use cairn_sdk::{Checker, PropertyMap, Value};

use crate::Kind;

/// The longest string, password, byte string or list generated.
pub const MAX_LENGTH: i64 = 65_536;
/// The most words in a pet name.
pub const MAX_WORDS: i64 = 1_024;
/// Integers must be exact as doubles (the wire's numbers).
pub const MAX_SAFE: i64 = (1 << 53) - 1;

/// The character classes of strings and passwords: enable flag, minimum key.
pub const CLASSES: [(&str, &str); 4] = [
    ("lower", "minLower"),
    ("upper", "minUpper"),
    ("numeric", "minNumeric"),
    ("special", "minSpecial"),
];

/// Validates `kind`'s inputs and applies its defaults, recording failures in `c`.
pub fn check(kind: Kind, c: &mut Checker) {
    keepers(c);
    match kind {
        Kind::String | Kind::Password => string(c),
        Kind::Integer => integer(c),
        Kind::Pet => pet(c),
        Kind::Shuffle => shuffle(c),
        Kind::Bytes => {
            length(c, "length");
        }
        Kind::Id => {
            length(c, "byteLength");
            c.string("prefix");
        }
        Kind::Uuid | Kind::Uuid4 | Kind::Uuid7 => {}
    }
}

/// `inputs` with `kind`'s defaults applied (and nothing validated): for comparing recorded
/// inputs with checked ones.
pub fn with_defaults(kind: Kind, inputs: PropertyMap) -> PropertyMap {
    let mut c = Checker::new(inputs);
    defaults(kind, &mut c);
    c.inputs().clone()
}

/// The defaults of `kind` (as the published package's: every flag true, every minimum 0, two
/// words joined by `-`); `number` and `numeric` take each other's value when one is given.
fn defaults(kind: Kind, c: &mut Checker) {
    match kind {
        Kind::String | Kind::Password => {
            for (flag, min_key) in CLASSES {
                if flag != "numeric" {
                    c.default(flag, true);
                }
                c.default(min_key, 0);
            }
            let known = |key: &str| {
                c.inputs()
                    .get(key)
                    .filter(|v| !v.is_null() && !v.is_unknown())
                    .cloned()
            };
            // One of the two given (and known) sets the other; neither means true.
            let (number, numeric) = (known("number"), known("numeric"));
            let unknown = |key: &str| c.inputs().get(key).is_some_and(Value::is_unknown);
            if !unknown("number") && !unknown("numeric") {
                let value = numeric.or(number).unwrap_or(Value::Bool(true));
                c.default("numeric", value.clone());
                c.default("number", value);
            }
        }
        Kind::Pet => {
            c.default("length", 2);
            c.default("separator", "-");
        }
        _ => {}
    }
}

/// `keepers`: an object of strings. Numbers and booleans are taken as their text (as the
/// published package converts them); null entries are dropped (they never force a
/// replacement there either).
fn keepers(c: &mut Checker) {
    let Some(keepers) = c.object("keepers") else {
        return;
    };
    let mut texts = PropertyMap::new();
    for (key, value) in keepers {
        match keeper_text(&value) {
            Ok(Some(text)) => {
                texts.insert(key, text);
            }
            Ok(None) => {}
            Err(kind) => c.fail(
                format!("keepers.{key}"),
                format!("expected a string, found {kind}"),
            ),
        }
    }
    if let Some(slot) = c.inputs_mut().get_mut("keepers") {
        // A secret map stays secret.
        *slot = if slot.is_secret() {
            Value::secret(texts)
        } else {
            Value::Object(texts)
        };
    }
}

/// A keeper's value as text; `None` for null; `Err` with what it is when it has no text.
fn keeper_text(value: &Value) -> Result<Option<Value>, String> {
    Ok(Some(match value {
        Value::Null => return Ok(None),
        Value::String(_) | Value::Unknown | Value::Output(_) => value.clone(),
        Value::Bool(b) => Value::from(b.to_string()),
        Value::Number(n) if n.fract() == 0.0 && n.abs() <= MAX_SAFE as f64 => {
            Value::from((*n as i64).to_string())
        }
        Value::Number(n) => Value::from(n.to_string()),
        Value::Secret(inner) => match keeper_text(inner)? {
            Some(text) => Value::secret(text),
            None => return Ok(None),
        },
        other => return Err(format!("a value of kind {}", other.kind())),
    }))
}

/// A required length: at least 1, at most [`MAX_LENGTH`].
fn length(c: &mut Checker, key: &str) -> Option<i64> {
    let value = c.required_integer(key);
    match value {
        Some(n) if n < 1 => c.fail(key, format!("must be at least 1, not {n}")),
        Some(n) if n > MAX_LENGTH => c.fail(key, format!("must be at most {MAX_LENGTH}, not {n}")),
        _ => {}
    }
    value
}

/// Strings and passwords: `length` ≥ 1 and ≥ the sum of the minimums, minimums ≥ 0, `number`
/// and `numeric` agree, and some class is enabled.
fn string(c: &mut Checker) {
    defaults(Kind::String, c);
    let length = length(c, "length");
    c.string("overrideSpecial");
    let mut flags = Vec::new();
    let mut sum = Some(0i64);
    for (flag, min_key) in CLASSES {
        flags.push(c.bool(flag));
        let min = c.integer(min_key);
        if let Some(m) = min
            && m < 0
        {
            c.fail(min_key, format!("must not be negative, not {m}"));
        }
        sum = sum.zip(min).map(|(total, m)| total + m.max(0));
    }
    if let (Some(number), Some(numeric)) = (c.bool("number"), flags[2])
        && number != numeric
    {
        c.fail(
            "number",
            format!("is {number} but numeric is {numeric}: set only numeric (number is its deprecated name)"),
        );
    }
    if flags.iter().all(|f| *f == Some(false)) {
        c.fail(
            "numeric",
            "at least one of lower, upper, numeric and special must be true",
        );
    }
    if let (Some(len), Some(total)) = (length, sum)
        && len >= 1
        && total > len
    {
        c.fail(
            "length",
            format!("is {len}, less than minLower + minUpper + minNumeric + minSpecial ({total})"),
        );
    }
}

fn integer(c: &mut Checker) {
    let min = c.required_integer("min");
    let max = c.required_integer("max");
    for (key, v) in [("min", min), ("max", max)] {
        if let Some(v) = v
            && v.abs() > MAX_SAFE
        {
            c.fail(
                key,
                format!("must be within ±{MAX_SAFE} (exact as a number)"),
            );
        }
    }
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        c.fail("max", format!("is {max}, less than min ({min})"));
    }
    c.string("seed");
}

fn pet(c: &mut Checker) {
    defaults(Kind::Pet, c);
    if let Some(len) = c.integer("length")
        && !(1..=MAX_WORDS).contains(&len)
    {
        c.fail(
            "length",
            format!("must be between 1 and {MAX_WORDS}, not {len}"),
        );
    }
    c.string("separator");
    c.string("prefix");
}

fn shuffle(c: &mut Checker) {
    let inputs = c.array("inputs");
    if inputs.is_none() && !c.inputs().get("inputs").is_some_and(Value::is_unknown) {
        // Absent (or null): required.
        if c.inputs().get("inputs").is_none_or(Value::is_null) {
            c.fail("inputs", "missing required property");
        }
    }
    for (i, item) in inputs.iter().flatten().enumerate() {
        if item.as_str().is_none() && !item.is_unknown() {
            c.fail(
                format!("inputs[{i}]"),
                format!("expected a string, found a value of kind {}", item.kind()),
            );
        }
    }
    if let Some(n) = c.integer("resultCount")
        && !(0..=MAX_LENGTH).contains(&n)
    {
        c.fail(
            "resultCount",
            format!("must be between 0 and {MAX_LENGTH}, not {n}"),
        );
    }
    c.string("seed");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_sdk::{CheckResult, props, secret};

    fn run(kind: Kind, news: PropertyMap) -> CheckResult {
        let mut c = Checker::new(news);
        check(kind, &mut c);
        c.finish()
    }

    fn failures(kind: Kind, news: PropertyMap) -> Vec<String> {
        run(kind, news)
            .failures
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn string_defaults() {
        let checked = run(Kind::String, props! {"length" => 8}).inputs;
        for flag in ["lower", "upper", "numeric", "number", "special"] {
            assert_eq!(checked[flag], Value::Bool(true), "{flag}");
        }
        for min in ["minLower", "minUpper", "minNumeric", "minSpecial"] {
            assert_eq!(checked[min], Value::from(0), "{min}");
        }
        assert!(!checked.contains_key("overrideSpecial"));
        // `number` alone sets `numeric`, and the other way round.
        let checked = run(Kind::String, props! {"length" => 8, "number" => false}).inputs;
        assert_eq!(checked["numeric"], Value::Bool(false));
        let checked = run(Kind::Password, props! {"length" => 8, "numeric" => false}).inputs;
        assert_eq!(checked["number"], Value::Bool(false));
        let checked = run(Kind::Pet, props! {}).inputs;
        assert_eq!(checked["length"], Value::from(2));
        assert_eq!(checked["separator"], Value::from("-"));
    }

    /// Bad inputs, each failure naming its property.
    #[test]
    fn failures_name_the_property() {
        let cases: Vec<(Kind, PropertyMap, &[&str])> = vec![
            (
                Kind::String,
                props! {},
                &["length: missing required property"],
            ),
            (
                Kind::String,
                props! {"length" => 0},
                &["length: must be at least 1, not 0"],
            ),
            (
                Kind::Password,
                props! {"length" => 70_000},
                &["length: must be at most 65536, not 70000"],
            ),
            (
                Kind::String,
                props! {"length" => 3, "minUpper" => 2, "minLower" => 2},
                &["length: is 3, less than minLower + minUpper + minNumeric + minSpecial (4)"],
            ),
            (
                Kind::String,
                props! {"length" => 3, "minSpecial" => -1},
                &["minSpecial: must not be negative, not -1"],
            ),
            (
                Kind::Password,
                props! {"length" => 4, "number" => true, "numeric" => false},
                &[
                    "number: is true but numeric is false: set only numeric (number is its deprecated name)",
                ],
            ),
            (
                Kind::String,
                props! {"length" => 4, "lower" => false, "upper" => false, "numeric" => false, "special" => false},
                &["numeric: at least one of lower, upper, numeric and special must be true"],
            ),
            (
                Kind::String,
                props! {"length" => 1.5},
                &["length: expected an integer, found the number 1.5"],
            ),
            (
                Kind::String,
                props! {"length" => 8, "keepers" => "not a map"},
                &["keepers: expected an object, found a string"],
            ),
            (
                Kind::Uuid,
                props! {"keepers" => props! {"a" => vec![Value::from(1)]}},
                &["keepers.a: expected a string, found a value of kind array"],
            ),
            (
                Kind::Integer,
                props! {"min" => 5, "max" => 1},
                &["max: is 1, less than min (5)"],
            ),
            (
                Kind::Integer,
                props! {"min" => 1e300},
                &[
                    "min: expected an integer, found the number 1e300",
                    "max: missing required property",
                ],
            ),
            (
                Kind::Integer,
                props! {"min" => -(1i64 << 60), "max" => 0},
                &["min: must be within ±9007199254740991 (exact as a number)"],
            ),
            (
                Kind::Pet,
                props! {"length" => 0},
                &["length: must be between 1 and 1024, not 0"],
            ),
            (
                Kind::Shuffle,
                props! {},
                &["inputs: missing required property"],
            ),
            (
                Kind::Shuffle,
                props! {"inputs" => vec![Value::from("a"), Value::from(2)], "resultCount" => -1},
                &[
                    "inputs[1]: expected a string, found a value of kind number",
                    "resultCount: must be between 0 and 65536, not -1",
                ],
            ),
            (
                Kind::Bytes,
                props! {"length" => 0},
                &["length: must be at least 1, not 0"],
            ),
            (
                Kind::Id,
                props! {"byteLength" => -4},
                &["byteLength: must be at least 1, not -4"],
            ),
            (
                Kind::Id,
                props! {"byteLength" => 4, "prefix" => 7},
                &["prefix: expected a string, found the number 7"],
            ),
        ];
        for (kind, news, expected) in cases {
            assert_eq!(failures(kind, news.clone()), expected, "{kind:?} {news:?}");
        }
    }

    #[test]
    fn valid_inputs_pass() {
        for (kind, news) in [
            (
                Kind::String,
                props! {"length" => 4, "minUpper" => 4, "upper" => false},
            ),
            (
                Kind::String,
                props! {"length" => 4, "lower" => false, "upper" => false, "numeric" => false, "special" => true, "overrideSpecial" => ""},
            ),
            (
                Kind::Integer,
                props! {"min" => 3, "max" => 3, "seed" => "s"},
            ),
            (
                Kind::Shuffle,
                props! {"inputs" => Vec::<Value>::new(), "resultCount" => 0},
            ),
            (Kind::Id, props! {"byteLength" => 8, "prefix" => "p-"}),
            (Kind::Uuid7, props! {}),
        ] {
            assert_eq!(
                failures(kind, news.clone()),
                Vec::<String>::new(),
                "{news:?}"
            );
        }
    }

    #[test]
    fn unknown_inputs_pass_and_stay_unknown() {
        let r = run(
            Kind::String,
            props! {"length" => Value::Unknown, "minUpper" => Value::Unknown, "numeric" => Value::Unknown},
        );
        assert!(r.failures.is_empty(), "{:?}", r.failures);
        assert!(r.inputs["numeric"].is_unknown());
        assert!(!r.inputs.contains_key("number"), "number waits for numeric");
        let r = run(Kind::Shuffle, props! {"inputs" => Value::Unknown});
        assert!(r.failures.is_empty(), "{:?}", r.failures);
    }

    #[test]
    fn keepers_become_text_and_keep_secrets() {
        let r = run(
            Kind::Uuid,
            props! {"keepers" => props! {"n" => 3, "b" => true, "s" => "x", "gone" => Value::Null, "hidden" => secret(1.5)}},
        );
        assert!(r.failures.is_empty(), "{:?}", r.failures);
        let keepers = r.inputs["keepers"].as_object().unwrap();
        assert_eq!(keepers["n"], Value::from("3"));
        assert_eq!(keepers["b"], Value::from("true"));
        assert_eq!(keepers["s"], Value::from("x"));
        assert!(!keepers.contains_key("gone"));
        assert_eq!(keepers["hidden"], secret("1.5"));
        let r = run(
            Kind::Uuid,
            props! {"keepers" => secret(props! {"a" => "b"})},
        );
        assert!(r.inputs["keepers"].is_secret());
    }

    #[test]
    fn recorded_inputs_get_the_defaults() {
        let recorded = props! {"length" => 16, "number" => false};
        let filled = with_defaults(Kind::Password, recorded);
        assert_eq!(filled["numeric"], Value::Bool(false));
        assert_eq!(filled["special"], Value::Bool(true));
        assert_eq!(filled["minLower"], Value::from(0));
        assert_eq!(
            with_defaults(Kind::Uuid, props! {}),
            props! {},
            "no defaults"
        );
    }
}
