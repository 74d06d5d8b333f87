//! What a scenario asks of the test provider (`provider:` in a scenario file; the component
//! reads it as `behaviour.json` in its cloud directory, in this module's serde form).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// The provider's behaviour for one deployment: `all` for every resource, `resources`
/// overriding fields per resource name.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ProviderSpec {
    pub all: Behaviour,
    pub resources: IndexMap<String, Behaviour>,
    /// Provider config keys whose change makes DiffConfig ask for replacement (default `region`).
    pub config_replace_keys: Option<Vec<String>>,
}

impl ProviderSpec {
    /// `self` overridden by `other` (field by field; per-resource entries by name).
    pub fn merged(&self, other: &ProviderSpec) -> ProviderSpec {
        let mut resources = self.resources.clone();
        for (name, behaviour) in &other.resources {
            let merged = resources
                .get(name)
                .map(|b| b.merged(behaviour))
                .unwrap_or_else(|| behaviour.clone());
            resources.insert(name.clone(), merged);
        }
        ProviderSpec {
            all: self.all.merged(&other.all),
            resources,
            config_replace_keys: other
                .config_replace_keys
                .clone()
                .or_else(|| self.config_replace_keys.clone()),
        }
    }

    /// The behaviour for resource `name`.
    pub fn for_resource(&self, name: &str) -> Behaviour {
        match self.resources.get(name) {
            Some(b) => self.all.merged(b),
            None => self.all.clone(),
        }
    }
}

/// How the test provider behaves towards a resource. The last four fields (delays, blocking,
/// dying) are acted on by the host's wrapper around whichever side runs this crate, since they
/// observe the engine rather than the provider.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Behaviour {
    /// Top-level inputs whose change forces replacement.
    #[serde(default)]
    pub replace_on: Option<Vec<String>>,
    /// Diff asks for delete-before-replace when it asks for replacement.
    #[serde(default)]
    pub delete_before_replace: Option<bool>,
    /// `unknown`: Diff answers DIFF_UNKNOWN (replace keys still reported).
    #[serde(default)]
    pub diff: Option<String>,
    /// Check adds a generated `name` when absent (reusing the old one when Check gets olds).
    #[serde(default)]
    pub auto_name: Option<bool>,
    /// Create / Update / Delete fail with this message.
    #[serde(default)]
    pub fail_create: Option<String>,
    #[serde(default)]
    pub fail_update: Option<String>,
    #[serde(default)]
    pub fail_delete: Option<String>,
    #[serde(default)]
    pub fail_read: Option<String>,
    /// With `failCreate` / `failUpdate`: the resource is created (updated), then the operation
    /// fails with partial state.
    #[serde(default)]
    pub partial: Option<bool>,
    /// `nan` or `inf`: Create and Update return an extra output `bad` holding that number,
    /// which no state can store.
    #[serde(default)]
    pub bad_output: Option<String>,
    /// Check reports these failures.
    #[serde(default)]
    pub check_failures: Option<Vec<CheckFailureSpec>>,
    /// Create / Update / Delete take this long.
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// `create`, `update` or `delete`: that operation never finishes (see `kill`).
    #[serde(default)]
    pub block: Option<String>,
    /// `create`, `update` or `delete`: that operation takes effect, then never finishes (a
    /// kill after the provider acted, before the engine heard of it).
    #[serde(default)]
    pub block_after: Option<String>,
    /// `create`, `update` or `delete`: that operation takes effect, then the provider dies
    /// (the engine gets `OutcomeUnknown`).
    #[serde(default)]
    pub die_after: Option<String>,
}

impl Behaviour {
    /// `self` overridden by the fields `other` sets.
    pub fn merged(&self, other: &Behaviour) -> Behaviour {
        let other = other.clone();
        let this = self.clone();
        Behaviour {
            replace_on: other.replace_on.or(this.replace_on),
            delete_before_replace: other.delete_before_replace.or(this.delete_before_replace),
            diff: other.diff.or(this.diff),
            auto_name: other.auto_name.or(this.auto_name),
            fail_create: other.fail_create.or(this.fail_create),
            fail_update: other.fail_update.or(this.fail_update),
            fail_delete: other.fail_delete.or(this.fail_delete),
            fail_read: other.fail_read.or(this.fail_read),
            partial: other.partial.or(this.partial),
            bad_output: other.bad_output.or(this.bad_output),
            check_failures: other.check_failures.or(this.check_failures),
            delay_ms: other.delay_ms.or(this.delay_ms),
            block: other.block.or(this.block),
            block_after: other.block_after.or(this.block_after),
            die_after: other.die_after.or(this.die_after),
        }
    }
}

/// A failure Check reports: the property path at fault (empty for the whole resource) and why.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CheckFailureSpec {
    #[serde(default)]
    pub property: String,
    pub reason: String,
}
