//! Who is calling the resource monitor — the program, or a provider building a component
//! (`construct`) or running one of its methods (`call`) — and how a provider's reach is
//! described: what it does through the engine stays inside its component's subtree.
//!
//! The checks themselves run in the step generator ([`super::engine`]), which owns the plan
//! they consult; this module holds the caller's identity and the wording of a violation.

use std::fmt;
use std::sync::{Mutex, PoisonError};

use crate::state::ProviderReference;
use crate::urn::{TypeToken, Urn};

use super::provider::NativePlugins;

/// The party a monitor request comes from.
#[derive(Debug)]
pub(crate) enum Caller {
    /// The program: registers anywhere in the stack.
    Program,
    /// A provider acting for a component.
    Component(Box<ComponentScope>),
}

/// What a provider may touch while it builds a component or runs one of its methods.
#[derive(Debug)]
pub(crate) struct ComponentScope {
    /// `package@version` of the provider acting.
    pub provider: String,
    /// `construct` or `call`.
    pub method: &'static str,
    /// The component whose subtree the provider acts in; `None` for a `call` that names no
    /// component (`__self__`), which may register nothing.
    pub component: Option<Urn>,
    /// In `construct`: the registration of the component itself, which the provider makes once.
    pub root: Option<ExpectedRoot>,
    /// Provider references the program handed to the component (`provider`, `providers`).
    pub passed_providers: Vec<ProviderReference>,
    /// Which native plugins what the provider registers may resolve to.
    pub native: NativePlugins,
    /// The violations refused so far: the call fails with the first even if the provider
    /// swallowed the error its callback got.
    pub violations: Mutex<Vec<String>>,
}

/// The component a `construct` must register: exactly what the program asked for.
#[derive(Debug, Clone)]
pub(crate) struct ExpectedRoot {
    pub resource_type: TypeToken,
    pub name: String,
    pub parent: Option<Urn>,
    /// The component's old URNs, from the aliases the program gave it.
    pub aliases: Vec<Urn>,
}

impl Caller {
    /// The native-plugin rule for this caller's requests, given the deployment's.
    pub fn native(&self, deployment: NativePlugins) -> NativePlugins {
        match self {
            Caller::Program => deployment,
            Caller::Component(scope) => scope.native.and(deployment),
        }
    }

    pub fn scope(&self) -> Option<&ComponentScope> {
        match self {
            Caller::Program => None,
            Caller::Component(scope) => Some(scope),
        }
    }
}

impl ComponentScope {
    /// Records a request that reaches outside the component and returns its error, which
    /// names the provider, the component and (in `detail`) the offending URN.
    pub fn violation(&self, detail: impl fmt::Display) -> String {
        let component = match &self.component {
            Some(urn) => urn.to_string(),
            None => "a call without a component".to_owned(),
        };
        let message = format!(
            "{} {} of {component} was refused: {detail}",
            self.provider, self.method
        );
        self.violations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message.clone());
        message
    }

    /// The first violation refused, if any.
    pub fn first_violation(&self) -> Option<String> {
        self.violations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .first()
            .cloned()
    }
}
