//! Output semantics (dependencies, unknowns, secrets, failures) and configuration errors.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::rc::Rc;

use indexmap::IndexMap;

use super::*;
use crate::value::Value;

fn deps(urns: &[&str]) -> BTreeSet<String> {
    urns.iter().map(|u| (*u).to_owned()).collect()
}

fn from(urn: &str, value: i64) -> Output<i64> {
    Output::new(value).with_dependencies(deps(&[urn]))
}

#[test]
fn apply_keeps_dependencies_and_secretness() {
    let a = from("a", 2).as_secret();
    let doubled = a.apply(|v| v * 2);
    assert_eq!(doubled.try_get(), Some(Ok(4)));
    assert!(doubled.is_secret());
    assert_eq!(doubled.dependencies(), deps(&["a"]));
}

#[test]
fn apply_skips_the_callback_on_unknown() {
    let ran = Rc::new(Cell::new(false));
    let flag = ran.clone();
    let out = Output::<i64>::unknown()
        .with_dependencies(deps(&["a"]))
        .apply(move |v| {
            flag.set(true);
            v + 1
        });
    assert!(!ran.get(), "the callback must not run on an unknown value");
    assert!(out.is_unknown());
    assert_eq!(out.dependencies(), deps(&["a"]));
}

#[test]
fn callbacks_run_when_a_pending_output_resolves() {
    let (pending, resolver) = Output::<i64>::pending();
    let out = pending.apply(|v| v + 1);
    assert_eq!(out.try_get(), None, "not resolved yet");
    resolver.resolve(output::Resolved {
        known: output::Known::Value(41),
        secret: false,
        deps: deps(&["x"]),
    });
    assert_eq!(out.try_get(), Some(Ok(42)));
    assert_eq!(out.dependencies(), deps(&["x"]));
}

#[test]
fn all_unions_dependencies_and_propagates_secret_and_unknown() {
    let joined = all((from("a", 1), from("b", 2).as_secret())).apply(|(a, b)| a + b);
    assert_eq!(joined.try_get(), Some(Ok(3)));
    assert!(joined.is_secret());
    assert_eq!(joined.dependencies(), deps(&["a", "b"]));

    let unknown = all((
        from("a", 1),
        Output::<String>::unknown().with_dependencies(deps(&["c"])),
    ));
    assert!(unknown.is_unknown());
    assert_eq!(
        unknown.dependencies(),
        deps(&["a", "c"]),
        "unknown parts still count"
    );

    let mut map = IndexMap::new();
    map.insert("x".to_owned(), from("a", 1));
    map.insert("y".to_owned(), from("b", 2));
    let joined = Output::all_map(map);
    let values = joined.try_get().and_then(Result::ok).unwrap_or_default();
    assert_eq!(values.get("y"), Some(&2));
    assert_eq!(joined.dependencies(), deps(&["a", "b"]));
    assert_eq!(Output::<i64>::all_vec(vec![]).try_get(), Some(Ok(vec![])));
}

#[test]
fn unwrap_merges_both_levels() {
    let inner = from("inner", 7).as_secret();
    let outer = from("outer", 0).apply(move |_| inner.clone());
    let flat = outer.unwrap();
    assert_eq!(flat.try_get(), Some(Ok(7)));
    assert!(flat.is_secret());
    assert_eq!(flat.dependencies(), deps(&["inner", "outer"]));
}

#[test]
fn failures_propagate_through_everything_derived() {
    let failed = from("a", 1).try_apply(|_| Err::<i64, _>("boom"));
    assert_eq!(failed.try_get(), Some(Err("apply failed: boom".to_owned())));
    let derived = all((failed.clone(), from("b", 2))).apply(|(a, b)| a + b);
    assert_eq!(
        derived.try_get(),
        Some(Err("apply failed: boom".to_owned()))
    );
    // The failure is recorded for the program.
    assert_eq!(
        runtime::run(|_| Ok(())),
        Err("apply failed: boom".to_owned())
    );
}

#[test]
fn unsecret_reveals() {
    let s = Output::secret("pw".to_owned());
    assert!(s.is_secret());
    assert!(!s.unsecret().is_secret());
    assert_eq!(s.unsecret().try_get(), Some(Ok("pw".to_owned())));
}

#[test]
fn lifted_property_access_carries_inner_markers() {
    let mut map = crate::value::PropertyMap::new();
    map.insert("plain".into(), Value::from("x"));
    map.insert("hidden".into(), Value::secret("y"));
    map.insert("later".into(), Value::Unknown);
    let object = Output::new(Value::Object(map)).with_dependencies(deps(&["r"]));
    let plain = object.get("plain");
    assert_eq!(plain.try_get(), Some(Ok(Value::from("x"))));
    assert!(!plain.is_secret());
    assert!(object.get("hidden").is_secret());
    assert!(object.get("later").is_unknown());
    assert_eq!(object.get("missing").try_get(), Some(Ok(Value::Null)));
    assert_eq!(object.get("plain").dependencies(), deps(&["r"]));
    assert_eq!(
        object.get("plain").typed::<String>().try_get(),
        Some(Ok("x".to_owned()))
    );
}

#[test]
fn inputs_accept_values_and_outputs() {
    let from_value: Input<String> = "a".into_input();
    let from_output: Input<String> = Output::secret("b".to_owned()).into_input();
    assert_eq!(from_value.into_output().try_get(), Some(Ok("a".to_owned())));
    assert!(from_output.into_output().is_secret());
}

#[test]
fn missing_required_config_names_the_key_and_the_command() {
    let config = Config::new("proj");
    let err = config.require("name").unwrap_err();
    assert!(
        err.0
            .contains("missing required configuration variable 'proj:name'"),
        "{err}"
    );
    assert!(
        err.0.contains("cairn config set proj:name <value>"),
        "{err}"
    );
    assert!(
        config
            .require_secret("pw")
            .unwrap_err()
            .0
            .contains("--secret")
    );
    assert_eq!(config.get_i64("count"), Ok(None));
}

#[test]
fn transformations_apply_to_a_resource_its_children_and_the_stack() {
    let parent = component(
        "t:index:Group",
        "g",
        ResourceOptions::new().transformation(|t| t.name = format!("{}-x", t.name)),
    );
    assert_eq!(parent.name(), "g-x");
    let child = custom(
        "t:index:Thing",
        "c",
        Args::new(),
        ResourceOptions::new().parent(&parent),
    );
    assert_eq!(
        child.name(),
        "c-x",
        "children inherit their parent's transformations"
    );

    let ctx = Context::from_host();
    ctx.register_stack_transformation(|t| {
        t.resource_type = t.resource_type.replace("Thing", "Other")
    });
    let other = custom("t:index:Thing", "o", Args::new(), ResourceOptions::new());
    assert_eq!(other.resource_type(), "t:index:Other");
    assert_eq!(other.name(), "o");
}

#[test]
fn resources_declared_without_a_host_fail_their_outputs() {
    let r = custom(
        "t:index:Thing",
        "n",
        Args::new().set("a", 1),
        ResourceOptions::new(),
    );
    assert!(matches!(r.urn.try_get(), Some(Err(e)) if e.contains("program component")));
    assert!(matches!(r.output("a").try_get(), Some(Err(_))));
}
