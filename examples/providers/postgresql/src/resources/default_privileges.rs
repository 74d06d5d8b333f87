//! `postgresql:index/defaultPrivileges:DefaultPrivileges` and its deprecated alias
//! `postgresql:index/defaultPrivileg:DefaultPrivileg` (Terraform's
//! `postgresql_default_privileges`).
//!
//! ID: `<role>_<database>_<schema or noschema>_<owner>_<objectType>`; not importable, as in
//! Terraform. Only `privileges` changes in place. Create and update revoke all and grant the
//! wanted default privileges in one transaction on the database, with `owner` granted to the
//! connected user meanwhile when it is not a superuser.

use cairn_sdk::{Checker, Error, PropertyMap, PropertyMapExt, Result};

use crate::config::Version;
use crate::db::{self, Ctx, Session};
use crate::props::{self, Default, Prop, REPLACE, REQUIRED, Ty};
use crate::resources::grant;
use crate::sql::{self, ident, literal};

pub(crate) const PROPS: &[Prop] = &[
    Prop::new("role", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("database", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("owner", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("schema", Ty::Str).flags(REPLACE),
    Prop::new("objectType", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("privileges", Ty::StrSet).flags(REQUIRED),
    Prop::new("withGrantOption", Ty::Bool)
        .default(Default::Bool(false))
        .flags(REPLACE),
];

pub(crate) const OBJECT_TYPES: [&str; 6] =
    ["table", "sequence", "function", "routine", "type", "schema"];

/// `pg_default_acl.defaclobjtype` of each object type.
fn acl_kind(object_type: &str) -> &'static str {
    match object_type {
        "sequence" => "S",
        "function" | "routine" => "f",
        "type" => "T",
        "schema" => "n",
        _ => "r",
    }
}

/// The default privileges as the program wants them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Spec {
    pub role: String,
    pub database: String,
    pub owner: String,
    pub schema: String,
    pub object_type: String,
    /// In Terraform's set order.
    pub privileges: Vec<String>,
    pub with_grant_option: bool,
}

impl Spec {
    pub(crate) fn from_inputs(inputs: &PropertyMap) -> Spec {
        Spec {
            role: props::string(inputs, "role"),
            database: props::string(inputs, "database"),
            owner: props::string(inputs, "owner"),
            schema: props::string(inputs, "schema"),
            object_type: props::string(inputs, "objectType"),
            privileges: sql::tf_set_order(&props::strings(inputs, "privileges")),
            with_grant_option: props::boolean(inputs, "withGrantOption", false),
        }
    }

    fn in_schema(&self) -> String {
        if self.schema.is_empty() {
            String::new()
        } else {
            format!(" IN SCHEMA {}", ident(&self.schema))
        }
    }
}

pub(crate) fn id(d: &Spec) -> String {
    let schema = if d.schema.is_empty() {
        "noschema"
    } else {
        &d.schema
    };
    [
        d.role.as_str(),
        &d.database,
        schema,
        &d.owner,
        &d.object_type,
    ]
    .join("_")
}

/// `ALTER DEFAULT PRIVILEGES ... GRANT` (none without privileges).
pub(crate) fn grant_sql(d: &Spec) -> Option<String> {
    if d.privileges.is_empty() {
        return None;
    }
    let mut sql = format!(
        "ALTER DEFAULT PRIVILEGES FOR ROLE {}{} GRANT {} ON {}S TO {}",
        ident(&d.owner),
        d.in_schema(),
        d.privileges.join(","),
        d.object_type.to_uppercase(),
        ident(&d.role)
    );
    if d.with_grant_option {
        sql.push_str(" WITH GRANT OPTION");
    }
    Some(sql)
}

/// `ALTER DEFAULT PRIVILEGES ... REVOKE ALL`.
pub(crate) fn revoke_sql(d: &Spec) -> String {
    format!(
        "ALTER DEFAULT PRIVILEGES FOR ROLE {}{} REVOKE ALL ON {}S FROM {}",
        ident(&d.owner),
        d.in_schema(),
        d.object_type.to_uppercase(),
        ident(&d.role)
    )
}

/// Terraform's plan-time validation: the object type.
pub(crate) fn check(c: &mut Checker) {
    props::one_of(c, "objectType", &OBJECT_TYPES);
}

/// Terraform's apply-time validations (its Create checks these before acting).
pub(crate) fn validate(inputs: &PropertyMap, version: Version) -> Result<()> {
    let d = Spec::from_inputs(inputs);
    supported(&d, version)?;
    if !d.schema.is_empty() && d.object_type == "schema" {
        return Err(Error::failed(
            "schema: cannot specify `schema` when `object_type` is `schema`",
        ));
    }
    if d.with_grant_option && d.role.eq_ignore_ascii_case("public") {
        return Err(Error::failed(
            "withGrantOption: with_grant_option cannot be true for role 'public'",
        ));
    }
    let privileges = inputs.get_array("privileges").cloned().unwrap_or_default();
    match grant::privilege_failures(&d.object_type, &privileges, Some(version)).first() {
        Some((key, message)) => Err(Error::failed(format!("{key}: {message}"))),
        None => Ok(()),
    }
}

/// Terraform's version checks for default privileges.
fn supported(d: &Spec, version: Version) -> Result<()> {
    if !d.schema.is_empty() && d.object_type == "schema" && !version.at_least(10, 0) {
        return Err(Error::failed(format!(
            "changing default privileges for schemas is not supported for this Postgres version ({version})"
        )));
    }
    if d.object_type == "routine" && !version.at_least(11, 0) {
        return Err(Error::failed(format!(
            "object type ROUTINE is not supported for this Postgres version ({version})"
        )));
    }
    Ok(())
}

fn apply(cx: &Ctx, inputs: &PropertyMap) -> Result<()> {
    let d = &Spec::from_inputs(inputs);
    let mut s = cx.session(&d.database)?;
    validate(inputs, s.version())?;
    db::transaction(&mut *s, |s| {
        db::lock_role(s, &d.owner)?;
        db::with_roles_granted(s, std::slice::from_ref(&d.owner), |s| {
            db::exec(s, &revoke_sql(d), "could not revoke default privileges")?;
            if let Some(sql) = grant_sql(d) {
                db::exec(s, &sql, "could not alter default privileges")?;
            }
            Ok(())
        })
    })
}

pub(crate) fn create(cx: &Ctx, inputs: &PropertyMap) -> Result<String> {
    apply(cx, inputs)?;
    Ok(id(&Spec::from_inputs(inputs)))
}

pub(crate) fn update(cx: &Ctx, news: &PropertyMap) -> Result<String> {
    create(cx, news)
}

pub(crate) fn delete(cx: &Ctx, olds: &PropertyMap) -> Result<()> {
    let d = Spec::from_inputs(olds);
    let mut s = cx.session(&d.database)?;
    supported(&d, s.version())?;
    db::transaction(&mut *s, |s| {
        db::lock_role(s, &d.owner)?;
        db::with_roles_granted(s, std::slice::from_ref(&d.owner), |s| {
            db::exec(s, &revoke_sql(&d), "could not revoke default privileges")
        })
    })
}

/// The catalog query of the default privileges' types.
pub(crate) fn read_sql(d: &Spec, role_oid: u32) -> String {
    if d.schema.is_empty() {
        format!(
            "SELECT array_agg(prtype) AS privileges FROM (SELECT defaclnamespace, (aclexplode(defaclacl)).* FROM pg_default_acl \
             WHERE defaclobjtype = {}) AS t (namespace, grantor_oid, grantee_oid, prtype, grantable) \
             WHERE grantee_oid = {role_oid} AND namespace = 0 AND pg_get_userbyid(grantor_oid) = {}",
            literal(acl_kind(&d.object_type)),
            literal(&d.owner)
        )
    } else {
        format!(
            "SELECT array_agg(prtype) AS privileges FROM (SELECT defaclnamespace, (aclexplode(defaclacl)).* FROM pg_default_acl \
             WHERE defaclobjtype = {}) AS t (namespace, grantor_oid, grantee_oid, prtype, grantable) \
             JOIN pg_namespace ON pg_namespace.oid = namespace \
             WHERE grantee_oid = {role_oid} AND nspname = {} AND pg_get_userbyid(grantor_oid) = {}",
            literal(acl_kind(&d.object_type)),
            literal(&d.schema),
            literal(&d.owner)
        )
    }
}

fn read_privileges(s: &mut dyn Session, d: &Spec) -> Result<Vec<String>> {
    db::lock_role(s, &d.owner)?;
    let oid = db::role_oid(s, &d.role)?;
    Ok(db::row(
        s,
        &read_sql(d, oid),
        &["privileges"],
        "could not read default privileges",
    )?
    .map(|r| sql::array_strings(r[0].as_deref()))
    .unwrap_or_default())
}

/// Reads the default privileges recorded in `state`: `None` when the role, database or
/// schema is gone, or when none are left of wanted ones.
pub(crate) fn read(cx: &Ctx, state: &PropertyMap) -> Result<Option<(String, PropertyMap)>> {
    let d = Spec::from_inputs(state);
    supported(&d, cx.default_session()?.version())?;
    if !grant::targets_exist(cx, &d.role, &d.database, &d.schema, &d.object_type)? {
        return Ok(None);
    }
    let mut s = cx.session(&d.database)?;
    let version = s.version();
    let granted = db::transaction(&mut *s, |s| read_privileges(s, &d))?;
    if granted.is_empty() && !d.privileges.is_empty() {
        return Ok(None);
    }
    let privileges = if grant::privileges_equal(&granted, &d.privileges, &d.object_type, version) {
        d.privileges.clone()
    } else {
        granted
    };
    let mut out = PropertyMap::new();
    for key in ["role", "database", "owner", "schema", "objectType"] {
        if let Some(v) = props::present(state, key) {
            out.insert(key.into(), v.clone());
        }
    }
    out.insert(
        "privileges".into(),
        props::string_array(&sql::sorted_set(&privileges)),
    );
    out.insert("withGrantOption".into(), d.with_grant_option.into());
    Ok(Some((id(&d), out)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fake::Fake;
    use cairn_sdk::props;

    fn spec(inputs: PropertyMap) -> Spec {
        Spec::from_inputs(&inputs)
    }

    #[test]
    fn statements_and_ids() {
        let d = spec(props! {
            "role" => "test_role", "database" => "db", "owner" => "owner", "schema" => "test_schema",
            "objectType" => "table", "privileges" => props::string_array(&["SELECT", "UPDATE"]),
            "withGrantOption" => true,
        });
        assert_eq!(
            grant_sql(&d).unwrap(),
            r#"ALTER DEFAULT PRIVILEGES FOR ROLE "owner" IN SCHEMA "test_schema" GRANT UPDATE,SELECT ON TABLES TO "test_role" WITH GRANT OPTION"#
        );
        assert_eq!(
            revoke_sql(&d),
            r#"ALTER DEFAULT PRIVILEGES FOR ROLE "owner" IN SCHEMA "test_schema" REVOKE ALL ON TABLES FROM "test_role""#
        );
        assert_eq!(id(&d), "test_role_db_test_schema_owner_table");
        let d = spec(
            props! {"role" => "public", "database" => "db", "owner" => "o", "objectType" => "schema", "privileges" => props::string_array(&["USAGE", "CREATE"])},
        );
        assert_eq!(
            grant_sql(&d).unwrap(),
            r#"ALTER DEFAULT PRIVILEGES FOR ROLE "o" GRANT CREATE,USAGE ON SCHEMAS TO "public""#
        );
        assert_eq!(id(&d), "public_db_noschema_o_schema");
        let none = spec(
            props! {"role" => "r", "database" => "db", "owner" => "o", "objectType" => "sequence"},
        );
        assert_eq!(grant_sql(&none), None);
    }

    #[test]
    fn validations_follow_terraform() {
        let failures = |inputs: PropertyMap| -> Vec<String> {
            let mut c = Checker::new(inputs);
            props::check_table(PROPS, &mut c);
            check(&mut c);
            c.finish()
                .failures
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        let v15 = Version::new(15, 0, 0);
        let both = props! {"role" => "public", "database" => "d", "owner" => "o", "schema" => "s", "objectType" => "schema", "privileges" => props::string_array(&["USAGE"]), "withGrantOption" => true};
        assert!(failures(both.clone()).is_empty());
        assert_eq!(
            validate(&both, v15).unwrap_err().to_string(),
            "schema: cannot specify `schema` when `object_type` is `schema`"
        );
        let public = props! {"role" => "PUBLIC", "database" => "d", "owner" => "o", "objectType" => "table", "privileges" => props::string_array(&["SELECT"]), "withGrantOption" => true};
        assert_eq!(
            validate(&public, v15).unwrap_err().to_string(),
            "withGrantOption: with_grant_option cannot be true for role 'public'"
        );
        let bad = props! {"role" => "r", "database" => "d", "owner" => "o", "objectType" => "type", "privileges" => props::string_array(&["SELECT"])};
        assert_eq!(
            validate(&bad, v15).unwrap_err().to_string(),
            "privileges[0]: SELECT is not an allowed privilege for object type type (expected one of ALL, USAGE)"
        );
        let routine = props! {"role" => "r", "database" => "d", "owner" => "o", "objectType" => "routine", "privileges" => props::string_array(&["EXECUTE"])};
        assert_eq!(
            validate(&routine, Version::new(10, 0, 0))
                .unwrap_err()
                .to_string(),
            "object type ROUTINE is not supported for this Postgres version (10.0.0)"
        );
        assert_eq!(
            failures(
                props! {"role" => "r", "database" => "d", "owner" => "o", "objectType" => "view", "privileges" => props::string_array(&["SELECT"])}
            ),
            [
                "objectType: expected object_type to be one of [\"table\" \"sequence\" \"function\" \"routine\" \"type\" \"schema\"], got view"
            ]
        );
    }

    #[test]
    fn read_and_gone() {
        let fake = Fake::new(15);
        fake.answer("SELECT oid FROM pg_roles", &[&["16390"]])
            .answer("FROM pg_database WHERE datname = 'db'", &[&["1"]])
            .answer("FROM pg_roles WHERE rolname = 'r'", &[&["1"]])
            .answer("array_agg(prtype)", &[&["{UPDATE,SELECT}"]]);
        let cx = fake.ctx();
        let state = props! {
            "role" => "r", "database" => "db", "owner" => "o", "objectType" => "table",
            "privileges" => props::string_array(&["SELECT"]), "withGrantOption" => false,
        };
        let (id, out) = read(&cx, &state).unwrap().unwrap();
        assert_eq!(id, "r_db_noschema_o_table");
        assert_eq!(
            out["privileges"],
            props::string_array(&["SELECT", "UPDATE"])
        );
        let sql = fake
            .log
            .borrow()
            .iter()
            .find(|l| l.contains("array_agg(prtype)"))
            .cloned()
            .unwrap();
        assert!(
            sql.contains(
                "WHERE grantee_oid = 16390 AND namespace = 0 AND pg_get_userbyid(grantor_oid) = 'o'"
            ),
            "{sql}"
        );
    }
}
