//! The package's resources (one module each) and the dispatch from a type token to them:
//! check (auto-names, types, defaults, Terraform's validations), diff (Terraform's plan
//! rules), create / read / update / delete (each reading the resource back from the catalog
//! afterwards, as Terraform does), and the refusal of the resources this provider does not
//! implement.

pub(crate) mod database;
pub(crate) mod default_privileges;
pub(crate) mod extension;
pub(crate) mod grant;
pub(crate) mod grant_role;
pub(crate) mod role;
pub(crate) mod schema;

use cairn_sdk::{
    CheckRequest, CheckResult, Checker, DiffRequest, DiffResult, Error, PartialState, PropertyMap,
    PropertyMapExt, Result, Value,
};

use crate::db::{self, Ctx};
use crate::props::{self, COMPUTED, Prop};

/// The published package's resources this provider refuses.
pub(crate) const REFUSED: [&str; 8] = [
    "postgresql:index/function:Function",
    "postgresql:index/physicalReplicationSlot:PhysicalReplicationSlot",
    "postgresql:index/publication:Publication",
    "postgresql:index/replicationSlot:ReplicationSlot",
    "postgresql:index/securityLabel:SecurityLabel",
    "postgresql:index/server:Server",
    "postgresql:index/subscription:Subscription",
    "postgresql:index/userMapping:UserMapping",
];

/// The refusal of a token the package has but this provider does not implement.
pub(crate) fn refusal(token: &str) -> Error {
    Error::failed(format!(
        "{token} is not supported by this provider (Cairn's sandboxed postgresql)"
    ))
}

/// The implemented resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Role,
    Database,
    Schema,
    Grant,
    GrantRole,
    Extension,
    DefaultPrivileges,
    /// The deprecated alias of DefaultPrivileges.
    DefaultPrivileg,
}

impl Kind {
    pub(crate) const ALL: [Kind; 8] = [
        Kind::Role,
        Kind::Database,
        Kind::Schema,
        Kind::Grant,
        Kind::GrantRole,
        Kind::Extension,
        Kind::DefaultPrivileges,
        Kind::DefaultPrivileg,
    ];

    pub(crate) fn token(self) -> &'static str {
        match self {
            Kind::Role => "postgresql:index/role:Role",
            Kind::Database => "postgresql:index/database:Database",
            Kind::Schema => "postgresql:index/schema:Schema",
            Kind::Grant => "postgresql:index/grant:Grant",
            Kind::GrantRole => "postgresql:index/grantRole:GrantRole",
            Kind::Extension => "postgresql:index/extension:Extension",
            Kind::DefaultPrivileges => "postgresql:index/defaultPrivileges:DefaultPrivileges",
            Kind::DefaultPrivileg => "postgresql:index/defaultPrivileg:DefaultPrivileg",
        }
    }

    pub(crate) fn of(token: &str) -> Result<Kind> {
        if let Some(kind) = Kind::ALL.into_iter().find(|k| k.token() == token) {
            return Ok(kind);
        }
        if REFUSED.contains(&token) {
            return Err(refusal(token));
        }
        Err(Error::failed(format!(
            "unknown resource type {token:?}: the postgresql package has {}",
            Kind::ALL
                .iter()
                .map(|k| k.token())
                .chain(REFUSED)
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    pub(crate) fn props(self) -> &'static [Prop] {
        match self {
            Kind::Role => role::PROPS,
            Kind::Database => database::PROPS,
            Kind::Schema => schema::PROPS,
            Kind::Grant => grant::PROPS,
            Kind::GrantRole => grant_role::PROPS,
            Kind::Extension => extension::PROPS,
            Kind::DefaultPrivileges | Kind::DefaultPrivileg => default_privileges::PROPS,
        }
    }

    /// Auto-named `<name>-<7 hex>` when `name` is left out (the published package
    /// auto-names every resource with a `name` input).
    pub(crate) fn auto_named(self) -> bool {
        matches!(
            self,
            Kind::Role | Kind::Database | Kind::Schema | Kind::Extension
        )
    }

    /// Whether Terraform can import it (by its ID).
    pub(crate) fn importable(self) -> bool {
        matches!(
            self,
            Kind::Role | Kind::Database | Kind::Schema | Kind::Extension
        )
    }
}

pub(crate) fn check(r: CheckRequest) -> Result<CheckResult> {
    let kind = Kind::of(r.resource_type())?;
    let name = r.name().to_owned();
    let CheckRequest {
        old_inputs,
        inputs,
        random_seed,
        ..
    } = r;
    let mut c = Checker::new(inputs);
    // `__defaults` lists what was filled in for the program, as the bridge records it: an
    // auto-named resource replaced keeps its name free (no delete first); one named by the
    // program must be deleted before it is made again.
    let mut defaulted = Vec::new();
    if kind.auto_named() {
        if props::present(c.inputs(), "name").is_none() && !c.inputs().is_unknown("name") {
            defaulted.push("name");
        }
        c.auto_name("name", &name, &old_inputs, &random_seed);
    }
    defaulted.extend(props::check_table(kind.props(), &mut c));
    defaulted.sort_unstable();
    c.inputs_mut().insert(
        DEFAULTS.to_owned(),
        Value::Array(defaulted.into_iter().map(Value::from).collect()),
    );
    match kind {
        Kind::Role => role::check(&mut c),
        Kind::Database => database::check(&mut c),
        Kind::Grant => grant::check(&mut c),
        Kind::DefaultPrivileges | Kind::DefaultPrivileg => default_privileges::check(&mut c),
        Kind::Schema | Kind::GrantRole | Kind::Extension => {}
    }
    Ok(c.finish())
}

/// The key of the checked inputs that lists what `check` filled in (the bridge's).
pub(crate) const DEFAULTS: &str = "__defaults";

/// Whether `name` was filled in by auto-naming.
fn auto_named_name(inputs: &PropertyMap) -> bool {
    inputs
        .get(DEFAULTS)
        .and_then(Value::as_array)
        .is_some_and(|keys| keys.iter().any(|k| k.as_str() == Some("name")))
}

/// Terraform's plan as a diff. A replacement deletes first for a Grant (as the published
/// package says) and for a resource whose name the program gave (as the bridge does: the
/// new one would take the same name).
pub(crate) fn diff(r: &DiffRequest) -> Result<DiffResult> {
    let kind = Kind::of(r.resource_type())?;
    let mut result = props::diff(
        kind.props(),
        &r.old_inputs,
        &r.old_outputs,
        &r.inputs,
        &r.ignore_changes,
    );
    result.delete_before_replace = !result.replace_keys.is_empty()
        && (kind == Kind::Grant || (kind.auto_named() && !auto_named_name(&r.inputs)));
    Ok(result)
}

/// The recorded state: the outputs, with the recorded inputs for what they lack.
pub(crate) fn recorded(old_inputs: &PropertyMap, old_outputs: &PropertyMap) -> PropertyMap {
    let mut state = old_inputs.clone();
    for (key, value) in old_outputs {
        if !value.is_null() {
            state.insert(key.clone(), value.clone());
        }
    }
    state
}

/// What the state says after an update, for reading the resource back: the new inputs, and
/// the recorded values of computed properties the program leaves out.
fn state_after_update(kind: Kind, olds: &PropertyMap, news: &PropertyMap) -> PropertyMap {
    let mut state = news.clone();
    for p in kind.props() {
        if p.has(COMPUTED)
            && props::present(news, p.name).is_none()
            && let Some(old) = props::present(olds, p.name)
        {
            state.insert(p.name.to_owned(), old.clone());
        }
    }
    state
}

/// Reads a resource from the catalog: its ID and outputs, or `None` when it is gone. `state`
/// is what was recorded (empty on import, when only `id` says what to read).
pub(crate) fn read_state(
    kind: Kind,
    cx: &Ctx,
    id: &str,
    state: &PropertyMap,
) -> Result<Option<(String, PropertyMap)>> {
    let named = |state: &PropertyMap| {
        state
            .get("name")
            .and_then(|v| v.as_str())
            .filter(|n| !n.is_empty())
            .unwrap_or(id)
            .to_owned()
    };
    let with_name_id = |out: Option<PropertyMap>| {
        out.map(|out| {
            let name = out
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or(id)
                .to_owned();
            (name, out)
        })
    };
    match kind {
        Kind::Role => Ok(with_name_id(role::read(cx, &named(state), state)?)),
        Kind::Database => Ok(with_name_id(database::read(cx, &named(state), state)?)),
        Kind::Schema => schema::read(cx, id, state),
        Kind::Extension => extension::read(cx, id, state),
        Kind::Grant => grant::read(cx, state),
        Kind::GrantRole => grant_role::read(cx, state),
        Kind::DefaultPrivileges | Kind::DefaultPrivileg => default_privileges::read(cx, state),
    }
}

/// The outputs after acting: the resource read back.
fn read_back(kind: Kind, cx: &Ctx, id: &str, state: &PropertyMap) -> Result<PropertyMap, String> {
    match read_state(kind, cx, id, state) {
        Ok(Some((id, outputs))) => Ok(complete(kind, &id, outputs)),
        Ok(None) => Err(format!("{} {id} cannot be found", kind.token())),
        Err(e) => Err(format!("reading {} {id}: {e}", kind.token())),
    }
}

/// After acting, a list the program left out is null in the outputs, as the published package
/// records it (a refresh reads it from the catalog).
fn unset_lists(kind: Kind, inputs: &PropertyMap, mut outputs: PropertyMap) -> PropertyMap {
    for p in kind.props() {
        if matches!(p.ty, props::Ty::StrSet | props::Ty::StrList)
            && !p.has(COMPUTED)
            && props::present(inputs, p.name).is_none()
            && let Some(v) = outputs.get_mut(p.name)
        {
            *v = Value::Null;
        }
    }
    outputs
}

/// Outputs as the published package gives them: every property (null when unset; a secret
/// property secret even then) and `id`, the ID as the Terraform provider sets it (a renamed
/// role's new name).
pub(crate) fn complete(kind: Kind, id: &str, outputs: PropertyMap) -> PropertyMap {
    let mut out = PropertyMap::new();
    for p in kind.props() {
        let value = outputs.get(p.name).cloned().unwrap_or_default();
        let value = if p.has(props::SECRET) && !value.is_secret() {
            Value::secret(value)
        } else {
            value
        };
        out.insert(p.name.to_owned(), value);
    }
    out.insert("id".to_owned(), Value::from(id));
    out
}

/// Creates the resource and reads it back: its ID and outputs. A resource created but not
/// readable is reported with its ID, so it is not leaked.
pub(crate) fn create(kind: Kind, cx: &Ctx, inputs: &PropertyMap) -> Result<(String, PropertyMap)> {
    let id = match kind {
        Kind::Role => role::create(cx, inputs)?,
        Kind::Database => database::create(cx, inputs)?,
        Kind::Schema => schema::create(cx, inputs)?,
        Kind::Grant => grant::create(cx, inputs)?,
        Kind::GrantRole => grant_role::create(cx, inputs)?,
        Kind::Extension => extension::create(cx, inputs)?,
        Kind::DefaultPrivileges | Kind::DefaultPrivileg => default_privileges::create(cx, inputs)?,
    };
    match read_back(kind, cx, &id, &props::with_defaults(kind.props(), inputs)) {
        Ok(outputs) => Ok((id, unset_lists(kind, inputs, outputs))),
        Err(e) => Err(Error::partial(
            format!("created, but {e}"),
            PartialState {
                outputs: complete(kind, &id, inputs.clone()),
                id,
                inputs: inputs.clone(),
            },
        )),
    }
}

/// Updates the resource in place and reads it back: its outputs.
pub(crate) fn update(
    kind: Kind,
    cx: &Ctx,
    id: &str,
    olds: &PropertyMap,
    news: &PropertyMap,
) -> Result<PropertyMap> {
    let new_id = match kind {
        Kind::Role => role::update(cx, olds, news)?,
        Kind::Database => database::update(cx, olds, news)?,
        Kind::Schema => schema::update(cx, olds, news)?,
        Kind::Grant => grant::update(cx, olds, news)?,
        Kind::Extension => extension::update(cx, olds, news)?,
        Kind::DefaultPrivileges | Kind::DefaultPrivileg => default_privileges::update(cx, news)?,
        Kind::GrantRole => {
            return Err(Error::failed(format!(
                "{} changes only by replacement",
                kind.token()
            )));
        }
    };
    let state = state_after_update(kind, olds, news);
    // A renamed role, database or schema is read by its new name (its ID stays).
    let read_id = if new_id.is_empty() { id } else { &new_id };
    read_back(
        kind,
        cx,
        read_id,
        &props::with_defaults(kind.props(), &state),
    )
    .map(|outputs| unset_lists(kind, news, outputs))
    .map_err(|e| Error::failed(format!("updated, but {e}")))
}

/// Deletes the resource; one already gone is not an error.
pub(crate) fn delete(kind: Kind, cx: &Ctx, olds: &PropertyMap) -> Result<()> {
    let name = props::string(olds, "name");
    match kind {
        Kind::Role => {
            let mut s = cx.default_session()?;
            if !db::role_exists(&mut *s, &name)? {
                return Ok(());
            }
            drop(s);
            role::delete(cx, olds)
        }
        Kind::Database => {
            let mut s = cx.default_session()?;
            if !db::db_exists(&mut *s, &name)? {
                return Ok(());
            }
            drop(s);
            database::delete(cx, olds)
        }
        Kind::Schema => {
            let database = props::string(olds, "database");
            if !database.is_empty() {
                let mut s = cx.default_session()?;
                if !db::db_exists(&mut *s, &database)? {
                    return Ok(());
                }
            }
            schema::delete(cx, olds)
        }
        Kind::Extension => match extension::read(cx, "", olds)? {
            Some(_) => extension::delete(cx, olds),
            None => Ok(()),
        },
        Kind::Grant => {
            let g = grant::Spec::from_inputs(olds);
            if !grant::targets_exist(cx, &g.role, &g.database, &g.schema, &g.object_type)? {
                return Ok(());
            }
            grant::delete(cx, olds)
        }
        Kind::GrantRole => {
            let mut s = cx.default_session()?;
            for key in ["role", "grantRole"] {
                if !db::role_exists(&mut *s, &props::string(olds, key))? {
                    return Ok(());
                }
            }
            drop(s);
            grant_role::delete(cx, olds)
        }
        Kind::DefaultPrivileges | Kind::DefaultPrivileg => {
            let d = default_privileges::Spec::from_inputs(olds);
            if !grant::targets_exist(cx, &d.role, &d.database, &d.schema, &d.object_type)? {
                return Ok(());
            }
            default_privileges::delete(cx, olds)
        }
    }
}
