//! The input properties of each resource as a table ([`Prop`]): types, Terraform defaults,
//! what replaces, what the server computes, what is secret. The table drives `check` (types,
//! required inputs, defaults, secrets), `diff` (Terraform's plan rules) and the outputs of a
//! preview.

use cairn_sdk::{
    Checker, DiffChanges, DiffKind, DiffResult, PropertyDiff, PropertyMap, PropertyMapExt, Value,
};

use crate::sql;

/// The type of a property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Str,
    Int,
    Bool,
    /// A set of strings (Terraform `TypeSet`): order and duplicates do not count.
    StrSet,
    /// A list of strings (order counts).
    StrList,
    /// Schema `policies`: a set of SchemaPolicy objects.
    Policies,
}

/// A Terraform schema default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Default {
    None,
    Bool(bool),
    Int(i64),
    Str(&'static str),
}

impl Default {
    fn value(self) -> Option<Value> {
        match self {
            Default::None => None,
            Default::Bool(b) => Some(Value::Bool(b)),
            Default::Int(n) => Some(Value::from(n)),
            Default::Str(s) => Some(Value::from(s)),
        }
    }

    /// A default other than its type's zero value (`true`, -1, `infinity`): the ones the
    /// bridge records in the checked inputs.
    fn is_notable(self) -> bool {
        match self {
            Default::None => false,
            Default::Bool(b) => b,
            Default::Int(n) => n != 0,
            Default::Str(s) => !s.is_empty(),
        }
    }
}

/// Required in the inputs (no auto-name).
pub(crate) const REQUIRED: u8 = 1;
/// A change replaces the resource (Terraform `ForceNew`).
pub(crate) const REPLACE: u8 = 2;
/// Optional and computed: when the program leaves it out, the server's value stands (no diff).
pub(crate) const COMPUTED: u8 = 4;
/// Secret in inputs and outputs.
pub(crate) const SECRET: u8 = 8;
/// Write-only: used when acting, never compared nor recorded in the outputs.
pub(crate) const WRITE_ONLY: u8 = 16;

/// One input property.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prop {
    pub name: &'static str,
    pub ty: Ty,
    pub default: Default,
    pub flags: u8,
}

impl Prop {
    pub(crate) const fn new(name: &'static str, ty: Ty) -> Prop {
        Prop {
            name,
            ty,
            default: Default::None,
            flags: 0,
        }
    }

    pub(crate) const fn default(mut self, default: Default) -> Prop {
        self.default = default;
        self
    }

    pub(crate) const fn flags(mut self, flags: u8) -> Prop {
        self.flags |= flags;
        self
    }

    pub(crate) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The value an absent property is compared as (Terraform reads an unset optional
    /// property as its type's zero value).
    fn zero(&self) -> Value {
        match self.ty {
            Ty::Str => Value::from(""),
            Ty::Int => Value::from(0),
            Ty::Bool => Value::Bool(false),
            Ty::StrSet | Ty::StrList | Ty::Policies => Value::Array(Vec::new()),
        }
    }
}

/// A present (non-null) value.
pub(crate) fn present<'a>(map: &'a PropertyMap, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

/// The strings of an array property (unknown or non-string items left out).
pub(crate) fn strings(map: &PropertyMap, key: &str) -> Vec<String> {
    map.get_array(key)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A string property, or "" when absent (Terraform's `d.Get` of a string).
pub(crate) fn string(map: &PropertyMap, key: &str) -> String {
    map.get_str(key).unwrap_or_default().to_owned()
}

/// A boolean property, or `default` when absent.
pub(crate) fn boolean(map: &PropertyMap, key: &str, default: bool) -> bool {
    map.get_bool(key).unwrap_or(default)
}

/// An integer property, or `default` when absent.
pub(crate) fn integer(map: &PropertyMap, key: &str, default: i64) -> i64 {
    map.get_i64(key).unwrap_or(default)
}

/// A list of strings as a value.
pub(crate) fn string_array<S: AsRef<str>>(items: &[S]) -> Value {
    Value::Array(items.iter().map(|s| Value::from(s.as_ref())).collect())
}

/// Checks the types of the known properties, records missing required ones and applies the
/// Terraform defaults that are not their type's zero value (as the bridge does: `false`, 0
/// and "" defaults are left out, which reads the same); secret properties come back as
/// secrets. Returns the properties it filled in.
pub(crate) fn check_table(props: &[Prop], c: &mut Checker) -> Vec<&'static str> {
    let mut defaulted = Vec::new();
    for p in props {
        match p.ty {
            Ty::Str if p.has(REQUIRED) => drop(c.required_string(p.name)),
            Ty::Str => drop(c.string(p.name)),
            Ty::Int => drop(c.integer(p.name)),
            Ty::Bool => drop(c.bool(p.name)),
            Ty::StrSet | Ty::StrList => check_strings(c, p),
            Ty::Policies => check_policies(c, p.name),
        }
        if p.default.is_notable()
            && let Some(value) = p.default.value()
            && c.inputs().get(p.name).is_none_or(Value::is_null)
        {
            c.default(p.name, value);
            defaulted.push(p.name);
        }
        if p.has(SECRET)
            && let Some(v) = c.inputs_mut().get_mut(p.name)
            && !v.is_null()
            && !v.is_secret()
        {
            *v = Value::secret(std::mem::take(v));
        }
    }
    defaulted
}

/// `map` with every absent property that has a Terraform default set to it (the values
/// Terraform's state holds after it acted).
pub(crate) fn with_defaults(props: &[Prop], map: &PropertyMap) -> PropertyMap {
    let mut out = map.clone();
    for p in props {
        if present(map, p.name).is_none()
            && !map.get(p.name).is_some_and(Value::is_unknown)
            && let Some(value) = p.default.value()
        {
            out.insert(p.name.to_owned(), value);
        }
    }
    out
}

fn check_strings(c: &mut Checker, p: &Prop) {
    if p.has(REQUIRED) && c.inputs().lookup(p.name) == cairn_sdk::Lookup::Missing {
        c.fail(p.name, "missing required property");
        return;
    }
    let Some(items) = c.array(p.name) else {
        return;
    };
    for (i, item) in items.iter().enumerate() {
        if !item.is_unknown() && item.as_str().is_none() {
            c.fail(
                format!("{}[{i}]", p.name),
                format!("expected a string, found a {}", item.reveal().kind()),
            );
        }
    }
}

fn check_policies(c: &mut Checker, key: &str) {
    let Some(items) = c.array(key) else {
        return;
    };
    // Each policy object records what was filled in for it (nothing), as the bridge does.
    let marked: Vec<Value> = items
        .iter()
        .map(|item| match item.as_object() {
            Some(policy) if !item.is_secret() && !policy.contains_key(NESTED_DEFAULTS) => {
                let mut policy = policy.clone();
                policy.insert(NESTED_DEFAULTS.to_owned(), Value::Array(Vec::new()));
                Value::Object(policy)
            }
            _ => item.clone(),
        })
        .collect();
    if marked != items
        && let Some(v) = c.inputs_mut().get_mut(key)
    {
        *v = Value::Array(marked);
    }
    for (i, item) in items.iter().enumerate() {
        if item.is_unknown() {
            continue;
        }
        let Some(policy) = item.as_object() else {
            c.fail(
                format!("{key}[{i}]"),
                format!("expected an object, found a {}", item.reveal().kind()),
            );
            continue;
        };
        for (field, value) in policy {
            if value.is_null() || value.is_unknown() {
                continue;
            }
            let ok = match field.as_str() {
                "role" => value.as_str().is_some(),
                "create" | "createWithGrant" | "usage" | "usageWithGrant" => {
                    value.as_bool().is_some()
                }
                _ => true,
            };
            if !ok {
                c.fail(
                    format!("{key}[{i}].{field}"),
                    format!(
                        "expected a {}, found a {}",
                        if field == "role" { "string" } else { "boolean" },
                        value.reveal().kind()
                    ),
                );
            }
        }
    }
}

/// The Terraform name of a property (`objectType` is `object_type`), which Terraform's
/// messages use.
pub(crate) fn tf_name(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Fails `key` when it is a known integer below `min` (Terraform's `IntAtLeast`, with its
/// message).
pub(crate) fn at_least(c: &mut Checker, key: &str, min: i64) {
    if let Some(n) = c.inputs().get_i64(key)
        && n < min
    {
        c.fail(
            key,
            format!("expected {} to be at least ({min}), got {n}", tf_name(key)),
        );
    }
}

/// Fails `key` when it is a known string not in `allowed` (Terraform's `StringInSlice`, with
/// its message).
pub(crate) fn one_of(c: &mut Checker, key: &str, allowed: &[&str]) {
    if let Some(s) = c.inputs().get_str(key)
        && !allowed.contains(&s)
    {
        let s = s.to_owned();
        let quoted: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        c.fail(
            key,
            format!(
                "expected {} to be one of [{}], got {s}",
                tf_name(key),
                quoted.join(" ")
            ),
        );
    }
}

/// A SchemaPolicy object with every field (Terraform's defaults for those left out), as the
/// state records it; anything else unchanged.
pub(crate) fn normalize_policy(v: &Value) -> Value {
    let Some(policy) = v.as_object() else {
        return v.clone();
    };
    if policy.values().any(Value::contains_unknowns) {
        return v.clone();
    }
    let (role, create, create_with_grant, usage, usage_with_grant) = policy_key(v);
    Value::from(cairn_sdk::props! {
        "create" => create,
        "createWithGrant" => create_with_grant,
        "role" => role,
        "usage" => usage,
        "usageWithGrant" => usage_with_grant,
    })
}

/// A SchemaPolicy with its defaults, for comparisons.
pub(crate) fn policy_key(v: &Value) -> (String, bool, bool, bool, bool) {
    let get = |k: &str| v.as_object().and_then(|o| o.get_bool(k)).unwrap_or(false);
    (
        v.as_object()
            .and_then(|o| o.get_str("role"))
            .unwrap_or_default()
            .to_owned(),
        get("create"),
        get("createWithGrant"),
        get("usage"),
        get("usageWithGrant"),
    )
}

/// Whether two values of a property are the same, as Terraform compares them.
fn same(ty: Ty, a: &Value, b: &Value) -> bool {
    if a.contains_unknowns() || b.contains_unknowns() {
        return false;
    }
    match ty {
        Ty::StrSet => {
            let set = |v: &Value| {
                sql::sorted_set(
                    &v.as_array()
                        .map(|items| {
                            items
                                .iter()
                                .filter_map(|i| i.as_str().map(str::to_owned))
                                .collect::<Vec<_>>()
                        })
                        .unwrap_or_default(),
                )
            };
            set(a) == set(b)
        }
        Ty::Policies => {
            let set = |v: &Value| {
                let mut keys: Vec<_> = v
                    .as_array()
                    .map(|items| items.iter().map(policy_key).collect())
                    .unwrap_or_default();
                keys.sort();
                keys.dedup();
                keys
            };
            set(a) == set(b)
        }
        Ty::Int => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.same_as(b),
        },
        _ => a.same_as(b),
    }
}

/// The value of `p` that Terraform would compare: given, or its zero value; `None` when the
/// property is computed and not given (the server's value stands).
fn compared(p: &Prop, map: &PropertyMap) -> Option<Value> {
    match present(map, p.name) {
        Some(v) => Some(v.clone()),
        None if p.has(COMPUTED) => None,
        None => Some(p.zero()),
    }
}

/// Terraform's plan as a diff: each property the program gives (or leaves to its zero value)
/// is compared with the recorded state (the outputs; the recorded inputs for a property the
/// outputs lack). A computed property left out never differs; a change of a `REPLACE`
/// property replaces. Write-only properties and `ignore` paths are skipped.
///
/// When something differs, the changed keys also name each defaulted property whose state has
/// no value (an imported resource's `ifNotExists`), as the bridge lists them; they replace
/// nothing. Keys come sorted.
pub(crate) fn diff(
    props: &[Prop],
    old_inputs: &PropertyMap,
    old_outputs: &PropertyMap,
    news: &PropertyMap,
    ignore: &[String],
) -> DiffResult {
    let mut result = DiffResult::default();
    let mut detailed = Vec::new();
    let considered = props
        .iter()
        .filter(|p| !p.has(WRITE_ONLY) && !ignore.iter().any(|i| i == p.name));
    for p in considered.clone() {
        let Some(new) = compared(p, news) else {
            continue;
        };
        let old = if present(old_outputs, p.name).is_some() {
            compared(p, old_outputs)
        } else {
            compared(p, old_inputs)
        };
        let kind = match &old {
            Some(old) if same(p.ty, old, &new) => continue,
            Some(_) => DiffKind::Update,
            None => DiffKind::Add,
        };
        let replaces = p.has(REPLACE);
        result.changed_keys.push(p.name.to_owned());
        if replaces {
            result.replace_keys.push(p.name.to_owned());
        }
        detailed.push(PropertyDiff {
            path: p.name.to_owned(),
            kind: if replaces { kind.with_replace() } else { kind },
            input_diff: false,
        });
    }
    if !result.changed_keys.is_empty() {
        for p in considered {
            let unset =
                present(old_outputs, p.name).is_none() && present(old_inputs, p.name).is_none();
            if p.default != Default::None
                && unset
                && !result.changed_keys.iter().any(|k| k == p.name)
            {
                result.changed_keys.push(p.name.to_owned());
                detailed.push(PropertyDiff {
                    path: p.name.to_owned(),
                    kind: DiffKind::Add,
                    input_diff: false,
                });
            }
        }
    }
    result.changed_keys.sort();
    result.replace_keys.sort();
    detailed.sort_by(|a, b| a.path.cmp(&b.path));
    result.changes = if result.changed_keys.is_empty() {
        DiffChanges::None
    } else {
        DiffChanges::Some
    };
    result.detailed_diff = Some(detailed);
    result
}

/// Whether the property changed between the recorded state and the new inputs (Terraform's
/// `d.HasChange` during an update).
pub(crate) fn changed(p: &Prop, olds: &PropertyMap, news: &PropertyMap) -> bool {
    let Some(new) = compared(p, news) else {
        return false;
    };
    let old = compared(p, olds).unwrap_or_else(|| p.zero());
    !same(p.ty, &old, &new)
}

/// The property named `name` in `props`.
pub(crate) fn prop<'a>(props: &'a [Prop], name: &str) -> &'a Prop {
    props
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no property {name} in the table"))
}

/// Outputs for a preview: the inputs, secrets marked, and the computed properties the program
/// left out as unknown (or as recorded, for an update).
pub(crate) fn preview_outputs(
    props: &[Prop],
    inputs: &PropertyMap,
    old_outputs: Option<&PropertyMap>,
) -> PropertyMap {
    let mut outputs = PropertyMap::new();
    for p in props {
        if p.has(WRITE_ONLY) {
            continue;
        }
        let value = match present(inputs, p.name) {
            Some(v) => v.clone(),
            None if p.has(COMPUTED) => match old_outputs.and_then(|o| present(o, p.name)) {
                Some(old) => old.clone(),
                None => Value::Unknown,
            },
            None => continue,
        };
        outputs.insert(p.name.to_owned(), mark(p, value));
    }
    outputs
}

/// The value, secret when the property is.
pub(crate) fn mark(p: &Prop, value: Value) -> Value {
    if p.has(SECRET) && !value.is_secret() && !value.is_null() {
        Value::secret(value)
    } else {
        value
    }
}

/// The bridge's key for what was filled in, in nested objects too.
const NESTED_DEFAULTS: &str = "__defaults";

/// A value without the `__defaults` keys of its objects.
fn without_nested_defaults(v: &Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(without_nested_defaults).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != NESTED_DEFAULTS)
                .map(|(k, v)| (k.clone(), without_nested_defaults(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Inputs after a read: on import (no recorded inputs) every input property the read found;
/// on refresh the recorded inputs, with the values found for the properties they have, so a
/// change made outside the program shows as a difference from it.
pub(crate) fn inputs_after_read(
    props: &[Prop],
    old_inputs: &PropertyMap,
    outputs: &PropertyMap,
) -> PropertyMap {
    if old_inputs.is_empty() {
        return props
            .iter()
            .filter(|p| !p.has(WRITE_ONLY))
            .filter_map(|p| Some((p.name.to_owned(), present(outputs, p.name)?.clone())))
            .collect();
    }
    let mut inputs = old_inputs.clone();
    for p in props {
        if p.has(WRITE_ONLY) || present(old_inputs, p.name).is_none() {
            continue;
        }
        // Schema policies are not read from the server: as given, less the bridge's marks.
        if p.ty == Ty::Policies {
            let given = without_nested_defaults(&old_inputs[p.name]);
            inputs.insert(p.name.to_owned(), given);
            continue;
        }
        if let Some(found) = present(outputs, p.name) {
            inputs.insert(p.name.to_owned(), mark(p, found.clone()));
        }
    }
    inputs
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_sdk::props;

    const PROPS: &[Prop] = &[
        Prop::new("name", Ty::Str),
        Prop::new("limit", Ty::Int).default(Default::Int(-1)),
        Prop::new("owner", Ty::Str).flags(COMPUTED),
        Prop::new("template", Ty::Str).flags(COMPUTED | REPLACE),
        Prop::new("privileges", Ty::StrSet),
        Prop::new("path", Ty::StrList),
        Prop::new("timeout", Ty::Int),
        Prop::new("secret", Ty::Str).flags(SECRET),
        Prop::new("wo", Ty::Str).flags(WRITE_ONLY | SECRET),
    ];

    fn keys(r: &DiffResult) -> (Vec<String>, Vec<String>) {
        (r.changed_keys.clone(), r.replace_keys.clone())
    }

    #[test]
    fn terraform_plan_rules() {
        let state = props! {
            "name" => "a", "limit" => -1, "owner" => "postgres", "template" => "template0",
            "privileges" => vec![Value::from("INSERT"), Value::from("SELECT")],
            "path" => vec![Value::from("a"), Value::from("b")], "timeout" => 0,
        };
        type Case = (PropertyMap, (Vec<&'static str>, Vec<&'static str>));
        let cases: Vec<Case> = vec![
            // Nothing given beyond the defaults: computed values stand, zero values match.
            (
                props! {"name" => "a", "limit" => -1, "path" => vec![Value::from("a"), Value::from("b")], "privileges" => vec![Value::from("SELECT"), Value::from("INSERT"), Value::from("SELECT")]},
                (vec![], vec![]),
            ),
            (
                props! {"name" => "b", "limit" => 5, "path" => vec![Value::from("b"), Value::from("a")], "privileges" => vec![Value::from("SELECT"), Value::from("INSERT")]},
                (vec!["limit", "name", "path"], vec![]),
            ),
            (
                props! {"name" => "a", "limit" => -1, "template" => "template1", "path" => vec![Value::from("a"), Value::from("b")], "privileges" => vec![Value::from("SELECT"), Value::from("INSERT")], "wo" => "x"},
                (vec!["template"], vec!["template"]),
            ),
            (
                props! {"name" => "a", "limit" => -1, "owner" => Value::Unknown, "timeout" => 0, "path" => vec![Value::from("a"), Value::from("b")], "privileges" => vec![Value::from("SELECT")]},
                (vec!["owner", "privileges"], vec![]),
            ),
        ];
        for (news, (changed, replaced)) in cases {
            let r = diff(PROPS, &PropertyMap::new(), &state, &news, &[]);
            assert_eq!(
                keys(&r),
                (to_strings(&changed), to_strings(&replaced)),
                "{news:?}"
            );
        }
        // An ignored key is no change.
        let news = props! {"name" => "z", "limit" => -1, "path" => vec![Value::from("a"), Value::from("b")], "privileges" => vec![Value::from("SELECT"), Value::from("INSERT")]};
        let r = diff(
            PROPS,
            &PropertyMap::new(),
            &state,
            &news,
            &["name".to_owned()],
        );
        assert_eq!(r.changes, DiffChanges::None);
        // A property missing from the outputs is compared with the recorded inputs.
        let olds = props! {"secret" => "s"};
        let r = diff(
            PROPS,
            &olds,
            &props! {"limit" => -1},
            &props! {"limit" => -1, "secret" => cairn_sdk::secret("s")},
            &[],
        );
        assert_eq!(r.changes, DiffChanges::None);
    }

    fn to_strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn check_types_defaults_and_secrets() {
        let mut c = Checker::new(props! {
            "name" => 3, "privileges" => vec![Value::from("a"), Value::from(1)],
            "secret" => "pw", "path" => Value::Unknown,
        });
        check_table(PROPS, &mut c);
        at_least(&mut c, "limit", 0);
        let r = c.finish();
        let failures: Vec<String> = r.failures.iter().map(ToString::to_string).collect();
        assert_eq!(
            failures,
            [
                "name: expected a string, found the number 3",
                "privileges[1]: expected a string, found a number",
                "limit: expected limit to be at least (0), got -1",
            ]
        );
        assert_eq!(r.inputs["limit"], Value::from(-1));
        assert!(r.inputs["secret"].is_secret());
    }

    #[test]
    fn read_inputs_for_import_and_refresh() {
        let outputs = props! {"name" => "n", "limit" => 3, "owner" => "o"};
        assert_eq!(
            inputs_after_read(PROPS, &PropertyMap::new(), &outputs),
            outputs
        );
        let olds = props! {"name" => "n", "limit" => 1};
        assert_eq!(
            inputs_after_read(PROPS, &olds, &outputs),
            props! {"name" => "n", "limit" => 3}
        );
    }
}
