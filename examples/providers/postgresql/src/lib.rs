//! `postgresql`: the `postgresql` package as Pulumi users know it (pulumi-postgresql 3.18:
//! its tokens, properties, defaults, secrets and provider configuration), with the behaviour of
//! the Terraform provider it bridges (cyrilgdn/terraform-provider-postgresql), as a sandboxed
//! Cairn provider that reaches the server only through the user's `tcp` grant
//! (`cairn:grants.postgresql.tcp: ["db.internal:5432"]`; the manifest asks for `*:*`).
//!
//! | resource (`postgresql:index/…`) | resource ID | import ID | replaced by a change of |
//! | --- | --- | --- | --- |
//! | `role:Role` | the name | the name | — (a new name renames) |
//! | `database:Database` | the name | the name | `template`, `encoding`, `lcCollate`, `lcCtype` |
//! | `schema:Schema` | `<database>.<schema>` | the same | `database` |
//! | `extension:Extension` | `<database>.<extension>` | the same | `name`, `database` |
//! | `grant:Grant` | `<role>_<database>[_<schema>]_<objectType>[_<object>…][_<column>…]` | not importable | all but `privileges` (deleted before replaced) |
//! | `grantRole:GrantRole` | `<role>_<grantRole>_<withAdminOption>` | not importable | everything |
//! | `defaultPrivileges:DefaultPrivileges` (and the deprecated `defaultPrivileg:DefaultPrivileg`) | `<role>_<database>_<schema or noschema>_<owner>_<objectType>` | not importable | all but `privileges` |
//!
//! The other resources of the package (Function, PhysicalReplicationSlot, Publication,
//! ReplicationSlot, SecurityLabel, Server, Subscription, UserMapping) are refused by `check`
//! and `create` with an error naming their token; the functions `getSchemas`, `getTables` and
//! `getSequences` work (`functions.rs`); the provider method `terraformConfig` is refused.
//!
//! * **Check** fills the Terraform defaults (e.g. a Role's `inherit` true, `connectionLimit`
//!   -1, `validUntil` `infinity`; a Database's `allowConnections` true) and auto-names
//!   `name` (`<resource name>-<7 hex>`) for Role, Database, Schema and Extension, as the
//!   published package does, listing it in `__defaults` as the bridge does. Terraform's
//!   plan-time rules fail here, with its messages (`expected object_type to be one of
//!   [...]`); its apply-time rules fail when acting, as in the published package, naming the
//!   property (`privileges[1]: FLY is not an allowed privilege for object type table
//!   (expected one of …)`).
//! * **Diff** is Terraform's plan: inputs against the recorded state (so drift found by a
//!   refresh shows), an optional property left out as its zero value, a server-computed one
//!   (a Database's `owner`, an Extension's `version`…) left out as no change, sets compared
//!   as sets; the properties above replace, deleting first for a Grant and for a resource
//!   whose `name` the program gave (the bridge's rule: the new one takes the same name).
//! * **Create / update / delete** issue the Terraform provider's statements (see each module;
//!   every name and value quoted, `sql.rs`) in its transactions, on the database the resource
//!   lives in, then read the resource back from the catalog: the outputs are every property
//!   (null when unset; a Role's `password` secret even then) and `id`. Deleting something
//!   already gone succeeds. A Role's delete reassigns and drops what it owns in every
//!   database it has objects or privileges in (not only the provider's), unless
//!   `skipReassignOwned`.
//! * **Read** (refresh, import) reads the catalog: what changed outside the program shows,
//!   and a resource gone is reported gone. A Role's `password` cannot be read back: the
//!   recorded one stays (unless, with `superuser`, an md5 hash on the server shows another).
//! * **Previews** never connect: `check` and `diff` need no server, and a preview's outputs
//!   are the inputs with what the server computes unknown. Connections open on first use,
//!   one or more per database, and are reused (`db.rs`).
//! * Secrets: `password` (a Role's, the provider's) stays secret in inputs and outputs; it is
//!   never logged nor part of an error (statements are not echoed in errors).
//!
//! Configuration keys, defaults and what the sandbox refuses: `config.rs`.

pub mod client;
mod config;
mod db;
mod functions;
mod props;
mod resources;
mod sql;

use cairn_sdk::{
    CallRequest, CallResult, CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest,
    DiffRequest, DiffResult, Error, InvokeRequest, InvokeResult, PropertyMap, Provider,
    ReadRequest, ReadResult, Result, UpdateRequest, UpdateResult, Value,
};

use config::Settings;
use db::{Ctx, Pool};
use resources::Kind;

/// The `postgresql` provider.
#[derive(Default)]
pub struct Postgresql {
    pool: Pool,
}

impl Postgresql {
    fn ctx<'a>(&'a self, urn: &'a str) -> Result<Ctx<'a>> {
        let settings = self
            .pool
            .settings()
            .ok_or_else(|| Error::failed("the postgresql provider is not configured"))?;
        Ok(Ctx {
            conn: &self.pool,
            settings,
            urn,
        })
    }
}

/// Environment variables (present only when the user grants them).
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Provider for Postgresql {
    fn check_config(&self, r: CheckRequest) -> Result<CheckResult> {
        Ok(config::check(r.inputs))
    }

    /// Reads the configuration; connects to nothing (connections open on first use).
    fn configure(&mut self, inputs: PropertyMap, _preview: bool) -> Result<()> {
        let settings = Settings::from_config(&inputs, env).map_err(|failures| {
            Error::failed(format!(
                "invalid postgresql configuration: {}",
                failures
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ))
        })?;
        if self.pool.settings() != Some(&settings) {
            self.pool = Pool::new(settings);
        }
        Ok(())
    }

    fn check(&self, r: CheckRequest) -> Result<CheckResult> {
        resources::check(r)
    }

    fn diff(&self, r: DiffRequest) -> Result<DiffResult> {
        resources::diff(&r)
    }

    fn create(&self, r: CreateRequest) -> Result<CreateResult> {
        let kind = Kind::of(r.resource_type())?;
        let cx = self.ctx(&r.urn)?;
        let (id, outputs) = resources::create(kind, &cx, &r.inputs)?;
        Ok(CreateResult {
            id,
            outputs: outputs.into(),
        })
    }

    /// The inputs, secrets marked, and what the server computes unknown.
    fn preview_create(&self, r: CreateRequest) -> Result<CreateResult> {
        let kind = Kind::of(r.resource_type())?;
        let mut outputs = props::preview_outputs(kind.props(), &r.inputs, None);
        if matches!(kind, Kind::Schema | Kind::Extension)
            && outputs.get("database").is_some_and(Value::is_unknown)
            && let Some(settings) = self.pool.settings().filter(|s| s.unknown.is_empty())
        {
            outputs.insert("database".into(), settings.database.as_str().into());
        }
        Ok(CreateResult {
            id: String::new(),
            outputs: outputs.into(),
        })
    }

    fn read(&self, r: ReadRequest) -> Result<ReadResult> {
        let kind = Kind::of(r.resource_type())?;
        let cx = self.ctx(&r.urn)?;
        let importing = r.old_outputs.is_empty();
        if importing && !kind.importable() {
            return Err(Error::failed(format!(
                "cannot import {} {:?}: the Terraform provider it follows has no import for it",
                kind.token(),
                r.id
            )));
        }
        let state = resources::recorded(&r.old_inputs, &r.old_outputs);
        let Some((id, outputs)) = resources::read_state(kind, &cx, &r.id, &state)? else {
            return Ok(ReadResult::gone());
        };
        let outputs = resources::complete(kind, &id, outputs);
        let mut inputs = props::inputs_after_read(kind.props(), &r.old_inputs, &outputs);
        // As the bridge's refresh: an empty list of filled-in properties is dropped.
        if inputs
            .get(resources::DEFAULTS)
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            inputs.shift_remove(resources::DEFAULTS);
        }
        // A refresh keeps the resource's ID (a rename in place keeps it too).
        let id = if importing { id } else { r.id };
        Ok(ReadResult {
            id,
            inputs: inputs.into(),
            outputs: outputs.into(),
        })
    }

    fn update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        let kind = Kind::of(r.resource_type())?;
        let cx = self.ctx(&r.urn)?;
        let olds = resources::recorded(&r.old_inputs, &r.old_outputs);
        let outputs = resources::update(kind, &cx, &r.id, &olds, &r.inputs)?;
        Ok(UpdateResult {
            outputs: outputs.into(),
        })
    }

    /// The new inputs over the recorded outputs (computed values stay as recorded).
    fn preview_update(&self, r: UpdateRequest) -> Result<UpdateResult> {
        let kind = Kind::of(r.resource_type())?;
        Ok(UpdateResult {
            outputs: props::preview_outputs(kind.props(), &r.inputs, Some(&r.old_outputs)).into(),
        })
    }

    fn delete(&self, r: DeleteRequest) -> Result<()> {
        let kind = Kind::of(r.resource_type())?;
        let cx = self.ctx(&r.urn)?;
        let olds = resources::recorded(&r.old_inputs, &r.old_outputs);
        resources::delete(kind, &cx, &olds)
    }

    fn invoke(&self, r: InvokeRequest) -> Result<InvokeResult> {
        let cx = self.ctx("")?;
        functions::invoke(&cx, &r.token, &r.args)
    }

    fn call(&self, r: CallRequest) -> Result<CallResult> {
        Err(resources::refusal(&r.token))
    }
}

// Only in the component: the crate is also an rlib (for native tests of the client), and a
// native cdylib cannot export the WIT names (`cairn:deploy/provider@0.3.0#…`).
#[cfg(target_family = "wasm")]
cairn_sdk::export_provider!(Postgresql, manifest = "cairn.json");

#[cfg(test)]
mod tests;
