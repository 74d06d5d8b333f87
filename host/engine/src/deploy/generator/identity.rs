//! A registration's identity: its URN, the old URNs its aliases (and its parent's) give it,
//! and the old state it claims under one of them (Pulumi's `generateAliases`).

use crate::state::ResourceState;
use crate::urn::{TypeToken, Urn};

use super::super::engine::{Engine, err};
use super::super::journal::BaseIndex;
use super::super::monitor::MonitorError;
use super::super::monitor::scope::Caller;
use super::super::program::Alias;

/// The old state a registration took over: its base index and the recorded state.
pub(crate) type Claimed<'a> = Option<(BaseIndex, &'a ResourceState)>;

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

    /// The old URNs a resource may have had, as Pulumi computes them: each of its aliases, and,
    /// when its parent took over an old state under another URN in this deployment, what it
    /// and each of its aliases were under that old parent (the cross product: a child with
    /// type aliases of its own under a retyped parent is found). Under a renamed parent, a
    /// child whose name starts with the parent's name was named after the old one: the prefix
    /// is replaced (`newapp-function` was `app-function` under `app`).
    pub fn alias_urns(
        &self,
        urn: &Urn,
        parent: Option<&Urn>,
        resource_type: &TypeToken,
        name: &str,
        aliases: &[Alias],
    ) -> Result<Vec<Urn>, MonitorError> {
        let mut out: Vec<Urn> = Vec::new();
        let mut add = |candidate: Urn| {
            if &candidate != urn && !out.contains(&candidate) {
                out.push(candidate);
            }
        };
        let collapsed = aliases
            .iter()
            .map(|alias| self.alias_urn(urn, parent, resource_type, name, alias))
            .collect::<Result<Vec<Urn>, MonitorError>>()?;
        for alias in &collapsed {
            add(alias.clone());
        }
        let parent_was = parent.and_then(|p| Some((p, self.renamed_from(p)?)));
        if let Some((parent, parent_was)) = parent_was {
            add(self.inherited_alias(resource_type, name, parent, &parent_was)?);
            for alias in &collapsed {
                let alias_type = TypeToken::parse(alias.resource_type())
                    .map_err(|e| err(format!("invalid alias for {urn}: {e}")))?;
                add(self.inherited_alias(&alias_type, alias.name(), parent, &parent_was)?);
            }
        }
        Ok(out)
    }

    /// The old URN `urn` took over in this deployment, if it took one over under another URN.
    fn renamed_from(&self, urn: &Urn) -> Option<Urn> {
        self.plan()
            .registered
            .get(urn)
            .and_then(|r| r.renamed_from.clone())
    }

    /// What a child of type `child_type` named `child_name` was under its parent's old URN
    /// `parent_was` (the parent is now `parent`).
    fn inherited_alias(
        &self,
        child_type: &TypeToken,
        child_name: &str,
        parent: &Urn,
        parent_was: &Urn,
    ) -> Result<Urn, MonitorError> {
        let name = match child_name.strip_prefix(parent.name()) {
            Some(rest) => format!("{}{rest}", parent_was.name()),
            None => child_name.to_owned(),
        };
        Urn::new(
            &self.options.stack,
            &self.options.project,
            Some(parent_was.qualified_type()),
            child_type,
            &name,
        )
        .map_err(|e| {
            err(format!(
                "the alias {child_name:?} inherits from {parent_was}: {e}"
            ))
        })
    }

    /// The old URN one alias names: a URN as given, or a spec whose unset parts are the
    /// resource's own. A parent the spec names that was itself renamed in this deployment
    /// stands for its old URN (what the resource's URN was under).
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
            Some(Some(p)) => {
                let was = self.renamed_from(p).unwrap_or_else(|| p.clone());
                Some(was.qualified_type().to_owned())
            }
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
    ) -> Result<Claimed<'_>, MonitorError> {
        let claimed = self
            .plan()
            .claim_in(&|i| self.old_state(i), urn, aliases, parent, caller)?;
        // The base does not change during a deployment: the claim borrows it (a copy of every
        // old state would cost as much as the state itself), or the state a migration made
        // of it.
        Ok(claimed.map(|i| (i, self.old_state(i))))
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
    ) -> Result<Claimed<'_>, MonitorError> {
        let aliases = self.alias_urns(urn, parent, resource_type, name, aliases)?;
        self.claim(urn, aliases, parent, caller)
    }
}
