//! `Invoke` and `Call`: provider functions, and component methods run by the component's
//! provider through a monitor scoped to the component named by `__self__`.
//!
//! One function the monitor answers itself: `pulumi:pulumi:getResource`, which SDKs call to
//! rehydrate a resource reference or `get` a resource by URN. As in Pulumi, it returns the
//! state of a resource registered or read in this deployment (`urn`, `id`, `provider`,
//! `state`: its outputs), never one merely in the old state; a provider acting for a component
//! reads only resources in the component's subtree and those handed to it. The program's call
//! registers the `pulumi` package's default provider, as any function's call does.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::urn::{TypeToken, Urn};
use crate::value::{PropertyMap, PropertyValue};

use super::super::admission::describe_parent;
use super::super::engine::{Engine, err};
use super::super::program::{ProgramCallRequest, ProgramInvokeRequest, ResourceOptions};
use super::super::provider::{CallRequest, CallResult, InvokeRequest, InvokeResult, Provider};
use super::scope::{Caller, scoped_result};
use super::{Monitor, MonitorError};

/// The built-in function that returns a registered resource's state by URN.
pub const GET_RESOURCE: &str = "pulumi:pulumi:getResource";

impl Engine {
    /// The provider of a function token's package (`pkg:module:function`).
    async fn function_provider(
        self: &Arc<Self>,
        token: &str,
        explicit: Option<&str>,
        version: Option<&str>,
        caller: &Caller,
    ) -> Result<Arc<dyn Provider>, MonitorError> {
        self.ensure_running()?;
        let parsed = TypeToken::parse_member(token)
            .map_err(|e| err(format!("invalid function token: {e}")))?;
        let package = parsed.package();
        if let Some(scope) = caller.scope()
            && package == "pulumi"
        {
            return Err(err(scope.violation(format_args!(
                "it called {token}, a function of the built-in pulumi package, which only the program may use"
            ))));
        }
        let (_, provider) = self
            .resolve_provider(explicit, &IndexMap::new(), package, version, None, caller)
            .await?;
        Ok(provider)
    }

    /// `Invoke`: calls a provider function (after the program's invoke transforms);
    /// arguments and results are checked like inputs.
    pub async fn invoke(
        self: &Arc<Self>,
        request: ProgramInvokeRequest,
        caller: &Caller,
    ) -> Result<InvokeResult, MonitorError> {
        self.ensure_running()?;
        let token = crate::text::visible_line(&request.token).into_owned();
        crate::limits::check_properties(&request.args)
            .map_err(|e| err(format!("invoking {token}: invalid arguments: {e}")))?;
        let request = self.transform_invoke(request).await?;
        crate::limits::check_properties(&request.args)
            .map_err(|e| err(format!("invoking {token}: invalid arguments: {e}")))?;
        if request.token == GET_RESOURCE {
            // As in Pulumi, the program's call goes through the `pulumi` package's provider,
            // so its default provider is registered (and recorded) like any other function's.
            if caller.scope().is_none() {
                self.function_provider(
                    &request.token,
                    request.provider.as_deref(),
                    request.version.as_deref(),
                    caller,
                )
                .await?;
            }
            return self.get_resource(&request.args, caller);
        }
        let provider = self
            .function_provider(
                &request.token,
                request.provider.as_deref(),
                request.version.as_deref(),
                caller,
            )
            .await?;
        let result = provider
            .invoke(InvokeRequest {
                token: request.token.clone(),
                args: request.args,
            })
            .await
            .map_err(|e| err(format!("invoking {token} failed: {e}")))?;
        crate::limits::check_properties(&result.outputs).map_err(|e| {
            err(format!(
                "invoking {token} failed: {} returned invalid outputs: {e}",
                provider.describe()
            ))
        })?;
        Ok(result)
    }

    /// `pulumi:pulumi:getResource`: the state of the resource `args.urn` names, which must have
    /// been registered or read in this deployment (and, for a provider acting for a component,
    /// be in the component's subtree or handed to it).
    fn get_resource(
        &self,
        args: &PropertyMap,
        caller: &Caller,
    ) -> Result<InvokeResult, MonitorError> {
        let urn = match args.get("urn") {
            Some(PropertyValue::String(text)) => Urn::parse(text).map_err(|e| {
                err(format!(
                    "invoking {GET_RESOURCE}: the argument urn is not a URN: {e}"
                ))
            })?,
            _ => {
                return Err(err(format!(
                    "invoking {GET_RESOURCE}: the argument urn must be a URN (a string)"
                )));
            }
        };
        if let Some(scope) = caller.scope()
            && !scope.may_read(self, &urn)
        {
            return Err(err(scope.violation(format_args!(
                "it read {urn} with {GET_RESOURCE}, which is outside the component and was not handed to it"
            ))));
        }
        let unknown = || {
            err(format!(
                "invoking {GET_RESOURCE}: unknown resource {urn}: it has not been registered or read in this deployment"
            ))
        };
        let found = {
            let plan = self.plan();
            if !plan.completed.contains(&urn) {
                return Err(unknown());
            }
            // Components and providers are kept in the plan (with the outputs registered last);
            // custom resources in the journal.
            match plan.states.get(&urn) {
                Some(state) => Ok(state.clone()),
                None => Err(plan.live.get(&urn).copied()),
            }
        };
        let state = match found {
            Ok(state) => state,
            Err(base) => self.journal.live_state(&urn, base).ok_or_else(unknown)?,
        };
        let mut outputs = PropertyMap::new();
        outputs.insert("urn".into(), PropertyValue::String(urn.to_string()));
        outputs.insert(
            "id".into(),
            PropertyValue::String(state.id.clone().unwrap_or_default()),
        );
        outputs.insert(
            "provider".into(),
            PropertyValue::String(
                state
                    .provider
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
            ),
        );
        outputs.insert(
            "state".into(),
            PropertyValue::Object(Box::new(state.outputs)),
        );
        Ok(InvokeResult {
            outputs,
            failures: Vec::new(),
        })
    }

    /// A provider acting for a component may call methods only of components in its subtree.
    fn check_call_in_scope(
        &self,
        token: &str,
        component: Option<&Urn>,
        caller: &Caller,
    ) -> Result<(), MonitorError> {
        let Some(scope) = caller.scope() else {
            return Ok(());
        };
        let inside = match (component, &scope.component) {
            (Some(target), Some(own)) => self.plan().in_subtree(target, own),
            _ => false,
        };
        if inside {
            return Ok(());
        }
        Err(err(scope.violation(format_args!(
            "it called {token} on {}, which is outside the component",
            describe_parent(component)
        ))))
    }

    /// `Call`: runs a component's method through its provider, with a monitor scoped to the
    /// component named by the `__self__` argument.
    pub async fn call(
        self: &Arc<Self>,
        request: ProgramCallRequest,
        caller: &Caller,
    ) -> Result<CallResult, MonitorError> {
        let token = crate::text::visible_line(&request.token).into_owned();
        crate::limits::check_properties(&request.args)
            .map_err(|e| err(format!("calling {token}: invalid arguments: {e}")))?;
        self.check_completed(&request.arg_dependencies)
            .map_err(|target| {
                err(format!(
                    "calling {token}: the arguments depend on {target}, which is not a resource registered in this deployment"
                ))
            })?;
        let component = match request.args.get("__self__") {
            Some(PropertyValue::ResourceReference(reference)) => Some(reference.urn.clone()),
            _ => None,
        };
        self.check_call_in_scope(&token, component.as_ref(), caller)?;
        let provider = self
            .function_provider(
                &request.token,
                request.provider.as_deref(),
                request.version.as_deref(),
                caller,
            )
            .await?;
        let scope = self.component_scope(
            &provider,
            "call",
            component,
            None,
            &ResourceOptions::default(),
            &request.args,
            caller,
        );
        let described = scope.provider.clone();
        let caller = Arc::new(Caller::Component(scope));
        let result = provider
            .call(
                CallRequest {
                    token: request.token.clone(),
                    args: request.args,
                    arg_dependencies: request.arg_dependencies,
                    project: self.options.project.clone(),
                    stack: self.options.stack.clone(),
                    dry_run: self.preview(),
                },
                Monitor::for_caller(self.clone(), caller.clone()),
            )
            .await;
        let result = scoped_result(&caller, result, || format!("calling {token}"))?;
        crate::limits::check_properties(&result.outputs).map_err(|e| {
            err(format!(
                "calling {token} failed: {described} returned invalid outputs: {e}"
            ))
        })?;
        self.check_completed(&result.output_dependencies)
            .map_err(|target| {
                err(format!(
                    "calling {token} failed: {described} returned output dependencies on {target}, which is not a resource registered in this deployment"
                ))
            })?;
        Ok(result)
    }
}
