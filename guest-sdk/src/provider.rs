//! The [`Provider`] trait a provider implements, its request and result types, and the default
//! diff ([`diff_inputs`]).
//!
//! # Naming
//!
//! Every request names its properties by one rule:
//!
//! * `inputs`: the inputs the call is about, new from the program (checked by `check` before
//!   `diff`, `create` and `update` see them). In a preview they may hold unknowns.
//! * `old_inputs` / `old_outputs`: what the state recorded for the resource (its last checked
//!   inputs and its outputs). Never unknown.
//!
//! Results say `inputs` and `outputs` for what they return. Pulumi's provider protocol names
//! these per call, and the WIT records (the wire contract) mostly keep Pulumi's names:
//!
//! | request | here | Pulumi (`pulumirpc`) | WIT |
//! | --- | --- | --- | --- |
//! | [`CheckRequest`] | `inputs`, `old_inputs` | `news`, `olds` | `news`, `olds` |
//! | [`DiffRequest`] | `inputs`, `old_inputs`, `old_outputs` | `news`, `old_inputs`, `olds` | `news`, `old-inputs`, `old-outputs` |
//! | [`CreateRequest`] | `inputs` | `properties` | `properties` |
//! | [`ReadRequest`] | `old_inputs`, `old_outputs` | `inputs`, `properties` | `inputs`, `state` |
//! | [`UpdateRequest`] | `inputs`, `old_inputs`, `old_outputs` | `news`, `old_inputs`, `olds` | `news`, `old-inputs`, `old-outputs` |
//! | [`DeleteRequest`] | `old_inputs`, `old_outputs` | `old_inputs`, `properties` | `inputs`, `outputs` |
//!
//! For `check_config` / `diff_config` the inputs are the provider's configuration.
//!
//! ```
//! use cairn_sdk::{DiffRequest, diff_inputs, props};
//!
//! let request = DiffRequest {
//!     old_inputs: props! {"size" => 1, "name" => "a"}.into(),
//!     inputs: props! {"size" => 2, "name" => "a"}.into(),
//!     ..DiffRequest::default()
//! };
//! let diff = diff_inputs(&request.old_inputs, &request.inputs, &["size"], &[]);
//! assert_eq!(diff.replace_keys, ["size"]);
//! ```

use indexmap::IndexMap;

use crate::error::{CheckFailure, Error, Result};
use crate::properties::Properties;
use crate::urn;
use crate::value::{PropertyMap, Value};
use crate::wire::{Node, kind};

/// URNs that properties depend on, by property name.
pub type Dependencies = IndexMap<String, Vec<String>>;

/// `check` / `check-config`: validate inputs and apply defaults.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckRequest {
    pub urn: String,
    /// The last recorded inputs; empty for a new resource or a replacement.
    pub old_inputs: Properties,
    /// The new inputs, as the program gave them; may contain unknowns.
    pub inputs: Properties,
    /// A seed for generated values, stable for the resource.
    pub random_seed: Vec<u8>,
}

/// The checked inputs and any validation failures.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckResult {
    pub inputs: Properties,
    pub failures: Vec<CheckFailure>,
}

impl CheckResult {
    /// Inputs accepted as they are.
    pub fn ok(inputs: impl Into<Properties>) -> CheckResult {
        CheckResult {
            inputs: inputs.into(),
            failures: Vec::new(),
        }
    }
}

// How a diff describes changes is shared with the engine (`cairn-wire`).
pub use cairn_wire::{DiffChanges, DiffKind};

/// One entry of a detailed diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyDiff {
    /// A property path, e.g. `tags.env`.
    pub path: String,
    pub kind: DiffKind,
    /// True when the old value is from the old inputs rather than the old state.
    pub input_diff: bool,
}

/// `diff` / `diff-config`: compare recorded state with new inputs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiffRequest {
    pub urn: String,
    pub id: String,
    /// The recorded inputs.
    pub old_inputs: Properties,
    /// The recorded outputs.
    pub old_outputs: Properties,
    /// The new inputs, from `check`; may contain unknowns.
    pub inputs: Properties,
    /// Property paths whose changes are to be ignored.
    pub ignore_changes: Vec<String>,
}

/// What changed and whether it needs replacement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiffResult {
    pub changes: DiffChanges,
    /// Top-level input properties whose change requires replacement.
    pub replace_keys: Vec<String>,
    /// Properties guaranteed not to change.
    pub stable_keys: Vec<String>,
    /// Top-level input properties that changed.
    pub changed_keys: Vec<String>,
    pub detailed_diff: Option<Vec<PropertyDiff>>,
    /// The resource must be deleted before its replacement is created.
    pub delete_before_replace: bool,
}

/// `create` / `preview_create`: the resource to make (or, in a preview, to describe).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateRequest {
    pub urn: String,
    /// The checked inputs (what `check` returned); in a preview they may contain unknowns.
    pub inputs: Properties,
    /// Seconds; 0 means the provider's default.
    pub timeout: f64,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateResult {
    /// The new resource's ID; empty (and ignored) in a preview.
    pub id: String,
    pub outputs: Properties,
}

/// `read`: the resource as recorded, to compare with what it is now. `old_inputs` and
/// `old_outputs` are empty when importing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadRequest {
    pub urn: String,
    pub id: String,
    /// The recorded inputs.
    pub old_inputs: Properties,
    /// The recorded outputs (the state).
    pub old_outputs: Properties,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReadResult {
    /// Empty when the resource no longer exists.
    pub id: String,
    pub inputs: Properties,
    pub outputs: Properties,
}

impl ReadResult {
    /// The resource is gone (deleted out of band).
    pub fn gone() -> ReadResult {
        ReadResult::default()
    }
}

/// `update` / `preview_update`: the resource to change in place (or, in a preview, to
/// describe changed).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpdateRequest {
    pub urn: String,
    pub id: String,
    /// The recorded inputs.
    pub old_inputs: Properties,
    /// The recorded outputs.
    pub old_outputs: Properties,
    /// The new checked inputs (what `check` returned); in a preview they may contain unknowns.
    pub inputs: Properties,
    /// Seconds; 0 means the provider's default.
    pub timeout: f64,
    pub ignore_changes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpdateResult {
    pub outputs: Properties,
}

/// `delete`: the resource as recorded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeleteRequest {
    pub urn: String,
    pub id: String,
    /// The recorded inputs.
    pub old_inputs: Properties,
    /// The recorded outputs.
    pub old_outputs: Properties,
    /// Seconds; 0 means the provider's default.
    pub timeout: f64,
}

/// A provider function call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InvokeRequest {
    pub token: String,
    pub args: Properties,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct InvokeResult {
    pub outputs: Properties,
    pub failures: Vec<CheckFailure>,
}

/// A component method call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallRequest {
    pub token: String,
    pub args: Properties,
    pub arg_dependencies: Dependencies,
    pub project: String,
    pub stack: String,
    pub dry_run: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallResult {
    pub outputs: Properties,
    pub output_dependencies: Dependencies,
    pub failures: Vec<CheckFailure>,
}

/// Build a component resource (register its children with [`crate::engine`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConstructRequest {
    pub project: String,
    pub stack: String,
    pub resource_type: String,
    pub name: String,
    pub parent: Option<String>,
    pub inputs: Properties,
    pub input_dependencies: Dependencies,
    pub dependencies: Vec<String>,
    pub protect: bool,
    /// Provider references by package.
    pub providers: IndexMap<String, String>,
    pub dry_run: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConstructResult {
    pub urn: Option<String>,
    pub state: Properties,
    pub state_dependencies: Dependencies,
}

macro_rules! urn_accessors {
    ($($t:ty),*) => {$(
        impl $t {
            /// The resource's type token, from its URN (`random:index:RandomPet`).
            pub fn resource_type(&self) -> &str {
                urn::resource_type(&self.urn).unwrap_or("")
            }

            /// The resource's name, from its URN.
            pub fn name(&self) -> &str {
                urn::name(&self.urn).unwrap_or("")
            }
        }
    )*};
}
urn_accessors!(
    CheckRequest,
    DiffRequest,
    CreateRequest,
    ReadRequest,
    UpdateRequest,
    DeleteRequest
);

/// A provider. Only `create`, `update` and `delete` are required.
///
/// The host calls one method at a time on an instance (component instances are not
/// re-entrant), after `configure` for every resource operation.
///
/// `create` and `update` are called only to act. In a preview (`cairn preview`, or the plan
/// `cairn up` shows before asking) the SDK calls [`Provider::preview_create`] and
/// [`Provider::preview_update`] instead, which must not act; their defaults describe the
/// result from the inputs alone, so a provider that implements only `create` and `update`
/// never acts in a preview. Defaults:
///
/// | method | default |
/// | --- | --- |
/// | `get_schema` | `None`: the schema embedded in the manifest |
/// | `check_config`, `check` | accept the inputs as they are |
/// | `diff_config` | [`diff_inputs`] with no replacements |
/// | `diff` | [`diff_inputs`] with [`Provider::replace_on_change`] |
/// | `configure` | store nothing |
/// | `preview_create` | the inputs as the outputs, no ID |
/// | `preview_update` | the new inputs as the outputs |
/// | `read` | the recorded state unchanged (no drift detection) |
/// | `construct`, `invoke`, `call` | [`Error::Unimplemented`] |
/// | `cancel` | nothing |
pub trait Provider: 'static {
    /// The package schema as JSON text; `None` returns the manifest's `schema`.
    fn get_schema(&self) -> Result<Option<String>> {
        Ok(None)
    }

    /// Validates the provider's configuration.
    fn check_config(&self, request: CheckRequest) -> Result<CheckResult> {
        Ok(CheckResult::ok(request.inputs))
    }

    /// Compares configurations; a replacement here replaces every resource of the provider.
    fn diff_config(&self, request: DiffRequest) -> Result<DiffResult> {
        Ok(diff_inputs(
            &request.old_inputs,
            &request.inputs,
            &[],
            &request.ignore_changes,
        ))
    }

    /// Applies checked configuration (may contain unknowns in a preview).
    fn configure(&mut self, inputs: PropertyMap, preview: bool) -> Result<()> {
        let _ = (inputs, preview);
        Ok(())
    }

    /// Validates a resource's inputs and applies defaults.
    fn check(&self, request: CheckRequest) -> Result<CheckResult> {
        Ok(CheckResult::ok(request.inputs))
    }

    /// Top-level input properties of `resource_type` whose change forces replacement;
    /// `"*"` means all of them. Used by the default [`Provider::diff`].
    fn replace_on_change(&self, resource_type: &str) -> &[&str] {
        let _ = resource_type;
        &[]
    }

    /// Whether a replacement of `resource_type` must delete the old resource first (e.g. it
    /// has a unique name). Used by the default [`Provider::diff`].
    fn delete_before_replace(&self, resource_type: &str) -> bool {
        let _ = resource_type;
        false
    }

    /// Compares the recorded inputs with the new ones; see [`diff_inputs`].
    fn diff(&self, request: DiffRequest) -> Result<DiffResult> {
        let resource_type = request.resource_type();
        let mut result = diff_inputs(
            &request.old_inputs,
            &request.inputs,
            self.replace_on_change(resource_type),
            &request.ignore_changes,
        );
        result.delete_before_replace =
            !result.replace_keys.is_empty() && self.delete_before_replace(resource_type);
        Ok(result)
    }

    /// Creates a resource. Never called in a preview: see [`Provider::preview_create`].
    fn create(&self, request: CreateRequest) -> Result<CreateResult>;

    /// In a preview, instead of `create`: describes the resource `create` would make, without
    /// acting (no side effects: write nothing, call no API that changes anything). The
    /// default returns the inputs as the outputs, with no ID. Override it to add the outputs
    /// `create` computes, as [`Value::Unknown`] where only creating tells (a generated value,
    /// an ID assigned by a service).
    fn preview_create(&self, request: CreateRequest) -> Result<CreateResult> {
        Ok(CreateResult {
            id: String::new(),
            outputs: request.inputs,
        })
    }

    /// Reads the resource's current state; the default returns the recorded state.
    fn read(&self, request: ReadRequest) -> Result<ReadResult> {
        Ok(ReadResult {
            id: request.id,
            inputs: request.old_inputs,
            outputs: request.old_outputs,
        })
    }

    /// Updates a resource in place. Never called in a preview: see
    /// [`Provider::preview_update`].
    fn update(&self, request: UpdateRequest) -> Result<UpdateResult>;

    /// In a preview, instead of `update`: describes the resource `update` would leave, without
    /// acting. The default returns the new inputs as the outputs. Override it to carry over or
    /// compute the outputs `update` would (unknown where only updating tells).
    fn preview_update(&self, request: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult {
            outputs: request.inputs,
        })
    }

    /// Deletes a resource.
    fn delete(&self, request: DeleteRequest) -> Result<()>;

    /// Builds a component resource.
    fn construct(&self, request: ConstructRequest) -> Result<ConstructResult> {
        let _ = request;
        Err(Error::unimplemented("construct"))
    }

    /// Runs a provider function.
    fn invoke(&self, request: InvokeRequest) -> Result<InvokeResult> {
        let _ = request;
        Err(Error::unimplemented("invoke"))
    }

    /// Runs a component method.
    fn call(&self, request: CallRequest) -> Result<CallResult> {
        let _ = request;
        Err(Error::unimplemented("call"))
    }

    /// Asks the provider to stop outstanding work; advisory.
    fn cancel(&self) {}
}

/// Compares top-level properties of the recorded inputs (`old_inputs`) and the new ones.
///
/// A key changed when it was added, removed or its value differs ([`Value::same_as`]: secret
/// and output markers are ignored, unknowns always differ; null counts as absent). Changed keys
/// listed in `replace` (or all of them when `replace` contains `"*"`) are replace keys. Keys in
/// `ignore` (top-level paths) are skipped; nested ignore paths are applied by the engine before
/// `check`. The result has a detailed diff of input diffs, one entry per changed key.
///
/// Properties still in the host's wire form are compared in place, without decoding; identical
/// tables (an unchanged resource) are compared as blocks.
pub fn diff_inputs(
    old_inputs: &Properties,
    inputs: &Properties,
    replace: &[&str],
    ignore: &[String],
) -> DiffResult {
    let mut diff = Differ {
        replace,
        ignore,
        result: DiffResult::default(),
        detailed: Vec::new(),
    };
    // The common case, an unchanged resource: the host encoded equal maps into identical
    // tables, compared as blocks without reading a node.
    if old_inputs.same_known_table(inputs) {
        return diff.finish();
    }
    let same_node = |a: Node<'_>, b: Node<'_>| a.same_as(b);
    match (old_inputs.object(), inputs.object()) {
        (Some(old), Some(new)) => {
            // Keys are compared as bytes and only read as text when they changed.
            for (i, a) in members(old) {
                let b = new.and_then(|o| o.member_bytes(a.key_bytes(), i));
                diff.key(
                    a.key_bytes(),
                    || a.key(),
                    present_node(a),
                    b.and_then(present_node),
                    same_node,
                );
            }
            for (i, b) in members(new) {
                if old.and_then(|o| o.member_bytes(b.key_bytes(), i)).is_none() {
                    diff.key(b.key_bytes(), || b.key(), None, present_node(b), same_node);
                }
            }
        }
        _ => {
            let same_value = |a: &Value, b: &Value| a.same_as(b);
            for (key, a) in old_inputs.iter() {
                let b = inputs.get(key).and_then(present);
                diff.key(key.as_bytes(), || key, present(a), b, same_value);
            }
            for (key, b) in inputs.iter() {
                if !old_inputs.contains_key(key) {
                    diff.key(key.as_bytes(), || key, None, present(b), same_value);
                }
            }
        }
    }
    diff.finish()
}

/// An undecoded object's members with their positions (none for an empty table).
fn members(object: Option<Node<'_>>) -> impl Iterator<Item = (usize, Node<'_>)> {
    object.into_iter().flat_map(Node::children).enumerate()
}

/// A node unless null.
fn present_node(node: Node<'_>) -> Option<Node<'_>> {
    (node.kind() != kind::NULL).then_some(node)
}

/// Collects changed keys in the order they are found.
struct Differ<'a> {
    replace: &'a [&'a str],
    ignore: &'a [String],
    result: DiffResult,
    detailed: Vec<PropertyDiff>,
}

impl Differ<'_> {
    fn key<'k, T: Copy>(
        &mut self,
        bytes: &[u8],
        text: impl FnOnce() -> &'k str,
        old: Option<T>,
        new: Option<T>,
        same: impl Fn(T, T) -> bool,
    ) {
        if self.ignore.iter().any(|p| p.as_bytes() == bytes) {
            return;
        }
        let kind = match (old, new) {
            (None, None) => return,
            (None, Some(_)) => DiffKind::Add,
            (Some(_), None) => DiffKind::Delete,
            (Some(a), Some(b)) if same(a, b) => return,
            (Some(_), Some(_)) => DiffKind::Update,
        };
        let key = text();
        let forces = self.replace.contains(&"*") || self.replace.contains(&key);
        self.result.changed_keys.push(key.to_owned());
        if forces {
            self.result.replace_keys.push(key.to_owned());
        }
        self.detailed.push(PropertyDiff {
            path: key.to_owned(),
            kind: if forces { kind.with_replace() } else { kind },
            input_diff: true,
        });
    }

    fn finish(mut self) -> DiffResult {
        self.result.changes = if self.result.changed_keys.is_empty() {
            DiffChanges::None
        } else {
            DiffChanges::Some
        };
        self.result.detailed_diff = Some(self.detailed);
        self.result
    }
}

/// A value unless null.
fn present(value: &Value) -> Option<&Value> {
    (!matches!(value, Value::Null)).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{props, secret, wire};

    /// Diffs in both ways (decoded maps and tables compared in place) and checks they agree.
    fn diff(
        olds: PropertyMap,
        news: PropertyMap,
        replace: &[&str],
        ignore: &[String],
    ) -> DiffResult {
        let decoded = diff_inputs(&olds.clone().into(), &news.clone().into(), replace, ignore);
        let host = |m: &PropertyMap| Properties::from_wire(wire::encode_map(m));
        let in_place = diff_inputs(&host(&olds), &host(&news), replace, ignore);
        assert_eq!(decoded, in_place, "{olds:?} → {news:?}");
        // One side decoded and the other not takes the decoded way.
        let mixed = diff_inputs(&olds.into(), &host(&news), replace, ignore);
        assert_eq!(decoded, mixed);
        decoded
    }

    #[test]
    fn nothing_changed() {
        let olds = props! {"a" => 1, "b" => "x", "n" => Value::Null};
        let news = props! {"b" => secret("x"), "a" => 1.0};
        let r = diff(olds, news, &["*"], &[]);
        assert_eq!(r.changes, DiffChanges::None);
        assert!(r.changed_keys.is_empty() && r.replace_keys.is_empty());
        assert_eq!(r.detailed_diff, Some(vec![]));
    }

    #[test]
    fn identical_tables_differ_only_in_their_unknowns() {
        let map = props! {"a" => 1, "s" => "x", "o" => props! {"n" => Value::Null}};
        let r = diff(map.clone(), map, &["*"], &[]);
        assert_eq!(r.changes, DiffChanges::None);
        assert_eq!(r.detailed_diff, Some(vec![]));
        let unknown = props! {"a" => 1, "u" => Value::Unknown};
        let r = diff(unknown.clone(), unknown, &[], &[]);
        assert_eq!(r.changes, DiffChanges::Some);
        assert_eq!(r.changed_keys, ["u"]);
    }

    #[test]
    fn changes_and_replacements() {
        let olds = props! {"keep" => 1, "update" => 1, "gone" => true, "forced" => "a"};
        let news = props! {"keep" => 1, "update" => 2, "forced" => "b", "new" => Value::Unknown};
        let r = diff(olds, news, &["forced", "new"], &[]);
        assert_eq!(r.changes, DiffChanges::Some);
        assert_eq!(r.changed_keys, ["update", "gone", "forced", "new"]);
        assert_eq!(r.replace_keys, ["forced", "new"]);
        let kinds: Vec<(String, DiffKind)> = r
            .detailed_diff
            .unwrap()
            .into_iter()
            .map(|d| (d.path, d.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("update".into(), DiffKind::Update),
                ("gone".into(), DiffKind::Delete),
                ("forced".into(), DiffKind::UpdateReplace),
                ("new".into(), DiffKind::AddReplace),
            ]
        );
    }

    #[test]
    fn unknowns_always_differ_and_ignored_keys_do_not() {
        let olds = props! {"a" => "x", "b" => "y"};
        let news = props! {"a" => Value::Unknown, "b" => "z"};
        let r = diff(olds, news, &[], &["b".to_owned()]);
        assert_eq!(r.changed_keys, ["a"]);
        assert!(r.replace_keys.is_empty());
    }

    #[test]
    fn reordered_missing_null_and_nested_keys() {
        let cases: Vec<(PropertyMap, PropertyMap, Vec<&str>)> = vec![
            (props! {}, props! {}, vec![]),
            (
                props! {"a" => 1, "b" => 2},
                props! {"b" => 2, "a" => 1},
                vec![],
            ),
            (props! {"a" => Value::Null}, props! {}, vec![]),
            (props! {}, props! {"a" => Value::Null}, vec![]),
            (props! {"a" => 1}, props! {"a" => Value::Null}, vec!["a"]),
            (props! {"a" => secret(Value::Null)}, props! {}, vec!["a"]),
            (
                props! {"a" => props! {"x" => 1, "y" => 2}},
                props! {"a" => props! {"y" => 2, "x" => 1}},
                vec![],
            ),
            (
                props! {"a" => props! {"x" => 1}},
                props! {"a" => props! {"x" => 1, "y" => Value::Null}},
                vec!["a"],
            ),
            (
                props! {"a" => vec![Value::from(1)], "z" => 1},
                props! {"z" => 2, "a" => vec![Value::from(1)], "n" => 0},
                vec!["z", "n"],
            ),
        ];
        for (olds, news, changed) in cases {
            assert_eq!(diff(olds, news, &[], &[]).changed_keys, changed);
        }
    }

    struct Forced;
    impl Provider for Forced {
        fn create(&self, _: CreateRequest) -> Result<CreateResult> {
            Ok(CreateResult::default())
        }
        fn update(&self, _: UpdateRequest) -> Result<UpdateResult> {
            Ok(UpdateResult::default())
        }
        fn delete(&self, _: DeleteRequest) -> Result<()> {
            Ok(())
        }
        fn replace_on_change(&self, resource_type: &str) -> &[&str] {
            match resource_type {
                "p:index:Named" => &["name"],
                _ => &[],
            }
        }
        fn delete_before_replace(&self, _: &str) -> bool {
            true
        }
    }

    #[test]
    fn default_diff_uses_the_hooks() {
        let request = |ty: &str| DiffRequest {
            urn: format!("urn:pulumi:dev::proj::{ty}::r"),
            old_inputs: props! {"name" => "a", "size" => 1}.into(),
            inputs: props! {"name" => "b", "size" => 2}.into(),
            ..DiffRequest::default()
        };
        let r = Forced.diff(request("p:index:Named")).unwrap();
        assert_eq!(r.replace_keys, ["name"]);
        assert!(r.delete_before_replace);
        let r = Forced.diff(request("p:index:Other")).unwrap();
        assert!(r.replace_keys.is_empty());
        assert!(!r.delete_before_replace);
        assert_eq!(r.changed_keys, ["name", "size"]);
    }

    #[test]
    fn defaults() {
        let read = Forced
            .read(ReadRequest {
                urn: "u".into(),
                id: "id1".into(),
                old_inputs: props! {"a" => 1}.into(),
                old_outputs: props! {"a" => 1, "out" => 2}.into(),
            })
            .unwrap();
        assert_eq!(read.id, "id1");
        assert_eq!(read.outputs, props! {"a" => 1, "out" => 2});
        assert_eq!(Forced.get_schema(), Ok(None));
        assert_eq!(
            Forced.construct(ConstructRequest::default()),
            Err(Error::Unimplemented("construct".into()))
        );
        assert_eq!(
            Forced.invoke(InvokeRequest::default()),
            Err(Error::Unimplemented("invoke".into()))
        );
        assert_eq!(
            Forced.call(CallRequest::default()),
            Err(Error::Unimplemented("call".into()))
        );
        let inputs = props! {"x" => Value::Unknown};
        let checked = Forced
            .check(CheckRequest {
                inputs: inputs.clone().into(),
                ..CheckRequest::default()
            })
            .unwrap();
        assert_eq!(checked, CheckResult::ok(inputs));
    }
}
