//! The lifecycle scenarios' test provider (package `test`), written once.
//!
//! What it does — Check (failures, auto-naming), Diff (changed keys, replace keys,
//! delete-before-replace, detailed paths, `diff: unknown`), DiffConfig, Create / Read / Update /
//! Delete (IDs `<name>-<n>`, outputs, failures, partial states, bad outputs) — is decided here,
//! over the two things its users differ in:
//! * [`Values`]: the value type — the engine's `PropertyValue` in process (`cairn-lifecycle`),
//!   `cairn_sdk::Value` in the `lifecycle-test` component (tests/guests);
//! * [`Cloud`]: where resources, counters and the scenario's behaviour live — memory, or the
//!   directory granted to the component.
//!
//! Each user keeps only an adapter: these two traits, and its own request and result types
//! mapped onto the functions below. The crate depends on neither the engine nor the SDK, so the
//! component's build stays free of the engine and the host's lockfile free of the SDK.
//!
//! # Lifecycle scenarios run once per guest language
//!
//! `host/lifecycle` runs each scenario against the in-process test provider, against the same logic
//! compiled to a component (`tests/guests/lifecycle-test`), and against the same provider written
//! in Python, TypeScript and Go (`tests/guests/lifecycle-test-*`, built by cairn-guest-build), each
//! sandboxed, with its "cloud" in a granted directory. Recording calls, delays and blocking stay on
//! the host side (they observe the engine), so both runs check identical expectations. The
//! provider's behaviour is written once, in `host/lifecycle/test-provider`, as functions generic
//! over two small traits: `Values` (what the logic asks of a value: an unknown, unsecret,
//! contains-unknowns, object and array views) and `Cloud` (get/put/remove a resource, counters, the
//! deployment's behaviour: memory in process, files in `/cloud` in the component). Each side keeps
//! only its adapter: its `Cloud`, and its requests and results mapped onto those functions. Traits
//! rather than a neutral value type: the provider hands its inputs back as outputs, so a neutral
//! form would need a lossless conversion both ways at both edges (a third value codec, covering
//! assets, references and output dependencies the logic never looks at), where the traits need five
//! operations, all but the SDK's unsecret already methods of both types. The crate depends on
//! neither `cairn-engine` nor `cairn-sdk` (the component's build stays free of the engine, the
//! host's lockfile free of the SDK), so the orphan rule puts the trait impls on each side's own
//! type; what those impls and the result mapping share, since the SDK's result and error types
//! mirror the engine's names and fields (its requests name their properties on their own pattern,
//! `inputs` / `old_inputs` / `old_outputs`), is the `adapter!` macro, written once beside the
//! traits.

mod behaviour;

use indexmap::IndexMap;

pub use cairn_wire::{DiffChanges, DiffKind};

pub use behaviour::{Behaviour, CheckFailureSpec, ProviderSpec};

/// An object's properties, in order (what `PropertyMap` is on both sides).
pub type Map<V> = IndexMap<String, V>;

/// What the provider needs of a value type (implemented by [`adapter!`]).
pub trait Values {
    type Value: Clone + PartialEq + From<String> + From<f64>;
    /// An unknown value (computed only by creating).
    const UNKNOWN: Self::Value;
    /// The value with every secret marker removed, contents kept.
    fn unsecret(value: &Self::Value) -> Self::Value;
    fn contains_unknowns(value: &Self::Value) -> bool;
    /// An object's entries as this crate's map (a copy: the engine's map type is its own).
    fn as_object(value: &Self::Value) -> Option<Map<Self::Value>>;
    fn as_array(value: &Self::Value) -> Option<&[Self::Value]>;
}

/// The part of an adapter that reads the same on both sides, written once: [`Values`] for the
/// side's cloud type, and the functions `diff_result` and `failure` that map this crate's
/// [`Diff`] and [`Failure`] onto the side's provider types.
///
/// The SDK's result types mirror the engine's names, so those types are the ones in scope where
/// the macro is invoked: `DiffResult`, `DiffKind`, `PartialState`, and `error` (with a variant
/// `Failed { message, partial }`). They differ only in how a detailed diff holds its entries:
/// `entry` makes one from a path and its `DiffKind`. Of the value type, `unknown` is its unknown
/// and `unsecret` strips the secrets of a `&value`; the rest of [`Values`] forwards to the
/// methods both value types have alike (`contains_unknowns`, `as_object`, `as_array`).
///
/// A macro, because the orphan rule wants these impls on each side's own types and this crate
/// knows neither side.
#[macro_export]
macro_rules! adapter {
    (
        cloud: $cloud:ty,
        value: $value:ty,
        unknown: $unknown:expr,
        unsecret: $unsecret:expr,
        error: $error:ident,
        entry: $entry:expr $(,)?
    ) => {
        impl $crate::Values for $cloud {
            type Value = $value;
            const UNKNOWN: $value = $unknown;
            fn unsecret(value: &$value) -> $value {
                ($unsecret)(value)
            }
            fn contains_unknowns(value: &$value) -> bool {
                value.contains_unknowns()
            }
            fn as_object(value: &$value) -> Option<$crate::Map<$value>> {
                value
                    .as_object()
                    .map(|map| map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            }
            fn as_array(value: &$value) -> Option<&[$value]> {
                value.as_array().map(Vec::as_slice)
            }
        }

        /// A diff of the test provider's logic as this side's `DiffResult`.
        fn diff_result(diff: $crate::Diff) -> DiffResult {
            let detailed_diff = diff.detailed.map(|paths| {
                paths
                    .into_iter()
                    .map(|p| ($entry)(p.path, p.kind))
                    .collect()
            });
            DiffResult {
                changes: diff.changes,
                replace_keys: diff.replace_keys,
                changed_keys: diff.changed_keys,
                detailed_diff,
                delete_before_replace: diff.delete_before_replace,
                ..DiffResult::default()
            }
        }

        /// A failure of the test provider's logic as this side's error.
        fn failure(failure: $crate::Failure<$value>) -> $error {
            // The engine's PartialState has fields the SDK's lacks (the provider's reasons).
            #[allow(clippy::needless_update)]
            let partial = failure.partial.map(|p| PartialState {
                id: p.id,
                inputs: p.inputs.into_iter().collect(),
                outputs: p.outputs.into_iter().collect(),
                ..PartialState::default()
            });
            $error::Failed {
                message: failure.message,
                partial: partial.map(Box::new),
            }
        }
    };
}

/// One resource in the cloud.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<V> {
    pub name: String,
    pub resource_type: String,
    pub inputs: Map<V>,
    pub outputs: Map<V>,
}

/// The counters behind generated IDs and names, one per resource name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// Creates: IDs `<name>-<n>`, outputs `out: <name>-out-<n>`.
    Creates,
    /// Auto-names `<name>-gen<n>`.
    Generated,
}

impl Counter {
    pub fn as_str(self) -> &'static str {
        match self {
            Counter::Creates => "creates",
            Counter::Generated => "generated",
        }
    }
}

/// Where the provider keeps its resources and counters and finds the deployment's behaviour.
/// Errors are messages (a file the component cannot read); the operation fails with them.
pub trait Cloud: Values {
    fn behaviour(&self) -> Result<ProviderSpec, String>;
    /// Increments `counter` for resource `name`; the first call returns 1.
    fn next(&self, counter: Counter, name: &str) -> Result<u64, String>;
    fn get(&self, id: &str) -> Result<Option<Entry<Self::Value>>, String>;
    /// Adds or replaces the resource `id`.
    fn put(&self, id: &str, entry: Entry<Self::Value>) -> Result<(), String>;
    /// Removes the resource `id`, if there is one.
    fn remove(&self, id: &str) -> Result<(), String>;
}

/// Why an operation failed, and what it left behind when it acted first (`partial`).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure<V> {
    pub message: String,
    pub partial: Option<Box<Partial<V>>>,
}

/// The resource a failed operation left: its ID, inputs and outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial<V> {
    pub id: String,
    pub inputs: Map<V>,
    pub outputs: Map<V>,
}

impl<V> Failure<V> {
    /// A failure after acting: the resource `id` is left with these inputs and outputs.
    fn partial(message: String, id: String, inputs: Map<V>, outputs: Map<V>) -> Failure<V> {
        let partial = Partial {
            id,
            inputs,
            outputs,
        };
        Failure {
            message,
            partial: Some(Box::new(partial)),
        }
    }
}

impl<V> From<String> for Failure<V> {
    fn from(message: String) -> Self {
        Failure {
            message,
            partial: None,
        }
    }
}

/// The result of an operation of the provider whose cloud is `C`.
pub type Outcome<T, C> = Result<T, Failure<<C as Values>::Value>>;

/// What a diff found.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    pub changes: DiffChanges,
    pub replace_keys: Vec<String>,
    pub changed_keys: Vec<String>,
    /// Every changed path (`tags.env`, `ports[0]`), in the order of the old keys, then the new.
    pub detailed: Option<Vec<PathDiff>>,
    pub delete_before_replace: bool,
}

/// One entry of a detailed diff (a replacing kind when its top-level key is a replace key).
#[derive(Debug, Clone, PartialEq)]
pub struct PathDiff {
    pub path: String,
    pub kind: DiffKind,
}

fn behaviour<C: Cloud>(cloud: &C, name: &str) -> Outcome<Behaviour, C> {
    Ok(cloud.behaviour()?.for_resource(name))
}

/// DiffConfig: the changed keys; those in `configReplaceKeys` (default `region`) replace.
pub fn diff_config<C: Cloud>(
    cloud: &C,
    olds: &Map<C::Value>,
    news: &Map<C::Value>,
) -> Outcome<Diff, C> {
    let replace_on = cloud
        .behaviour()?
        .config_replace_keys
        .unwrap_or_else(|| vec!["region".to_owned()]);
    let changed = changed_keys::<C>(olds, news);
    Ok(Diff {
        changes: changes(&changed),
        replace_keys: among(&changed, &replace_on),
        changed_keys: changed,
        detailed: None,
        delete_before_replace: false,
    })
}

/// Check: the news and the failures `checkFailures` lists, or else the news with a generated
/// `name` when `autoName` asks for one (the olds' name, when Check gets one).
pub fn check<C: Cloud>(
    cloud: &C,
    name: &str,
    olds: &Map<C::Value>,
    mut news: Map<C::Value>,
) -> Outcome<(Map<C::Value>, Vec<CheckFailureSpec>), C> {
    let behaviour = behaviour(cloud, name)?;
    if let Some(failures) = behaviour.check_failures {
        return Ok((news, failures));
    }
    if behaviour.auto_name == Some(true) && !news.contains_key("name") {
        let generated = match olds.get("name") {
            Some(old) => old.clone(),
            None => format!("{name}-gen{}", cloud.next(Counter::Generated, name)?).into(),
        };
        news.insert("name".into(), generated);
    }
    Ok((news, Vec::new()))
}

/// Diff: the changed keys, those in `replaceOn` to replace (delete first with
/// `deleteBeforeReplace`), and every changed path; with `diff: unknown` only the replacement.
pub fn diff<C: Cloud>(
    cloud: &C,
    name: &str,
    olds: &Map<C::Value>,
    news: &Map<C::Value>,
) -> Outcome<Diff, C> {
    let behaviour = behaviour(cloud, name)?;
    let changed = changed_keys::<C>(olds, news);
    let replace = among(&changed, &behaviour.replace_on.unwrap_or_default());
    let delete_before_replace =
        behaviour.delete_before_replace == Some(true) && !replace.is_empty();
    if behaviour.diff.as_deref() == Some("unknown") {
        return Ok(Diff {
            changes: DiffChanges::Unknown,
            replace_keys: replace,
            changed_keys: Vec::new(),
            detailed: None,
            delete_before_replace,
        });
    }
    let mut paths = Vec::new();
    for key in olds
        .keys()
        .chain(news.keys().filter(|k| !olds.contains_key(*k)))
    {
        changed_paths::<C>(key, olds.get(key), news.get(key), &mut paths);
    }
    for path in &mut paths {
        let top = path.path.split(['.', '[']).next().unwrap_or_default();
        if replace.iter().any(|k| k == top) {
            path.kind = path.kind.with_replace();
        }
    }
    Ok(Diff {
        changes: changes(&changed),
        replace_keys: replace,
        changed_keys: changed,
        detailed: Some(paths),
        delete_before_replace,
    })
}

/// Create, or in a `preview` what it would return: the properties without secrets plus `out`
/// (`<name>-out-<n>`; unknown in a preview), kept in the cloud as `<name>-<n>`. `failCreate`
/// fails it (after creating, with `partial`); `badOutput` adds the output `bad`.
pub fn create<C: Cloud>(
    cloud: &C,
    name: &str,
    resource_type: &str,
    properties: Map<C::Value>,
    preview: bool,
) -> Outcome<(String, Map<C::Value>), C> {
    let behaviour = behaviour(cloud, name)?;
    let mut outputs = strip_secrets::<C>(&properties);
    if preview {
        outputs.insert("out".into(), C::UNKNOWN);
        return Ok((String::new(), outputs));
    }
    if let Some(message) = &behaviour.fail_create
        && behaviour.partial != Some(true)
    {
        return Err(message.clone().into());
    }
    let n = cloud.next(Counter::Creates, name)?;
    let id = format!("{name}-{n}");
    outputs.insert("out".into(), format!("{name}-out-{n}").into());
    let entry = Entry {
        name: name.to_owned(),
        resource_type: resource_type.to_owned(),
        inputs: strip_secrets::<C>(&properties),
        outputs: outputs.clone(),
    };
    cloud.put(&id, entry)?;
    if let Some(message) = behaviour.fail_create {
        return Err(Failure::partial(message, id, properties, outputs));
    }
    with_bad_output::<C>(&behaviour, &mut outputs);
    Ok((id, outputs))
}

/// Read: the resource as the cloud has it (`None`: gone); `failRead` fails it.
pub fn read<C: Cloud>(cloud: &C, name: &str, id: &str) -> Outcome<Option<Entry<C::Value>>, C> {
    if let Some(message) = behaviour(cloud, name)?.fail_read {
        return Err(message.into());
    }
    Ok(cloud.get(id)?)
}

/// Update, or in a `preview` what it would return: the news without secrets plus the old `out`.
/// `failUpdate` fails it (previews too; after updating, with `partial`); `badOutput` adds `bad`.
pub fn update<C: Cloud>(
    cloud: &C,
    urn: &str,
    name: &str,
    id: &str,
    old_outputs: &Map<C::Value>,
    news: Map<C::Value>,
    preview: bool,
) -> Outcome<Map<C::Value>, C> {
    let behaviour = behaviour(cloud, name)?;
    if let Some(message) = &behaviour.fail_update
        && behaviour.partial != Some(true)
    {
        return Err(message.clone().into());
    }
    let mut outputs = strip_secrets::<C>(&news);
    let out = old_outputs.get("out").map_or(C::UNKNOWN, C::unsecret);
    outputs.insert("out".into(), out);
    if preview {
        return Ok(outputs);
    }
    let Some(mut entry) = cloud.get(id)? else {
        return Err(format!("cannot update {urn}: no resource with ID {id} exists").into());
    };
    entry.inputs = strip_secrets::<C>(&news);
    entry.outputs = outputs.clone();
    cloud.put(id, entry)?;
    if let Some(message) = behaviour.fail_update {
        return Err(Failure::partial(message, id.to_owned(), news, outputs));
    }
    with_bad_output::<C>(&behaviour, &mut outputs);
    Ok(outputs)
}

/// Delete: the resource leaves the cloud; `failDelete` fails it.
pub fn delete<C: Cloud>(cloud: &C, name: &str, id: &str) -> Outcome<(), C> {
    if let Some(message) = behaviour(cloud, name)?.fail_delete {
        return Err(message.into());
    }
    Ok(cloud.remove(id)?)
}

/// Adds the output `bad` a behaviour asks for (`nan`, `inf`): a number no state can store.
fn with_bad_output<C: Values>(behaviour: &Behaviour, outputs: &mut Map<C::Value>) {
    let bad = match behaviour.bad_output.as_deref() {
        Some("nan") => f64::NAN,
        Some("inf") => f64::INFINITY,
        _ => return,
    };
    outputs.insert("bad".into(), bad.into());
}

fn strip_secrets<C: Values>(map: &Map<C::Value>) -> Map<C::Value> {
    map.iter()
        .map(|(k, v)| (k.clone(), C::unsecret(v)))
        .collect()
}

fn changes(changed: &[String]) -> DiffChanges {
    if changed.is_empty() {
        DiffChanges::None
    } else {
        DiffChanges::Some
    }
}

/// The keys of `keys` that `wanted` lists.
fn among(keys: &[String], wanted: &[String]) -> Vec<String> {
    keys.iter()
        .filter(|k| wanted.contains(k))
        .cloned()
        .collect()
}

/// Whether a value changed: an unknown new value always has; secrecy alone does not count.
fn differs<C: Values>(old: &C::Value, new: &C::Value) -> bool {
    C::contains_unknowns(new) || C::unsecret(old) != C::unsecret(new)
}

/// Top-level keys whose values differ: the news' in order, then those only the olds have.
fn changed_keys<C: Values>(olds: &Map<C::Value>, news: &Map<C::Value>) -> Vec<String> {
    let mut keys: Vec<String> = news
        .iter()
        .filter(|(k, new)| olds.get(*k).is_none_or(|old| differs::<C>(old, new)))
        .map(|(k, _)| k.clone())
        .collect();
    keys.extend(olds.keys().filter(|k| !news.contains_key(*k)).cloned());
    keys
}

/// The changed paths between two values, as a detailed diff reports them: objects and arrays
/// are compared element by element (`tags.env`, `ports[0]`), anything else as a whole.
fn changed_paths<C: Values>(
    prefix: &str,
    old: Option<&C::Value>,
    new: Option<&C::Value>,
    out: &mut Vec<PathDiff>,
) {
    let kind = match (old, new) {
        (None, None) => return,
        (None, Some(_)) => DiffKind::Add,
        (Some(_), None) => DiffKind::Delete,
        (Some(old), Some(new)) => {
            if let (Some(o), Some(n)) = (C::as_object(old), C::as_object(new)) {
                let (o, n) = (&o, &n);
                for key in o.keys().chain(n.keys().filter(|k| !o.contains_key(*k))) {
                    let path = if prefix.is_empty() {
                        key.clone()
                    } else {
                        format!("{prefix}.{key}")
                    };
                    changed_paths::<C>(&path, o.get(key), n.get(key), out);
                }
                return;
            }
            if let (Some(o), Some(n)) = (C::as_array(old), C::as_array(new)) {
                for i in 0..o.len().max(n.len()) {
                    changed_paths::<C>(&format!("{prefix}[{i}]"), o.get(i), n.get(i), out);
                }
                return;
            }
            if !differs::<C>(old, new) {
                return;
            }
            DiffKind::Update
        }
    };
    out.push(PathDiff {
        path: prefix.to_owned(),
        kind,
    });
}
