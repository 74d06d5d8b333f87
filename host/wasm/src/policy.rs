//! [`WasmPolicyPack`]: the engine's [`Analyzer`] implemented by a policy pack component
//! (`wit/policy.wit`, world `policy-world`).
//!
//! A pack is sandboxed like a provider, with nothing granted: no directories, environment,
//! HTTP or sockets, a memory limit and a deadline per call ([`PolicyLimits`]), its logs capped.
//! One instance serves the whole deployment (it keeps its configuration), one call at a time.
//! A call that traps, overruns its deadline or memory, or answers what cannot be accepted
//! fails with an error naming the pack, and the pack is not called again.
//!
//! What a pack answers is checked: its name (Pulumi's pack-name rule) and policy names, its
//! configuration schemas (JSON, at most [`MAX_SCHEMA_BYTES`]), and violations, which must name
//! a policy the pack declared. A violation's enforcement level is the host's: the level the
//! reconciled configuration gives the policy (a pack cannot make a violation more or less
//! severe than configured, and a disabled policy's violations are dropped).
//!
//! # Policy components are sandboxed like providers, with nothing granted
//!
//! No directories, environment, sockets or HTTP; a memory limit and a deadline per call (epoch
//! interruption, `CAIRN_POLICY_MEMORY_MIB`, `CAIRN_POLICY_TIMEOUT`), logs capped as a provider's. A
//! call that traps or overruns fails naming the pack and the limit, and the instance is never
//! called again (its state may be half-updated). What it answers is checked in
//! `host/wasm/src/policy.rs`: the pack name (Pulumi's rule), policy names (no control or
//! bidirectional characters, unique, at most 1,000), schemas (JSON, 1 MiB), violations (a declared
//! policy of the called kind, at most 10,000, messages capped to 64 KiB and escaped there). The
//! enforcement level of a violation is the host's: the reconciled configuration's level for the
//! policy, never the pack's say.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::deploy::analyzer::schema::ConfigSchema;
use cairn_engine::deploy::analyzer::{
    AnalyzedResource, Analyzer, AnalyzerError, AnalyzerInfo, Enforcement, PolicyConfigs,
    PolicyInfo, PolicyKind, PolicySeverity, Violation, check_pack_name, check_policy_name,
};
use cairn_engine::limits::{cap_message, cap_text};
use cairn_engine::text::{visible_line, visible_text};
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyMap;
use wasmtime::{Engine, Store};

use crate::grants::{PackageGrant, Sandbox};
use crate::log::LogSink;
use crate::policy_bindings::PolicyWorld;
use crate::policy_bindings::PolicyWorldPre;
use crate::policy_bindings::exports::cairn::deploy::policy as wp;
use crate::program::ProgramFile;
use crate::provider::{Failure, guarded, new_store};
use crate::state::{CallLimit, GuestBudget, InstanceState};

/// The longest configuration schema a policy may describe.
pub const MAX_SCHEMA_BYTES: usize = 1024 * 1024;

/// The most policies a pack may declare.
pub const MAX_POLICIES: usize = 1000;

/// A pack's sandbox limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PolicyLimits {
    pub memory_mib: u64,
    /// The deadline of one call (`analyze` of one resource, `analyze-stack`).
    pub timeout: Duration,
}

impl Default for PolicyLimits {
    fn default() -> Self {
        PolicyLimits {
            memory_mib: 256,
            timeout: Duration::from_secs(60),
        }
    }
}

/// The instance and what it was told.
struct Instance {
    store: Store<InstanceState>,
    world: Arc<PolicyWorld>,
    /// Each policy's level, as configured (else as declared).
    levels: HashMap<String, Enforcement>,
    /// Why the pack stopped working, once it did.
    dead: Option<String>,
}

/// A running policy pack component.
pub struct WasmPolicyPack {
    info: AnalyzerInfo,
    location: String,
    sandbox: Arc<Sandbox>,
    instance: tokio::sync::Mutex<Instance>,
}

impl WasmPolicyPack {
    /// Instantiates the pack and asks for its description; the error says why it cannot be
    /// used.
    pub(crate) async fn start(
        engine: Engine,
        pre: PolicyWorldPre<InstanceState>,
        file: &ProgramFile,
        limits: PolicyLimits,
        log: LogSink,
    ) -> Result<WasmPolicyPack, String> {
        let grant = PackageGrant {
            memory_mib: Some(limits.memory_mib),
            timeout_seconds: Some(limits.timeout.as_secs_f64()),
            ..PackageGrant::default()
        };
        let mut sandbox = Sandbox::for_program(&file.name, &grant).map_err(|e| e.to_string())?;
        sandbox.provider = format!("policy pack {}", file.name);
        let sandbox = Arc::new(sandbox);
        let state = InstanceState::new(&sandbox, &log, &GuestBudget::new())
            .map_err(|e| format!("setting up the sandbox: {e:#}"))?;
        let mut store = new_store(&engine, state);
        let limit = CallLimit::grant(sandbox.timeout);
        let (world, report) = guarded(&mut store, None, limit, None, &sandbox, move |s| {
            Box::pin(async move { pre.instantiate_async(s).await })
        })
        .await
        .map_err(|Failure(why)| format!("instantiating: {}", limit_hints(&why)))?;
        if !report.violations.is_empty() {
            return Err(report.violations.join("; "));
        }
        let world = Arc::new(world);
        let w = world.clone();
        let (info, _) = guarded(&mut store, None, limit, None, &sandbox, move |s| {
            Box::pin(async move { w.cairn_deploy_policy().call_info(s).await })
        })
        .await
        .map_err(|Failure(why)| format!("info: {}", limit_hints(&why)))?;
        let info = admit_info(info)?;
        let levels = info
            .policies
            .iter()
            .map(|p| (p.name.clone(), p.enforcement))
            .collect();
        Ok(WasmPolicyPack {
            info,
            location: file.path.display().to_string(),
            sandbox,
            instance: tokio::sync::Mutex::new(Instance {
                store,
                world,
                levels,
                dead: None,
            }),
        })
    }

    /// Where the pack was loaded from, as the display names it.
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = location.into();
        self
    }

    /// Runs one call on the instance under its deadline; a failure kills the pack.
    async fn call<R: Send + 'static>(
        &self,
        method: &str,
        urn: Option<&Urn>,
        f: impl for<'a> FnOnce(
            &'a PolicyWorld,
            &'a mut Store<InstanceState>,
        ) -> futures::future::BoxFuture<'a, wasmtime::Result<R>>
        + Send
        + 'static,
    ) -> Result<(R, HashMap<String, Enforcement>), AnalyzerError> {
        let mut guard = self.instance.lock().await;
        let instance = &mut *guard;
        if let Some(why) = &instance.dead {
            return Err(AnalyzerError::new(format!(
                "{method}: the pack stopped working earlier: {why}"
            )));
        }
        let world = instance.world.clone();
        let limit = CallLimit::grant(self.sandbox.timeout);
        let result = guarded(
            &mut instance.store,
            urn,
            limit,
            None,
            &self.sandbox,
            move |s| Box::pin(async move { f(&world, s).await }),
        )
        .await;
        match result {
            Ok((value, report)) if report.violations.is_empty() => {
                Ok((value, instance.levels.clone()))
            }
            Ok((_, report)) => {
                let why = report.violations.join("; ");
                instance.dead = Some(why.clone());
                Err(AnalyzerError::new(format!("{method}: {why}")))
            }
            Err(Failure(why)) => {
                let why = limit_hints(&why);
                instance.dead = Some(why.clone());
                Err(AnalyzerError::new(format!("{method}: {why}")))
            }
        }
    }

    /// The level a policy declared (advisory for one the pack did not declare).
    fn declared(&self, policy: &str) -> Enforcement {
        self.info
            .policies
            .iter()
            .find(|p| p.name == policy)
            .map_or(Enforcement::Advisory, |p| p.enforcement)
    }

    /// The pack's violations, checked, at the levels the configuration gives their policies.
    fn violations(
        &self,
        method: &str,
        reported: Vec<wp::Violation>,
        levels: &HashMap<String, Enforcement>,
        stack: bool,
        kind: PolicyKind,
    ) -> Result<Vec<Violation>, AnalyzerError> {
        if reported.len() > cairn_engine::deploy::analyzer::MAX_VIOLATIONS {
            return Err(AnalyzerError::new(format!(
                "{method} answered {} violations (at most {})",
                reported.len(),
                cairn_engine::deploy::analyzer::MAX_VIOLATIONS
            )));
        }
        let mut out = Vec::with_capacity(reported.len());
        for v in reported {
            let Some(policy) = self
                .info
                .policies
                .iter()
                .find(|p| p.name == v.policy && p.kind == kind)
            else {
                return Err(AnalyzerError::new(format!(
                    "{method} reported a violation of {:?}, which is not one of its {} policies",
                    visible_line(&cap_text(&v.policy, 256)),
                    if stack { "stack" } else { "resource" }
                )));
            };
            let enforcement = levels
                .get(&policy.name)
                .copied()
                .unwrap_or(policy.enforcement);
            // Capped before anything else touches it; escapes made visible here, so no later
            // consumer (display, JSON events, logs) sees raw terminal control sequences.
            let message = visible_text(&cap_message(&v.message)).into_owned();
            out.push(Violation {
                policy: policy.name.clone(),
                description: policy.description.clone(),
                message: if message.is_empty() {
                    policy.description.clone()
                } else {
                    format!("{}\n{message}", policy.description)
                },
                enforcement,
                urn: if stack {
                    v.urn.as_deref().and_then(|u| Urn::parse(u).ok())
                } else {
                    None
                },
                severity: policy.severity,
            });
        }
        Ok(out)
    }
}

/// The sandbox names a program's grant where a limit can be raised; a pack's limits are the
/// CLI's settings.
fn limit_hints(why: &str) -> String {
    why.replace(
        "raise it under cairn:program.timeoutSeconds",
        "raise it with CAIRN_POLICY_TIMEOUT",
    )
    .replace(
        "raise it under cairn:program.memoryMiB",
        "raise it with CAIRN_POLICY_MEMORY_MIB",
    )
}

/// Checks the pack's description of itself.
fn admit_info(info: wp::PackInfo) -> Result<AnalyzerInfo, String> {
    check_pack_name(&info.name).map_err(|e| format!("info: the pack name {e}"))?;
    if info.policies.len() > MAX_POLICIES {
        return Err(format!(
            "info: {} policies (at most {MAX_POLICIES})",
            info.policies.len()
        ));
    }
    let mut policies: Vec<PolicyInfo> = Vec::with_capacity(info.policies.len());
    for p in info.policies {
        check_policy_name(&p.name).map_err(|e| format!("info: a policy name {e}"))?;
        if policies.iter().any(|q| q.name == p.name) {
            return Err(format!("info: policy {:?} is declared twice", p.name));
        }
        let config_schema = match p.config_schema {
            None => None,
            Some(text) => Some(schema(&p.name, &text)?),
        };
        policies.push(PolicyInfo {
            description: visible_text(&cap_message(&p.description)).into_owned(),
            enforcement: level(p.enforcement),
            kind: match p.kind {
                wp::PolicyKind::Resource => PolicyKind::Resource,
                wp::PolicyKind::Stack => PolicyKind::Stack,
            },
            severity: p.severity.map(|s| match s {
                wp::PolicySeverity::Low => PolicySeverity::Low,
                wp::PolicySeverity::Medium => PolicySeverity::Medium,
                wp::PolicySeverity::High => PolicySeverity::High,
                wp::PolicySeverity::Critical => PolicySeverity::Critical,
            }),
            config_schema,
            name: p.name,
        });
    }
    Ok(AnalyzerInfo {
        name: info.name,
        version: visible_line(&cap_text(&info.version, 256)).into_owned(),
        supports_config: true,
        policies,
        initial_config: PolicyConfigs::new(),
    })
}

/// A policy's configuration schema: `{"properties": {...}, "required": [...]}` as JSON.
fn schema(policy: &str, text: &str) -> Result<ConfigSchema, String> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(format!(
            "info: policy {policy:?}: a config schema of {} bytes (at most {MAX_SCHEMA_BYTES})",
            text.len()
        ));
    }
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("info: policy {policy:?}: the config schema is not JSON: {e}"))?;
    let properties = value
        .get("properties")
        .and_then(|p| p.as_object())
        .cloned()
        .unwrap_or_default();
    let required = value
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Ok(ConfigSchema {
        properties,
        required,
    })
}

fn level(e: wp::Enforcement) -> Enforcement {
    match e {
        wp::Enforcement::Advisory => Enforcement::Advisory,
        wp::Enforcement::Mandatory => Enforcement::Mandatory,
        wp::Enforcement::Disabled => Enforcement::Disabled,
    }
}

/// The WIT level of a configured one (components have no remediation: those count as
/// mandatory).
fn wit_level(e: Enforcement) -> wp::Enforcement {
    match e {
        Enforcement::Advisory => wp::Enforcement::Advisory,
        Enforcement::Mandatory | Enforcement::Remediate => wp::Enforcement::Mandatory,
        Enforcement::Disabled => wp::Enforcement::Disabled,
    }
}

/// Properties without the engine's internal keys (`__…`), as Pulumi shows them to packs.
fn visible(map: &PropertyMap) -> PropertyMap {
    map.iter()
        .filter(|(k, _)| !k.starts_with("__"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn resource(r: &AnalyzedResource<'_>, stack: bool) -> wp::Resource {
    let state = r.state;
    wp::Resource {
        urn: state.urn.to_string(),
        resource_type: state.resource_type.to_string(),
        name: state.urn.name().to_owned(),
        properties: crate::convert::encode_map(&visible(r.properties)),
        options: wp::ResourceOptions {
            protect: state.protect,
            ignore_changes: state.ignore_changes.clone(),
            delete_before_replace: r.delete_before_replace,
            additional_secret_outputs: state.additional_secret_outputs.clone(),
            aliases: state.aliases.iter().map(|u| u.to_string()).collect(),
            parent: state.parent.as_ref().map(|u| u.to_string()),
        },
        provider: r.provider.map(|p| wp::ProviderResource {
            urn: p.urn.to_string(),
            resource_type: p.resource_type.to_string(),
            name: p.urn.name().to_owned(),
            properties: crate::convert::encode_map(&visible(&p.inputs)),
        }),
        dependencies: if stack {
            state.dependencies.iter().map(|u| u.to_string()).collect()
        } else {
            Vec::new()
        },
    }
}

#[async_trait]
impl Analyzer for WasmPolicyPack {
    fn info(&self) -> &AnalyzerInfo {
        &self.info
    }

    fn location(&self) -> &str {
        &self.location
    }

    async fn configure(&self, config: &PolicyConfigs) -> Result<(), AnalyzerError> {
        let request: Vec<wp::PolicyConfig> = config
            .iter()
            .filter(|(name, _)| self.info.policies.iter().any(|p| &p.name == *name))
            .map(|(name, c)| wp::PolicyConfig {
                policy: name.clone(),
                enforcement: wit_level(c.enforcement.unwrap_or_else(|| self.declared(name))),
                properties: serde_json::Value::Object(c.properties.clone()).to_string(),
            })
            .collect();
        let (result, _) = self
            .call("configure", None, move |world, s| {
                Box::pin(async move {
                    world
                        .cairn_deploy_policy()
                        .call_configure(s, &request)
                        .await
                })
            })
            .await?;
        result.map_err(|e| {
            AnalyzerError::new(format!("configure: {}", crate::convert::message(e)))
        })?;
        let mut instance = self.instance.lock().await;
        for (name, c) in config {
            if let Some(level) = c.enforcement {
                instance.levels.insert(name.clone(), level);
            }
        }
        Ok(())
    }

    async fn analyze(
        &self,
        resource_: &AnalyzedResource<'_>,
    ) -> Result<Vec<Violation>, AnalyzerError> {
        let request = resource(resource_, false);
        let (result, levels) = self
            .call("analyze", Some(&resource_.state.urn), move |world, s| {
                Box::pin(async move { world.cairn_deploy_policy().call_analyze(s, &request).await })
            })
            .await?;
        let reported = result
            .map_err(|e| AnalyzerError::new(format!("analyze: {}", crate::convert::message(e))))?;
        self.violations("analyze", reported, &levels, false, PolicyKind::Resource)
    }

    async fn analyze_stack(
        &self,
        resources: &[AnalyzedResource<'_>],
    ) -> Result<Vec<Violation>, AnalyzerError> {
        if !self
            .info
            .policies
            .iter()
            .any(|p| p.kind == PolicyKind::Stack)
        {
            return Ok(Vec::new());
        }
        let request: Vec<wp::Resource> = resources.iter().map(|r| resource(r, true)).collect();
        let (result, levels) = self
            .call("analyze-stack", None, move |world, s| {
                Box::pin(async move {
                    world
                        .cairn_deploy_policy()
                        .call_analyze_stack(s, &request)
                        .await
                })
            })
            .await?;
        let reported = result.map_err(|e| {
            AnalyzerError::new(format!("analyze-stack: {}", crate::convert::message(e)))
        })?;
        self.violations("analyze-stack", reported, &levels, true, PolicyKind::Stack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(name: &str, schema: Option<&str>) -> wp::PolicyInfo {
        wp::PolicyInfo {
            name: name.to_owned(),
            description: "d".to_owned(),
            enforcement: wp::Enforcement::Advisory,
            kind: wp::PolicyKind::Resource,
            severity: None,
            config_schema: schema.map(str::to_owned),
        }
    }

    fn pack(name: &str, policies: Vec<wp::PolicyInfo>) -> wp::PackInfo {
        wp::PackInfo {
            name: name.to_owned(),
            version: "1.0.0\u{1b}[31m".to_owned(),
            policies,
        }
    }

    #[test]
    fn what_a_pack_says_of_itself_is_checked() {
        let big = format!(
            r#"{{"properties": {{"x": {{"description": "{}"}}}}}}"#,
            "y".repeat(MAX_SCHEMA_BYTES)
        );
        let cases: Vec<(wp::PackInfo, &str)> = vec![
            (pack("", vec![]), "the pack name is empty"),
            (pack("a b", vec![]), "the pack name is not letters, digits"),
            (
                pack("p", vec![policy("bad\u{1b}]0;x", None)]),
                r"a policy name holds control or bidirectional characters: ",
            ),
            (
                pack("p", vec![policy("rtl\u{202e}", None)]),
                "a policy name holds control or bidirectional characters",
            ),
            (
                pack("p", vec![policy(&"n".repeat(300), None)]),
                "a policy name is empty or longer than 256 bytes",
            ),
            (
                pack("p", vec![policy("a", None), policy("a", None)]),
                "policy \"a\" is declared twice",
            ),
            (
                pack("p", vec![policy("a", Some("{not json"))]),
                "policy \"a\": the config schema is not JSON",
            ),
            (
                pack("p", vec![policy("a", Some(&big))]),
                "policy \"a\": a config schema of",
            ),
            (
                pack(
                    "p",
                    (0..=MAX_POLICIES)
                        .map(|i| policy(&format!("p{i}"), None))
                        .collect(),
                ),
                "1001 policies (at most 1000)",
            ),
        ];
        for (info, expected) in cases {
            let error = admit_info(info).unwrap_err();
            assert!(error.contains(expected), "{error:?} lacks {expected:?}");
        }

        let info =
            admit_info(pack("p", vec![policy("a", Some(r#"{"required": ["k"]}"#))])).unwrap();
        assert_eq!(info.version, "1.0.0\\x1b[31m");
        assert_eq!(
            info.policies[0].config_schema.as_ref().unwrap().required,
            ["k"]
        );
    }
}
