//! `hostile-construct`: a component provider whose `construct` does what its inputs say, to try
//! every way out of its component through the engine callbacks.
//!
//! Inputs of `hostile-construct:index:Comp`:
//! * `self`: how to register the component itself — `{skip: true}` not at all, else overrides
//!   of `type`, `name` and `parent` (default: exactly what the engine asked for).
//! * `steps`: a list, each either a registration `{type, name, custom (default true), parent,
//!   inputs, dependencies: [urn], propertyDependencies: {key: [urn]}, provider, swallow}` or
//!   `{outputsOf: urn, values: {...}}`. A parent (and `outputsOf`) is a URN or one of
//!   `$component`, `$root` (the stack) or `$none`; the default is `$component`. A step's error
//!   ends the construct unless `swallow` is true.
//! * `returnUrn`: the URN to report instead of the component's.
//!
//! `call` of `hostile-construct:index:Comp/run` runs `steps` from its arguments the same way,
//! for the component its `__self__` argument names.
//!
//! Every callback's response (outputs included) is written to the log, so a test can check
//! that nothing from outside the component ever reached the provider.

use cairn_sdk::engine::{self, RegisterResource};
use cairn_sdk::{
    CallRequest, CallResult, ConstructRequest, ConstructResult, CreateRequest, CreateResult,
    DeleteRequest, PropertyMap, Provider, Result, UpdateRequest, UpdateResult, Value, log, props,
};

/// The provider.
#[derive(Default)]
pub struct Hostile;

fn text(map: &PropertyMap, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn urns(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => vec![],
    }
}

struct Context {
    root: String,
    component: String,
    parent: Option<String>,
}

impl Context {
    fn resolve(&self, name: Option<String>, default: Option<String>) -> Option<String> {
        match name.as_deref() {
            None => default,
            Some("$component") => Some(self.component.clone()),
            Some("$root") => Some(self.root.clone()),
            Some("$parent") => self.parent.clone(),
            Some("$none") => None,
            Some(urn) => Some(urn.to_owned()),
        }
    }
}

/// Runs the `steps` of `inputs` through the engine's monitor; what each returned (a URN, or
/// the error of a swallowed step).
fn run_steps(inputs: &PropertyMap, context: &Context, me: Option<String>) -> Result<Vec<Value>> {
    let mut results = Vec::new();
    let steps = match inputs.get("steps") {
        Some(Value::Array(steps)) => steps.clone(),
        _ => vec![],
    };
    for step in steps {
        let Value::Object(step) = step else { continue };
        let swallow = step.get("swallow").and_then(Value::as_bool) == Some(true);
        let outcome = if step.contains_key("outputsOf") {
            let urn = context
                .resolve(text(&step, "outputsOf"), None)
                .unwrap_or_default();
            let values = match step.get("values") {
                Some(Value::Object(values)) => values.clone(),
                _ => PropertyMap::new(),
            };
            engine::register_resource_outputs(&urn, &values).map(|()| Value::from(urn))
        } else {
            let property_dependencies = match step.get("propertyDependencies") {
                Some(Value::Object(deps)) => deps
                    .iter()
                    .map(|(k, v)| (k.clone(), urns(Some(v))))
                    .collect(),
                _ => Default::default(),
            };
            let request = RegisterResource {
                resource_type: text(&step, "type").unwrap_or_default(),
                name: text(&step, "name").unwrap_or_default(),
                custom: step.get("custom").and_then(Value::as_bool).unwrap_or(true),
                parent: context.resolve(text(&step, "parent"), me.clone()),
                inputs: match step.get("inputs") {
                    Some(Value::Object(inputs)) => inputs.clone(),
                    _ => PropertyMap::new(),
                },
                property_dependencies,
                dependencies: urns(step.get("dependencies")),
                provider: text(&step, "provider"),
                protect: false,
            };
            engine::register_resource(&request).map(|registered| {
                log::info(
                    "",
                    format!(
                        "registered {} id={:?} outputs={:?}",
                        registered.urn, registered.id, registered.outputs
                    ),
                );
                Value::from(registered.urn)
            })
        };
        match outcome {
            Ok(value) => results.push(value),
            Err(e) if swallow => {
                log::info("", format!("swallowed: {e}"));
                results.push(Value::from(format!("error: {e}")));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(results)
}

impl Provider for Hostile {
    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        Ok(CreateResult {
            id: r.urn,
            outputs: r.inputs,
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        Ok(UpdateResult { outputs: r.inputs })
    }

    fn delete(&self, _: DeleteRequest) -> Result<()> {
        Ok(())
    }

    /// `hostile-construct:index:Comp/run`: runs `steps` as a method of the component named by
    /// `__self__` (parents default to it).
    fn call(&self, r: CallRequest) -> Result<CallResult> {
        let args: PropertyMap = r.args.clone().into_map();
        let component = match args.get("__self__") {
            Some(Value::ResourceReference(reference)) => reference.urn.clone(),
            _ => String::new(),
        };
        let context = Context {
            root: format!(
                "urn:pulumi:{}::{}::pulumi:pulumi:Stack::{}-{}",
                r.stack, r.project, r.project, r.stack
            ),
            component: component.clone(),
            parent: None,
        };
        let results = run_steps(&args, &context, Some(component).filter(|c| !c.is_empty()))?;
        Ok(CallResult {
            outputs: props! { "results" => Value::Array(results) }.into(),
            ..Default::default()
        })
    }

    fn construct(&self, r: ConstructRequest) -> Result<ConstructResult> {
        let inputs: PropertyMap = r.inputs.clone().into_map();
        let own = match inputs.get("self") {
            Some(Value::Object(map)) => map.clone(),
            _ => PropertyMap::new(),
        };
        let root = format!(
            "urn:pulumi:{}::{}::pulumi:pulumi:Stack::{}-{}",
            r.stack, r.project, r.project, r.stack
        );
        let mut context = Context {
            root,
            component: String::new(),
            parent: r.parent.clone(),
        };
        let expected_parent = r.parent.clone();
        let me = if own.get("skip").and_then(Value::as_bool) == Some(true) {
            None
        } else {
            let registered = engine::register_resource(&RegisterResource {
                resource_type: text(&own, "type").unwrap_or_else(|| r.resource_type.clone()),
                name: text(&own, "name").unwrap_or_else(|| r.name.clone()),
                custom: false,
                parent: context.resolve(text(&own, "parent"), expected_parent),
                ..Default::default()
            })?;
            Some(registered.urn)
        };
        context.component = me.clone().unwrap_or_default();
        let results = run_steps(&inputs, &context, me.clone())?;
        let urn = text(&inputs, "returnUrn").or(me);
        Ok(ConstructResult {
            urn,
            state: props! { "results" => Value::Array(results) }.into(),
            ..Default::default()
        })
    }
}

cairn_sdk::export_provider!(Hostile, manifest = "cairn.json");
