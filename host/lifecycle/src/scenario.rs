//! The scenario file format (YAML). See `scenarios/README.md` for the reference.

use cairn_test_provider::ProviderSpec;
use indexmap::IndexMap;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_yaml_ng::{Mapping, Value as Yaml};

/// One scenario: a sequence of deployments against one stack, one "cloud" and one provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scenario {
    pub description: String,
    /// Provider behaviour for every deployment (a deployment's `provider` overrides fields).
    #[serde(default, deserialize_with = "provider_spec")]
    pub provider: ProviderSpec,
    /// Resources that exist in the cloud before the first deployment (by ID).
    #[serde(default)]
    pub cloud: IndexMap<String, CloudSeed>,
    pub deployments: Vec<DeploymentSpec>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Op {
    Up,
    Preview,
    Refresh,
    Destroy,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeploymentSpec {
    pub op: Op,
    /// A label for failure messages.
    #[serde(default)]
    pub name: Option<String>,
    /// With `refresh` / `destroy`: run as a preview.
    #[serde(default)]
    pub preview: bool,
    /// The program; omitted: the previous deployment's program.
    #[serde(default)]
    pub program: Option<Vec<Decl>>,
    /// Overrides of the scenario's provider behaviour, for this deployment only.
    #[serde(default, deserialize_with = "some_provider_spec")]
    pub provider: Option<ProviderSpec>,
    /// Out-of-band changes to the cloud before this deployment.
    #[serde(default)]
    pub cloud_before: Option<CloudChanges>,
    #[serde(default)]
    pub targets: Vec<String>,
    #[serde(default)]
    pub target_replaces: Vec<String>,
    #[serde(default)]
    pub replaces: Vec<String>,
    #[serde(default)]
    pub excludes: Vec<String>,
    #[serde(default)]
    pub target_dependents: bool,
    /// `--continue-on-error`.
    #[serde(default)]
    pub continue_on_error: bool,
    #[serde(default)]
    pub parallel: Option<usize>,
    /// Stack configuration (`test:region: us-east`).
    #[serde(default)]
    pub config: IndexMap<String, Yaml>,
    /// Policies: a violation when a resource's checked input `property` equals `equals`.
    #[serde(default)]
    pub analyzers: Vec<PolicySpec>,
    /// Simulate a crash: once a provider operation blocks (`block` behaviour), drop the runtime.
    /// The stored state becomes the replay of the journal onto the last checkpoint.
    #[serde(default)]
    pub kill: bool,
    /// Interrupt the deployment (as Ctrl-C does) once a provider create, update or delete
    /// has started, then let it finish.
    #[serde(default)]
    pub interrupt: bool,
    /// Refresh: how to resolve pending creates, by name: `clear` or `{import: ID}`.
    #[serde(default)]
    pub pending_creates: IndexMap<String, PendingCreateSpec>,
    #[serde(default)]
    pub expect: Expect,
}

/// A user's decision about an interrupted create.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PendingCreateSpec {
    /// `clear`
    Word(String),
    /// `{import: ID}`
    Import { import: String },
}

/// One program statement: a resource (`name`), the stack outputs (`stackOutputs`) or a program
/// failure (`fail`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Decl {
    #[serde(default)]
    pub name: Option<String>,
    /// The handle other declarations use (default: the name).
    #[serde(default, rename = "as")]
    pub handle: Option<String>,
    #[serde(default, rename = "type")]
    pub resource_type: Option<String>,
    #[serde(default)]
    pub component: bool,
    #[serde(default)]
    pub inputs: Mapping,
    /// Component outputs (may reference children).
    #[serde(default)]
    pub outputs: Option<Mapping>,
    /// `read`: the ID of an external resource to read.
    #[serde(default)]
    pub read: Option<String>,
    #[serde(default)]
    pub parent: Option<String>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Wait for these declarations first, without depending on them.
    #[serde(default)]
    pub after: Vec<String>,
    /// Wait this long before registering.
    #[serde(default)]
    pub delay_ms: u64,
    /// A declared provider resource.
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub providers: IndexMap<String, String>,
    #[serde(default)]
    pub protect: bool,
    #[serde(default)]
    pub retain_on_delete: bool,
    #[serde(default)]
    pub deleted_with: Option<String>,
    #[serde(default)]
    pub aliases: Vec<AliasSpec>,
    #[serde(default)]
    pub ignore_changes: Vec<String>,
    #[serde(default)]
    pub replace_on_changes: Vec<String>,
    #[serde(default)]
    pub delete_before_replace: Option<bool>,
    #[serde(default)]
    pub additional_secret_outputs: Vec<String>,
    #[serde(default)]
    pub custom_timeouts: Option<Timeouts>,
    #[serde(default, rename = "import")]
    pub import_id: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    /// The stack outputs (values may reference resources).
    #[serde(default)]
    pub stack_outputs: Option<Mapping>,
    /// The program fails with this message (after the `after` declarations).
    #[serde(default)]
    pub fail: Option<String>,
}

impl Decl {
    pub fn key(&self) -> Option<&str> {
        self.handle.as_deref().or(self.name.as_deref())
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeouts {
    #[serde(default)]
    pub create: f64,
    #[serde(default)]
    pub update: f64,
    #[serde(default)]
    pub delete: f64,
}

/// An alias: a full URN (`urn`, short form allowed), or parts (`name`, `type`, `parent`:
/// a declared handle or `$none`, `parentUrn`, `stack`, `project`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AliasSpec {
    #[serde(default)]
    pub urn: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, rename = "type")]
    pub resource_type: Option<String>,
    #[serde(default)]
    pub parent: Option<String>,
    #[serde(default)]
    pub parent_urn: Option<String>,
    #[serde(default)]
    pub stack: Option<String>,
    #[serde(default)]
    pub project: Option<String>,
}

/// Provider behaviour as scenarios write it: behaviour fields at the top, beside `resources`
/// (per resource name) and `configReplaceKeys`.
fn provider_spec<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ProviderSpec, D::Error> {
    let mut map = Mapping::deserialize(deserializer)?;
    let resources = match map.remove("resources") {
        Some(value) => serde_yaml_ng::from_value(value).map_err(D::Error::custom)?,
        None => IndexMap::new(),
    };
    let config_replace_keys = match map.remove("configReplaceKeys") {
        Some(value) => Some(serde_yaml_ng::from_value(value).map_err(D::Error::custom)?),
        None => None,
    };
    let all = serde_yaml_ng::from_value(Yaml::Mapping(map)).map_err(D::Error::custom)?;
    Ok(ProviderSpec {
        all,
        resources,
        config_replace_keys,
    })
}

fn some_provider_spec<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ProviderSpec>, D::Error> {
    provider_spec(deserializer).map(Some)
}

/// A cloud resource, by ID.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CloudSeed {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, rename = "type")]
    pub resource_type: Option<String>,
    #[serde(default)]
    pub inputs: Option<Mapping>,
    #[serde(default)]
    pub outputs: Option<Mapping>,
}

/// Out-of-band changes: `set` replaces or adds whole entries, `patch` sets top-level keys in
/// both inputs and outputs, `delete` removes entries.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CloudChanges {
    #[serde(default)]
    pub set: IndexMap<String, CloudSeed>,
    #[serde(default)]
    pub patch: IndexMap<String, Mapping>,
    #[serde(default)]
    pub delete: Vec<String>,
}

/// Provider calls to compare as a multiset: a list (methods create, read, update, delete) or
/// `{methods: [...], expect: [...]}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CallsExpect {
    List(Vec<String>),
    Of {
        methods: Vec<String>,
        expect: Vec<String>,
    },
}

/// One call whose details are checked: the first call named `call` (`create a`) must have the
/// given fields.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CallDetail {
    pub call: String,
    #[serde(default)]
    pub preview: Option<bool>,
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Subset of the provider instance's configuration.
    #[serde(default)]
    pub config: Option<Mapping>,
    /// Subset of the request's properties (news / inputs).
    #[serde(default)]
    pub news: Option<Mapping>,
    /// Subset of the request's olds (Check's olds; Diff / Update's old inputs).
    #[serde(default)]
    pub olds: Option<Mapping>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    /// The deployment fails and its error contains this text.
    #[serde(default)]
    pub error: Option<String>,
    /// More texts the error contains.
    #[serde(default)]
    pub error_contains: Vec<String>,
    /// Steps (`op name`, alternatives `delete|discard b`) as a multiset; the root stack and
    /// default providers are left out.
    #[serde(default)]
    pub steps: Option<Vec<String>>,
    #[serde(default)]
    pub steps_include: Vec<String>,
    #[serde(default)]
    pub steps_exclude: Vec<String>,
    /// Steps of default providers, as a multiset.
    #[serde(default)]
    pub provider_steps: Option<Vec<String>>,
    /// Steps that failed, as a multiset.
    #[serde(default)]
    pub failed_steps: Option<Vec<String>>,
    /// `[x, y]`: every step x finished before any step y started.
    #[serde(default)]
    pub order: Vec<[String; 2]>,
    #[serde(default)]
    pub calls: Option<CallsExpect>,
    #[serde(default)]
    pub calls_include: Vec<String>,
    #[serde(default)]
    pub calls_exclude: Vec<String>,
    /// `[x, y]`: every call x started before any call y.
    #[serde(default)]
    pub call_order: Vec<[String; 2]>,
    #[serde(default)]
    pub call_details: Vec<CallDetail>,
    /// The stored state after the deployment: resources by name (`name#delete` for copies
    /// marked for deletion), each with the fields to check. Exact set of resources except the
    /// root stack and default providers (checked only when listed).
    #[serde(default)]
    pub state: Option<IndexMap<String, Mapping>>,
    /// Like `state`, but other resources may exist.
    #[serde(default)]
    pub state_include: Option<IndexMap<String, Mapping>>,
    /// Resources that must not be in the stored state.
    #[serde(default)]
    pub state_exclude: Vec<String>,
    /// The deployment's returned snapshot (a preview's plan), resources listed only.
    #[serde(default)]
    pub planned: Option<IndexMap<String, Mapping>>,
    /// The stored state's pending operations (`creating a`).
    #[serde(default)]
    pub pending: Option<Vec<String>>,
    /// The cloud by ID: exact set of IDs; each listed output key must match.
    #[serde(default)]
    pub cloud: Option<IndexMap<String, Option<Mapping>>>,
    /// The stack outputs (stored, and returned when the deployment succeeds).
    #[serde(default)]
    pub outputs: Option<Mapping>,
    /// Registration results by handle: `ok`, `skipped`, or a text the error contains.
    #[serde(default)]
    pub registrations: IndexMap<String, String>,
    /// Texts that warnings (diagnostics of severity warning) must contain.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Texts that error diagnostics must contain.
    #[serde(default)]
    pub error_diagnostics: Vec<String>,
    /// The largest number of Create / Update / Delete calls in flight at once.
    #[serde(default)]
    pub max_concurrent: Option<usize>,
    /// The summary's change counts (`{create: 2}`); unchanged count under `same`.
    #[serde(default)]
    pub changes: Option<IndexMap<String, usize>>,
}

/// One policy of the scenario's analyzer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PolicySpec {
    pub policy: String,
    pub property: String,
    pub equals: Yaml,
    /// `advisory` or `mandatory`.
    pub enforcement: String,
}
