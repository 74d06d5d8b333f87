//! Remote components: a registration with `remote` is built by its provider's `construct`,
//! through a monitor scoped to the component — the provider registers the component itself
//! (as the program asked for it) and resources below it, and nothing else.

use std::sync::Arc;

use indexmap::IndexMap;

use crate::urn::Urn;
use crate::value::PropertyValue;

use super::super::engine::{Engine, err};
use super::super::program::{RegisterResourceRequest, RegisterResourceResponse};
use super::super::provider::{ConstructRequest, ConstructResult};
use super::scope::{Caller, ExpectedRoot, scoped_result};
use super::{Monitor, MonitorError};

impl Engine {
    /// Builds the remote component `urn` (under `parent`) through its provider's `construct`.
    pub async fn construct(
        self: &Arc<Self>,
        urn: Urn,
        parent: Option<Urn>,
        request: RegisterResourceRequest,
        caller: &Caller,
    ) -> Result<RegisterResourceResponse, MonitorError> {
        let options = &request.options;
        let (_, provider) = self.provider_of(&request, caller).await?;
        let aliases = self.alias_urns(
            &urn,
            parent.as_ref(),
            &request.resource_type,
            &request.name,
            &options.aliases,
        )?;
        let scope = self.component_scope(
            &provider,
            "construct",
            Some(urn.clone()),
            Some(ExpectedRoot {
                resource_type: request.resource_type.clone(),
                name: request.name.clone(),
                parent: parent.clone(),
                aliases: aliases.clone(),
            }),
            options,
            &request.inputs,
            caller,
        );
        let described = scope.provider.clone();
        let caller = Arc::new(Caller::Component(scope));
        let construct = self.construct_request(&request, parent, aliases);
        let result = provider
            .construct(construct, Monitor::for_caller(self.clone(), caller.clone()))
            .await;
        let result = scoped_result(&caller, result, || format!("constructing {urn}"))?;
        self.accept_construct(&urn, &described, &result)?;
        Ok(RegisterResourceResponse {
            urn,
            id: None,
            outputs: result.state,
            property_dependencies: result.state_dependencies,
        })
    }

    /// The provider's `Construct` request for a registration: the program's inputs and
    /// options, the component's old URNs, and the stack's text config.
    fn construct_request(
        &self,
        request: &RegisterResourceRequest,
        parent: Option<Urn>,
        aliases: Vec<Urn>,
    ) -> ConstructRequest {
        let options = &request.options;
        // Secret values go too, their keys listed: a component reads the stack's config as the
        // program does (Pulumi sends both).
        let mut config = IndexMap::new();
        let mut config_secret_keys = Vec::new();
        for (key, value) in &self.options.config {
            let (text, secret) = match value {
                PropertyValue::Secret(inner) => (inner.as_str(), true),
                other => (other.as_str(), false),
            };
            if let Some(text) = text {
                config.insert(key.clone(), text.to_owned());
                if secret {
                    config_secret_keys.push(key.clone());
                }
            }
        }
        ConstructRequest {
            project: self.options.project.clone(),
            stack: self.options.stack.clone(),
            resource_type: request.resource_type.to_string(),
            name: request.name.clone(),
            parent,
            inputs: request.inputs.clone(),
            input_dependencies: request.property_dependencies.clone(),
            dependencies: options.depends_on.clone(),
            protect: options.protect,
            providers: options.providers.clone(),
            aliases,
            dry_run: self.preview(),
            config,
            config_secret_keys,
        }
    }

    /// Refuses a construct answer that names another URN, a component the provider never
    /// registered, outputs that cannot be stored, or dependencies on unfinished registrations.
    fn accept_construct(
        &self,
        urn: &Urn,
        described: &str,
        result: &ConstructResult,
    ) -> Result<(), MonitorError> {
        let refused =
            |detail: String| err(format!("constructing {urn} failed: {described} {detail}"));
        if let Some(returned) = &result.urn
            && returned != urn
        {
            return Err(refused(format!(
                "returned {returned}, not the component it was asked to build"
            )));
        }
        if !self.plan().completed.contains(urn) {
            return Err(refused(
                "did not register the component it was asked to build".to_owned(),
            ));
        }
        crate::limits::check_properties(&result.state)
            .map_err(|e| refused(format!("returned invalid outputs: {e}")))?;
        self.check_completed(&result.state_dependencies)
            .map_err(|target| refused(format!("returned output dependencies on {target}, which is not a resource registered in this deployment")))
    }
}
