//! Components: a component resource (no provider, no ID) is registered by claiming its old
//! state and recording its inputs; its step is `create`, `same` or `update` by its inputs,
//! and it keeps its recorded outputs until it registers new ones.

use std::sync::Arc;

use crate::state::ResourceState;
use crate::urn::Urn;

use super::super::analyzer::AnalyzedResource;
use super::super::engine::Engine;
use super::super::events::StepOp;
use super::super::generator::diff::diff_properties;
use super::super::hooks::{HookBinding, HookKind};
use super::super::journal::Mutation;
use super::super::monitor::MonitorError;
use super::super::monitor::scope::Caller;
use super::super::program::{RegisterResourceRequest, RegisterResourceResponse};
use super::super::steps::{now, step_state};
use super::identity::Claimed;

impl Engine {
    /// Registers the component `urn` (under `parent`) as `request` describes it.
    pub async fn register_component(
        self: &Arc<Self>,
        urn: Urn,
        parent: Option<Urn>,
        request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        if !request.options.state_migrations.is_empty() {
            // Boxed: rare, and a pending registration future must stay small.
            Box::pin(self.apply_state_migrations(
                &urn,
                parent.as_ref(),
                &request.resource_type,
                urn.name(),
                &request.options.aliases,
                &request.options.state_migrations,
            ))
            .await?;
        }
        let old = self.claim_with_aliases(
            &urn,
            parent.as_ref(),
            &request.resource_type,
            urn.name(),
            &request.options.aliases,
            caller,
        )?;
        let delete_before_replace = request.options.delete_before_replace;
        let mut state = component_state(&urn, parent, request, &old);
        if !self.options.analyzers.is_empty() {
            let resource = AnalyzedResource {
                state: &state,
                properties: &state.inputs,
                delete_before_replace,
                provider: None,
            };
            if let Some(remediated) = self.analyze(&resource).await? {
                state.inputs = remediated;
            }
        }
        let old_state = old.map(|(_, o)| o);
        let op = match old_state {
            None => StepOp::Create,
            Some(o) if o.inputs == state.inputs => StepOp::Same,
            Some(_) => StepOp::Update,
        };
        let mut info = self.step_info(op, &state);
        info.old = old_state.map(step_state);
        if let Some(old) = old_state.filter(|_| op != StepOp::Same) {
            info.changes = diff_properties(&old.inputs, &state.inputs);
        }
        // The event shares the state; it comes back without a copy once the event is gone.
        let shared = Arc::new(state);
        info.new = Some(shared.clone());
        let before = match op {
            StepOp::Create => Some((HookKind::BeforeCreate, None)),
            StepOp::Update => Some((HookKind::BeforeUpdate, old_state)),
            _ => None,
        };
        self.run_step(info, true, async {
            if let Some((kind, old)) = before {
                let args = match old {
                    Some(old) => Engine::update_hook_args(&shared, old, false),
                    None => Engine::create_hook_args(&shared, false),
                };
                let names = HookBinding::of(&shared).names(kind).to_vec();
                if !names.is_empty() {
                    Box::pin(self.run_hooks(kind, &names, &args)).await?;
                }
            }
            Ok(())
        })
        .await?;
        self.await_component_outputs(&shared, op, old_state);
        let state = Arc::try_unwrap(shared).unwrap_or_else(|kept| (*kept).clone());
        let mut mutations = vec![Mutation::Append(state.clone())];
        mutations.extend(old.map(|(i, _)| Mutation::RemoveBase(i)));
        self.apply(mutations)?;
        self.record(&state);
        Ok(RegisterResourceResponse {
            urn,
            id: None,
            outputs: state.outputs,
            property_dependencies: Default::default(),
        })
    }
}

/// The state a component registration records: the request's inputs and options, the old
/// state's outputs (until the component registers its own) and timestamps.
fn component_state(
    urn: &Urn,
    parent: Option<Urn>,
    request: RegisterResourceRequest,
    old: &Claimed<'_>,
) -> ResourceState {
    let RegisterResourceRequest {
        resource_type,
        inputs,
        options,
        property_dependencies,
        ..
    } = request;
    let old = old.as_ref().map(|(_, o)| o);
    let mut state = ResourceState::new(urn.clone(), resource_type, false);
    state.parent = parent;
    state.inputs = inputs;
    state.outputs = old.map(|o| o.outputs.clone()).unwrap_or_default();
    state.protect = options.protect;
    state.dependencies = options.depends_on;
    state.property_dependencies = property_dependencies;
    state.aliases = old
        .filter(|o| &o.urn != urn)
        .map(|o| vec![o.urn.clone()])
        .unwrap_or_default();
    state.retain_on_delete = options.retain_on_delete;
    state.deleted_with = options.deleted_with;
    if let Some(hooks) = &options.hooks {
        hooks.record(&mut state);
    }
    // Created now, or when the old state was; a component's update changes no timestamp (it
    // has no provider to update), as in Pulumi.
    match old {
        Some(old) => {
            state.created = old.created.clone();
            state.modified = old.modified.clone();
        }
        None => {
            let created = now();
            state.modified = Some(created.clone());
            state.created = Some(created);
        }
    }
    state
}
