//! `postgresql:index/role:Role` (Terraform's `postgresql_role`).
//!
//! ID: the role name; import by the name. Nothing replaces: a new name renames the role.
//! Create and update run in one transaction on the provider's database; delete reassigns and
//! drops what the role owns (unless `skipReassignOwned`) in every database it has objects or
//! privileges in, then drops it (unless `skipDropRole`).

use cairn_sdk::{Checker, Error, PropertyMap, PropertyMapExt, Result, Value};

use crate::config::Version;
use crate::db::{self, Ctx, Session};
use crate::props::{self, COMPUTED, Default, Prop, SECRET, Ty, WRITE_ONLY};
use crate::sql::{self, ident, literal};

pub(crate) const PROPS: &[Prop] = &[
    Prop::new("name", Ty::Str),
    Prop::new("password", Ty::Str).flags(SECRET),
    Prop::new("passwordWo", Ty::Str).flags(SECRET | WRITE_ONLY),
    Prop::new("passwordWoVersion", Ty::Str),
    Prop::new("encrypted", Ty::Str),
    Prop::new("roles", Ty::StrSet),
    Prop::new("searchPaths", Ty::StrList),
    Prop::new("encryptedPassword", Ty::Bool).default(Default::Bool(true)),
    Prop::new("validUntil", Ty::Str).default(Default::Str("infinity")),
    Prop::new("connectionLimit", Ty::Int).default(Default::Int(-1)),
    Prop::new("superuser", Ty::Bool).default(Default::Bool(false)),
    Prop::new("createDatabase", Ty::Bool).default(Default::Bool(false)),
    Prop::new("createRole", Ty::Bool).default(Default::Bool(false)),
    Prop::new("idleInTransactionSessionTimeout", Ty::Int),
    Prop::new("inherit", Ty::Bool).default(Default::Bool(true)),
    Prop::new("login", Ty::Bool).default(Default::Bool(false)),
    Prop::new("replication", Ty::Bool).default(Default::Bool(false)),
    Prop::new("bypassRowLevelSecurity", Ty::Bool).default(Default::Bool(false)),
    Prop::new("skipDropRole", Ty::Bool).default(Default::Bool(false)),
    Prop::new("skipReassignOwned", Ty::Bool).default(Default::Bool(false)),
    Prop::new("statementTimeout", Ty::Int),
    Prop::new("assumeRole", Ty::Str),
];

// No property is computed by the server.
const _: () = {
    let mut i = 0;
    while i < PROPS.len() {
        assert!(PROPS[i].flags & COMPUTED == 0);
        i += 1;
    }
};

/// Terraform's plan-time validations (with its messages): limits, conflicting passwords.
pub(crate) fn check(c: &mut Checker) {
    props::at_least(c, "connectionLimit", -1);
    props::at_least(c, "statementTimeout", 0);
    props::at_least(c, "idleInTransactionSessionTimeout", 0);
    let given = |c: &Checker, key: &str| {
        c.inputs()
            .get(key)
            .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
    };
    if given(c, "password") {
        for other in ["passwordWo", "passwordWoVersion"] {
            if given(c, other) {
                c.fail(
                    "password",
                    format!("\"password\": conflicts with {}", props::tf_name(other)),
                );
            }
        }
    }
    for (key, other) in [
        ("passwordWo", "passwordWoVersion"),
        ("passwordWoVersion", "passwordWo"),
    ] {
        if given(c, key) && !given(c, other) {
            c.fail(
                key,
                format!(
                    "\"{}\": all of `password_wo,password_wo_version` must be specified",
                    props::tf_name(key)
                ),
            );
        }
    }
}

/// The role as the program wants it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    pub name: String,
    /// `password` (or, on create, `passwordWo`); empty when none.
    pub password: String,
    pub encrypted_password: bool,
    pub valid_until: String,
    pub connection_limit: i64,
    pub superuser: bool,
    pub create_database: bool,
    pub create_role: bool,
    pub inherit: bool,
    pub login: bool,
    pub replication: bool,
    pub bypass_rls: bool,
    pub roles: Vec<String>,
    pub search_path: Vec<String>,
    pub statement_timeout: i64,
    pub idle_timeout: i64,
    pub assume_role: String,
}

impl Spec {
    pub(crate) fn from_inputs(inputs: &PropertyMap) -> Spec {
        let password = match inputs.get_str("password").filter(|p| !p.is_empty()) {
            Some(p) => p.to_owned(),
            None => props::string(inputs, "passwordWo"),
        };
        Spec {
            name: props::string(inputs, "name"),
            password,
            encrypted_password: props::boolean(inputs, "encryptedPassword", true),
            valid_until: inputs
                .get_str("validUntil")
                .unwrap_or("infinity")
                .to_owned(),
            connection_limit: props::integer(inputs, "connectionLimit", -1),
            superuser: props::boolean(inputs, "superuser", false),
            create_database: props::boolean(inputs, "createDatabase", false),
            create_role: props::boolean(inputs, "createRole", false),
            inherit: props::boolean(inputs, "inherit", true),
            login: props::boolean(inputs, "login", false),
            replication: props::boolean(inputs, "replication", false),
            bypass_rls: props::boolean(inputs, "bypassRowLevelSecurity", false),
            roles: props::strings(inputs, "roles"),
            search_path: props::strings(inputs, "searchPaths"),
            statement_timeout: props::integer(inputs, "statementTimeout", 0),
            idle_timeout: props::integer(inputs, "idleInTransactionSessionTimeout", 0),
            assume_role: props::string(inputs, "assumeRole"),
        }
    }
}

/// `CREATE ROLE`, with the options in the Terraform provider's order.
pub(crate) fn create_sql(spec: &Spec, version: Version) -> String {
    let mut opts: Vec<String> = Vec::new();
    if !spec.password.is_empty() {
        if spec.password.eq_ignore_ascii_case("NULL") {
            opts.push("PASSWORD NULL".into());
        } else {
            opts.push(
                if spec.encrypted_password {
                    "ENCRYPTED"
                } else {
                    "UNENCRYPTED"
                }
                .into(),
            );
            opts.push(format!("PASSWORD {}", literal(&spec.password)));
        }
    }
    if spec.valid_until.is_empty() || spec.valid_until.eq_ignore_ascii_case("infinity") {
        opts.push("VALID UNTIL 'infinity'".into());
    } else {
        opts.push(format!("VALID UNTIL {}", literal(&spec.valid_until)));
    }
    opts.push(format!("CONNECTION LIMIT {}", spec.connection_limit));
    let mut flags = vec![
        (spec.superuser, "SUPERUSER"),
        (spec.create_database, "CREATEDB"),
        (spec.create_role, "CREATEROLE"),
        (spec.inherit, "INHERIT"),
        (spec.login, "LOGIN"),
    ];
    if version.at_least(9, 5) {
        flags.push((spec.bypass_rls, "BYPASSRLS"));
    }
    if version.at_least(9, 1) {
        flags.push((spec.replication, "REPLICATION"));
    }
    for (on, word) in flags {
        opts.push(if on {
            word.to_owned()
        } else {
            format!("NO{word}")
        });
    }
    format!("CREATE ROLE {} WITH {}", ident(&spec.name), opts.join(" "))
}

/// `ALTER ROLE ... SET search_path` (always issued: an empty list resets it). An item with
/// `, ` is refused, as Terraform does when it acts: it would not read back as one item.
pub(crate) fn search_path_sql(name: &str, path: &[String]) -> Result<String> {
    if let Some(bad) = path.iter().find(|p| p.contains(", ")) {
        return Err(Error::failed(format!(
            "search_path cannot contain `, `: {bad}"
        )));
    }
    let value = if path.is_empty() {
        "DEFAULT".to_owned()
    } else {
        path.iter().map(|p| ident(p)).collect::<Vec<_>>().join(", ")
    };
    Ok(format!(
        "ALTER ROLE {} SET search_path TO {value}",
        ident(name)
    ))
}

/// Sets (non-zero) or resets (zero) a per-role millisecond setting.
pub(crate) fn timeout_sql(name: &str, setting: &str, value: i64) -> String {
    if value != 0 {
        format!("ALTER ROLE {} SET {setting} TO {value}", ident(name))
    } else {
        format!("ALTER ROLE {} RESET {setting}", ident(name))
    }
}

/// Sets or resets the role switched to at login.
pub(crate) fn assume_role_sql(name: &str, assume: &str) -> String {
    if assume.is_empty() {
        format!("ALTER ROLE {} RESET ROLE", ident(name))
    } else {
        format!("ALTER ROLE {} SET ROLE TO {}", ident(name), ident(assume))
    }
}

/// `GRANT <member-of> TO <role>` for each role in `roles` (in Terraform's set order).
pub(crate) fn grant_roles_sql(name: &str, roles: &[String]) -> Vec<String> {
    sql::tf_set_order(roles)
        .iter()
        .map(|r| format!("GRANT {} TO {}", ident(r), ident(name)))
        .collect()
}

pub(crate) fn create(cx: &Ctx, inputs: &PropertyMap) -> Result<String> {
    let spec = Spec::from_inputs(inputs);
    let mut s = cx.default_session()?;
    let version = s.version();
    db::transaction(&mut *s, |s| {
        let what = format!("error creating role {}", spec.name);
        if spec.password.is_empty() {
            db::exec(s, &create_sql(&spec, version), &what)?;
        } else {
            db::exec_secret(s, &create_sql(&spec, version), &spec.password, &what)?;
        }
        grant_roles(s, &spec.name, &spec.roles)?;
        db::exec(
            s,
            &search_path_sql(&spec.name, &spec.search_path)?,
            format!("could not set search_path for {}", spec.name),
        )?;
        if spec.statement_timeout != 0 {
            db::exec(
                s,
                &timeout_sql(&spec.name, "statement_timeout", spec.statement_timeout),
                format!("could not set statement_timeout for {}", spec.name),
            )?;
        }
        if spec.idle_timeout != 0 {
            db::exec(
                s,
                &timeout_sql(
                    &spec.name,
                    "idle_in_transaction_session_timeout",
                    spec.idle_timeout,
                ),
                format!(
                    "could not set idle_in_transaction_session_timeout for {}",
                    spec.name
                ),
            )?;
        }
        if !spec.assume_role.is_empty() {
            db::exec(
                s,
                &assume_role_sql(&spec.name, &spec.assume_role),
                format!("could not set role {} for {}", spec.assume_role, spec.name),
            )?;
        }
        Ok(())
    })?;
    Ok(spec.name)
}

fn grant_roles(s: &mut dyn Session, name: &str, roles: &[String]) -> Result<()> {
    for (sql, role) in grant_roles_sql(name, roles)
        .iter()
        .zip(sql::tf_set_order(roles))
    {
        db::exec(s, sql, format!("could not grant role {role} to {name}"))?;
    }
    Ok(())
}

/// The catalog query of a role.
pub(crate) fn read_sql(name: &str, version: Version) -> (String, Vec<&'static str>) {
    let mut columns = vec![
        "roles",
        "rolname",
        "rolsuper",
        "rolinherit",
        "rolcreaterole",
        "rolcreatedb",
        "rolcanlogin",
        "rolconnlimit",
        "rolvaliduntil",
        "rolconfig",
    ];
    let mut select = String::from(
        "SELECT ARRAY(SELECT pg_get_userbyid(roleid) FROM pg_catalog.pg_auth_members members WHERE member = pg_roles.oid) AS roles, \
         rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolconnlimit, \
         COALESCE(rolvaliduntil::TEXT, 'infinity') AS rolvaliduntil, rolconfig",
    );
    if version.at_least(9, 1) {
        columns.push("rolreplication");
        select.push_str(", rolreplication");
    }
    if version.at_least(9, 5) {
        columns.push("rolbypassrls");
        select.push_str(", rolbypassrls");
    }
    select.push_str(&format!(
        " FROM pg_catalog.pg_roles WHERE rolname = {}",
        literal(name)
    ));
    (select, columns)
}

/// A per-role setting from `rolconfig` (`key=value` items), as Terraform reads them.
fn setting<'a>(config: &'a [String], key: &str) -> Option<&'a str> {
    config
        .iter()
        .find(|c| c.starts_with(key))
        .map(|c| c.strip_prefix(key).unwrap_or(c))
        .map(|rest| rest.strip_prefix('=').unwrap_or(rest))
}

/// The search path items of `rolconfig`.
pub(crate) fn read_search_path(config: &[String]) -> Vec<String> {
    match setting(config, "search_path") {
        Some(value) => value.split(", ").map(unquote).collect(),
        None => Vec::new(),
    }
}

/// An identifier as the server writes it in a setting: `"a""b"` is `a"b`.
fn unquote(item: &str) -> String {
    match item.strip_prefix('"').and_then(|i| i.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => item.to_owned(),
    }
}

fn read_millis(config: &[String], key: &str) -> Result<i64> {
    match setting(config, key) {
        None => Ok(0),
        Some(value) => value
            .split(", ")
            .next()
            .unwrap_or_default()
            .parse()
            .map_err(|_| Error::failed(format!("error reading {key}: {value:?} is not a number"))),
    }
}

/// The role switched to at login (the last `role=` item).
fn read_assume_role(config: &[String]) -> String {
    config
        .iter()
        .rfind(|c| c.starts_with("role"))
        .map(|c| c.strip_prefix("role=").unwrap_or(c).to_owned())
        .unwrap_or_default()
}

/// Reads the role named `name`; `state` is what was recorded (inputs for the properties the
/// server does not know: skip flags, the password).
pub(crate) fn read(cx: &Ctx, name: &str, state: &PropertyMap) -> Result<Option<PropertyMap>> {
    let mut s = cx.default_session()?;
    let version = s.version();
    let (sql, columns) = read_sql(name, version);
    let Some(row) = db::row(&mut *s, &sql, &columns, "error reading ROLE")? else {
        return Ok(None);
    };
    let col = |c: &str| {
        columns
            .iter()
            .position(|x| *x == c)
            .and_then(|i| row[i].as_deref())
    };
    let flag = |c: &str| sql::parse_bool(col(c));
    let config = sql::array_strings(col("rolconfig"));
    let rolname = col("rolname").unwrap_or(name).to_owned();
    let can_login = flag("rolcanlogin");
    let mut out = PropertyMap::new();
    out.insert("name".into(), Value::from(rolname.as_str()));
    out.insert(
        "connectionLimit".into(),
        Value::from(
            col("rolconnlimit")
                .and_then(|n| n.parse::<i64>().ok())
                .unwrap_or(-1),
        ),
    );
    out.insert("createDatabase".into(), flag("rolcreatedb").into());
    out.insert("createRole".into(), flag("rolcreaterole").into());
    out.insert("encryptedPassword".into(), true.into());
    out.insert("inherit".into(), flag("rolinherit").into());
    out.insert("login".into(), can_login.into());
    out.insert(
        "skipDropRole".into(),
        props::boolean(state, "skipDropRole", false).into(),
    );
    out.insert(
        "skipReassignOwned".into(),
        props::boolean(state, "skipReassignOwned", false).into(),
    );
    out.insert("superuser".into(), flag("rolsuper").into());
    out.insert(
        "validUntil".into(),
        col("rolvaliduntil").unwrap_or("infinity").into(),
    );
    out.insert("replication".into(), flag("rolreplication").into());
    out.insert("bypassRowLevelSecurity".into(), flag("rolbypassrls").into());
    out.insert(
        "roles".into(),
        props::string_array(&sql::sorted_set(&sql::array_strings(col("roles")))),
    );
    out.insert(
        "searchPaths".into(),
        props::string_array(&read_search_path(&config)),
    );
    out.insert("assumeRole".into(), read_assume_role(&config).into());
    out.insert(
        "statementTimeout".into(),
        read_millis(&config, "statement_timeout")?.into(),
    );
    out.insert(
        "idleInTransactionSessionTimeout".into(),
        read_millis(&config, "idle_in_transaction_session_timeout")?.into(),
    );
    for key in ["passwordWoVersion", "encrypted"] {
        if let Some(v) = props::present(state, key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(recorded) = state.get_str("password").filter(|p| !p.is_empty()) {
        let password = read_password(cx, &mut *s, &rolname, recorded, can_login)?;
        out.insert("password".into(), Value::secret(password));
    }
    Ok(Some(out))
}

/// The password to record on refresh (Terraform's `readRolePassword`): the recorded one,
/// unless the connected user is a superuser (`superuser` config) and the server's md5 hash
/// shows another password, in which case the hash (so the difference shows and an update
/// sets the password again).
fn read_password(
    cx: &Ctx,
    s: &mut dyn Session,
    name: &str,
    recorded: &str,
    can_login: bool,
) -> Result<String> {
    if !can_login || !cx.settings.superuser {
        return Ok(recorded.to_owned());
    }
    let superuser = db::row(
        s,
        "SELECT rolsuper FROM pg_roles WHERE rolname = CURRENT_USER",
        &["rolsuper"],
        "could not check if current user is superuser",
    )?
    .is_some_and(|r| sql::parse_bool(r[0].as_deref()));
    if !superuser {
        return Err(Error::failed(format!(
            "could not read role password from Postgres as connected user {} is not a SUPERUSER. \
             You can set `superuser = false` in the provider configuration so it will not try to read the password from Postgres",
            cx.settings.current_user()
        )));
    }
    let hash = db::row(
        s,
        &format!(
            "SELECT COALESCE(passwd, '') AS passwd FROM pg_catalog.pg_shadow AS s WHERE s.usename = {}",
            literal(name)
        ),
        &["passwd"],
        "error reading role",
    )?
    .and_then(|r| r.into_iter().next().flatten())
    .unwrap_or_default();
    Ok(password_after_read(recorded, name, &hash))
}

/// Compares a recorded password with the server's hash (Terraform's rules).
pub(crate) fn password_after_read(recorded: &str, name: &str, hash: &str) -> String {
    if !recorded.starts_with("md5") && !recorded.starts_with("SCRAM-SHA-256") {
        if hash.starts_with("md5")
            && postgres_protocol::password::md5(recorded.as_bytes(), name) == hash
        {
            return recorded.to_owned();
        }
        // SCRAM verifiers cannot be compared without the salted computation: as in
        // Terraform, the recorded password stands.
        if hash.starts_with("SCRAM-SHA-256") {
            return recorded.to_owned();
        }
    }
    hash.to_owned()
}

/// The statements an update issues before memberships and settings, from the recorded state
/// (`olds`) to the new inputs (`news`): rename, password, attributes, expiry.
pub(crate) fn alter_sql(
    olds: &PropertyMap,
    news: &PropertyMap,
    version: Version,
) -> Result<Vec<(String, bool)>> {
    let changed = |key: &str| props::changed(props::prop(PROPS, key), olds, news);
    let old_name = props::string(olds, "name");
    let name = props::string(news, "name");
    let mut out: Vec<(String, bool)> = Vec::new();
    if changed("name") {
        if name.is_empty() {
            return Err(Error::failed("error setting role name to an empty string"));
        }
        out.push((
            format!("ALTER ROLE {} RENAME TO {}", ident(&old_name), ident(&name)),
            false,
        ));
    }
    let wo = props::string(news, "passwordWo");
    if !wo.is_empty() {
        if changed("passwordWoVersion") {
            out.push((
                format!("ALTER ROLE {} PASSWORD {}", ident(&name), literal(&wo)),
                true,
            ));
        }
    } else if changed("password") || changed("name") {
        let password = props::string(news, "password");
        if !password.is_empty() {
            out.push((
                format!(
                    "ALTER ROLE {} PASSWORD {}",
                    ident(&name),
                    literal(&password)
                ),
                true,
            ));
        }
    }
    if changed("bypassRowLevelSecurity") {
        if !version.at_least(9, 5) {
            return Err(Error::failed(format!(
                "PostgreSQL client is talking with a server ({version}) that does not support PostgreSQL Row-Level Security"
            )));
        }
        out.push((
            with_flag(
                &name,
                props::boolean(news, "bypassRowLevelSecurity", false),
                "BYPASSRLS",
            ),
            false,
        ));
    }
    if changed("connectionLimit") {
        out.push((
            format!(
                "ALTER ROLE {} CONNECTION LIMIT {}",
                ident(&name),
                props::integer(news, "connectionLimit", -1)
            ),
            false,
        ));
    }
    for (key, word, default) in [
        ("createDatabase", "CREATEDB", false),
        ("createRole", "CREATEROLE", false),
        ("inherit", "INHERIT", true),
        ("login", "LOGIN", false),
        ("replication", "REPLICATION", false),
        ("superuser", "SUPERUSER", false),
    ] {
        if changed(key) {
            out.push((
                with_flag(&name, props::boolean(news, key, default), word),
                false,
            ));
        }
    }
    if changed("validUntil") {
        let valid = props::string(news, "validUntil");
        if !valid.is_empty() {
            let valid = if valid.eq_ignore_ascii_case("infinity") {
                "infinity".to_owned()
            } else {
                valid
            };
            out.push((
                format!(
                    "ALTER ROLE {} VALID UNTIL {}",
                    ident(&name),
                    literal(&valid)
                ),
                false,
            ));
        }
    }
    Ok(out)
}

fn with_flag(name: &str, on: bool, word: &str) -> String {
    format!(
        "ALTER ROLE {} WITH {}{word}",
        ident(name),
        if on { "" } else { "NO" }
    )
}

pub(crate) fn update(cx: &Ctx, olds: &PropertyMap, news: &PropertyMap) -> Result<String> {
    let old_name = props::string(olds, "name");
    let name = props::string(news, "name");
    let spec = Spec::from_inputs(news);
    let changed = |key: &str| props::changed(props::prop(PROPS, key), olds, news);
    let mut s = cx.default_session()?;
    let version = s.version();
    let statements = alter_sql(olds, news, version)?;
    db::transaction(&mut *s, |s| {
        db::lock_role(s, &old_name)?;
        for (sql, secret) in &statements {
            let what = format!("error updating role {name}");
            if *secret {
                db::exec_secret(s, sql, &spec.password, &what)?;
            } else {
                db::exec(s, sql, &what)?;
            }
        }
        // Memberships: revoke all, grant the wanted ones.
        let current = db::rows(
            s,
            &format!(
                "SELECT pg_get_userbyid(roleid) AS role FROM pg_catalog.pg_auth_members members \
                 JOIN pg_catalog.pg_roles ON members.member = pg_roles.oid WHERE rolname = {}",
                literal(&name)
            ),
            &["role"],
            format!("could not get roles list for role {name}"),
        )?;
        for granted in current
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
        {
            db::exec(
                s,
                &format!("REVOKE {} FROM {}", ident(&granted), ident(&name)),
                format!("could not revoke role {granted} from {name}"),
            )?;
        }
        grant_roles(s, &name, &spec.roles)?;
        db::exec(
            s,
            &search_path_sql(&name, &spec.search_path)?,
            format!("could not set search_path for {name}"),
        )?;
        if changed("statementTimeout") {
            db::exec(
                s,
                &timeout_sql(&name, "statement_timeout", spec.statement_timeout),
                format!("could not set statement_timeout for {name}"),
            )?;
        }
        if changed("idleInTransactionSessionTimeout") {
            db::exec(
                s,
                &timeout_sql(
                    &name,
                    "idle_in_transaction_session_timeout",
                    spec.idle_timeout,
                ),
                format!("could not set idle_in_transaction_session_timeout for {name}"),
            )?;
        }
        if changed("assumeRole") {
            db::exec(
                s,
                &assume_role_sql(&name, &spec.assume_role),
                format!("could not set role for {name}"),
            )?;
        }
        Ok(())
    })?;
    Ok(name)
}

/// The databases other than `except` where `role` owns objects or holds privileges (and
/// that accept connections).
fn dependent_databases(s: &mut dyn Session, role: &str, except: &str) -> Result<Vec<String>> {
    let sql = format!(
        "SELECT DISTINCT d.datname FROM pg_catalog.pg_shdepend sd \
         JOIN pg_catalog.pg_database d ON sd.dbid = d.oid \
         WHERE sd.refclassid = 'pg_catalog.pg_authid'::regclass \
         AND sd.refobjid = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = {}) \
         AND d.datallowconn AND d.datname <> {} ORDER BY d.datname",
        literal(role),
        literal(except)
    );
    Ok(db::rows(
        s,
        &sql,
        &["datname"],
        format!("could not list the databases role {role} has objects in"),
    )?
    .into_iter()
    .filter_map(|r| r.into_iter().next().flatten())
    .collect())
}

/// `REASSIGN OWNED` to the connected user, then `DROP OWNED`.
fn reassign_and_drop_owned(s: &mut dyn Session, name: &str, to: &str) -> Result<()> {
    db::with_roles_granted(s, &[name.to_owned()], |s| {
        db::exec(
            s,
            &format!("REASSIGN OWNED BY {} TO {}", ident(name), ident(to)),
            format!("could not reassign owned by role {name} to {to}"),
        )?;
        db::exec(
            s,
            &format!("DROP OWNED BY {}", ident(name)),
            format!("could not drop owned by role {name}"),
        )
    })
}

pub(crate) fn delete(cx: &Ctx, olds: &PropertyMap) -> Result<()> {
    let name = props::string(olds, "name");
    let to = cx.settings.current_user().to_owned();
    let reassign = !props::boolean(olds, "skipReassignOwned", false);
    let drop = !props::boolean(olds, "skipDropRole", false);
    if reassign {
        let others = {
            let mut s = cx.default_session()?;
            dependent_databases(&mut *s, &name, &cx.settings.database)?
        };
        for database in others {
            let mut s = cx.session(&database)?;
            db::transaction(&mut *s, |s| reassign_and_drop_owned(s, &name, &to))?;
        }
    }
    let mut s = cx.default_session()?;
    db::transaction(&mut *s, |s| {
        db::lock_role(s, &name)?;
        if reassign {
            reassign_and_drop_owned(s, &name, &to)?;
        }
        if drop {
            db::exec(
                s,
                &format!("DROP ROLE {}", ident(&name)),
                format!("could not delete role {name}"),
            )?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fake::Fake;
    use cairn_sdk::props;

    fn spec(inputs: PropertyMap) -> Spec {
        let mut c = Checker::new(inputs);
        props::check_table(PROPS, &mut c);
        Spec::from_inputs(&c.finish().inputs)
    }

    #[test]
    fn create_statements() {
        let v15 = Version::new(15, 0, 0);
        let cases: Vec<(PropertyMap, Version, &str)> = vec![
            (
                props! {"name" => "r"},
                v15,
                r#"CREATE ROLE "r" WITH VALID UNTIL 'infinity' CONNECTION LIMIT -1 NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT NOLOGIN NOBYPASSRLS NOREPLICATION"#,
            ),
            (
                props! {"name" => "u", "login" => true, "password" => "it's", "validUntil" => "2099-05-04 12:00:00+00", "connectionLimit" => 5, "superuser" => true, "createDatabase" => true, "createRole" => true, "inherit" => false, "replication" => true, "bypassRowLevelSecurity" => true},
                v15,
                r#"CREATE ROLE "u" WITH ENCRYPTED PASSWORD 'it''s' VALID UNTIL '2099-05-04 12:00:00+00' CONNECTION LIMIT 5 SUPERUSER CREATEDB CREATEROLE NOINHERIT LOGIN BYPASSRLS REPLICATION"#,
            ),
            (
                props! {"name" => "n", "password" => "null", "validUntil" => "INFINITY"},
                Version::new(9, 4, 0),
                r#"CREATE ROLE "n" WITH PASSWORD NULL VALID UNTIL 'infinity' CONNECTION LIMIT -1 NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT NOLOGIN NOREPLICATION"#,
            ),
            (
                props! {"name" => "w", "passwordWo" => "wo", "passwordWoVersion" => "1", "encryptedPassword" => false},
                v15,
                r#"CREATE ROLE "w" WITH UNENCRYPTED PASSWORD 'wo' VALID UNTIL 'infinity' CONNECTION LIMIT -1 NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT NOLOGIN NOBYPASSRLS NOREPLICATION"#,
            ),
        ];
        for (inputs, version, expected) in cases {
            assert_eq!(create_sql(&spec(inputs), version), expected);
        }
    }

    #[test]
    fn settings_statements() {
        assert_eq!(
            search_path_sql("r", &["bar".into(), "foo-with-hyphen".into()]).unwrap(),
            r#"ALTER ROLE "r" SET search_path TO "bar", "foo-with-hyphen""#
        );
        assert_eq!(
            search_path_sql("r", &[]).unwrap(),
            r#"ALTER ROLE "r" SET search_path TO DEFAULT"#
        );
        assert_eq!(
            search_path_sql("r", &["a, b".into()])
                .unwrap_err()
                .to_string(),
            "search_path cannot contain `, `: a, b"
        );
        assert_eq!(
            timeout_sql("r", "statement_timeout", 30000),
            r#"ALTER ROLE "r" SET statement_timeout TO 30000"#
        );
        assert_eq!(
            timeout_sql("r", "statement_timeout", 0),
            r#"ALTER ROLE "r" RESET statement_timeout"#
        );
        assert_eq!(
            assume_role_sql("r", "g"),
            r#"ALTER ROLE "r" SET ROLE TO "g""#
        );
        assert_eq!(assume_role_sql("r", ""), r#"ALTER ROLE "r" RESET ROLE"#);
        assert_eq!(
            grant_roles_sql("sub_role", &["myrole2".into(), "role_simple".into()]),
            [
                r#"GRANT "role_simple" TO "sub_role""#,
                r#"GRANT "myrole2" TO "sub_role""#
            ]
        );
    }

    #[test]
    fn hostile_names_stay_names() {
        let hostile = r#"x"; DROP ROLE postgres; --"#;
        let sql = create_sql(
            &spec(props! {"name" => hostile, "password" => "p'; DROP ROLE postgres; --"}),
            Version::new(15, 0, 0),
        );
        assert!(
            sql.starts_with(r#"CREATE ROLE "x""; DROP ROLE postgres; --" WITH ENCRYPTED PASSWORD 'p''; DROP ROLE postgres; --'"#),
            "{sql}"
        );
        let (read, _) = read_sql(hostile, Version::new(15, 0, 0));
        assert!(read.ends_with(r#"WHERE rolname = 'x"; DROP ROLE postgres; --'"#));
    }

    #[test]
    fn update_statements() {
        let state = props! {
            "name" => "update_role", "login" => true, "password" => cairn_sdk::secret("toto"),
            "validUntil" => "2099-05-04 12:00:00+00", "connectionLimit" => -1,
            "superuser" => false, "createDatabase" => false, "createRole" => false,
            "inherit" => true, "replication" => false, "bypassRowLevelSecurity" => false,
            "roles" => Vec::<Value>::new(), "searchPaths" => Vec::<Value>::new(),
            "statementTimeout" => 0, "idleInTransactionSessionTimeout" => 0, "assumeRole" => "",
        };
        let mut c = Checker::new(props! {
            "name" => "update_role2", "login" => true, "connectionLimit" => 5,
            "password" => "titi", "roles" => vec![Value::from("group_role")],
            "searchPaths" => vec![Value::from("mysearchpath")], "statementTimeout" => 30000,
            "idleInTransactionSessionTimeout" => 60000, "assumeRole" => "group_role",
        });
        props::check_table(PROPS, &mut c);
        let news = c.finish().inputs.into_map();
        let statements: Vec<String> = alter_sql(&state, &news, Version::new(15, 0, 0))
            .unwrap()
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(
            statements,
            [
                r#"ALTER ROLE "update_role" RENAME TO "update_role2""#,
                r#"ALTER ROLE "update_role2" PASSWORD 'titi'"#,
                r#"ALTER ROLE "update_role2" CONNECTION LIMIT 5"#,
                r#"ALTER ROLE "update_role2" VALID UNTIL 'infinity'"#,
            ]
        );

        let fake = Fake::new(15);
        fake.answer(
            "FROM pg_catalog.pg_auth_members members JOIN",
            &[&["old_group"]],
        );
        let cx = fake.ctx();
        update(&cx, &state, &news).unwrap();
        assert_eq!(
            fake.changes()[4..],
            [
                r#"postgres: REVOKE "old_group" FROM "update_role2""#,
                r#"postgres: GRANT "group_role" TO "update_role2""#,
                r#"postgres: ALTER ROLE "update_role2" SET search_path TO "mysearchpath""#,
                r#"postgres: ALTER ROLE "update_role2" SET statement_timeout TO 30000"#,
                r#"postgres: ALTER ROLE "update_role2" SET idle_in_transaction_session_timeout TO 60000"#,
                r#"postgres: ALTER ROLE "update_role2" SET ROLE TO "group_role""#,
            ]
        );
    }

    #[test]
    fn write_only_passwords_apply_when_their_version_changes() {
        let state = props! {"name" => "r", "passwordWoVersion" => "1"};
        let news = |wo: &str, version: &str| props! {"name" => "r", "passwordWo" => wo, "passwordWoVersion" => version};
        let v = Version::new(15, 0, 0);
        assert!(alter_sql(&state, &news("new", "1"), v).unwrap().is_empty());
        assert_eq!(
            alter_sql(&state, &news("new", "2"), v).unwrap(),
            [(r#"ALTER ROLE "r" PASSWORD 'new'"#.to_owned(), true)]
        );
    }

    #[test]
    fn catalog_rows_become_outputs() {
        let fake = Fake::new(15);
        fake.answer(
            "FROM pg_catalog.pg_roles WHERE rolname = 'r'",
            &[&[
                "{b,a}",
                "r",
                "f",
                "t",
                "f",
                "t",
                "t",
                "5",
                "infinity",
                r#"{"search_path=bar, \"foo-with-hyphen\"",statement_timeout=30000,role=g}"#,
                "f",
                "f",
            ]],
        )
        .answer("rolname = CURRENT_USER", &[&["t"]])
        .answer("pg_shadow", &[&["SCRAM-SHA-256$4096:salt$a:b"]]);
        let cx = fake.ctx();
        let out = read(
            &cx,
            "r",
            &props! {"password" => "pw", "skipDropRole" => true},
        )
        .unwrap()
        .unwrap();
        assert_eq!(out["roles"], props::string_array(&["a", "b"]));
        assert_eq!(
            out["searchPaths"],
            props::string_array(&["bar", "foo-with-hyphen"])
        );
        assert_eq!(out["statementTimeout"], Value::from(30000));
        assert_eq!(out["idleInTransactionSessionTimeout"], Value::from(0));
        assert_eq!(out["assumeRole"], Value::from("g"));
        assert_eq!(out["connectionLimit"], Value::from(5));
        assert_eq!(out["createDatabase"], Value::Bool(true));
        assert_eq!(out["skipDropRole"], Value::Bool(true));
        assert_eq!(out["password"], Value::secret("pw"));
        assert!(!out.contains_key("passwordWo"));
        // Gone: no row.
        assert_eq!(read(&cx, "other", &PropertyMap::new()).unwrap(), None);
    }

    #[test]
    fn search_paths_read_back_as_given() {
        let config = [r#"search_path=bar, "foo-with-hyphen", "a""b", "$user""#.to_owned()];
        assert_eq!(
            read_search_path(&config),
            ["bar", "foo-with-hyphen", "a\"b", "$user"]
        );
        assert!(read_search_path(&["statement_timeout=5".to_owned()]).is_empty());
    }

    #[test]
    fn md5_hashes_show_a_changed_password() {
        let hash = postgres_protocol::password::md5(b"pw", "r");
        assert_eq!(password_after_read("pw", "r", &hash), "pw");
        assert_eq!(password_after_read("other", "r", &hash), hash);
        assert_eq!(password_after_read("pw", "r", "SCRAM-SHA-256$x"), "pw");
        assert_eq!(password_after_read("pw", "r", ""), "");
    }

    #[test]
    fn delete_reassigns_in_every_database_then_drops() {
        let fake = Fake::new(15);
        fake.answer("pg_shdepend", &[&["app"]])
            .answer("CURRENT_USER", &[&["postgres"]])
            .answer("rolsuper", &[&["t"]]);
        let cx = fake.ctx();
        delete(&cx, &props! {"name" => "r"}).unwrap();
        assert_eq!(
            fake.changes(),
            [
                r#"app: REASSIGN OWNED BY "r" TO "postgres""#,
                r#"app: DROP OWNED BY "r""#,
                r#"postgres: REASSIGN OWNED BY "r" TO "postgres""#,
                r#"postgres: DROP OWNED BY "r""#,
                r#"postgres: DROP ROLE "r""#,
            ]
        );
        let fake = Fake::new(15);
        delete(
            &fake.ctx(),
            &props! {"name" => "r", "skipReassignOwned" => true, "skipDropRole" => true},
        )
        .unwrap();
        assert!(fake.changes().is_empty());
    }

    #[test]
    fn checks() {
        let mut c = Checker::new(props! {
            "name" => "r", "password" => "p", "passwordWo" => "w", "connectionLimit" => -2,
        });
        props::check_table(PROPS, &mut c);
        check(&mut c);
        let failures: Vec<String> = c
            .finish()
            .failures
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            failures,
            [
                "connectionLimit: expected connection_limit to be at least (-1), got -2",
                "password: \"password\": conflicts with password_wo",
                "passwordWo: \"password_wo\": all of `password_wo,password_wo_version` must be specified",
            ]
        );
    }
}
