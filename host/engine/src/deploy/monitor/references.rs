//! References a request carries — parent, `dependsOn`, property dependencies, `deletedWith`,
//! providers, alias parents — must name resources whose registration finished in this
//! deployment, checked before any provider is called: a state referring to a resource the
//! snapshot lacks would fail its integrity check.
//!
//! # No reference can dangle
//!
//! A registration (from a program, a construct or an SDK) may refer — as parent, `dependsOn`,
//! property dependency, `deletedWith`, provider or `providers` entry — only to a resource whose
//! registration finished in this deployment (an alias's parent may also name a resource of the old
//! state); anything else is refused before a provider is called, naming the field. A construct must
//! register the component it was asked for, and its result's dependencies must name finished
//! registrations. So nothing a guest, plugin or program sends can make the snapshot fail its
//! integrity check.

use crate::state::ProviderReference;
use crate::urn::Urn;
use crate::value::PropertyDependencies;

use super::super::engine::{Engine, err};
use super::super::program::{Alias, RegisterResourceRequest};
use super::MonitorError;

impl Engine {
    /// Refuses a registration of `urn` that refers to a resource this deployment has not
    /// registered, naming the field.
    pub fn check_references(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        request: &RegisterResourceRequest,
    ) -> Result<(), MonitorError> {
        let options = &request.options;
        let missing = |field: &str, target: &Urn| {
            err(format!(
                "{urn}: {field} refers to {target}, which is not a resource registered in this deployment (a resource must be registered, and its registration finished, before others refer to it)"
            ))
        };
        {
            let plan = self.plan();
            if let Some(parent) = plan.first_incomplete(parent.into_iter()) {
                return Err(missing("parent", parent));
            }
            if let Some(target) = plan.first_incomplete(options.depends_on.iter()) {
                return Err(missing("dependsOn", target));
            }
            for (key, targets) in &request.property_dependencies {
                if let Some(target) = plan.first_incomplete(targets.iter()) {
                    return Err(missing(
                        &format!("the dependencies of property {key:?}"),
                        target,
                    ));
                }
            }
            if let Some(target) = plan.first_incomplete(options.deleted_with.iter()) {
                return Err(missing("deletedWith", target));
            }
        }
        self.check_provider_references(urn, request)?;
        for alias in &options.aliases {
            if let Alias::Spec {
                parent: Some(Some(alias_parent)),
                ..
            } = alias
                && !self.is_known(alias_parent)
            {
                return Err(missing("an alias's parent", alias_parent));
            }
        }
        Ok(())
    }

    /// Refuses `provider` and `providers` entries that do not name a provider registered in
    /// this deployment.
    fn check_provider_references(
        &self,
        urn: &Urn,
        request: &RegisterResourceRequest,
    ) -> Result<(), MonitorError> {
        let options = &request.options;
        let providers = options
            .provider
            .iter()
            .map(|text| ("provider".to_owned(), text))
            .chain(
                options
                    .providers
                    .iter()
                    .map(|(package, text)| (format!("providers[{package:?}]"), text)),
            );
        for (field, text) in providers {
            let reference =
                ProviderReference::parse(text).map_err(|e| err(format!("{urn}: {field}: {e}")))?;
            if self.providers.registered(&reference).is_none() {
                return Err(err(format!(
                    "{urn}: {field} refers to provider {reference}, which is not registered in this deployment; register the provider resource before the resources that use it"
                )));
            }
        }
        Ok(())
    }

    /// Whether `urn` names a resource of this deployment or of the state it started from.
    fn is_known(&self, urn: &Urn) -> bool {
        let plan = self.plan();
        plan.registered.contains_key(urn)
            || plan.live.contains_key(urn)
            || self.base().resources.iter().any(|r| &r.urn == urn)
    }

    /// The first URN in `dependencies` that has not completed its registration, if any.
    pub fn check_completed(&self, dependencies: &PropertyDependencies) -> Result<(), Urn> {
        match self
            .plan()
            .first_incomplete(dependencies.values().flatten())
        {
            Some(urn) => Err(urn.clone()),
            None => Ok(()),
        }
    }
}
