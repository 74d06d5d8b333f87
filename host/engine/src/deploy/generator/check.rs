//! Check and analyzers: a resource's new inputs validated by its provider (defaults applied,
//! secrets kept), then by the deployment's policy analyzers, before anything is diffed.
//!
//! # A mandatory violation changes nothing
//!
//! With policy packs, `cairn up` previews first (even with `--yes`, as Pulumi's `up` does unless
//! `--skip-preview`), and a preview with a mandatory violation (a resource's or the stack's) fails;
//! so the update never starts. With `--skip-preview` the violating resource fails before its
//! provider is asked (resources registered independently of it may still change, as registrations
//! run in parallel), and a mandatory stack violation fails the update after its changes, as in
//! Pulumi.
//!
//! # Remediate is called only when some policy remediates
//!
//! Remediate is called only when some policy remediates (by the pack's default or the
//! configuration). Pulumi calls it for every resource and pack; a pack without remediation policies
//! answers nothing, so the call would be one more round trip per resource.
//!
//! # Providers are analyzed, not remediated
//!
//! Providers are analyzed, not remediated their inputs configure a plugin already loaded when the
//! analyzers run.

use std::collections::HashMap;

use crate::state::ResourceState;
use crate::urn::Urn;
use crate::value::PropertyMap;

use super::super::analyzer::{
    AnalyzedResource, Analyzer, AnalyzerError, Enforcement, PackSummary, Violation,
};
use super::super::engine::{Engine, err, lock};
use super::super::events::{EngineEvent, StepOp};
use super::super::monitor::MonitorError;
use super::super::provider::{CheckFailure, CheckResult, ProviderError};

/// Check failures shown in the error and as diagnostics; more are counted.
const SHOWN_FAILURES: usize = 20;

impl Engine {
    /// Runs a Check (`check` or `check_config`) under a parallelism permit; `news` is what the
    /// provider was given, whose secrets the checked inputs keep even if the provider dropped
    /// them. Failures fail the resource, each reported as a diagnostic.
    pub async fn call_check(
        &self,
        urn: &Urn,
        news: &PropertyMap,
        check: impl Future<Output = Result<CheckResult, ProviderError>>,
    ) -> Result<PropertyMap, MonitorError> {
        let result = {
            let _permit = self.permit().await?;
            check.await
        }
        .map_err(|e| err(format!("{urn}: Check failed: {e}")))?;
        if result.failures.is_empty() {
            crate::limits::check_properties(&result.inputs).map_err(|e| {
                err(format!(
                    "{urn}: Check failed: the provider returned inputs that cannot be recorded: {e}"
                ))
            })?;
            let mut inputs = result.inputs;
            crate::value::restore_secrets(&mut inputs, news);
            crate::value::mark_secret_copies(&mut inputs, news);
            return Ok(inputs);
        }
        let reasons = failure_reasons(&result.failures);
        let message = format!("{urn}: invalid inputs: {}", reasons.join("; "));
        for reason in &reasons {
            self.report_error(urn, reason.clone());
        }
        Err(self.reject(urn, StepOp::Create, message).await)
    }

    /// Runs the configured policy packs on a resource (its checked inputs in `resource`):
    /// remediations first, one pack after another, each seeing the inputs the last one left;
    /// then every pack's validations at once. Violations are reported as they come; a
    /// mandatory one fails the resource before anything is changed — in a preview it is
    /// recorded instead, and the preview fails at its end (as Pulumi's does). Returns the
    /// remediated inputs, if a remediation changed them.
    pub async fn analyze(
        &self,
        resource: &AnalyzedResource<'_>,
    ) -> Result<Option<PropertyMap>, MonitorError> {
        let analyzers = &self.options.analyzers.0;
        if analyzers.is_empty() {
            return Ok(None);
        }
        let urn = &resource.state.urn;
        let mut remediated: Option<PropertyMap> = None;
        for analyzer in analyzers {
            let current = AnalyzedResource {
                properties: remediated.as_ref().unwrap_or(resource.properties),
                ..*resource
            };
            let pack = &analyzer.info().name;
            let remediations = match analyzer.remediate(&current).await {
                Ok(remediations) => remediations,
                Err(e) => return Err(self.pack_failed(urn, pack, &e).await),
            };
            for remediation in remediations {
                match remediation.result {
                    Ok(mut inputs) => {
                        if let Err(e) = crate::limits::check_properties(&inputs) {
                            let e = AnalyzerError::new(format!(
                                "policy {} remediated it into inputs that cannot be recorded: {e}",
                                remediation.policy
                            ));
                            return Err(self.pack_failed(urn, pack, &e).await);
                        }
                        crate::value::restore_secrets(&mut inputs, resource.properties);
                        self.emit(EngineEvent::PolicyRemediation {
                            pack: pack_summary(analyzer.as_ref()),
                            urn: urn.clone(),
                            policy: remediation.policy,
                        });
                        remediated = Some(inputs);
                    }
                    Err(message) => self.report_violations(
                        analyzer.as_ref(),
                        Some(urn),
                        vec![Violation {
                            policy: remediation.policy,
                            description: remediation.description,
                            message,
                            enforcement: Enforcement::Advisory,
                            urn: None,
                            severity: None,
                        }],
                    ),
                }
            }
        }
        let current = AnalyzedResource {
            properties: remediated.as_ref().unwrap_or(resource.properties),
            ..*resource
        };
        let results =
            futures::future::join_all(analyzers.iter().map(|a| a.analyze(&current))).await;
        let mut mandatory = Vec::new();
        for (analyzer, result) in analyzers.iter().zip(results) {
            let pack = &analyzer.info().name;
            let violations = match result.and_then(|v| super::super::analyzer::admit(pack, v)) {
                Ok(violations) => violations,
                Err(e) => return Err(self.pack_failed(urn, pack, &e).await),
            };
            mandatory.extend(
                violations
                    .iter()
                    .filter(|v| v.enforcement == Enforcement::Mandatory)
                    .map(|v| format!("{pack}/{}", v.policy)),
            );
            self.report_violations(analyzer.as_ref(), Some(urn), violations);
        }
        if mandatory.is_empty() {
            return Ok(remediated);
        }
        let message = format!(
            "mandatory policy violation{} ({})",
            if mandatory.len() == 1 { "" } else { "s" },
            mandatory.join(", ")
        );
        if self.preview() {
            lock(&self.policy_failures).push(format!("{urn}: {message}"));
            return Ok(remediated);
        }
        Err(self.reject(urn, StepOp::Create, message).await)
    }

    /// Runs every pack's stack policies on the stack's resources (their outputs) once the
    /// program and the deletes are done. Violations naming a resource of the stack are about
    /// it, the others about the stack. Returns the mandatory violations, which fail the
    /// deployment (after what it changed: Pulumi's `up --skip-preview` too); a preview adds
    /// those its resources had.
    pub async fn analyze_stack(&self) -> Result<Vec<String>, MonitorError> {
        let analyzers = &self.options.analyzers.0;
        let snapshot = self.journal.current();
        let live: Vec<&ResourceState> = snapshot.resources.iter().filter(|r| !r.delete).collect();
        let by_urn: HashMap<&Urn, &ResourceState> = live.iter().map(|r| (&r.urn, *r)).collect();
        let resources: Vec<AnalyzedResource<'_>> = live
            .iter()
            .map(|r| AnalyzedResource {
                state: r,
                properties: &r.outputs,
                delete_before_replace: None,
                provider: r
                    .provider
                    .as_ref()
                    .and_then(|p| by_urn.get(&p.urn).copied()),
            })
            .collect();
        let results =
            futures::future::join_all(analyzers.iter().map(|a| a.analyze_stack(&resources))).await;
        let mut mandatory = Vec::new();
        for (analyzer, result) in analyzers.iter().zip(results) {
            let pack = &analyzer.info().name;
            let violations = result
                .and_then(|v| super::super::analyzer::admit(pack, v))
                .map_err(|e| {
                    let message = format!("policy pack {pack} failed analyzing the stack: {e}");
                    self.report_error(&self.root_urn, message.clone());
                    err(message)
                })?;
            for mut violation in violations {
                if violation.enforcement == Enforcement::Mandatory {
                    mandatory.push(format!("{pack}/{}", violation.policy));
                }
                if !violation
                    .urn
                    .as_ref()
                    .is_some_and(|u| by_urn.contains_key(u))
                {
                    violation.urn = Some(self.root_urn.clone());
                }
                self.report_violations(analyzer.as_ref(), None, vec![violation]);
            }
        }
        let mut failures: Vec<String> = lock(&self.policy_failures).clone();
        if !mandatory.is_empty() {
            failures.push(format!(
                "the stack: mandatory policy violation{} ({})",
                if mandatory.len() == 1 { "" } else { "s" },
                mandatory.join(", ")
            ));
        }
        Ok(failures)
    }

    /// Emits a pack's violations, each about `urn` (or, from a stack policy, the resource
    /// it names).
    pub fn report_violations(
        &self,
        analyzer: &dyn Analyzer,
        urn: Option<&Urn>,
        violations: Vec<Violation>,
    ) {
        let pack = pack_summary(analyzer);
        for violation in violations {
            self.emit(EngineEvent::PolicyViolation {
                pack: pack.clone(),
                urn: violation.urn.clone().or_else(|| urn.cloned()),
                violation,
            });
        }
    }

    /// The error of a pack that failed (crashed, timed out, sent what cannot be accepted): it
    /// fails the deployment, naming the pack.
    async fn pack_failed(&self, urn: &Urn, pack: &str, e: &AnalyzerError) -> MonitorError {
        let message = format!("policy pack {pack} failed: {e}");
        self.report_error(urn, message.clone());
        self.reject(urn, StepOp::Create, message).await
    }
}

/// A pack as events name it.
pub fn pack_summary(analyzer: &dyn Analyzer) -> PackSummary {
    PackSummary {
        name: analyzer.info().name.clone(),
        version: analyzer.info().version.clone(),
        location: analyzer.location().to_owned(),
    }
}

/// The first failures of a Check, each capped (`property <path>: <reason>`), and how many
/// more there were.
fn failure_reasons(failures: &[CheckFailure]) -> Vec<String> {
    let mut reasons: Vec<String> = failures
        .iter()
        .take(SHOWN_FAILURES)
        .map(|f| {
            let reason = crate::limits::cap_text(&f.reason, 4096);
            if f.property.is_empty() {
                reason.into_owned()
            } else {
                format!(
                    "property {}: {reason}",
                    crate::limits::cap_text(&f.property, 256)
                )
            }
        })
        .collect();
    if failures.len() > SHOWN_FAILURES {
        reasons.push(format!(
            "and {} more failures",
            failures.len() - SHOWN_FAILURES
        ));
    }
    reasons
}
