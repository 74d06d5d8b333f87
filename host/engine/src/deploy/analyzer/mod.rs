//! Analyzers (policy packs): checks the step generator runs on every resource's checked inputs
//! before anything is created or changed (step 6 of the spec's step generation), and on the
//! stack's resources once the program has run. The contract the gRPC bridge (Pulumi policy
//! packs) and the wasm host (policy components) implement; [`config`] reconciles a pack's
//! policy configuration as Pulumi does.
//!
//! Everything a pack answers is untrusted: the engine checks what it reports (names, messages,
//! URNs) in [`Violation::admit`] before showing it.

pub mod config;
pub mod schema;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use indexmap::IndexMap;

use crate::state::ResourceState;
use crate::urn::Urn;
use crate::value::PropertyMap;

pub use config::{PolicyConfig, PolicyConfigs};

/// How a policy violation is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Enforcement {
    /// Reported as a warning; the deployment goes on.
    Advisory,
    /// Fails the resource's step (an update) or the preview: nothing is created or changed.
    Mandatory,
    /// Remediation policies rewrite the resource; a violation they still report counts as
    /// mandatory.
    Remediate,
    /// Not run.
    Disabled,
}

impl Enforcement {
    /// The word Pulumi uses (`advisory`, `mandatory`, `remediate`, `disabled`).
    pub fn as_str(self) -> &'static str {
        match self {
            Enforcement::Advisory => "advisory",
            Enforcement::Mandatory => "mandatory",
            Enforcement::Remediate => "remediate",
            Enforcement::Disabled => "disabled",
        }
    }

    /// Parses Pulumi's word for a level.
    pub fn parse(word: &str) -> Option<Enforcement> {
        Some(match word {
            "advisory" => Enforcement::Advisory,
            "mandatory" => Enforcement::Mandatory,
            "remediate" => Enforcement::Remediate,
            "disabled" => Enforcement::Disabled,
            _ => return None,
        })
    }
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How severe a policy says its violations are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicySeverity {
    Low,
    Medium,
    High,
    Critical,
}

impl PolicySeverity {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicySeverity::Low => "low",
            PolicySeverity::Medium => "medium",
            PolicySeverity::High => "high",
            PolicySeverity::Critical => "critical",
        }
    }
}

/// What a policy checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    Resource,
    Stack,
    Unknown,
}

/// One policy of a pack, as the pack describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyInfo {
    pub name: String,
    pub description: String,
    /// The level the pack gives it (configuration may change it).
    pub enforcement: Enforcement,
    pub kind: PolicyKind,
    pub severity: Option<PolicySeverity>,
    /// The JSON schema of its configuration: `properties` (a schema per key) and `required`.
    pub config_schema: Option<schema::ConfigSchema>,
}

/// What a pack says about itself.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnalyzerInfo {
    pub name: String,
    pub version: String,
    pub supports_config: bool,
    pub policies: Vec<PolicyInfo>,
    /// Configuration the pack sets for its own policies (applied before the user's).
    pub initial_config: PolicyConfigs,
}

/// One policy violation a pack reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub policy: String,
    /// The policy's description.
    pub description: String,
    pub message: String,
    pub enforcement: Enforcement,
    /// Stack policies: the resource at fault, when the pack names one.
    pub urn: Option<Urn>,
    pub severity: Option<PolicySeverity>,
}

/// What a remediation policy did to a resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Remediation {
    pub policy: String,
    pub description: String,
    /// The rewritten inputs, or why the remediation failed (shown as an advisory violation).
    pub result: Result<PropertyMap, String>,
}

/// A resource as a pack sees it: its state (URN, type, options, parent, dependencies,
/// provider reference) and the properties under analysis — the checked inputs for
/// [`Analyzer::analyze`], the outputs for [`Analyzer::analyze_stack`].
#[derive(Debug, Clone, Copy)]
pub struct AnalyzedResource<'a> {
    pub state: &'a ResourceState,
    pub properties: &'a PropertyMap,
    /// The `deleteBeforeReplace` option, when the program gave it.
    pub delete_before_replace: Option<bool>,
    /// The resource's provider resource (its inputs are what the pack sees of it).
    pub provider: Option<&'a ResourceState>,
}

/// Why a pack failed; the engine reports it naming the pack.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AnalyzerError(pub String);

impl AnalyzerError {
    pub fn new(message: impl Into<String>) -> AnalyzerError {
        AnalyzerError(message.into())
    }
}

/// A policy pack.
#[async_trait]
pub trait Analyzer: Send + Sync {
    /// The pack's name, version and policies (as it answered when it was loaded).
    fn info(&self) -> &AnalyzerInfo;

    /// Where the pack was loaded from, as the display names it (`../pack`).
    fn location(&self) -> &str {
        ""
    }

    /// Sets each policy's enforcement level and configuration (see [`config::reconcile`]).
    async fn configure(&self, _config: &PolicyConfigs) -> Result<(), AnalyzerError> {
        Ok(())
    }

    /// Checks one resource's checked inputs.
    async fn analyze(
        &self,
        resource: &AnalyzedResource<'_>,
    ) -> Result<Vec<Violation>, AnalyzerError>;

    /// Checks the stack's resources (their outputs) once the program has run.
    async fn analyze_stack(
        &self,
        _resources: &[AnalyzedResource<'_>],
    ) -> Result<Vec<Violation>, AnalyzerError> {
        Ok(Vec::new())
    }

    /// Lets remediation policies rewrite a resource's inputs, in order.
    async fn remediate(
        &self,
        _resource: &AnalyzedResource<'_>,
    ) -> Result<Vec<Remediation>, AnalyzerError> {
        Ok(Vec::new())
    }
}

/// The analyzers configured for a deployment.
#[derive(Clone, Default)]
pub struct Analyzers(pub Vec<Arc<dyn Analyzer>>);

impl Analyzers {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Analyzers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|a| &a.info().name))
            .finish()
    }
}

/// A pack as the display lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackSummary {
    pub name: String,
    pub version: String,
    pub location: String,
}

impl Analyzers {
    /// The packs, for the display's list.
    pub fn summaries(&self) -> Vec<PackSummary> {
        self.0
            .iter()
            .map(|a| PackSummary {
                name: a.info().name.clone(),
                version: a.info().version.clone(),
                location: a.location().to_owned(),
            })
            .collect()
    }
}

/// The most violations one call may report; more are refused as a flood.
pub const MAX_VIOLATIONS: usize = 10_000;

/// Longest policy or pack name accepted from a pack.
pub const MAX_NAME: usize = 256;

/// Pulumi's rule for pack names: 1–256 letters, digits, `-`, `_`, `.`; the error says what
/// the name breaks.
pub fn check_pack_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!("is empty or longer than {MAX_NAME} bytes"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "is not letters, digits, '-', '_' and '.': {:?}",
            crate::text::visible_text(name)
        ));
    }
    Ok(())
}

/// A policy name: 1–256 bytes, no control or bidirectional-override characters.
pub fn check_policy_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!("is empty or longer than {MAX_NAME} bytes"));
    }
    if crate::text::has_unsafe(name) {
        return Err(format!(
            "holds control or bidirectional characters: {:?}",
            crate::text::visible_text(name)
        ));
    }
    Ok(())
}

/// Checks what a pack sent before it is shown or acted on: names and messages capped, the
/// count bounded, disabled violations dropped. `pack` names the pack in errors.
pub fn admit(pack: &str, violations: Vec<Violation>) -> Result<Vec<Violation>, AnalyzerError> {
    if violations.len() > MAX_VIOLATIONS {
        return Err(AnalyzerError::new(format!(
            "policy pack {pack} reported {} violations for one call (at most {MAX_VIOLATIONS})",
            violations.len()
        )));
    }
    Ok(violations
        .into_iter()
        .filter(|v| v.enforcement != Enforcement::Disabled)
        .map(|v| Violation {
            policy: crate::limits::cap_text(&v.policy, MAX_NAME).into_owned(),
            description: crate::limits::cap_message(&v.description).into_owned(),
            message: crate::limits::cap_message(&v.message).into_owned(),
            // A violation a remediation could not fix counts as mandatory, as in Pulumi.
            enforcement: match v.enforcement {
                Enforcement::Remediate => Enforcement::Mandatory,
                other => other,
            },
            ..v
        })
        .collect())
}

/// The policy configuration of a pack by policy name (used by [`config`]).
pub type ByPolicy<T> = IndexMap<String, T>;
