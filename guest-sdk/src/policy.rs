//! Policy packs in Rust, as WebAssembly components (`wit/policy.wit`): resource policies check
//! one resource's inputs before it changes, stack policies the stack's resources after the
//! program ran. Run one with `cairn up --policy-pack pack.wasm`.
//!
//! ```rust,standalone_crate
//! use cairn_sdk::policy::serde_json::json;
//! use cairn_sdk::policy::{Enforcement, Policy, PolicyPack};
//!
//! fn pack() -> PolicyPack {
//!     PolicyPack::new("site-policies", env!("CARGO_PKG_VERSION"))
//!         .policy(
//!             Policy::resource("no-world-writable", "Files must not be world-writable.", |r, v| {
//!                 if r.resource_type == "file:index:File" && r.string("mode").is_some_and(|m| m.ends_with('6')) {
//!                     v.report("mode allows anyone to write");
//!                 }
//!             })
//!             .enforcement(Enforcement::Mandatory),
//!         )
//!         .policy(Policy::stack("max-resources", "Keep stacks small.", |s, v| {
//!             let max = s.config().get("max").and_then(|m| m.as_u64()).unwrap_or(50);
//!             if s.resources.len() as u64 > max {
//!                 v.report(format!("{} resources (at most {max})", s.resources.len()));
//!             }
//!         })
//!         .config_schema(json!({"properties": {"max": {"type": "integer", "default": 50}}})))
//! }
//!
//! cairn_sdk::export_policy_pack!(pack);
//! ```
//!
//! The host decides what a violation does: it applies the level the configuration gives the
//! policy (`--policy-pack-config`, Pulumi's JSON format), and the SDK does not run disabled
//! policies. A policy's message is shown under its description.

use std::cell::RefCell;

use serde_json::{Map, Value as Json};

use crate::policy_bindings::exports::cairn::deploy::policy as wp;
use crate::value::PropertyMap;
pub use crate::value::Value;
/// JSON, for configuration schemas and values (`serde_json::json!`).
pub use serde_json;

/// What a violation does (the default, until configuration says otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    Advisory,
    Mandatory,
    Disabled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

/// A resource as a policy sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    pub urn: String,
    pub resource_type: String,
    pub name: String,
    /// Resource policies: the checked inputs; stack policies: the outputs. In a preview,
    /// values not known yet are [`Value::Unknown`].
    pub properties: PropertyMap,
    pub protect: bool,
    pub parent: Option<String>,
    /// Property paths whose changes are ignored.
    pub ignore_changes: Vec<String>,
    pub delete_before_replace: Option<bool>,
    pub additional_secret_outputs: Vec<String>,
    /// Alias URNs.
    pub aliases: Vec<String>,
    /// Stack policies: the URNs it depends on.
    pub dependencies: Vec<String>,
    /// The provider resource managing it (not for components).
    pub provider: Option<Provider>,
}

/// A resource's provider, as a policy sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Provider {
    pub urn: String,
    /// `pulumi:providers:<package>`.
    pub resource_type: String,
    pub name: String,
    /// The provider's inputs (its configuration).
    pub properties: PropertyMap,
}

impl Resource {
    /// A property's text, if it is a (possibly secret) string.
    pub fn string(&self, key: &str) -> Option<&str> {
        match self.properties.get(key)? {
            Value::String(s) => Some(s),
            Value::Secret(inner) => match &**inner {
                Value::String(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    /// A property's number, if it is one.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self.properties.get(key)? {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }
}

/// What a resource policy is given.
pub struct ResourceArgs<'a> {
    pub resource: &'a Resource,
    config: &'a Map<String, Json>,
}

impl std::ops::Deref for ResourceArgs<'_> {
    type Target = Resource;
    fn deref(&self) -> &Resource {
        self.resource
    }
}

impl ResourceArgs<'_> {
    /// The policy's configuration (schema defaults filled in by the host).
    pub fn config(&self) -> &Map<String, Json> {
        self.config
    }
}

/// What a stack policy is given.
pub struct StackArgs<'a> {
    pub resources: &'a [Resource],
    config: &'a Map<String, Json>,
}

impl StackArgs<'_> {
    pub fn config(&self) -> &Map<String, Json> {
        self.config
    }
}

/// Where a policy reports its violations.
#[derive(Debug, Default)]
pub struct Violations {
    found: Vec<(String, Option<String>)>,
}

impl Violations {
    /// Reports a violation with this message.
    pub fn report(&mut self, message: impl Into<String>) {
        self.found.push((message.into(), None));
    }

    /// Stack policies: reports a violation of one resource.
    pub fn report_resource(&mut self, urn: impl Into<String>, message: impl Into<String>) {
        self.found.push((message.into(), Some(urn.into())));
    }
}

type ResourceCheck = Box<dyn Fn(&ResourceArgs<'_>, &mut Violations)>;
type StackCheck = Box<dyn Fn(&StackArgs<'_>, &mut Violations)>;

enum Check {
    Resource(ResourceCheck),
    Stack(StackCheck),
}

/// One policy.
pub struct Policy {
    name: String,
    description: String,
    enforcement: Enforcement,
    severity: Option<Severity>,
    config_schema: Option<Json>,
    check: Check,
}

impl Policy {
    /// A policy checking each resource (advisory unless set otherwise).
    pub fn resource(
        name: impl Into<String>,
        description: impl Into<String>,
        check: impl Fn(&ResourceArgs<'_>, &mut Violations) + 'static,
    ) -> Policy {
        Policy::new(name, description, Check::Resource(Box::new(check)))
    }

    /// A policy checking the stack's resources together.
    pub fn stack(
        name: impl Into<String>,
        description: impl Into<String>,
        check: impl Fn(&StackArgs<'_>, &mut Violations) + 'static,
    ) -> Policy {
        Policy::new(name, description, Check::Stack(Box::new(check)))
    }

    fn new(name: impl Into<String>, description: impl Into<String>, check: Check) -> Policy {
        Policy {
            name: name.into(),
            description: description.into(),
            enforcement: Enforcement::Advisory,
            severity: None,
            config_schema: None,
            check,
        }
    }

    pub fn enforcement(mut self, enforcement: Enforcement) -> Policy {
        self.enforcement = enforcement;
        self
    }

    pub fn severity(mut self, severity: Severity) -> Policy {
        self.severity = Some(severity);
        self
    }

    /// The JSON schema of the policy's configuration: `{"properties": {...}, "required":
    /// [...]}` (`default`s are filled in before the policy sees its configuration).
    pub fn config_schema(mut self, schema: Json) -> Policy {
        self.config_schema = Some(schema);
        self
    }
}

/// A policy pack: a name (letters, digits, `-`, `_`, `.`), a version and policies.
pub struct PolicyPack {
    name: String,
    version: String,
    policies: Vec<Policy>,
}

impl PolicyPack {
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> PolicyPack {
        PolicyPack {
            name: name.into(),
            version: version.into(),
            policies: Vec::new(),
        }
    }

    pub fn policy(mut self, policy: Policy) -> PolicyPack {
        self.policies.push(policy);
        self
    }
}

/// The pack and each policy's configuration, once per instance.
struct State {
    pack: PolicyPack,
    /// Per policy: its level and configuration, as the host last configured them.
    config: Vec<(Enforcement, Map<String, Json>)>,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

fn with_state<R>(make: fn() -> PolicyPack, f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let state = slot.get_or_insert_with(|| {
            let pack = make();
            let config = pack
                .policies
                .iter()
                .map(|p| (p.enforcement, Map::new()))
                .collect();
            State { pack, config }
        });
        f(state)
    })
}

fn wit_enforcement(e: Enforcement) -> wp::Enforcement {
    match e {
        Enforcement::Advisory => wp::Enforcement::Advisory,
        Enforcement::Mandatory => wp::Enforcement::Mandatory,
        Enforcement::Disabled => wp::Enforcement::Disabled,
    }
}

/// `info`, for the export glue.
#[doc(hidden)]
pub fn info(make: fn() -> PolicyPack) -> wp::PackInfo {
    with_state(make, |state| wp::PackInfo {
        name: state.pack.name.clone(),
        version: state.pack.version.clone(),
        policies: state
            .pack
            .policies
            .iter()
            .map(|p| wp::PolicyInfo {
                name: p.name.clone(),
                description: p.description.clone(),
                enforcement: wit_enforcement(p.enforcement),
                kind: match p.check {
                    Check::Resource(_) => wp::PolicyKind::Resource,
                    Check::Stack(_) => wp::PolicyKind::Stack,
                },
                severity: p.severity.map(|s| match s {
                    Severity::Low => wp::PolicySeverity::Low,
                    Severity::Medium => wp::PolicySeverity::Medium,
                    Severity::High => wp::PolicySeverity::High,
                    Severity::Critical => wp::PolicySeverity::Critical,
                }),
                config_schema: p.config_schema.as_ref().map(Json::to_string),
            })
            .collect(),
    })
}

/// `configure`, for the export glue.
#[doc(hidden)]
pub fn configure(make: fn() -> PolicyPack, config: Vec<wp::PolicyConfig>) -> Result<(), String> {
    with_state(make, |state| {
        for c in config {
            let Some(i) = state.pack.policies.iter().position(|p| p.name == c.policy) else {
                continue;
            };
            let properties = match serde_json::from_str(&c.properties) {
                Ok(Json::Object(map)) => map,
                Ok(_) | Err(_) => {
                    return Err(format!(
                        "policy {}: the configuration is not a JSON object",
                        c.policy
                    ));
                }
            };
            let enforcement = match c.enforcement {
                wp::Enforcement::Advisory => Enforcement::Advisory,
                wp::Enforcement::Mandatory => Enforcement::Mandatory,
                wp::Enforcement::Disabled => Enforcement::Disabled,
            };
            state.config[i] = (enforcement, properties);
        }
        Ok(())
    })
}

fn resource_of(r: wp::Resource) -> Result<Resource, String> {
    let properties = crate::wire::decode_map(r.properties)
        .map_err(|e| format!("{}: the host sent malformed properties: {e}", r.urn))?;
    let provider = match r.provider {
        None => None,
        Some(p) => Some(Provider {
            properties: crate::wire::decode_map(p.properties)
                .map_err(|e| format!("{}: the host sent malformed properties: {e}", p.urn))?,
            urn: p.urn,
            resource_type: p.resource_type,
            name: p.name,
        }),
    };
    Ok(Resource {
        urn: r.urn,
        resource_type: r.resource_type,
        name: r.name,
        properties,
        protect: r.options.protect,
        parent: r.options.parent,
        ignore_changes: r.options.ignore_changes,
        delete_before_replace: r.options.delete_before_replace,
        additional_secret_outputs: r.options.additional_secret_outputs,
        aliases: r.options.aliases,
        dependencies: r.dependencies,
        provider,
    })
}

/// `analyze`, for the export glue.
#[doc(hidden)]
pub fn analyze(make: fn() -> PolicyPack, r: wp::Resource) -> Result<Vec<wp::Violation>, String> {
    let resource = resource_of(r)?;
    with_state(make, |state| {
        let mut out = Vec::new();
        for (policy, (enforcement, config)) in state.pack.policies.iter().zip(&state.config) {
            let Check::Resource(check) = &policy.check else {
                continue;
            };
            if *enforcement == Enforcement::Disabled {
                continue;
            }
            let mut found = Violations::default();
            check(
                &ResourceArgs {
                    resource: &resource,
                    config,
                },
                &mut found,
            );
            out.extend(found.found.into_iter().map(|(message, _)| wp::Violation {
                policy: policy.name.clone(),
                message,
                urn: None,
            }));
        }
        Ok(out)
    })
}

/// `analyze-stack`, for the export glue.
#[doc(hidden)]
pub fn analyze_stack(
    make: fn() -> PolicyPack,
    resources: Vec<wp::Resource>,
) -> Result<Vec<wp::Violation>, String> {
    let resources = resources
        .into_iter()
        .map(resource_of)
        .collect::<Result<Vec<_>, _>>()?;
    with_state(make, |state| {
        let mut out = Vec::new();
        for (policy, (enforcement, config)) in state.pack.policies.iter().zip(&state.config) {
            let Check::Stack(check) = &policy.check else {
                continue;
            };
            if *enforcement == Enforcement::Disabled {
                continue;
            }
            let mut found = Violations::default();
            check(
                &StackArgs {
                    resources: &resources,
                    config,
                },
                &mut found,
            );
            out.extend(found.found.into_iter().map(|(message, urn)| wp::Violation {
                policy: policy.name.clone(),
                message,
                urn,
            }));
        }
        Ok(out)
    })
}

/// Exports a policy pack: `make` builds it (once per instance).
///
/// ```rust,standalone_crate
/// use cairn_sdk::policy::PolicyPack;
///
/// fn pack() -> PolicyPack {
///     PolicyPack::new("empty", "0.1.0")
/// }
///
/// cairn_sdk::export_policy_pack!(pack);
/// ```
#[macro_export]
macro_rules! export_policy_pack {
    ($make:path) => {
        const _: () = {
            struct __CairnPolicyPack;
            impl $crate::policy_bindings::exports::cairn::deploy::policy::Guest for __CairnPolicyPack {
                fn info() -> $crate::policy_bindings::exports::cairn::deploy::policy::PackInfo {
                    $crate::policy::info($make)
                }
                fn configure(
                    config: ::std::vec::Vec<
                        $crate::policy_bindings::exports::cairn::deploy::policy::PolicyConfig,
                    >,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    $crate::policy::configure($make, config)
                }
                fn analyze(
                    resource: $crate::policy_bindings::exports::cairn::deploy::policy::Resource,
                ) -> ::core::result::Result<
                    ::std::vec::Vec<$crate::policy_bindings::exports::cairn::deploy::policy::Violation>,
                    ::std::string::String,
                > {
                    $crate::policy::analyze($make, resource)
                }
                fn analyze_stack(
                    resources: ::std::vec::Vec<
                        $crate::policy_bindings::exports::cairn::deploy::policy::Resource,
                    >,
                ) -> ::core::result::Result<
                    ::std::vec::Vec<$crate::policy_bindings::exports::cairn::deploy::policy::Violation>,
                    ::std::string::String,
                > {
                    $crate::policy::analyze_stack($make, resources)
                }
            }
            $crate::policy_bindings::__export_policy_world!(
                __CairnPolicyPack with_types_in $crate::policy_bindings
            );
        };
    };
}
