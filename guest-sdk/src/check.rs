//! Typed readers for property maps and [`Checker`], which validates inputs in `check`.
//!
//! Readers see through secrets and outputs. Paths are property paths (`length`, `tags.env`,
//! `ports[0]`, `tags["a.b"]`).

use crate::error::CheckFailure;
use crate::properties::Properties;
use crate::provider::CheckResult;
use crate::value::{Lookup, PropertyMap, Value, lookup_in};

/// `<name>-<7 hex characters>`, the hex a hash (FNV-1a) of `seed`: a generated physical name
/// that is the same every time for the same seed.
pub fn auto_name(name: &str, seed: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{name}-{:07x}", hash >> 36)
}

/// Typed reads from a [`PropertyMap`].
///
/// `get_*` are lenient: `None` when the property is absent, null, unknown or of another type.
/// `require_*` are strict and say what is wrong, naming the property.
pub trait PropertyMapExt {
    /// Looks a path up; a malformed path reads as [`Lookup::Missing`].
    fn lookup(&self, path: &str) -> Lookup<'_>;

    /// True when the property (or something on the way to it) is not known yet.
    fn is_unknown(&self, path: &str) -> bool {
        matches!(self.lookup(path), Lookup::Unknown)
    }

    fn get(&self, path: &str) -> Option<&Value> {
        match self.lookup(path) {
            Lookup::Found(v) => Some(v),
            _ => None,
        }
    }

    fn get_str(&self, path: &str) -> Option<&str> {
        self.get(path).and_then(Value::as_str)
    }

    fn get_f64(&self, path: &str) -> Option<f64> {
        self.get(path).and_then(Value::as_f64)
    }

    /// The number when it is an integer.
    fn get_i64(&self, path: &str) -> Option<i64> {
        self.get(path).and_then(Value::as_i64)
    }

    fn get_bool(&self, path: &str) -> Option<bool> {
        self.get(path).and_then(Value::as_bool)
    }

    fn get_array(&self, path: &str) -> Option<&Vec<Value>> {
        self.get(path).and_then(Value::as_array)
    }

    fn get_object(&self, path: &str) -> Option<&PropertyMap> {
        self.get(path).and_then(Value::as_object)
    }

    /// The string at `path`, or a failure naming the property.
    fn require_str(&self, path: &str) -> Result<&str, CheckFailure> {
        require(self, path, "a string", Value::as_str)
    }

    fn require_f64(&self, path: &str) -> Result<f64, CheckFailure> {
        require(self, path, "a number", Value::as_f64)
    }

    fn require_i64(&self, path: &str) -> Result<i64, CheckFailure> {
        require(self, path, "an integer", Value::as_i64)
    }

    fn require_bool(&self, path: &str) -> Result<bool, CheckFailure> {
        require(self, path, "a boolean", Value::as_bool)
    }

    fn require_object(&self, path: &str) -> Result<&PropertyMap, CheckFailure> {
        require(self, path, "an object", Value::as_object)
    }
}

impl PropertyMapExt for PropertyMap {
    fn lookup(&self, path: &str) -> Lookup<'_> {
        lookup_in(self, path).unwrap_or(Lookup::Missing)
    }
}

fn require<'a, M: PropertyMapExt + ?Sized, T>(
    map: &'a M,
    path: &str,
    expected: &str,
    read: impl FnOnce(&'a Value) -> Option<T>,
) -> Result<T, CheckFailure> {
    match map.lookup(path) {
        Lookup::Missing => Err(CheckFailure::new(path, "missing required property")),
        Lookup::Unknown => Err(CheckFailure::new(path, "is not known yet")),
        Lookup::Found(v) => read(v).ok_or_else(|| {
            CheckFailure::new(path, format!("expected {expected}, found {}", describe(v)))
        }),
    }
}

/// "a string", "an object", "the number 1.5": what a value is, for messages.
fn describe(v: &Value) -> String {
    match v.reveal() {
        // Integers print plainly; other numbers in their shortest form (`1.5`, `1e300`).
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 1e16 => {
            format!("the number {}", *n as i64)
        }
        Value::Number(n) => format!("the number {n:?}"),
        other => {
            let kind = other.kind();
            let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {kind}")
        }
    }
}

/// Validates inputs in `check`: typed reads that record failures, defaults, and the result.
///
/// Reads return `None` when the property is absent, unknown (a preview) or invalid; only invalid
/// values (and absent required ones) are recorded as failures, so unknowns pass through.
///
/// ```
/// use cairn_sdk::{props, Checker};
/// let mut c = Checker::new(props! { "length" => 1.5 });
/// c.default("special", true);
/// assert_eq!(c.required_integer("length"), None);
/// let result = c.finish();
/// assert_eq!(result.failures[0].to_string(), "length: expected an integer, found the number 1.5");
/// assert_eq!(result.inputs["special"], cairn_sdk::Value::Bool(true));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Checker {
    /// Stays the host's table (sent back as it came) unless a default changes it.
    inputs: Properties,
    failures: Vec<CheckFailure>,
}

impl Checker {
    /// Starts checking `inputs` (a [`CheckRequest`](crate::CheckRequest)'s).
    pub fn new(inputs: impl Into<Properties>) -> Checker {
        Checker {
            inputs: inputs.into(),
            failures: Vec::new(),
        }
    }

    /// The inputs as they stand (with defaults applied so far).
    pub fn inputs(&self) -> &PropertyMap {
        &self.inputs
    }

    /// Mutable access to the inputs, to normalise values.
    pub fn inputs_mut(&mut self) -> &mut PropertyMap {
        &mut self.inputs
    }

    /// Records a failure.
    pub fn fail(&mut self, property: impl Into<String>, reason: impl Into<String>) {
        self.failures.push(CheckFailure::new(property, reason));
    }

    /// The failures so far.
    pub fn failures(&self) -> &[CheckFailure] {
        &self.failures
    }

    /// Auto-names the resource when `key` is absent or null: the old inputs' value when there
    /// is one (so the name is stable across updates), else `<logical name>-<7 hex characters>`
    /// derived from the request's random seed (the same in a preview and the update that
    /// follows it). `name` is the logical name (`request.name()`); `old_inputs` and `seed` are
    /// the request's.
    pub fn auto_name(&mut self, key: &str, name: &str, old_inputs: &PropertyMap, seed: &[u8]) {
        if !self.inputs.get(key).is_none_or(Value::is_null) {
            return;
        }
        let value = match old_inputs.get(key).filter(|v| !v.is_null()) {
            Some(old) => old.clone(),
            None => Value::from(auto_name(name, seed)),
        };
        self.inputs.insert(key.to_owned(), value);
    }

    /// Sets a top-level property when it is absent or null (not when it is unknown).
    pub fn default(&mut self, key: &str, value: impl Into<Value>) {
        if self.inputs.get(key).is_none_or(Value::is_null) {
            self.inputs.insert(key.to_owned(), value.into());
        }
    }

    fn read<T>(
        &mut self,
        path: &str,
        required: bool,
        expected: &str,
        read: impl FnOnce(&Value) -> Option<T>,
    ) -> Option<T> {
        match self.inputs.lookup(path) {
            Lookup::Unknown => None,
            Lookup::Missing if !required => None,
            _ => match require(&*self.inputs, path, expected, read) {
                Ok(v) => Some(v),
                Err(f) => {
                    self.failures.push(f);
                    None
                }
            },
        }
    }

    pub fn string(&mut self, path: &str) -> Option<String> {
        self.read(path, false, "a string", |v| v.as_str().map(str::to_owned))
    }

    pub fn required_string(&mut self, path: &str) -> Option<String> {
        self.read(path, true, "a string", |v| v.as_str().map(str::to_owned))
    }

    pub fn number(&mut self, path: &str) -> Option<f64> {
        self.read(path, false, "a number", Value::as_f64)
    }

    pub fn required_number(&mut self, path: &str) -> Option<f64> {
        self.read(path, true, "a number", Value::as_f64)
    }

    pub fn integer(&mut self, path: &str) -> Option<i64> {
        self.read(path, false, "an integer", Value::as_i64)
    }

    pub fn required_integer(&mut self, path: &str) -> Option<i64> {
        self.read(path, true, "an integer", Value::as_i64)
    }

    pub fn bool(&mut self, path: &str) -> Option<bool> {
        self.read(path, false, "a boolean", Value::as_bool)
    }

    pub fn required_bool(&mut self, path: &str) -> Option<bool> {
        self.read(path, true, "a boolean", Value::as_bool)
    }

    pub fn object(&mut self, path: &str) -> Option<PropertyMap> {
        self.read(path, false, "an object", |v| v.as_object().cloned())
    }

    pub fn array(&mut self, path: &str) -> Option<Vec<Value>> {
        self.read(path, false, "an array", |v| v.as_array().cloned())
    }

    /// Ends the check.
    pub fn finish(self) -> CheckResult {
        CheckResult {
            inputs: self.inputs,
            failures: self.failures,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{props, secret};

    #[test]
    fn auto_names_are_stable_and_keep_the_old_name() {
        let seed = b"urn:pulumi:dev::p::t:m:T::site";
        let name = auto_name("site", seed);
        assert!(
            name.starts_with("site-") && name.len() == "site-".len() + 7,
            "{name}"
        );
        assert_eq!(name, auto_name("site", seed), "same seed, same name");
        assert_ne!(name, auto_name("site", b"another seed"));

        let mut fresh = Checker::new(PropertyMap::new());
        fresh.auto_name("path", "site", &PropertyMap::new(), seed);
        assert_eq!(fresh.inputs()["path"], Value::from(name.clone()));

        let olds = props! {"path" => "site-abcdef0"};
        let mut updated = Checker::new(PropertyMap::new());
        updated.auto_name("path", "site", &olds, seed);
        assert_eq!(
            updated.inputs()["path"],
            Value::from("site-abcdef0"),
            "kept across updates"
        );

        let mut explicit = Checker::new(props! {"path" => "mine"});
        explicit.auto_name("path", "site", &olds, seed);
        assert_eq!(explicit.inputs()["path"], Value::from("mine"));
    }

    #[test]
    fn readers_see_through_secrets() {
        let m = props! {"a" => secret("x"), "n" => 2, "f" => 2.5, "b" => false};
        assert_eq!(m.get_str("a"), Some("x"));
        assert_eq!(m.get_i64("n"), Some(2));
        assert_eq!(m.get_i64("f"), None);
        assert_eq!(m.get_f64("f"), Some(2.5));
        assert_eq!(m.get_bool("b"), Some(false));
        assert_eq!(m.get_str("n"), None);
        assert_eq!(m.get_str("zzz"), None);
    }

    #[test]
    fn require_names_the_property() {
        let m = props! {"path" => 3, "later" => Value::Unknown, "o" => props!{"k" => true}};
        assert_eq!(
            m.require_str("path").unwrap_err().to_string(),
            "path: expected a string, found the number 3"
        );
        assert_eq!(
            m.require_str("missing").unwrap_err().to_string(),
            "missing: missing required property"
        );
        assert_eq!(
            m.require_bool("later").unwrap_err().to_string(),
            "later: is not known yet"
        );
        assert_eq!(
            m.require_str("o.k").unwrap_err().to_string(),
            "o.k: expected a string, found a bool"
        );
        assert_eq!(m.require_bool("o.k"), Ok(true));
        assert_eq!(
            m.require_object("path").unwrap_err().reason,
            "expected an object, found the number 3"
        );
    }

    #[test]
    fn checker_skips_unknowns_and_records_failures() {
        let mut c = Checker::new(props! {
            "known" => "x",
            "unknown" => Value::Unknown,
            "wrong" => true,
            "nullish" => Value::Null,
        });
        assert_eq!(c.required_string("known").as_deref(), Some("x"));
        assert_eq!(c.required_string("unknown"), None);
        assert_eq!(c.string("wrong"), None);
        assert_eq!(c.string("absent"), None);
        assert_eq!(c.required_integer("absent"), None);
        c.default("nullish", 5);
        c.default("unknown", 5);
        c.default("known", "y");
        let r = c.finish();
        let failures: Vec<String> = r.failures.iter().map(ToString::to_string).collect();
        assert_eq!(
            failures,
            [
                "wrong: expected a string, found a bool",
                "absent: missing required property"
            ]
        );
        assert_eq!(r.inputs["nullish"], Value::from(5));
        assert_eq!(r.inputs["unknown"], Value::Unknown);
        assert_eq!(r.inputs["known"], Value::from("x"));
    }
}
