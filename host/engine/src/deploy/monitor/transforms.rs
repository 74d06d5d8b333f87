//! Transforms: functions of the program the monitor runs on a registration (or an invoke)
//! before admitting it, as Pulumi's resource monitor does. A registration runs its own
//! transforms, then those of its ancestors from the nearest up, then the stack's (registered
//! earlier); an invoke runs the stack's invoke transforms. What a transform answers is
//! untrusted like the program's request itself: the transformed registration goes through the
//! same admission, scope and reference checks as any other.
//!
//! A remote component's transforms are remembered under its URN before `construct` runs, so
//! the component's provider, registering the component itself, runs them again (as Pulumi
//! does) and everything it registers below the component runs them as its parent's.
//!
//! # Transforms live in the engine, callbacks in the bridge
//!
//! Pulumi's resource monitor runs a registration's transforms (its own, then its ancestors' nearest
//! first, then the stack's) before anything else looks at it; Cairn does the same in
//! `deploy/monitor/transforms.rs`, before admission, so what a transform answers passes every check
//! a request passes. The engine sees a transform as a `ResourceTransform` (pure contract);
//! `cairn-grpc` implements it over the program's `Callbacks` service. A remote component's
//! transforms are kept under its URN, so they run again on the component its provider registers
//! and, as a parent's, on everything below it — through any construct monitor, since they are the
//! engine's. As in Pulumi, a registration that brought transforms shows them its inputs'
//! dependencies as output values; the SDKs answer plain values, and Pulumi then loses the property
//! dependencies: Cairn keeps those of the inputs the transform kept (plus any its answer carries),
//! since a lost dependency could let a resource be deleted before what it feeds. Callback targets
//! must be loopback addresses (Pulumi dials any): the SDKs serve on `127.0.0.1`, and a component's
//! provider should not make the engine connect elsewhere.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use crate::urn::Urn;
use crate::value::{OutputValue, PropertyDependencies, PropertyMap, PropertyValue};

use super::super::engine::{Engine, err, lock};
use super::super::program::{
    InvokeTransform, ProgramInvokeRequest, RegisterResourceRequest, ResourceTransform, Transform,
    TransformRequest,
};
use super::MonitorError;
use super::scope::Caller;

/// The transforms a deployment has been handed.
#[derive(Default)]
pub(crate) struct Transforms {
    /// `RegisterStackTransform`, in the order registered.
    stack: Mutex<Vec<Transform>>,
    /// `RegisterStackInvokeTransform`, in the order registered.
    invoke: Mutex<Vec<Arc<dyn InvokeTransform>>>,
    /// The transforms each registration brought, for its children.
    by_urn: Mutex<HashMap<Urn, Vec<Transform>>>,
}

impl Engine {
    /// `RegisterStackTransform`: runs on every resource registered from now on. Only the
    /// program may: a provider acting for a component would reach the whole stack.
    pub fn register_stack_transform(
        &self,
        transform: Arc<dyn ResourceTransform>,
        caller: &Caller,
    ) -> Result<(), MonitorError> {
        if let Some(scope) = caller.scope() {
            return Err(err(scope.violation(
                "it registered a stack transform, which would apply outside the component",
            )));
        }
        lock(&self.transforms.stack).push(Transform(transform));
        Ok(())
    }

    /// `RegisterStackInvokeTransform`: runs on every invoke from now on; only the program may.
    pub fn register_invoke_transform(
        &self,
        transform: Arc<dyn InvokeTransform>,
        caller: &Caller,
    ) -> Result<(), MonitorError> {
        if let Some(scope) = caller.scope() {
            return Err(err(scope.violation(
                "it registered a stack invoke transform, which would apply outside the component",
            )));
        }
        lock(&self.transforms.invoke).push(transform);
        Ok(())
    }

    /// Runs the transforms that apply to the registration of `urn` (its own, its ancestors',
    /// the stack's) on `request`. Returns its own, to remember for its children once it is
    /// admitted ([`Engine::remember_transforms`]), and whether any ran.
    pub(super) async fn apply_transforms(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        request: &mut RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<(Vec<Transform>, bool), MonitorError> {
        let brought = std::mem::take(&mut request.options.transforms);
        let constructing_root = caller
            .scope()
            .is_some_and(|s| s.root.is_some() && s.component.as_ref() == Some(urn));
        let own = if constructing_root {
            // The component a construct registers runs the transforms the program gave the
            // remote registration (the provider's own are not asked for).
            lock(&self.transforms.by_urn)
                .get(urn)
                .cloned()
                .unwrap_or_default()
        } else {
            brought.clone()
        };
        let mut chain = own.clone();
        chain.extend(self.ancestor_transforms(parent));
        chain.extend(lock(&self.transforms.stack).iter().cloned());
        if chain.is_empty() {
            return Ok((own, false));
        }
        // As Pulumi does: a registration that brought transforms shows them its inputs'
        // dependencies, as output values.
        let upgrade = !brought.is_empty();
        if upgrade {
            request.inputs = with_dependencies(&request.inputs, &request.property_dependencies);
        }
        for transform in &chain {
            let mut options = request.options.clone();
            options.transforms.clear();
            let transformed = transform
                .0
                .transform(TransformRequest {
                    resource_type: request.resource_type.clone(),
                    name: request.name.clone(),
                    custom: request.custom,
                    parent: parent.cloned(),
                    inputs: std::mem::take(&mut request.inputs),
                    options,
                })
                .await
                .map_err(|e| {
                    err(format!(
                        "registering {} {:?}: {} failed: {e}",
                        request.resource_type,
                        crate::text::visible_line(&request.name),
                        crate::text::visible_line(&transform.0.describe())
                    ))
                })?;
            request.inputs = transformed.inputs;
            request.options = transformed.options;
        }
        request.options.transforms = brought;
        request.property_dependencies =
            dependencies_after(&mut request.inputs, &request.property_dependencies);
        Ok((own, true))
    }

    /// Remembers the transforms `urn`'s registration brought, for the registrations below it.
    pub(super) fn remember_transforms(&self, urn: &Urn, own: Vec<Transform>) {
        if !own.is_empty() {
            lock(&self.transforms.by_urn).insert(urn.clone(), own);
        }
    }

    /// The transforms of `parent` and its ancestors, nearest first.
    fn ancestor_transforms(&self, parent: Option<&Urn>) -> Vec<Transform> {
        let by_urn = lock(&self.transforms.by_urn);
        if by_urn.is_empty() {
            return Vec::new();
        }
        let mut ancestors = Vec::new();
        {
            let plan = self.plan();
            let mut seen = HashSet::new();
            let mut current = parent.cloned();
            while let Some(urn) = current {
                if !seen.insert(urn.clone()) {
                    break;
                }
                current = plan.registered.get(&urn).and_then(|r| r.parent.clone());
                ancestors.push(urn);
            }
        }
        ancestors
            .iter()
            .filter_map(|urn| by_urn.get(urn))
            .flatten()
            .cloned()
            .collect()
    }

    /// Runs the stack's invoke transforms on an invoke; the token stays as it was.
    pub(super) async fn transform_invoke(
        &self,
        mut request: ProgramInvokeRequest,
    ) -> Result<ProgramInvokeRequest, MonitorError> {
        let transforms = lock(&self.transforms.invoke).clone();
        for transform in transforms {
            let token = request.token.clone();
            request = transform.transform(request).await.map_err(|e| {
                err(format!(
                    "invoking {}: {} failed: {e}",
                    crate::text::visible_line(&token),
                    crate::text::visible_line(&transform.describe())
                ))
            })?;
            request.token = token;
        }
        Ok(request)
    }
}

/// `inputs` with each property that has dependencies as an output value carrying them.
fn with_dependencies(inputs: &PropertyMap, dependencies: &PropertyDependencies) -> PropertyMap {
    inputs
        .iter()
        .map(|(key, value)| {
            let deps = dependencies.get(key).filter(|d| !d.is_empty());
            let value = match (deps, value) {
                (None, _) => value.clone(),
                (Some(deps), PropertyValue::Output(output)) => {
                    let mut output = output.clone();
                    for urn in deps {
                        if !output.dependencies.contains(urn) {
                            output.dependencies.push(urn.clone());
                        }
                    }
                    PropertyValue::Output(output)
                }
                (Some(deps), PropertyValue::Secret(inner)) => {
                    PropertyValue::Output(Box::new(OutputValue {
                        value: Some(inner.clone()),
                        secret: true,
                        dependencies: deps.clone(),
                    }))
                }
                (Some(deps), PropertyValue::Computed) => {
                    PropertyValue::Output(Box::new(OutputValue {
                        value: None,
                        secret: false,
                        dependencies: deps.clone(),
                    }))
                }
                (Some(deps), value) => PropertyValue::Output(Box::new(OutputValue {
                    value: Some(Box::new(value.clone())),
                    secret: false,
                    dependencies: deps.clone(),
                })),
            };
            (key.clone(), value)
        })
        .collect()
}

/// The property dependencies of transformed `inputs`, whose output values become plain values
/// again: what each kept property depended on before, plus the dependencies of the output
/// values in it. (SDKs send transformed inputs back as plain values, so a property's
/// dependencies survive a transform only by being kept; extra dependencies are harmless, lost
/// ones would let a resource be deleted before what depends on it.)
fn dependencies_after(
    inputs: &mut PropertyMap,
    before: &PropertyDependencies,
) -> PropertyDependencies {
    let mut after = PropertyDependencies::new();
    for (key, value) in inputs.iter_mut() {
        let mut deps = before.get(key).cloned().unwrap_or_default();
        let plain = plain_outputs(std::mem::take(value), &mut deps);
        *value = plain;
        if !deps.is_empty() {
            after.insert(key.clone(), deps);
        }
    }
    after
}

/// `value` with every output value replaced by its plain form (a secret if secret, unknown if
/// it has no value), its dependencies added to `deps`.
fn plain_outputs(value: PropertyValue, deps: &mut Vec<Urn>) -> PropertyValue {
    match value {
        PropertyValue::Output(output) => {
            for urn in output.dependencies {
                if !deps.contains(&urn) {
                    deps.push(urn);
                }
            }
            let inner = match output.value {
                Some(inner) => plain_outputs(*inner, deps),
                None => PropertyValue::Computed,
            };
            if output.secret && !matches!(inner, PropertyValue::Secret(_)) {
                PropertyValue::secret(inner)
            } else {
                inner
            }
        }
        PropertyValue::Secret(inner) => PropertyValue::secret(plain_outputs(*inner, deps)),
        PropertyValue::Array(items) => {
            PropertyValue::Array(items.into_iter().map(|v| plain_outputs(v, deps)).collect())
        }
        PropertyValue::Object(map) => PropertyValue::from(
            map.into_iter()
                .map(|(k, v)| (k, plain_outputs(v, deps)))
                .collect::<PropertyMap>(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urn(name: &str) -> Urn {
        Urn::parse(&format!("urn:pulumi:dev::proj::t:m:R::{name}")).unwrap()
    }

    #[test]
    fn inputs_with_dependencies_become_outputs_and_back() {
        let inputs: PropertyMap = [
            ("a".to_owned(), PropertyValue::Number(1.0)),
            (
                "b".to_owned(),
                PropertyValue::secret(PropertyValue::from("s")),
            ),
            ("c".to_owned(), PropertyValue::Computed),
            ("d".to_owned(), PropertyValue::from("plain")),
        ]
        .into_iter()
        .collect();
        let deps: PropertyDependencies = [
            ("a".to_owned(), vec![urn("x")]),
            ("b".to_owned(), vec![urn("y")]),
            ("c".to_owned(), vec![urn("z")]),
            ("d".to_owned(), vec![]),
        ]
        .into_iter()
        .collect();
        let mut upgraded = with_dependencies(&inputs, &deps);
        assert!(matches!(&upgraded["a"], PropertyValue::Output(o) if o.dependencies == [urn("x")]));
        assert!(matches!(&upgraded["b"], PropertyValue::Output(o) if o.secret));
        assert!(matches!(&upgraded["c"], PropertyValue::Output(o) if o.value.is_none()));
        assert_eq!(upgraded["d"], PropertyValue::from("plain"));
        let after = dependencies_after(&mut upgraded, &deps);
        assert_eq!(upgraded, inputs);
        assert_eq!(after.get("a"), Some(&vec![urn("x")]));
        assert_eq!(after.get("d"), None);
    }

    #[test]
    fn a_transform_keeps_the_dependencies_of_what_it_keeps_and_adds_those_it_brings() {
        // The SDK answered plain values; `a` was dropped, `e` added as an output value.
        let mut inputs: PropertyMap = [
            ("b".to_owned(), PropertyValue::from("changed")),
            (
                "e".to_owned(),
                PropertyValue::Output(Box::new(OutputValue {
                    value: Some(Box::new(PropertyValue::Number(2.0))),
                    secret: true,
                    dependencies: vec![urn("w")],
                })),
            ),
        ]
        .into_iter()
        .collect();
        let before: PropertyDependencies = [
            ("a".to_owned(), vec![urn("x")]),
            ("b".to_owned(), vec![urn("y")]),
        ]
        .into_iter()
        .collect();
        let after = dependencies_after(&mut inputs, &before);
        assert_eq!(after.get("a"), None);
        assert_eq!(after.get("b"), Some(&vec![urn("y")]));
        assert_eq!(after.get("e"), Some(&vec![urn("w")]));
        assert_eq!(
            inputs["e"],
            PropertyValue::secret(PropertyValue::Number(2.0))
        );
    }
}
