//! Pure diff logic: property-level changes between two property maps, and the step generator's
//! decision of what to do with a resource given its diff.

use crate::path::{PathElement, PropertyPath};
use crate::value::{PropertyMap, PropertyValue};

use super::super::events::{ChangeKind, PropertyChange};
use super::super::provider::{DiffChanges, DiffKind, DiffResult};

/// The property-level changes from `old` to `new`, depth first, in key order.
///
/// Objects are compared key by key and arrays element by element; any other difference is an
/// update of the value as a whole. Unknown new values count as updates.
pub fn diff_properties(old: &PropertyMap, new: &PropertyMap) -> Vec<PropertyChange> {
    let mut changes = Vec::new();
    diff_maps(&mut Vec::new(), old, new, &mut changes);
    changes
}

fn diff_maps(
    prefix: &mut Vec<PathElement>,
    old: &PropertyMap,
    new: &PropertyMap,
    out: &mut Vec<PropertyChange>,
) {
    for (key, old_value) in old {
        prefix.push(PathElement::Key(key.clone()));
        match new.get(key) {
            None => out.push(change(prefix, ChangeKind::Delete, Some(old_value), None)),
            Some(new_value) => diff_values(prefix, old_value, new_value, out),
        }
        prefix.pop();
    }
    for (key, new_value) in new {
        if !old.contains_key(key) {
            prefix.push(PathElement::Key(key.clone()));
            out.push(change(prefix, ChangeKind::Add, None, Some(new_value)));
            prefix.pop();
        }
    }
}

fn diff_values(
    prefix: &mut Vec<PathElement>,
    old: &PropertyValue,
    new: &PropertyValue,
    out: &mut Vec<PropertyChange>,
) {
    if old == new {
        return;
    }
    match (old, new) {
        (PropertyValue::Object(o), PropertyValue::Object(n)) => diff_maps(prefix, o, n, out),
        (PropertyValue::Array(o), PropertyValue::Array(n)) => {
            for i in 0..o.len().max(n.len()) {
                prefix.push(PathElement::Index(i));
                match (o.get(i), n.get(i)) {
                    (Some(a), Some(b)) => diff_values(prefix, a, b, out),
                    (Some(a), None) => out.push(change(prefix, ChangeKind::Delete, Some(a), None)),
                    (None, Some(b)) => out.push(change(prefix, ChangeKind::Add, None, Some(b))),
                    (None, None) => {}
                }
                prefix.pop();
            }
        }
        // A secret whose contents changed: report it as one opaque update.
        _ => out.push(change(prefix, ChangeKind::Update, Some(old), Some(new))),
    }
}

fn change(
    path: &[PathElement],
    kind: ChangeKind,
    old: Option<&PropertyValue>,
    new: Option<&PropertyValue>,
) -> PropertyChange {
    PropertyChange {
        path: PropertyPath::from(path.to_vec()),
        kind,
        replace: false,
        old: old.cloned(),
        new: new.cloned(),
    }
}

/// The changes a provider's detailed diff describes, with values looked up in the old inputs or
/// outputs and the new inputs.
pub fn changes_from_detailed(
    diff: &DiffResult,
    old_inputs: &PropertyMap,
    old_outputs: &PropertyMap,
    news: &PropertyMap,
) -> Option<Vec<PropertyChange>> {
    let detailed = diff.detailed_diff.as_ref()?;
    let old_inputs = PropertyValue::Object(Box::new(old_inputs.clone()));
    let old_outputs = PropertyValue::Object(Box::new(old_outputs.clone()));
    let news = PropertyValue::Object(Box::new(news.clone()));
    let changes = detailed
        .iter()
        .map(|(path, entry)| {
            let parsed = PropertyPath::parse(path).unwrap_or_else(|_| PropertyPath::key(path));
            let old_root = if entry.input_diff {
                &old_inputs
            } else {
                &old_outputs
            };
            let kind = match entry.kind {
                DiffKind::Add | DiffKind::AddReplace => ChangeKind::Add,
                DiffKind::Delete | DiffKind::DeleteReplace => ChangeKind::Delete,
                DiffKind::Update | DiffKind::UpdateReplace => ChangeKind::Update,
            };
            PropertyChange {
                old: parsed.get(old_root).cloned(),
                new: parsed.get(&news).cloned(),
                path: parsed,
                kind,
                replace: entry.kind.is_replace(),
            }
        })
        .collect();
    Some(changes)
}

/// What the step generator does with a resource that exists in the old state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Same,
    Update,
    Replace {
        delete_before_replace: bool,
        /// Top-level properties that force the replacement (empty for forced replacements).
        keys: Vec<String>,
    },
}

impl Decision {
    pub fn is_replace(&self) -> bool {
        matches!(self, Decision::Replace { .. })
    }
}

/// The inputs to the step generator's diff rules, after the provider's `Diff` (if called).
#[derive(Debug, Clone, Default)]
pub struct DiffFacts<'a> {
    /// `--replace` / `--target-replace` named this resource.
    pub forced_replace: bool,
    /// The resource's provider changed in a way that cannot manage the old resource.
    pub provider_replaced: bool,
    /// The provider's answer, if it was asked.
    pub diff: Option<&'a DiffResult>,
    pub old_inputs: Option<&'a PropertyMap>,
    pub new_inputs: Option<&'a PropertyMap>,
    /// The `replaceOnChanges` option.
    pub replace_on_changes: &'a [PropertyPath],
    /// The `deleteBeforeReplace` option.
    pub delete_before_replace: Option<bool>,
}

/// Applies the spec's diff rules: forced replacement, provider change, the provider's diff (with
/// `DIFF_UNKNOWN` falling back to comparing inputs), `replaceOnChanges`, and the
/// delete-before-replace choice.
pub fn decide(facts: &DiffFacts<'_>) -> Decision {
    let dbr_option = facts.delete_before_replace.unwrap_or(false);
    if facts.forced_replace || facts.provider_replaced {
        let provider_dbr = facts.diff.is_some_and(|d| d.delete_before_replace);
        return Decision::Replace {
            delete_before_replace: dbr_option || provider_dbr,
            keys: vec![],
        };
    }
    let Some(diff) = facts.diff else {
        return Decision::Same;
    };

    // The paths that changed: from the detailed diff, else the changed keys, else (for an
    // unknown answer) the engine's own comparison of inputs.
    let engine_changes = match (facts.old_inputs, facts.new_inputs) {
        (Some(old), Some(new)) => diff_properties(old, new),
        _ => vec![],
    };
    let changed_paths: Vec<PropertyPath> = match (&diff.detailed_diff, diff.changes) {
        (Some(detailed), _) if !detailed.is_empty() => detailed
            .keys()
            .map(|k| PropertyPath::parse(k).unwrap_or_else(|_| PropertyPath::key(k)))
            .collect(),
        (_, DiffChanges::Unknown) => engine_changes.iter().map(|c| c.path.clone()).collect(),
        _ if !diff.changed_keys.is_empty() => {
            diff.changed_keys.iter().map(PropertyPath::key).collect()
        }
        _ => vec![],
    };
    let has_changes = match diff.changes {
        DiffChanges::Some => true,
        DiffChanges::None => false,
        DiffChanges::Unknown => !engine_changes.is_empty(),
    } || diff.requires_replacement();
    if !has_changes {
        return Decision::Same;
    }

    let mut keys: Vec<String> = diff.replace_keys.clone();
    if let Some(detailed) = &diff.detailed_diff {
        for (path, entry) in detailed {
            if entry.kind.is_replace() {
                let top = top_level_key(path);
                if !keys.contains(&top) {
                    keys.push(top);
                }
            }
        }
    }
    for roc in facts.replace_on_changes {
        for changed in &changed_paths {
            if roc.contains(changed) || changed.contains(roc) {
                let top = top_level_key(&changed.to_string());
                if !keys.contains(&top) {
                    keys.push(top);
                }
            }
        }
    }
    if keys.is_empty() {
        Decision::Update
    } else {
        Decision::Replace {
            delete_before_replace: dbr_option || diff.delete_before_replace,
            keys,
        }
    }
}

/// The first element of a property path (`tags` for `tags.env`).
fn top_level_key(path: &str) -> String {
    match PropertyPath::parse(path)
        .ok()
        .and_then(|p| p.elements().first().cloned())
    {
        Some(PathElement::Key(key)) => key,
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy::provider::PropertyDiff;
    use crate::props;
    use indexmap::IndexMap;

    fn paths(changes: &[PropertyChange]) -> Vec<(String, ChangeKind)> {
        changes
            .iter()
            .map(|c| (c.path.to_string(), c.kind))
            .collect()
    }

    #[test]
    fn property_diffs_walk_objects_and_arrays() {
        let old = props! {
            "same" => 1i64,
            "gone" => true,
            "tags" => PropertyValue::from(props! {"env" => "dev", "team" => "a"}),
            "list" => vec![PropertyValue::from(1i64), PropertyValue::from(2i64)],
            "secret" => PropertyValue::secret("a".into()),
        };
        let new = props! {
            "same" => 1i64,
            "tags" => PropertyValue::from(props! {"env" => "prod", "team" => "a", "new" => "x"}),
            "list" => vec![PropertyValue::from(1i64)],
            "secret" => PropertyValue::secret("b".into()),
            "added" => PropertyValue::Computed,
        };
        assert_eq!(
            paths(&diff_properties(&old, &new)),
            [
                ("gone".to_owned(), ChangeKind::Delete),
                ("tags.env".to_owned(), ChangeKind::Update),
                ("tags.new".to_owned(), ChangeKind::Add),
                ("list[1]".to_owned(), ChangeKind::Delete),
                ("secret".to_owned(), ChangeKind::Update),
                ("added".to_owned(), ChangeKind::Add),
            ]
        );
        assert!(diff_properties(&old, &old).is_empty());
    }

    fn diff(changes: DiffChanges) -> DiffResult {
        DiffResult {
            changes,
            ..DiffResult::default()
        }
    }

    #[test]
    fn decisions_follow_the_diff_rules() {
        let old = props! {"a" => 1i64, "b" => "x"};
        let changed = props! {"a" => 2i64, "b" => "x"};
        let roc = [PropertyPath::parse("a").unwrap()];
        let replace_b = DiffResult {
            changes: DiffChanges::Some,
            replace_keys: vec!["b".into()],
            ..DiffResult::default()
        };
        let dbr = DiffResult {
            delete_before_replace: true,
            ..replace_b.clone()
        };
        let mut detailed = IndexMap::new();
        detailed.insert(
            "tags.env".to_owned(),
            PropertyDiff {
                kind: DiffKind::UpdateReplace,
                input_diff: true,
            },
        );
        let detailed_replace = DiffResult {
            changes: DiffChanges::Some,
            detailed_diff: Some(detailed),
            ..DiffResult::default()
        };
        let none = diff(DiffChanges::None);
        let some = diff(DiffChanges::Some);
        let unknown = diff(DiffChanges::Unknown);
        let replace = |dbr: bool, keys: &[&str]| Decision::Replace {
            delete_before_replace: dbr,
            keys: keys.iter().map(|k| k.to_string()).collect(),
        };
        let cases: Vec<(&str, DiffFacts, Decision)> = vec![
            ("no diff asked", DiffFacts::default(), Decision::Same),
            (
                "provider says none",
                DiffFacts {
                    diff: Some(&none),
                    ..Default::default()
                },
                Decision::Same,
            ),
            (
                "provider says some",
                DiffFacts {
                    diff: Some(&some),
                    ..Default::default()
                },
                Decision::Update,
            ),
            (
                "unknown, inputs equal",
                DiffFacts {
                    diff: Some(&unknown),
                    old_inputs: Some(&old),
                    new_inputs: Some(&old),
                    ..Default::default()
                },
                Decision::Same,
            ),
            (
                "unknown, inputs differ",
                DiffFacts {
                    diff: Some(&unknown),
                    old_inputs: Some(&old),
                    new_inputs: Some(&changed),
                    ..Default::default()
                },
                Decision::Update,
            ),
            (
                "replace keys",
                DiffFacts {
                    diff: Some(&replace_b),
                    ..Default::default()
                },
                replace(false, &["b"]),
            ),
            (
                "provider asks delete-before-replace",
                DiffFacts {
                    diff: Some(&dbr),
                    ..Default::default()
                },
                replace(true, &["b"]),
            ),
            (
                "option forces delete-before-replace",
                DiffFacts {
                    diff: Some(&replace_b),
                    delete_before_replace: Some(true),
                    ..Default::default()
                },
                replace(true, &["b"]),
            ),
            (
                "detailed diff replace",
                DiffFacts {
                    diff: Some(&detailed_replace),
                    ..Default::default()
                },
                replace(false, &["tags"]),
            ),
            (
                "replaceOnChanges on an unknown diff",
                DiffFacts {
                    diff: Some(&unknown),
                    old_inputs: Some(&old),
                    new_inputs: Some(&changed),
                    replace_on_changes: &roc,
                    ..Default::default()
                },
                replace(false, &["a"]),
            ),
            (
                "replaceOnChanges not touched",
                DiffFacts {
                    diff: Some(&replace_b),
                    replace_on_changes: &roc,
                    ..Default::default()
                },
                replace(false, &["b"]),
            ),
            (
                "forced replacement",
                DiffFacts {
                    forced_replace: true,
                    diff: Some(&none),
                    ..Default::default()
                },
                replace(false, &[]),
            ),
            (
                "provider replaced",
                DiffFacts {
                    provider_replaced: true,
                    ..Default::default()
                },
                replace(false, &[]),
            ),
        ];
        for (name, facts, expected) in cases {
            assert_eq!(decide(&facts), expected, "{name}");
        }
    }

    #[test]
    fn detailed_diffs_carry_old_and_new_values() {
        let mut detailed = IndexMap::new();
        detailed.insert(
            "size".to_owned(),
            PropertyDiff {
                kind: DiffKind::UpdateReplace,
                input_diff: false,
            },
        );
        let diff = DiffResult {
            changes: DiffChanges::Some,
            detailed_diff: Some(detailed),
            ..DiffResult::default()
        };
        let changes = changes_from_detailed(
            &diff,
            &props! {"size" => 1i64},
            &props! {"size" => 5i64},
            &props! {"size" => 2i64},
        )
        .unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].old, Some(PropertyValue::from(5i64)));
        assert_eq!(changes[0].new, Some(PropertyValue::from(2i64)));
        assert!(changes[0].replace);
    }
}
