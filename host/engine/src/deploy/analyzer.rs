//! Analyzers: policy checks the step generator runs on every resource's checked inputs, before
//! anything is created or changed (step 6 of the spec's step generation).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use crate::urn::{TypeToken, Urn};
use crate::value::PropertyMap;

/// How a policy violation is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// Reported as a warning; the deployment goes on.
    Advisory,
    /// Fails the resource's step: nothing is created or changed.
    Mandatory,
}

/// One policy violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub policy: String,
    pub message: String,
    pub enforcement: Enforcement,
}

/// A policy pack.
#[async_trait]
pub trait Analyzer: Send + Sync {
    fn name(&self) -> &str;

    /// Checks one resource's inputs (after the provider's `Check`).
    async fn analyze(
        &self,
        urn: &Urn,
        resource_type: &TypeToken,
        inputs: &PropertyMap,
    ) -> Result<Vec<Violation>, String>;
}

/// The analyzers configured for a deployment.
#[derive(Clone, Default)]
pub struct Analyzers(pub Vec<Arc<dyn Analyzer>>);

impl fmt::Debug for Analyzers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|a| a.name()))
            .finish()
    }
}
