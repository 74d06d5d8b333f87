//! [`GrpcAnalyzer`]: the engine's [`Analyzer`] implemented by a Pulumi policy pack — a
//! directory with a `PulumiPolicy.yaml`, written with `pulumi-policy` (Python) or
//! `@pulumi/policy` (Node.js) — over the gRPC `Analyzer` protocol.
//!
//! Start-up follows Pulumi's language hosts (`RunPlugin` for kind `analyzer`): Python runs
//! `python -u -m pulumi.policy <engine> <pack>` and Node.js
//! `node <pack>/node_modules/@pulumi/pulumi/cmd/run-policy-pack <engine> <pack>`, in the pack's
//! directory, with `PULUMI_PROJECT`, `PULUMI_STACK`, `PULUMI_ORGANIZATION`, `PULUMI_DRY_RUN`
//! (and the `PULUMI_NODEJS_*` forms). The pack prints its port; then `Handshake` and
//! `ConfigureStack` (both optional), `GetAnalyzerInfo`, and `Configure` with the reconciled
//! policy configuration. Pulumi hands a pack the stack's configuration in `PULUMI_CONFIG`;
//! Cairn's small bootstraps read it from the pack's stdin into the process's own environment
//! first, so no secret appears in another process's view of its environment or arguments.
//!
//! Everything a pack answers is checked before the engine sees it: names (the pack's and its
//! policies'), enforcement levels, URNs, message sizes and counts. A pack that crashes, hangs
//! past the call timeout, or answers what cannot be accepted fails the deployment with an
//! error naming it.
//!
//! # Policy packs are untrusted
//!
//! What a pack answers is checked where it enters (`host/grpc/src/analyzer.rs`, `analyzer::admit`):
//! pack and policy names (Pulumi's pack-name rule, lengths, no control characters), enforcement
//! levels that exist, URNs that parse (a stack violation naming no resource of the stack is about
//! the stack), messages capped, at most 10,000 violations per call, remediated inputs that pass
//! `limits::check_properties` and keep the program's secrets. A pack that exits, hangs past the
//! call timeout or answers garbage fails the deployment with an error naming it. Packs get the
//! stack configuration (secrets decrypted, as Pulumi gives it) on stdin, never in their arguments
//! or environment.
//!
//! # Policy packs without a language host
//!
//! Pulumi starts a pack through its language host's `RunPlugin` and a policy proxy that intercepts
//! `ConfigureStack` to put the stack's config into the pack's environment. Cairn starts the same
//! SDK entry points (`pulumi.policy`, `run-policy-pack`) directly through small bootstraps that
//! read the config from stdin into the process's own environment; the pack's gRPC protocol is
//! unchanged.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::deploy::analyzer::schema::ConfigSchema;
use cairn_engine::deploy::analyzer::{
    AnalyzedResource, Analyzer, AnalyzerError, AnalyzerInfo, Enforcement, MAX_NAME, PolicyConfig,
    PolicyConfigs, PolicyInfo, PolicyKind, PolicySeverity, Remediation, Violation,
};
use cairn_engine::limits::cap_message;
use cairn_engine::text::visible_text;
use cairn_engine::urn::Urn;
use cairn_engine::value::PropertyMap;
use prost_types::{Struct, Value, value::Kind};
use tonic::transport::Channel;

use crate::convert::{Marshal, from_struct, plain_json, to_struct};
use crate::plugin::{OutputSink, PluginCommand, PluginError, PluginProcess, connect, launch};
use crate::proto::pulumirpc as rpc;
use crate::proto::pulumirpc::analyzer_client::AnalyzerClient;
use crate::wire;

/// How long `Handshake`, `ConfigureStack` and `GetAnalyzerInfo` may take at start-up.
const INTRODUCE_TIMEOUT: Duration = Duration::from_secs(30);

/// The most policies a pack may describe.
const MAX_POLICIES: usize = 1000;

/// How a pack's language runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackRuntime {
    /// `python` (the pack's `virtualenv`, else `python3`), running `pulumi.policy`.
    Python { python: PathBuf },
    /// `node` running the pack's `@pulumi/pulumi/cmd/run-policy-pack`.
    Node { node: PathBuf, run_script: PathBuf },
}

/// A policy pack directory, ready to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackSource {
    pub dir: PathBuf,
    pub runtime: PackRuntime,
    /// `PulumiPolicy.yaml`'s `version`, which wins over the one the pack reports.
    pub version: Option<String>,
    /// How the display names it (the `--policy-pack` argument).
    pub location: String,
}

/// The stack a pack analyzes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StackContext {
    pub project: String,
    pub stack: String,
    pub organization: String,
    pub dry_run: bool,
    /// The stack's configuration (secrets decrypted), `namespace:key` → text.
    pub config: HashMap<String, String>,
    pub secret_keys: Vec<String>,
}

/// Reads the configuration from stdin into the process's environment (where `pulumi.policy`
/// and `pulumi_policy` read it), then runs `pulumi.policy` with the engine address and the
/// pack, as Pulumi's language host does.
const PYTHON_BOOTSTRAP: &str = r#"
import json, os, runpy, sys
settings = json.loads(sys.stdin.buffer.read() or b"{}")
os.environ["PULUMI_CONFIG"] = json.dumps(settings.get("config", {}))
os.environ["PULUMI_CONFIG_SECRET_KEYS"] = json.dumps(settings.get("secretKeys", []))
pack, engine = sys.argv[1], sys.argv[-1]
sys.argv = ["pulumi.policy", engine, pack]
runpy.run_module("pulumi.policy", run_name="__main__", alter_sys=True)
"#;

/// The same for Node.js: configuration into `process.env`, then the SDK's run-policy-pack
/// script (`process.argv[1]`) with the engine address and the pack.
const NODE_BOOTSTRAP: &str = concat!(
    crate::language::node_settings_from_stdin!(),
    r#"process.execArgv = [];
const [node, script, pack, engine] = process.argv;
process.argv = [node, script, engine, pack];
require(path.resolve(script));
"#
);

/// A running policy pack.
pub struct GrpcAnalyzer {
    /// `policy pack <location>`, for messages before the pack's name is known.
    label: String,
    client: AnalyzerClient<Channel>,
    process: Arc<PluginProcess>,
    info: AnalyzerInfo,
    location: String,
    /// Whether `Remediate` is called: some policy remediates (by the pack's default or the
    /// configuration) and the pack implements it. Pulumi calls it for every resource; a pack
    /// without remediation policies answers nothing, so the call is skipped.
    remediates: AtomicBool,
}

impl GrpcAnalyzer {
    /// Starts the pack, introduces the stack, and asks what the pack is.
    pub async fn start(
        source: &PackSource,
        stack: &StackContext,
        engine_address: &str,
        start_timeout: Duration,
        output: OutputSink,
    ) -> Result<GrpcAnalyzer, AnalyzerError> {
        let label = format!("policy pack {}", source.location);
        let command = command(source, stack, &label);
        let process = launch(&command, engine_address, start_timeout, output)
            .await
            .map_err(|e| AnalyzerError::new(started(&e)))?;
        let channel = connect(&label, process.port, Duration::from_secs(10))
            .await
            .map_err(|e| AnalyzerError::new(e.to_string()))?;
        let client = AnalyzerClient::new(channel)
            .max_decoding_message_size(wire::max_message_bytes())
            .max_encoding_message_size(usize::MAX);
        let mut analyzer = GrpcAnalyzer {
            label,
            client,
            process: Arc::new(process),
            info: AnalyzerInfo::default(),
            location: source.location.clone(),
            remediates: AtomicBool::new(true),
        };
        analyzer.introduce(source, stack, engine_address).await?;
        Ok(analyzer)
    }

    /// `Handshake` and `ConfigureStack` (either may be unimplemented), then `GetAnalyzerInfo`.
    async fn introduce(
        &mut self,
        source: &PackSource,
        stack: &StackContext,
        engine_address: &str,
    ) -> Result<(), AnalyzerError> {
        let dir = source.dir.display().to_string();
        let mut client = self.client.clone();
        let handshake = client.handshake(rpc::AnalyzerHandshakeRequest {
            engine_address: engine_address.to_owned(),
            root_directory: Some(dir.clone()),
            program_directory: Some(dir),
        });
        self.optional("Handshake", timed(handshake).await).await?;
        let configure = client.configure_stack(rpc::AnalyzerStackConfigureRequest {
            stack: stack.stack.clone(),
            project: stack.project.clone(),
            organization: stack.organization.clone(),
            dry_run: stack.dry_run,
            config_secret_keys: stack.secret_keys.clone(),
            config: stack.config.clone(),
            tags: HashMap::new(),
        });
        self.optional("ConfigureStack", timed(configure).await)
            .await?;
        let info = match timed(client.get_analyzer_info(())).await {
            Ok(info) => info.into_inner(),
            Err(s) => return Err(self.failed("GetAnalyzerInfo", &s).await),
        };
        self.info = self.admit_info(info, source.version.as_deref())?;
        let remediates = self
            .info
            .policies
            .iter()
            .any(|p| p.enforcement == Enforcement::Remediate);
        self.remediates.store(remediates, Ordering::Relaxed);
        Ok(())
    }

    /// Accepts an optional call's result: success or `Unimplemented`.
    async fn optional<T>(
        &self,
        method: &str,
        result: Result<T, tonic::Status>,
    ) -> Result<(), AnalyzerError> {
        match result {
            Ok(_) => Ok(()),
            Err(s) if s.code() == tonic::Code::Unimplemented => Ok(()),
            Err(s) => Err(self.failed(method, &s).await),
        }
    }

    /// A failed call: the pack's own words, or that it died (with the end of its stderr).
    /// The engine's message names the pack; this one says where it was loaded from.
    async fn failed(&self, method: &str, status: &tonic::Status) -> AnalyzerError {
        // A broken connection is usually the pack dying: give it a moment to be seen exiting.
        if matches!(
            status.code(),
            tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
        ) {
            for _ in 0..20 {
                if self.process.exit_status().is_some() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        if let Some(exit) = self.process.exit_status() {
            let tail = self.process.stderr_tail();
            let tail = tail.trim();
            return AnalyzerError::new(format!(
                "{method}: the pack ({}) exited ({exit}){}",
                self.location,
                if tail.is_empty() {
                    String::new()
                } else {
                    format!("; its stderr ends with: {}", visible_text(tail))
                }
            ));
        }
        if let Some(message) = wire::oversized(status) {
            return AnalyzerError::new(format!("{method}: {message}"));
        }
        AnalyzerError::new(format!(
            "{method} failed ({}): {}",
            self.location,
            visible_text(&cap_message(status.message()))
        ))
    }

    /// Checks the pack's description of itself.
    fn admit_info(
        &self,
        info: rpc::AnalyzerInfo,
        version: Option<&str>,
    ) -> Result<AnalyzerInfo, AnalyzerError> {
        let bad = |what: String| {
            AnalyzerError::new(format!("{}: GetAnalyzerInfo answered {what}", self.label))
        };
        cairn_engine::deploy::analyzer::check_pack_name(&info.name)
            .map_err(|e| bad(format!("a pack name that {e}")))?;
        if info.policies.len() > MAX_POLICIES {
            return Err(bad(format!(
                "{} policies (at most {MAX_POLICIES})",
                info.policies.len()
            )));
        }
        let mut policies = Vec::with_capacity(info.policies.len());
        for p in info.policies {
            cairn_engine::deploy::analyzer::check_policy_name(&p.name)
                .map_err(|e| bad(format!("a policy name that {e}")))?;
            let enforcement = enforcement(p.enforcement_level).ok_or_else(|| {
                bad(format!(
                    "policy {}: {}",
                    p.name,
                    bad_level(p.enforcement_level)
                ))
            })?;
            let config_schema = match p.config_schema {
                None => None,
                Some(schema) => Some(ConfigSchema {
                    properties: json_object(schema.properties.as_ref())
                        .map_err(|e| bad(format!("policy {}: a config schema {e}", p.name)))?,
                    required: schema.required,
                }),
            };
            policies.push(PolicyInfo {
                description: cap_message(&p.description).into_owned(),
                enforcement,
                kind: match p.policy_type {
                    1 => PolicyKind::Resource,
                    2 => PolicyKind::Stack,
                    _ => PolicyKind::Unknown,
                },
                severity: severity(p.severity),
                config_schema,
                name: p.name,
            });
        }
        let mut initial_config = PolicyConfigs::new();
        for (name, config) in info.initial_config {
            let enforcement = enforcement(config.enforcement_level).ok_or_else(|| {
                bad(format!(
                    "initial config {name}: {}",
                    bad_level(config.enforcement_level)
                ))
            })?;
            let properties = json_object(config.properties.as_ref())
                .map_err(|e| bad(format!("initial config {name}: {e}")))?;
            initial_config.insert(
                name,
                PolicyConfig {
                    enforcement: Some(enforcement),
                    properties,
                },
            );
        }
        let version = version.map_or(info.version, str::to_owned);
        Ok(AnalyzerInfo {
            name: info.name,
            version: cairn_engine::limits::cap_text(&version, MAX_NAME).into_owned(),
            supports_config: info.supports_config,
            policies,
            initial_config,
        })
    }

    /// The pack's diagnostics as violations; `stack`: URNs the pack names are kept (a
    /// resource policy's violations are about its resource).
    fn violations(
        &self,
        method: &str,
        response: rpc::AnalyzeResponse,
        stack: bool,
    ) -> Result<Vec<Violation>, AnalyzerError> {
        if response.diagnostics.len() > cairn_engine::deploy::analyzer::MAX_VIOLATIONS {
            return Err(AnalyzerError::new(format!(
                "{}: {method} answered {} diagnostics (at most {})",
                self.label,
                response.diagnostics.len(),
                cairn_engine::deploy::analyzer::MAX_VIOLATIONS
            )));
        }
        response
            .diagnostics
            .into_iter()
            .map(|d| {
                let enforcement = enforcement(d.enforcement_level).ok_or_else(|| {
                    AnalyzerError::new(format!(
                        "{method} answered {} for policy {}",
                        bad_level(d.enforcement_level),
                        visible_text(&cairn_engine::limits::cap_text(&d.policy_name, MAX_NAME))
                    ))
                })?;
                Ok(Violation {
                    policy: d.policy_name,
                    description: d.description,
                    message: d.message,
                    enforcement,
                    // A URN the pack names that is not one is dropped: the stack is at fault.
                    urn: if stack { Urn::parse(&d.urn).ok() } else { None },
                    severity: severity(d.severity),
                })
            })
            .collect()
    }
}

/// The command that starts a pack.
fn command(source: &PackSource, stack: &StackContext, label: &str) -> PluginCommand {
    let pack = source.dir.display().to_string();
    let dry_run = if stack.dry_run { "true" } else { "false" };
    let mut env = vec![
        ("PULUMI_PROJECT".to_owned(), stack.project.clone()),
        ("PULUMI_STACK".to_owned(), stack.stack.clone()),
        ("PULUMI_ORGANIZATION".to_owned(), stack.organization.clone()),
        ("PULUMI_DRY_RUN".to_owned(), dry_run.to_owned()),
    ];
    let mut command = match &source.runtime {
        PackRuntime::Python { python } => {
            let mut command = PluginCommand::new(label, python);
            command.args = vec!["-u".into(), "-c".into(), PYTHON_BOOTSTRAP.into(), pack];
            env.push(("PYTHONUNBUFFERED".into(), "1".into()));
            command
        }
        PackRuntime::Node { node, run_script } => {
            let mut command = PluginCommand::new(label, node);
            command.args = vec![
                "-e".into(),
                NODE_BOOTSTRAP.into(),
                run_script.display().to_string(),
                pack,
            ];
            for (key, value) in [
                ("PULUMI_NODEJS_PROJECT", &stack.project),
                ("PULUMI_NODEJS_STACK", &stack.stack),
                ("PULUMI_NODEJS_ORGANIZATION", &stack.organization),
            ] {
                env.push((key.into(), value.clone()));
            }
            env.push(("PULUMI_NODEJS_DRY_RUN".into(), dry_run.into()));
            command
        }
    };
    let mut config: Vec<(&String, &String)> = stack.config.iter().collect();
    config.sort();
    let config: serde_json::Map<String, serde_json::Value> = config
        .into_iter()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
        .collect();
    let settings = serde_json::json!({ "config": config, "secretKeys": stack.secret_keys });
    command.stdin = Some(serde_json::to_vec(&settings).unwrap_or_else(|_| b"{}".to_vec()));
    command.dir = Some(source.dir.clone());
    command.env = env;
    command
}

/// A start-up failure in a pack's words.
fn started(e: &PluginError) -> String {
    match e {
        PluginError::ExitedEarly { .. } => {
            format!("{e} (is its runtime and the policy SDK installed?)")
        }
        other => other.to_string(),
    }
}

async fn timed<T>(
    call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<tonic::Response<T>, tonic::Status> {
    tokio::time::timeout(INTRODUCE_TIMEOUT, call)
        .await
        .unwrap_or_else(|_| {
            Err(tonic::Status::deadline_exceeded(format!(
                "no answer within {} s",
                INTRODUCE_TIMEOUT.as_secs()
            )))
        })
}

fn enforcement(level: i32) -> Option<Enforcement> {
    match rpc::EnforcementLevel::try_from(level).ok()? {
        rpc::EnforcementLevel::Advisory => Some(Enforcement::Advisory),
        rpc::EnforcementLevel::Mandatory => Some(Enforcement::Mandatory),
        rpc::EnforcementLevel::Disabled => Some(Enforcement::Disabled),
        rpc::EnforcementLevel::Remediate => Some(Enforcement::Remediate),
    }
}

fn bad_level(level: i32) -> String {
    format!("an enforcement level that does not exist ({level})")
}

fn level_to_rpc(level: Enforcement) -> i32 {
    (match level {
        Enforcement::Advisory => rpc::EnforcementLevel::Advisory,
        Enforcement::Mandatory => rpc::EnforcementLevel::Mandatory,
        Enforcement::Disabled => rpc::EnforcementLevel::Disabled,
        Enforcement::Remediate => rpc::EnforcementLevel::Remediate,
    }) as i32
}

fn severity(value: i32) -> Option<PolicySeverity> {
    match rpc::PolicySeverity::try_from(value).ok()? {
        rpc::PolicySeverity::Low => Some(PolicySeverity::Low),
        rpc::PolicySeverity::Medium => Some(PolicySeverity::Medium),
        rpc::PolicySeverity::High => Some(PolicySeverity::High),
        rpc::PolicySeverity::Critical => Some(PolicySeverity::Critical),
        rpc::PolicySeverity::Unspecified => None,
    }
}

/// A `Struct` the pack sent, as JSON (checked as any value is).
fn json_object(s: Option<&Struct>) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let map = from_struct(s).map_err(|e| format!("that cannot be read: {e}"))?;
    Ok(map
        .iter()
        .map(|(k, v)| (k.clone(), plain_json(v)))
        .collect())
}

/// JSON as a protobuf `Value`.
fn json_value(value: &serde_json::Value) -> Value {
    let kind = match value {
        serde_json::Value::Null => Kind::NullValue(0),
        serde_json::Value::Bool(b) => Kind::BoolValue(*b),
        serde_json::Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        serde_json::Value::String(s) => Kind::StringValue(s.clone()),
        serde_json::Value::Array(items) => Kind::ListValue(prost_types::ListValue {
            values: items.iter().map(json_value).collect(),
        }),
        serde_json::Value::Object(map) => Kind::StructValue(json_struct(map)),
    };
    Value { kind: Some(kind) }
}

fn json_struct(map: &serde_json::Map<String, serde_json::Value>) -> Struct {
    Struct {
        fields: map
            .iter()
            .map(|(k, v)| (k.clone(), json_value(v)))
            .collect(),
    }
}

/// Secrets as secrets and unknowns as unknowns (policies see both); resource references as
/// their URNs (or IDs).
const MARSHAL: Marshal = Marshal {
    secrets: true,
    resources: false,
    outputs: false,
};

/// The properties a pack sees: without the engine's internal keys (`__…`), as Pulumi sends
/// them to `Analyze` (not to `Remediate`).
fn properties(map: &PropertyMap, internal: bool) -> Struct {
    if internal {
        return to_struct(map, MARSHAL);
    }
    let visible: PropertyMap = map
        .iter()
        .filter(|(k, _)| !k.starts_with("__"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    to_struct(&visible, MARSHAL)
}

fn options(resource: &AnalyzedResource<'_>) -> rpc::AnalyzerResourceOptions {
    let state = resource.state;
    let timeouts = state.custom_timeouts.as_ref();
    rpc::AnalyzerResourceOptions {
        protect: state.protect,
        ignore_changes: state.ignore_changes.clone(),
        delete_before_replace: resource.delete_before_replace.unwrap_or(false),
        delete_before_replace_defined: resource.delete_before_replace.is_some(),
        additional_secret_outputs: state.additional_secret_outputs.clone(),
        aliases: state.aliases.iter().map(|u| u.to_string()).collect(),
        custom_timeouts: Some(rpc::analyzer_resource_options::CustomTimeouts {
            create: timeouts.map_or(0.0, |t| t.create),
            update: timeouts.map_or(0.0, |t| t.update),
            delete: timeouts.map_or(0.0, |t| t.delete),
            read: timeouts.map_or(0.0, |t| t.read),
        }),
        parent: state
            .parent
            .as_ref()
            .map(|u| u.to_string())
            .unwrap_or_default(),
    }
}

fn provider(resource: &AnalyzedResource<'_>) -> Option<rpc::AnalyzerProviderResource> {
    resource.provider.map(|p| rpc::AnalyzerProviderResource {
        r#type: p.resource_type.to_string(),
        properties: Some(properties(&p.inputs, false)),
        urn: p.urn.to_string(),
        name: p.urn.name().to_owned(),
    })
}

fn request(resource: &AnalyzedResource<'_>, internal: bool) -> rpc::AnalyzeRequest {
    let state = resource.state;
    rpc::AnalyzeRequest {
        r#type: state.resource_type.to_string(),
        properties: Some(properties(resource.properties, internal)),
        urn: state.urn.to_string(),
        name: state.urn.name().to_owned(),
        options: Some(options(resource)),
        provider: provider(resource),
    }
}

#[async_trait]
impl Analyzer for GrpcAnalyzer {
    fn info(&self) -> &AnalyzerInfo {
        &self.info
    }

    fn location(&self) -> &str {
        &self.location
    }

    async fn configure(&self, config: &PolicyConfigs) -> Result<(), AnalyzerError> {
        if config.is_empty() {
            return Ok(());
        }
        let remediates = config
            .values()
            .any(|c| c.enforcement == Some(Enforcement::Remediate));
        let policy_config = config
            .iter()
            .map(|(name, c)| {
                (
                    name.clone(),
                    rpc::PolicyConfig {
                        enforcement_level: level_to_rpc(
                            c.enforcement.unwrap_or(Enforcement::Advisory),
                        ),
                        properties: Some(json_struct(&c.properties)),
                    },
                )
            })
            .collect();
        if let Err(s) = self
            .client
            .clone()
            .configure(rpc::ConfigureAnalyzerRequest { policy_config })
            .await
        {
            return Err(self.failed("Configure", &s).await);
        }
        self.remediates.store(remediates, Ordering::Relaxed);
        Ok(())
    }

    async fn analyze(
        &self,
        resource: &AnalyzedResource<'_>,
    ) -> Result<Vec<Violation>, AnalyzerError> {
        let response = match self.client.clone().analyze(request(resource, false)).await {
            Ok(response) => response.into_inner(),
            Err(s) => return Err(self.failed("Analyze", &s).await),
        };
        self.violations("Analyze", response, false)
    }

    async fn analyze_stack(
        &self,
        resources: &[AnalyzedResource<'_>],
    ) -> Result<Vec<Violation>, AnalyzerError> {
        let resources = resources
            .iter()
            .map(|r| {
                let state = r.state;
                rpc::AnalyzerResource {
                    r#type: state.resource_type.to_string(),
                    properties: Some(properties(r.properties, false)),
                    urn: state.urn.to_string(),
                    name: state.urn.name().to_owned(),
                    options: Some(options(r)),
                    provider: provider(r),
                    parent: state
                        .parent
                        .as_ref()
                        .map(|u| u.to_string())
                        .unwrap_or_default(),
                    dependencies: state.dependencies.iter().map(|u| u.to_string()).collect(),
                    property_dependencies: state
                        .property_dependencies
                        .iter()
                        .filter(|(_, deps)| !deps.is_empty())
                        .map(|(k, deps)| {
                            (
                                k.clone(),
                                rpc::AnalyzerPropertyDependencies {
                                    urns: deps.iter().map(|u| u.to_string()).collect(),
                                },
                            )
                        })
                        .collect(),
                }
            })
            .collect();
        match self
            .client
            .clone()
            .analyze_stack(rpc::AnalyzeStackRequest { resources })
            .await
        {
            Ok(response) => self.violations("AnalyzeStack", response.into_inner(), true),
            Err(s) if s.code() == tonic::Code::Unimplemented => Ok(Vec::new()),
            Err(s) => Err(self.failed("AnalyzeStack", &s).await),
        }
    }

    async fn remediate(
        &self,
        resource: &AnalyzedResource<'_>,
    ) -> Result<Vec<Remediation>, AnalyzerError> {
        if !self.remediates.load(Ordering::Relaxed) {
            return Ok(Vec::new());
        }
        let response = match self.client.clone().remediate(request(resource, true)).await {
            Ok(response) => response.into_inner(),
            Err(s) if s.code() == tonic::Code::Unimplemented => {
                self.remediates.store(false, Ordering::Relaxed);
                return Ok(Vec::new());
            }
            Err(s) => return Err(self.failed("Remediate", &s).await),
        };
        response
            .remediations
            .into_iter()
            .map(|r| {
                let result = if r.diagnostic.is_empty() {
                    Ok(from_struct(r.properties.as_ref()).map_err(|e| {
                        AnalyzerError::new(format!(
                            "{}: Remediate (policy {}) answered properties that cannot be read: {e}",
                            self.label,
                            visible_text(&cairn_engine::limits::cap_text(&r.policy_name, MAX_NAME))
                        ))
                    })?)
                } else {
                    Err(r.diagnostic)
                };
                Ok(Remediation {
                    policy: r.policy_name,
                    description: r.description,
                    result,
                })
            })
            .collect()
    }
}
