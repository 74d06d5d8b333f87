//! A registration's identity: its URN, the old URNs its aliases (and its parent's) give it,
//! and the old state it claims under one of them.

use crate::state::ResourceState;
use crate::urn::{TypeToken, Urn};

use super::super::engine::{Engine, err};
use super::super::journal::BaseIndex;
use super::super::monitor::MonitorError;
use super::super::monitor::scope::Caller;
use super::super::program::Alias;

/// The old state a registration took over: its base index and the recorded state.
pub(crate) type Claimed = Option<(BaseIndex, ResourceState)>;

impl Engine {
    /// The URN of a resource of `resource_type` named `name` under `parent`, in this stack.
    pub fn urn_for(
        &self,
        parent: Option<&Urn>,
        resource_type: &TypeToken,
        name: &str,
    ) -> Result<Urn, MonitorError> {
        Urn::new(
            &self.options.stack,
            &self.options.project,
            parent.map(Urn::qualified_type),
            resource_type,
            name,
        )
        .map_err(|e| err(e.to_string()))
    }

    /// The old URNs a resource may have had, from its aliases and its parent's aliases.
    pub fn alias_urns(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        resource_type: &TypeToken,
        name: &str,
        aliases: &[Alias],
    ) -> Result<Vec<Urn>, MonitorError> {
        let mut out = Vec::new();
        for alias in aliases {
            let alias_urn = self.alias_urn(urn, parent, resource_type, name, alias)?;
            if &alias_urn != urn && !out.contains(&alias_urn) {
                out.push(alias_urn);
            }
        }
        // A parent's old identities change its children's URNs too.
        if let Some(parent) = parent {
            let parent_aliases = self
                .plan()
                .registered
                .get(parent)
                .map(|r| r.aliases.clone())
                .unwrap_or_default();
            for parent_alias in parent_aliases {
                let candidate = Urn::new(
                    &self.options.stack,
                    &self.options.project,
                    Some(parent_alias.qualified_type()),
                    resource_type,
                    name,
                )
                .map_err(|e| err(e.to_string()))?;
                if &candidate != urn && !out.contains(&candidate) {
                    out.push(candidate);
                }
            }
        }
        Ok(out)
    }

    /// The old URN one alias names: a URN as given, or a spec whose unset parts are the
    /// resource's own.
    fn alias_urn(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        resource_type: &TypeToken,
        name: &str,
        alias: &Alias,
    ) -> Result<Urn, MonitorError> {
        let (alias_name, alias_type, alias_parent, stack, project) = match alias {
            Alias::Urn(u) => return Ok(u.clone()),
            Alias::Spec {
                name,
                resource_type,
                parent,
                stack,
                project,
            } => (name, resource_type, parent, stack, project),
        };
        let parent_type = match alias_parent {
            None => parent.map(|p| p.qualified_type().to_owned()),
            Some(None) => None,
            Some(Some(p)) => Some(p.qualified_type().to_owned()),
        };
        Urn::new(
            stack.as_deref().unwrap_or(&self.options.stack),
            project.as_deref().unwrap_or(&self.options.project),
            parent_type.as_deref(),
            alias_type.as_ref().unwrap_or(resource_type),
            alias_name.as_deref().unwrap_or(name),
        )
        .map_err(|e| err(format!("invalid alias for {urn}: {e}")))
    }

    /// Records the registration of `urn` under `parent` with its old identities `aliases`, and
    /// claims its old state, if any (see [`Plan::claim`](super::super::plan::Plan::claim)).
    pub fn claim(
        &self,
        urn: &Urn,
        aliases: Vec<Urn>,
        parent: Option<&Urn>,
        caller: &Caller,
    ) -> Result<Claimed, MonitorError> {
        let claimed = self
            .plan()
            .claim(self.base(), urn, aliases, parent, caller)?;
        Ok(claimed.map(|i| (i, self.base().resources[i].clone())))
    }

    /// [`Engine::claim`] under the URNs a registration's aliases give it.
    pub fn claim_with_aliases(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        resource_type: &TypeToken,
        name: &str,
        aliases: &[Alias],
        caller: &Caller,
    ) -> Result<Claimed, MonitorError> {
        let aliases = self.alias_urns(urn, parent, resource_type, name, aliases)?;
        self.claim(urn, aliases, parent, caller)
    }
}
