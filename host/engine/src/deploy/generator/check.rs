//! Check and analyzers: a resource's new inputs validated by its provider (defaults applied,
//! secrets kept), then by the deployment's policy analyzers, before anything is diffed.

use crate::urn::{TypeToken, Urn};
use crate::value::PropertyMap;

use super::super::analyzer::Enforcement;
use super::super::engine::{Engine, err};
use super::super::events::StepOp;
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
        Err(self.fail(urn, StepOp::Create, message).await)
    }

    /// Runs the configured analyzers on a resource's checked inputs: advisory violations warn,
    /// mandatory ones fail the resource before anything is changed.
    pub async fn analyze(
        &self,
        urn: &Urn,
        resource_type: &TypeToken,
        inputs: &PropertyMap,
    ) -> Result<(), MonitorError> {
        let mut mandatory = Vec::new();
        for analyzer in &self.options.analyzers.0 {
            let violations = analyzer
                .analyze(urn, resource_type, inputs)
                .await
                .map_err(|e| err(format!("{urn}: analyzer {} failed: {e}", analyzer.name())))?;
            for v in violations {
                let message = format!("{}/{}: {}", analyzer.name(), v.policy, v.message);
                match v.enforcement {
                    Enforcement::Advisory => self.warn(Some(urn), message),
                    Enforcement::Mandatory => {
                        self.report_error(urn, message.clone());
                        mandatory.push(message);
                    }
                }
            }
        }
        if mandatory.is_empty() {
            return Ok(());
        }
        let message = format!("{urn}: policy violation: {}", mandatory.join("; "));
        Err(self.fail(urn, StepOp::Create, message).await)
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
