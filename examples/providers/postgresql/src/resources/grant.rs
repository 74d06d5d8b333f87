//! `postgresql:index/grant:Grant` (Terraform's `postgresql_grant`).
//!
//! ID: `<role>_<database>[_<schema>]_<objectType>[_<object>...][_<column>...]` (objects and
//! columns in Terraform's set order); not importable, as in Terraform. Only `privileges`
//! changes in place; any other change replaces, deleting first (`deleteBeforeReplace`, as the
//! published package sets). Create and update revoke everything the grant covers and grant
//! the wanted privileges in one transaction on the grant's database, with the owners of the
//! schema and its tables granted to the connected user meanwhile when it is not a superuser.

use cairn_sdk::{Checker, Error, PropertyMap, PropertyMapExt, Result, Value};

use crate::config::Version;
use crate::db::{self, Ctx, Session};
use crate::props::{self, Default, Prop, REPLACE, REQUIRED, Ty};
use crate::sql::{self, ident, literal};

pub(crate) const PROPS: &[Prop] = &[
    Prop::new("role", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("database", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("schema", Ty::Str).flags(REPLACE),
    Prop::new("objectType", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("objects", Ty::StrSet).flags(REPLACE),
    Prop::new("columns", Ty::StrSet).flags(REPLACE),
    Prop::new("privileges", Ty::StrSet).flags(REQUIRED),
    Prop::new("withGrantOption", Ty::Bool)
        .default(Default::Bool(false))
        .flags(REPLACE),
];

/// The object types a Grant takes.
pub(crate) const OBJECT_TYPES: [&str; 10] = [
    "database",
    "function",
    "procedure",
    "routine",
    "schema",
    "sequence",
    "table",
    "foreign_data_wrapper",
    "foreign_server",
    "column",
];

/// The privileges each object type takes (`MAINTAIN` on tables from PostgreSQL 17).
pub(crate) fn allowed_privileges(
    object_type: &str,
    version: Option<Version>,
) -> Option<Vec<&'static str>> {
    let base: &[&str] = match object_type {
        "database" => &["ALL", "CREATE", "CONNECT", "TEMPORARY"],
        "table" => &[
            "ALL",
            "SELECT",
            "INSERT",
            "UPDATE",
            "DELETE",
            "TRUNCATE",
            "REFERENCES",
            "TRIGGER",
        ],
        "sequence" => &["ALL", "USAGE", "SELECT", "UPDATE"],
        "schema" => &["ALL", "CREATE", "USAGE"],
        "function" | "procedure" | "routine" => &["ALL", "EXECUTE"],
        "type" | "foreign_data_wrapper" | "foreign_server" => &["ALL", "USAGE"],
        "column" => &["ALL", "SELECT", "INSERT", "UPDATE", "REFERENCES"],
        _ => return None,
    };
    let mut allowed = base.to_vec();
    // Before connecting, the server's version is not known: MAINTAIN passes `check` and is
    // judged against the server when acting.
    if object_type == "table" && version.is_none_or(|v| v.at_least(17, 0)) {
        allowed.push("MAINTAIN");
    }
    Some(allowed)
}

/// Failures of the privileges for `object_type`, naming each item
/// (`privileges[1]: "FLY" is not a privilege of object type table (expected one of ...)`).
pub(crate) fn privilege_failures(
    object_type: &str,
    privileges: &[Value],
    version: Option<Version>,
) -> Vec<(String, String)> {
    let Some(allowed) = allowed_privileges(object_type, version) else {
        return Vec::new();
    };
    privileges
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let p = p.as_str()?;
            (!allowed.contains(&p)).then(|| {
                (
                    format!("privileges[{i}]"),
                    format!(
                        "{p} is not an allowed privilege for object type {object_type} (expected one of {})",
                        allowed.join(", ")
                    ),
                )
            })
        })
        .collect()
}

/// Whether the granted privileges are the wanted ones; a wanted `ALL` matches every
/// privilege of the type.
pub(crate) fn privileges_equal(
    granted: &[String],
    wanted: &[String],
    object_type: &str,
    version: Version,
) -> bool {
    let granted = sql::sorted_set(granted);
    if granted == sql::sorted_set(wanted) {
        return true;
    }
    if !wanted.iter().any(|p| p == "ALL") {
        return false;
    }
    let implicit: Vec<&str> = allowed_privileges(object_type, Some(version))
        .unwrap_or_default()
        .into_iter()
        .filter(|p| *p != "ALL")
        .collect();
    granted == sql::sorted_set(&implicit)
}

/// The grant as the program wants it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    pub role: String,
    pub database: String,
    pub schema: String,
    pub object_type: String,
    /// In Terraform's set order.
    pub objects: Vec<String>,
    pub columns: Vec<String>,
    pub privileges: Vec<String>,
    pub with_grant_option: bool,
}

impl Spec {
    pub(crate) fn from_inputs(inputs: &PropertyMap) -> Spec {
        Spec {
            role: props::string(inputs, "role"),
            database: props::string(inputs, "database"),
            schema: props::string(inputs, "schema"),
            object_type: props::string(inputs, "objectType"),
            objects: sql::tf_set_order(&props::strings(inputs, "objects")),
            columns: sql::tf_set_order(&props::strings(inputs, "columns")),
            privileges: sql::tf_set_order(&props::strings(inputs, "privileges")),
            with_grant_option: props::boolean(inputs, "withGrantOption", false),
        }
    }

    fn is_routine(&self) -> bool {
        matches!(
            self.object_type.to_lowercase().as_str(),
            "function" | "procedure" | "routine"
        )
    }

    fn needs_schema(&self) -> bool {
        !matches!(
            self.object_type.as_str(),
            "database" | "foreign_data_wrapper" | "foreign_server"
        )
    }

    /// `"schema"."object"` for each object (a routine keeps its argument list).
    fn object_list(&self) -> Result<String> {
        let items: Result<Vec<String>> = self
            .objects
            .iter()
            .map(|o| {
                let object = if self.is_routine() {
                    routine(o)?
                } else {
                    ident(o)
                };
                Ok(format!("{}.{object}", ident(&self.schema)))
            })
            .collect();
        Ok(items?.join(","))
    }

    fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|c| ident(c))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A routine name, quoted, with its argument type list (`f(integer, text)`), which may hold
/// only type names: letters, digits, `_`, spaces, `,`, `.`, `[]` and balanced parentheses.
pub(crate) fn routine(object: &str) -> Result<String> {
    let Some((name, rest)) = object.split_once('(') else {
        return Ok(ident(object));
    };
    let args = format!("({rest}");
    if !valid_args(&args) {
        return Err(Error::failed(format!(
            "{object:?}: a routine's argument list may hold only type names (letters, digits, `_`, spaces, `,`, `.`, `[]` and balanced parentheses)"
        )));
    }
    Ok(format!("{}{args}", ident(name)))
}

fn valid_args(args: &str) -> bool {
    let mut depth = 0usize;
    for (i, c) in args.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = match depth.checked_sub(1) {
                    Some(d) => d,
                    None => return false,
                };
                if depth == 0 && i + 1 != args.len() {
                    return false;
                }
            }
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | ' ' | ',' | '.' | '[' | ']') => {}
            _ => return false,
        }
    }
    depth == 0
}

/// The `GRANT` statement (none without privileges).
pub(crate) fn grant_sql(g: &Spec) -> Result<Option<String>> {
    if g.privileges.is_empty() {
        return Ok(None);
    }
    let privileges = g.privileges.join(",");
    let role = ident(&g.role);
    let kind = g.object_type.to_uppercase();
    let mut sql = match kind.as_str() {
        "DATABASE" => format!(
            "GRANT {privileges} ON DATABASE {} TO {role}",
            ident(&g.database)
        ),
        "SCHEMA" => format!(
            "GRANT {privileges} ON SCHEMA {} TO {role}",
            ident(&g.schema)
        ),
        "FOREIGN_DATA_WRAPPER" | "FOREIGN_SERVER" => format!(
            "GRANT {privileges} ON {} {} TO {role}",
            kind.replace('_', " "),
            ident(g.objects.first().map_or("", String::as_str))
        ),
        "COLUMN" => format!(
            "GRANT {privileges} ({}) ON TABLE {} TO {role}",
            g.column_list(),
            g.object_list()?
        ),
        "TABLE" | "SEQUENCE" | "FUNCTION" | "PROCEDURE" | "ROUTINE" if g.objects.is_empty() => {
            format!(
                "GRANT {privileges} ON ALL {kind}S IN SCHEMA {} TO {role}",
                ident(&g.schema)
            )
        }
        "TABLE" | "SEQUENCE" | "FUNCTION" | "PROCEDURE" | "ROUTINE" => {
            format!(
                "GRANT {privileges} ON {kind} {} TO {role}",
                g.object_list()?
            )
        }
        _ => {
            return Err(Error::failed(format!(
                "unknown object type {}",
                g.object_type
            )));
        }
    };
    if g.with_grant_option {
        sql.push_str(" WITH GRANT OPTION");
    }
    Ok(Some(sql))
}

/// The `REVOKE` statement that clears what the grant covers (none for columns without
/// privileges).
pub(crate) fn revoke_sql(g: &Spec) -> Result<Option<String>> {
    let role = ident(&g.role);
    let kind = g.object_type.to_uppercase();
    Ok(Some(match kind.as_str() {
        "DATABASE" => format!(
            "REVOKE ALL PRIVILEGES ON DATABASE {} FROM {role}",
            ident(&g.database)
        ),
        "SCHEMA" => format!(
            "REVOKE ALL PRIVILEGES ON SCHEMA {} FROM {role}",
            ident(&g.schema)
        ),
        "FOREIGN_DATA_WRAPPER" | "FOREIGN_SERVER" => format!(
            "REVOKE ALL PRIVILEGES ON {} {} FROM {role}",
            kind.replace('_', " "),
            ident(g.objects.first().map_or("", String::as_str))
        ),
        "COLUMN" if g.privileges.is_empty() || g.columns.is_empty() => return Ok(None),
        "COLUMN" => format!(
            "REVOKE {} ({}) ON TABLE {} FROM {role}",
            g.privileges.join(","),
            g.column_list(),
            g.object_list()?
        ),
        "TABLE" | "SEQUENCE" | "FUNCTION" | "PROCEDURE" | "ROUTINE" if g.objects.is_empty() => {
            format!(
                "REVOKE ALL PRIVILEGES ON ALL {kind}S IN SCHEMA {} FROM {role}",
                ident(&g.schema)
            )
        }
        // Only the recorded privileges: a column grant on the same table stays.
        "TABLE" | "SEQUENCE" | "FUNCTION" | "PROCEDURE" | "ROUTINE" if !g.privileges.is_empty() => {
            format!(
                "REVOKE {} ON {kind} {} FROM {role}",
                g.privileges.join(","),
                g.object_list()?
            )
        }
        "TABLE" | "SEQUENCE" | "FUNCTION" | "PROCEDURE" | "ROUTINE" => format!(
            "REVOKE ALL PRIVILEGES ON {kind} {} FROM {role}",
            g.object_list()?
        ),
        _ => return Ok(None),
    }))
}

/// The grant's ID (Terraform's `generateGrantID`).
pub(crate) fn id(g: &Spec) -> String {
    let mut parts = vec![g.role.clone(), g.database.clone()];
    if g.needs_schema() {
        parts.push(g.schema.clone());
    }
    parts.push(g.object_type.clone());
    parts.extend(g.objects.iter().cloned());
    parts.extend(g.columns.iter().cloned());
    parts.join("_")
}

/// Terraform's apply-time rules, as (property, message).
pub(crate) fn rule_failures(inputs: &PropertyMap) -> Vec<(&'static str, &'static str)> {
    let object_type = inputs.get_str("objectType").unwrap_or_default();
    let known = |key: &str| !inputs.get(key).is_some_and(Value::contains_unknowns);
    let count = |key: &str| props::strings(inputs, key).len();
    let mut out = Vec::new();
    if known("schema")
        && props::string(inputs, "schema").is_empty()
        && !matches!(
            object_type,
            "database" | "foreign_data_wrapper" | "foreign_server"
        )
    {
        out.push((
            "schema",
            "parameter 'schema' is mandatory for postgresql_grant resource",
        ));
    }
    if !known("objects") || !known("columns") || !known("privileges") {
        return out;
    }
    let (objects, columns, privileges) = (count("objects"), count("columns"), count("privileges"));
    if objects > 0 && matches!(object_type, "database" | "schema") {
        out.push((
            "objects",
            "cannot specify `objects` when `object_type` is `database` or `schema`",
        ));
    }
    if columns > 0 && object_type != "column" {
        out.push((
            "columns",
            "cannot specify `columns` when `object_type` is not `column`",
        ));
    }
    if columns == 0 && object_type == "column" {
        out.push((
            "columns",
            "must specify `columns` when `object_type` is `column`",
        ));
    }
    if privileges != 1 && object_type == "column" {
        out.push((
            "privileges",
            "must specify exactly 1 `privileges` when `object_type` is `column`",
        ));
    }
    if objects != 1 && object_type == "column" {
        out.push((
            "objects",
            "must specify exactly 1 table in the `objects` field when `object_type` is `column`",
        ));
    }
    if objects != 1 && matches!(object_type, "foreign_data_wrapper" | "foreign_server") {
        out.push((
            "objects",
            "one element must be specified in `objects` when `object_type` is `foreign_data_wrapper` or `foreign_server`",
        ));
    }
    out
}

/// Terraform's plan-time validations: the object type; and the argument lists of routines
/// (a rule of this provider: they are written into statements).
pub(crate) fn check(c: &mut Checker) {
    props::one_of(c, "objectType", &OBJECT_TYPES);
    let inputs = c.inputs().clone();
    if matches!(
        inputs.get_str("objectType"),
        Some("function" | "procedure" | "routine")
    ) {
        for (i, object) in props::strings(&inputs, "objects").iter().enumerate() {
            if let Err(e) = routine(object) {
                c.fail(format!("objects[{i}]"), e.to_string());
            }
        }
    }
}

/// Terraform's apply-time validations (its Create checks these before acting): the first
/// failure, naming its property.
pub(crate) fn validate(inputs: &PropertyMap, version: Version) -> Result<()> {
    if let Some((key, message)) = rule_failures(inputs).first() {
        return Err(Error::failed(format!("{key}: {message}")));
    }
    let object_type = inputs.get_str("objectType").unwrap_or_default();
    let privileges = inputs.get_array("privileges").cloned().unwrap_or_default();
    match privilege_failures(object_type, &privileges, Some(version)).first() {
        Some((key, message)) => Err(Error::failed(format!("{key}: {message}"))),
        None => Ok(()),
    }
}

/// The version checks of Terraform's `validateFeatureSupport`.
fn feature_support(object_type: &str, version: Version) -> Result<()> {
    let missing = if !version.at_least(9, 0) {
        Some("postgresql_grant resource is not supported for this Postgres version".to_owned())
    } else if object_type == "procedure" && !version.at_least(11, 0) {
        Some("object type PROCEDURE is not supported for this Postgres version".to_owned())
    } else if object_type == "routine" && !version.at_least(11, 0) {
        Some("object type ROUTINE is not supported for this Postgres version".to_owned())
    } else {
        None
    };
    match missing {
        Some(m) => Err(Error::failed(format!(
            "feature is not supported: {m} ({version})"
        ))),
        None => Ok(()),
    }
}

/// The owners to grant to the connected user meanwhile (Terraform's `getRolesToGrant`).
fn roles_to_grant(s: &mut dyn Session, g: &Spec) -> Result<Vec<String>> {
    if !g.needs_schema() {
        return Ok(Vec::new());
    }
    let mut owners: Vec<String> = if g.object_type != "schema" {
        db::rows(
            s,
            &format!(
                "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = {}",
                literal(&g.schema)
            ),
            &["tableowner"],
            format!(
                "error while looking for owners of tables in schema '{}'",
                g.schema
            ),
        )?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect()
    } else {
        Vec::new()
    };
    let schema_owner = db::schema_owner(s, &g.schema)?;
    if !owners.contains(&schema_owner) {
        owners.push(schema_owner);
    }
    owners
        .into_iter()
        .map(|o| {
            if o == "pg_database_owner" {
                db::database_owner(s, "")
            } else {
                Ok(o)
            }
        })
        .collect()
}

/// Revokes what `previous` covered and grants what `g` wants.
fn apply(cx: &Ctx, inputs: &PropertyMap, previous: &Spec) -> Result<()> {
    let g = &Spec::from_inputs(inputs);
    let mut s = cx.session(&g.database)?;
    let version = s.version();
    feature_support(&g.object_type, version)?;
    validate(inputs, version)?;
    let revoke = revoke_sql(previous)?;
    let grant = grant_sql(g)?;
    db::transaction(&mut *s, |s| {
        db::lock_role(s, &g.role)?;
        if g.object_type == "database" {
            db::lock_database(s, &g.database)?;
        }
        let owners = roles_to_grant(s, g)?;
        db::with_roles_granted(s, &owners, |s| {
            if let Some(sql) = &revoke {
                db::exec(s, sql, "could not execute revoke query")?;
            }
            if let Some(sql) = &grant {
                db::exec(
                    s,
                    sql,
                    format!("could not grant privileges to role {}", g.role),
                )?;
            }
            Ok(())
        })
    })
}

pub(crate) fn create(cx: &Ctx, inputs: &PropertyMap) -> Result<String> {
    let g = Spec::from_inputs(inputs);
    apply(cx, inputs, &g)?;
    Ok(id(&g))
}

pub(crate) fn update(cx: &Ctx, olds: &PropertyMap, news: &PropertyMap) -> Result<String> {
    let g = Spec::from_inputs(news);
    // Only the privileges change in place: the revoke covers the recorded ones.
    let previous = Spec {
        privileges: sql::tf_set_order(&props::strings(olds, "privileges")),
        ..g.clone()
    };
    apply(cx, news, &previous)?;
    Ok(id(&g))
}

pub(crate) fn delete(cx: &Ctx, olds: &PropertyMap) -> Result<()> {
    let g = Spec::from_inputs(olds);
    let mut s = cx.session(&g.database)?;
    feature_support(&g.object_type, s.version())?;
    let revoke = revoke_sql(&g)?;
    db::transaction(&mut *s, |s| {
        db::lock_role(s, &g.role)?;
        if g.object_type == "database" {
            db::lock_database(s, &g.database)?;
        }
        let owners = roles_to_grant(s, &g)?;
        db::with_roles_granted(s, &owners, |s| match &revoke {
            Some(sql) => db::exec(s, sql, "could not execute revoke query"),
            None => Ok(()),
        })
    })
}

/// Whether the role, database and schema of a grant (or default privileges) exist
/// (Terraform's `checkRoleDBSchemaExists`).
pub(crate) fn targets_exist(
    cx: &Ctx,
    role: &str,
    database: &str,
    schema: &str,
    object_type: &str,
) -> Result<bool> {
    {
        let mut s = cx.default_session()?;
        if !db::db_exists(&mut *s, database)? {
            return Ok(false);
        }
    }
    let mut s = cx.session(database)?;
    if role != "public" && !db::role_exists(&mut *s, role)? {
        return Ok(false);
    }
    let schema_scoped = !matches!(
        object_type,
        "database" | "foreign_data_wrapper" | "foreign_server"
    );
    if schema_scoped && !schema.is_empty() && !db::schema_exists(&mut *s, schema)? {
        return Ok(false);
    }
    Ok(true)
}

/// The first array of the first row of a query.
fn granted(s: &mut dyn Session, sql: &str, what: &str) -> Result<Vec<String>> {
    Ok(db::row(s, sql, &["privileges"], what)?
        .map(|r| sql::array_strings(r[0].as_deref()))
        .unwrap_or_default())
}

/// What the catalog shows that differs from the recorded grant.
#[derive(Debug, Default)]
struct Drift {
    /// The privileges granted, when they are not the wanted ones.
    privileges: Option<Vec<String>>,
    /// For a column grant, the columns still granted when some are not.
    columns: Option<Vec<String>>,
}

/// The privileges the catalog shows, when they differ from the wanted ones; for column
/// grants also the columns still granted.
fn read_privileges(s: &mut dyn Session, g: &Spec, version: Version) -> Result<Drift> {
    let oid = db::role_oid(s, &g.role)?;
    let acl = |catalog: &str, column: &str, name_column: &str, name: &str| {
        format!(
            "SELECT array_agg(privilege_type) AS privileges FROM (SELECT (aclexplode({column})).* FROM {catalog} WHERE {name_column} = {}) AS privileges WHERE grantee = {oid}",
            literal(name)
        )
    };
    let first_object = g.objects.first().cloned().unwrap_or_default();
    let single = match g.object_type.as_str() {
        "database" => Some(acl("pg_database", "datacl", "datname", &g.database)),
        "schema" => Some(acl("pg_namespace", "nspacl", "nspname", &g.schema)),
        "foreign_data_wrapper" => Some(acl(
            "pg_catalog.pg_foreign_data_wrapper",
            "fdwacl",
            "fdwname",
            &first_object,
        )),
        "foreign_server" => Some(acl(
            "pg_catalog.pg_foreign_server",
            "srvacl",
            "srvname",
            &first_object,
        )),
        _ => None,
    };
    if let Some(sql) = single {
        let granted = granted(s, &sql, "could not read privileges")?;
        let differs = !privileges_equal(&granted, &g.privileges, &g.object_type, version);
        return Ok(Drift {
            privileges: differs.then_some(granted),
            columns: None,
        });
    }
    if g.object_type == "column" {
        return read_column_privileges(s, g);
    }
    let sql = if g.is_routine() {
        format!(
            "SELECT pg_proc.proname AS name, array_remove(array_agg(privilege_type), NULL) AS privileges \
             FROM pg_proc JOIN pg_namespace ON pg_namespace.oid = pg_proc.pronamespace \
             LEFT JOIN (SELECT acls.* FROM (SELECT proname, pronamespace, (aclexplode(proacl)).* FROM pg_proc) acls WHERE grantee = {oid}) privs \
             USING (proname, pronamespace) WHERE nspname = {} GROUP BY pg_proc.proname",
            literal(&g.schema)
        )
    } else {
        let relkind = match g.object_type.as_str() {
            "sequence" => "S",
            _ => "r",
        };
        format!(
            "SELECT pg_class.relname AS name, array_remove(array_agg(privilege_type), NULL) AS privileges \
             FROM pg_class JOIN pg_namespace ON pg_namespace.oid = pg_class.relnamespace \
             LEFT JOIN (SELECT acls.* FROM (SELECT relname, relnamespace, relkind, (aclexplode(relacl)).* FROM pg_class c) AS acls WHERE grantee = {oid}) privs \
             USING (relname, relnamespace, relkind) WHERE nspname = {} AND relkind = {} GROUP BY pg_class.relname",
            literal(&g.schema),
            literal(relkind)
        )
    };
    let rows = db::rows(
        s,
        &sql,
        &["name", "privileges"],
        "could not read privileges",
    )?;
    for row in rows {
        let name = row[0].clone().unwrap_or_default();
        if !g.objects.is_empty() && !g.objects.contains(&name) {
            continue;
        }
        let granted = sql::array_strings(row[1].as_deref());
        if !privileges_equal(&granted, &g.privileges, &g.object_type, version) {
            return Ok(Drift {
                privileges: Some(granted),
                columns: None,
            });
        }
    }
    Ok(Drift::default())
}

fn read_column_privileges(s: &mut dyn Session, g: &Spec) -> Result<Drift> {
    let table = g.objects.first().cloned().unwrap_or_default();
    let privilege = g.privileges.first().cloned().unwrap_or_default();
    let sql = format!(
        "SELECT relname AS table_name, attname AS column_name, array_agg(privilege_type) AS column_privileges \
         FROM (SELECT relname, attname, (aclexplode(attacl)).* FROM pg_class \
         JOIN pg_namespace ON pg_class.relnamespace = pg_namespace.oid \
         JOIN pg_attribute ON pg_class.oid = attrelid \
         WHERE nspname = {} AND relname = {} AND relkind = 'r') AS col_privs \
         JOIN pg_roles ON pg_roles.oid = col_privs.grantee \
         WHERE rolname = {} AND privilege_type = {} \
         GROUP BY col_privs.relname, col_privs.attname, col_privs.privilege_type ORDER BY col_privs.attname",
        literal(&g.schema),
        literal(&table),
        literal(&g.role),
        literal(&privilege)
    );
    let rows = db::rows(
        s,
        &sql,
        &["table_name", "column_name", "column_privileges"],
        "could not read column privileges",
    )?;
    let mut missing: Vec<String> = g.columns.clone();
    let mut privileges = None;
    for row in rows {
        let table_name = row[0].clone().unwrap_or_default();
        if !g.objects.is_empty() && !g.objects.contains(&table_name) {
            continue;
        }
        let column = row[1].clone().unwrap_or_default();
        missing.retain(|c| *c != column);
        let granted = sql::array_strings(row[2].as_deref());
        if sql::sorted_set(&granted) != sql::sorted_set(&g.privileges) {
            privileges = Some(granted);
            break;
        }
    }
    let columns = (!missing.is_empty()).then(|| {
        g.columns
            .iter()
            .filter(|c| !missing.contains(c))
            .cloned()
            .collect()
    });
    Ok(Drift {
        privileges,
        columns,
    })
}

/// The grant's outputs from its (recorded or new) inputs and what the catalog shows.
fn outputs(inputs: &PropertyMap, drift: Drift) -> PropertyMap {
    let mut out = PropertyMap::new();
    for key in ["role", "database", "schema", "objectType"] {
        if let Some(v) = props::present(inputs, key) {
            out.insert(key.into(), v.clone());
        }
    }
    // A set of strings reads back sorted; one never given stays unset (null).
    let set = |key: &str| match props::present(inputs, key) {
        Some(_) => props::string_array(&sql::sorted_set(&props::strings(inputs, key))),
        None => Value::Null,
    };
    out.insert("objects".into(), set("objects"));
    out.insert(
        "columns".into(),
        match drift.columns {
            Some(c) => props::string_array(&sql::sorted_set(&c)),
            None => set("columns"),
        },
    );
    out.insert(
        "privileges".into(),
        match drift.privileges {
            Some(p) => props::string_array(&sql::sorted_set(&p)),
            None => set("privileges"),
        },
    );
    out.insert(
        "withGrantOption".into(),
        props::boolean(inputs, "withGrantOption", false).into(),
    );
    out
}

/// Reads the grant recorded in `state`: `None` when its role, database or schema is gone.
pub(crate) fn read(cx: &Ctx, state: &PropertyMap) -> Result<Option<(String, PropertyMap)>> {
    let g = Spec::from_inputs(state);
    if !targets_exist(cx, &g.role, &g.database, &g.schema, &g.object_type)? {
        return Ok(None);
    }
    let mut s = cx.session(&g.database)?;
    let version = s.version();
    feature_support(&g.object_type, version)?;
    let drift = read_privileges(&mut *s, &g, version)?;
    Ok(Some((id(&g), outputs(state, drift))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fake::Fake;
    use cairn_sdk::props;

    fn spec(inputs: PropertyMap) -> Spec {
        Spec::from_inputs(&inputs)
    }

    fn strs(items: &[&str]) -> Value {
        props::string_array(items)
    }

    /// The Terraform provider's own cases (TestCreateGrantQuery, TestCreateRevokeQuery).
    #[test]
    fn grant_and_revoke_statements() {
        let cases: Vec<(PropertyMap, Option<&str>, Option<&str>)> = vec![
            (
                props! {"objectType" => "table", "schema" => "foo", "role" => "bar", "privileges" => strs(&["SELECT"])},
                Some(r#"GRANT SELECT ON ALL TABLES IN SCHEMA "foo" TO "bar""#),
                Some(r#"REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA "foo" FROM "bar""#),
            ),
            (
                props! {"objectType" => "sequence", "schema" => "foo", "role" => "bar", "privileges" => strs(&["SELECT"])},
                Some(r#"GRANT SELECT ON ALL SEQUENCES IN SCHEMA "foo" TO "bar""#),
                Some(r#"REVOKE ALL PRIVILEGES ON ALL SEQUENCES IN SCHEMA "foo" FROM "bar""#),
            ),
            (
                props! {"objectType" => "procedure", "schema" => "foo", "role" => "bar", "privileges" => strs(&["EXECUTE"])},
                Some(r#"GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA "foo" TO "bar""#),
                Some(r#"REVOKE ALL PRIVILEGES ON ALL PROCEDURES IN SCHEMA "foo" FROM "bar""#),
            ),
            (
                props! {"objectType" => "TABLE", "schema" => "foo", "role" => "bar", "withGrantOption" => true, "privileges" => strs(&["SELECT", "INSERT", "UPDATE"])},
                Some(
                    r#"GRANT UPDATE,SELECT,INSERT ON ALL TABLES IN SCHEMA "foo" TO "bar" WITH GRANT OPTION"#,
                ),
                Some(r#"REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA "foo" FROM "bar""#),
            ),
            (
                props! {"objectType" => "database", "database" => "foo", "role" => "bar", "privileges" => strs(&["CREATE", "CONNECT"])},
                Some(r#"GRANT CONNECT,CREATE ON DATABASE "foo" TO "bar""#),
                Some(r#"REVOKE ALL PRIVILEGES ON DATABASE "foo" FROM "bar""#),
            ),
            (
                props! {"objectType" => "table", "objects" => strs(&["o1", "o2"]), "schema" => "foo", "role" => "bar", "privileges" => strs(&["SELECT"])},
                Some(r#"GRANT SELECT ON TABLE "foo"."o2","foo"."o1" TO "bar""#),
                Some(r#"REVOKE SELECT ON TABLE "foo"."o2","foo"."o1" FROM "bar""#),
            ),
            (
                props! {"objectType" => "table", "objects" => strs(&["o1", "o2"]), "schema" => "foo", "role" => "bar", "privileges" => strs(&["INSERT", "UPDATE"])},
                Some(r#"GRANT UPDATE,INSERT ON TABLE "foo"."o2","foo"."o1" TO "bar""#),
                Some(r#"REVOKE UPDATE,INSERT ON TABLE "foo"."o2","foo"."o1" FROM "bar""#),
            ),
            (
                props! {"objectType" => "table", "objects" => strs(&["o1", "o2"]), "schema" => "foo", "role" => "bar", "privileges" => strs(&[])},
                None,
                Some(r#"REVOKE ALL PRIVILEGES ON TABLE "foo"."o2","foo"."o1" FROM "bar""#),
            ),
            (
                props! {"objectType" => "column", "objects" => strs(&["o1"]), "columns" => strs(&["col1", "col2"]), "schema" => "foo", "role" => "bar", "privileges" => strs(&["SELECT"])},
                Some(r#"GRANT SELECT ("col2","col1") ON TABLE "foo"."o1" TO "bar""#),
                Some(r#"REVOKE SELECT ("col2","col1") ON TABLE "foo"."o1" FROM "bar""#),
            ),
            (
                props! {"objectType" => "foreign_data_wrapper", "objects" => strs(&["baz"]), "role" => "bar", "withGrantOption" => true, "privileges" => strs(&["ALL PRIVILEGES"])},
                Some(
                    r#"GRANT ALL PRIVILEGES ON FOREIGN DATA WRAPPER "baz" TO "bar" WITH GRANT OPTION"#,
                ),
                Some(r#"REVOKE ALL PRIVILEGES ON FOREIGN DATA WRAPPER "baz" FROM "bar""#),
            ),
            (
                props! {"objectType" => "foreign_server", "objects" => strs(&["baz"]), "role" => "bar", "privileges" => strs(&["USAGE"])},
                Some(r#"GRANT USAGE ON FOREIGN SERVER "baz" TO "bar""#),
                Some(r#"REVOKE ALL PRIVILEGES ON FOREIGN SERVER "baz" FROM "bar""#),
            ),
            (
                props! {"objectType" => "function", "objects" => strs(&["f(integer, text)"]), "schema" => "s", "role" => "public", "privileges" => strs(&["EXECUTE"])},
                Some(r#"GRANT EXECUTE ON FUNCTION "s"."f"(integer, text) TO "public""#),
                Some(r#"REVOKE EXECUTE ON FUNCTION "s"."f"(integer, text) FROM "public""#),
            ),
        ];
        for (inputs, grant, revoke) in cases {
            let g = spec(inputs);
            assert_eq!(grant_sql(&g).unwrap().as_deref(), grant, "{g:?}");
            assert_eq!(revoke_sql(&g).unwrap().as_deref(), revoke, "{g:?}");
        }
    }

    #[test]
    fn ids() {
        let g = spec(
            props! {"role" => "r", "database" => "d", "schema" => "s", "objectType" => "table", "objects" => strs(&["o1", "o2"])},
        );
        assert_eq!(id(&g), "r_d_s_table_o2_o1");
        let g = spec(props! {"role" => "r", "database" => "d", "objectType" => "database"});
        assert_eq!(id(&g), "r_d_database");
        let g = spec(
            props! {"role" => "r", "database" => "d", "schema" => "s", "objectType" => "column", "objects" => strs(&["t"]), "columns" => strs(&["col1", "col2"])},
        );
        assert_eq!(id(&g), "r_d_s_column_t_col2_col1");
    }

    #[test]
    fn routine_arguments_cannot_smuggle_sql() {
        assert_eq!(routine("f").unwrap(), r#""f""#);
        assert_eq!(
            routine("f(numeric(10,2), text[])").unwrap(),
            r#""f"(numeric(10,2), text[])"#
        );
        for bad in [
            "f(int); DROP ROLE postgres; --",
            "f(int)) x",
            "f('x')",
            "f(int",
            "f(int) /* */",
        ] {
            assert!(routine(bad).is_err(), "{bad}");
        }
    }

    fn check_failures(inputs: PropertyMap) -> Vec<String> {
        let mut c = Checker::new(inputs);
        props::check_table(PROPS, &mut c);
        check(&mut c);
        c.finish()
            .failures
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn validations_follow_terraform() {
        let base = |object_type: &str, extra: PropertyMap| {
            let mut m =
                props! {"role" => "test_role", "database" => "d", "objectType" => object_type};
            m.extend(extra);
            m
        };
        // When acting, as Terraform's Create: the first failure, naming its property.
        let v15 = Version::new(15, 0, 0);
        let cases: Vec<(PropertyMap, &str)> = vec![
            (
                base(
                    "table",
                    props! {"schema" => "s", "privileges" => strs(&["SELECT", "FLY"])},
                ),
                "privileges[1]: FLY is not an allowed privilege for object type table (expected one of ALL, SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER)",
            ),
            (
                base(
                    "table",
                    props! {"schema" => "s", "privileges" => strs(&["MAINTAIN"])},
                ),
                "privileges[0]: MAINTAIN is not an allowed privilege for object type table (expected one of ALL, SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER)",
            ),
            (
                base(
                    "database",
                    props! {"objects" => strs(&["o1", "o2"]), "privileges" => strs(&["CONNECT"])},
                ),
                "objects: cannot specify `objects` when `object_type` is `database` or `schema`",
            ),
            (
                base(
                    "foreign_server",
                    props! {"objects" => strs(&["o1", "o2"]), "privileges" => strs(&["USAGE"])},
                ),
                "objects: one element must be specified in `objects` when `object_type` is `foreign_data_wrapper` or `foreign_server`",
            ),
            (
                base(
                    "column",
                    props! {"schema" => "s", "objects" => strs(&["o1", "o2"]), "columns" => strs(&["a"]), "privileges" => strs(&["SELECT"])},
                ),
                "objects: must specify exactly 1 table in the `objects` field when `object_type` is `column`",
            ),
            (
                base(
                    "column",
                    props! {"schema" => "s", "objects" => strs(&["o1"]), "columns" => strs(&["a"]), "privileges" => strs(&["SELECT", "INSERT"])},
                ),
                "privileges: must specify exactly 1 `privileges` when `object_type` is `column`",
            ),
            (
                base(
                    "column",
                    props! {"schema" => "s", "objects" => strs(&["o1"]), "privileges" => strs(&["SELECT"])},
                ),
                "columns: must specify `columns` when `object_type` is `column`",
            ),
            (
                base(
                    "table",
                    props! {"schema" => "s", "objects" => strs(&["o1"]), "columns" => strs(&["a"]), "privileges" => strs(&["SELECT"])},
                ),
                "columns: cannot specify `columns` when `object_type` is not `column`",
            ),
            (
                base("table", props! {"privileges" => strs(&["SELECT"])}),
                "schema: parameter 'schema' is mandatory for postgresql_grant resource",
            ),
        ];
        for (inputs, expected) in cases {
            assert!(check_failures(inputs.clone()).is_empty(), "{inputs:?}");
            assert_eq!(validate(&inputs, v15).unwrap_err().to_string(), expected);
        }
        assert!(
            validate(
                &base(
                    "table",
                    props! {"schema" => "s", "privileges" => strs(&["MAINTAIN"])}
                ),
                Version::new(17, 0, 0)
            )
            .is_ok()
        );
        // When checking, as Terraform's plan: the object type and the required inputs.
        assert_eq!(
            check_failures(base("teapot", props! {"privileges" => strs(&["SELECT"])})),
            [
                "objectType: expected object_type to be one of [\"database\" \"function\" \"procedure\" \"routine\" \"schema\" \"sequence\" \"table\" \"foreign_data_wrapper\" \"foreign_server\" \"column\"], got teapot"
            ]
        );
        assert_eq!(
            check_failures(props! {"objectType" => "database"}),
            [
                "role: missing required property",
                "database: missing required property",
                "privileges: missing required property",
            ]
        );
        assert_eq!(
            check_failures(base("function", props! {"schema" => "s", "objects" => strs(&["f(int); --"]), "privileges" => strs(&["EXECUTE"])})).len(),
            1
        );
        // Unknown values (a preview) are not judged.
        assert!(
            check_failures(base(
                "table",
                props! {"schema" => Value::Unknown, "privileges" => vec![Value::Unknown]}
            ))
            .is_empty()
        );
    }

    #[test]
    fn all_matches_every_privilege_of_the_type() {
        let v16 = Version::new(16, 0, 0);
        let all = ["ALL".to_owned()];
        let implicit: Vec<String> = ["CREATE", "USAGE"].map(str::to_owned).to_vec();
        assert!(privileges_equal(&implicit, &all, "schema", v16));
        assert!(!privileges_equal(&implicit[..1], &all, "schema", v16));
        let table: Vec<String> = [
            "SELECT",
            "INSERT",
            "UPDATE",
            "DELETE",
            "TRUNCATE",
            "REFERENCES",
            "TRIGGER",
        ]
        .map(str::to_owned)
        .to_vec();
        assert!(privileges_equal(&table, &all, "table", v16));
        // PostgreSQL 17 adds MAINTAIN to ALL.
        assert!(!privileges_equal(
            &table,
            &all,
            "table",
            Version::new(17, 0, 0)
        ));
    }

    #[test]
    fn read_reports_drift_and_gone_targets() {
        let fake = Fake::new(15);
        fake.answer("FROM pg_database WHERE datname = 'd'", &[&["1"]])
            .answer("FROM pg_roles WHERE rolname = 'r'", &[&["1"]])
            .answer("FROM pg_namespace WHERE nspname = 's'", &[&["1"]])
            .answer("SELECT oid FROM pg_roles", &[&["16384"]])
            .answer(
                "FROM pg_class JOIN pg_namespace",
                &[&["t1", "{SELECT,INSERT}"], &["t2", "{SELECT}"]],
            );
        let cx = fake.ctx();
        let state = props! {
            "role" => "r", "database" => "d", "schema" => "s", "objectType" => "table",
            "privileges" => strs(&["SELECT"]), "withGrantOption" => false,
        };
        let (id, out) = read(&cx, &state).unwrap().unwrap();
        assert_eq!(id, "r_d_s_table");
        assert_eq!(out["privileges"], strs(&["INSERT", "SELECT"]));
        let mut only_t2 = state.clone();
        only_t2.insert("objects".into(), strs(&["t2"]));
        let (_, out) = read(&cx, &only_t2).unwrap().unwrap();
        assert_eq!(out["privileges"], strs(&["SELECT"]));
        assert_eq!(out["objects"], strs(&["t2"]));
        let mut gone = state.clone();
        gone.insert("role".into(), "nobody".into());
        assert_eq!(read(&cx, &gone).unwrap(), None);
    }

    #[test]
    fn create_revokes_then_grants_in_one_transaction() {
        let fake = Fake::new(15);
        fake.answer("SELECT DISTINCT tableowner", &[&["owner1"]])
            .answer("FROM pg_namespace JOIN pg_roles", &[&["pg_database_owner"]])
            .answer("current_database()", &[&["dbowner"]])
            .answer("CURRENT_USER", &[&["postgres"]])
            .answer("rolsuper", &[&["t"]]);
        let cx = fake.ctx();
        let inputs = props! {
            "role" => "public", "database" => "d", "schema" => "s", "objectType" => "table",
            "privileges" => strs(&["SELECT"]),
        };
        assert_eq!(create(&cx, &inputs).unwrap(), "public_d_s_table");
        let log = fake.log.borrow();
        assert_eq!(log[0], "d: BEGIN");
        assert_eq!(
            fake.changes(),
            [
                r#"d: REVOKE ALL PRIVILEGES ON ALL TABLES IN SCHEMA "s" FROM "public""#,
                r#"d: GRANT SELECT ON ALL TABLES IN SCHEMA "s" TO "public""#,
            ]
        );
        assert_eq!(log.last().unwrap(), "d: COMMIT");
    }
}
