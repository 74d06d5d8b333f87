//! `postgresql:index/schema:Schema` (Terraform's `postgresql_schema`).
//!
//! ID: `<database>.<schema>`; import by that ID. `database` replaces; a new name or owner
//! is altered in place. Statements run in a transaction on the schema's database, with the
//! database owner (and the schema owner) granted to the connected user meanwhile when it is
//! not a superuser. The deprecated `policies` grant CREATE / USAGE per role, as Terraform's
//! `policy` blocks do.

use cairn_sdk::{Error, PropertyMap, PropertyMapExt, Result, Value};

use crate::config::Version;
use crate::db::{self, Ctx, Session};
use crate::props::{self, COMPUTED, Default, Prop, REPLACE, Ty};
use crate::sql::{ident, literal};

pub(crate) const PROPS: &[Prop] = &[
    Prop::new("name", Ty::Str),
    Prop::new("database", Ty::Str).flags(COMPUTED | REPLACE),
    Prop::new("owner", Ty::Str).flags(COMPUTED),
    Prop::new("ifNotExists", Ty::Bool).default(Default::Bool(true)),
    Prop::new("dropCascade", Ty::Bool).default(Default::Bool(false)),
    Prop::new("policies", Ty::Policies).flags(COMPUTED),
];

/// The schema's ID.
pub(crate) fn id(database: &str, name: &str) -> String {
    format!("{database}.{name}")
}

/// `(database, schema)` from an ID.
pub(crate) fn parse_id(id: &str) -> Result<(String, String)> {
    let parts: Vec<&str> = id.split('.').collect();
    match parts.as_slice() {
        [database, schema] => Ok(((*database).to_owned(), (*schema).to_owned())),
        _ => Err(Error::failed(format!(
            "schema ID {id} has not the expected format 'database.schema': {parts:?}"
        ))),
    }
}

/// The privileges one policy gives (Terraform's `acl.Schema`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Acl {
    pub role: String,
    pub create: bool,
    pub create_grant: bool,
    pub usage: bool,
    pub usage_grant: bool,
}

impl Acl {
    pub(crate) fn from_policy(v: &Value) -> Acl {
        let (role, create, create_with_grant, usage, usage_with_grant) = props::policy_key(v);
        Acl {
            role,
            create: create || create_with_grant,
            create_grant: create_with_grant,
            usage: usage || usage_with_grant,
            usage_grant: usage_with_grant,
        }
    }

    fn merge(&mut self, other: &Acl) {
        if self.role.is_empty() {
            self.role.clone_from(&other.role);
        }
        self.create |= other.create;
        self.create_grant |= other.create_grant;
        self.usage |= other.usage;
        self.usage_grant |= other.usage_grant;
    }

    fn grantee(&self) -> String {
        if self.role.is_empty() {
            "PUBLIC".to_owned()
        } else {
            ident(&self.role)
        }
    }

    /// `GRANT CREATE` / `GRANT USAGE` on `schema`.
    pub(crate) fn grants(&self, schema: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (on, grant, what) in [
            (self.create, self.create_grant, "CREATE"),
            (self.usage, self.usage_grant, "USAGE"),
        ] {
            if on {
                out.push(format!(
                    "GRANT {what} ON SCHEMA {} TO {}{}",
                    ident(schema),
                    self.grantee(),
                    if grant { " WITH GRANT OPTION" } else { "" }
                ));
            }
        }
        out
    }

    /// `REVOKE [GRANT OPTION FOR] CREATE` / `USAGE` on `schema`.
    pub(crate) fn revokes(&self, schema: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (on, grant, what) in [
            (self.create, self.create_grant, "CREATE"),
            (self.usage, self.usage_grant, "USAGE"),
        ] {
            if on {
                out.push(format!(
                    "REVOKE{} {what} ON SCHEMA {} FROM {}",
                    if grant { " GRANT OPTION FOR" } else { "" },
                    ident(schema),
                    self.grantee()
                ));
            }
        }
        out
    }
}

/// Policies merged per role (case-insensitively), in the order roles first appear.
fn merged(policies: &[Value]) -> Vec<Acl> {
    let mut out: Vec<Acl> = Vec::new();
    for p in policies {
        let acl = Acl::from_policy(p);
        match out
            .iter_mut()
            .find(|a| a.role.to_lowercase() == acl.role.to_lowercase())
        {
            Some(existing) => existing.merge(&acl),
            None => out.push(acl),
        }
    }
    out
}

/// Policies per role (case-insensitively, the last one winning), in first-seen order.
fn by_role(policies: &[Value]) -> Vec<(String, Acl)> {
    let mut out: Vec<(String, Acl)> = Vec::new();
    for p in policies {
        let acl = Acl::from_policy(p);
        let key = acl.role.to_lowercase();
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = acl,
            None => out.push((key, acl)),
        }
    }
    out
}

fn policies(map: &PropertyMap) -> Vec<Value> {
    map.get_array("policies").cloned().unwrap_or_default()
}

/// `CREATE SCHEMA`.
pub(crate) fn create_sql(name: &str, owner: &str, if_not_exists: bool, version: Version) -> String {
    let mut sql = String::from("CREATE SCHEMA ");
    if version.at_least(9, 3) && if_not_exists {
        sql.push_str("IF NOT EXISTS ");
    }
    sql.push_str(&ident(name));
    if !owner.is_empty() {
        sql.push_str(&format!(" AUTHORIZATION {}", ident(owner)));
    }
    sql
}

fn database_of(cx: &Ctx, map: &PropertyMap) -> String {
    map.get_str("database")
        .filter(|d| !d.is_empty())
        .unwrap_or(&cx.settings.database)
        .to_owned()
}

pub(crate) fn create(cx: &Ctx, inputs: &PropertyMap) -> Result<String> {
    let database = database_of(cx, inputs);
    let name = props::string(inputs, "name");
    let owner = props::string(inputs, "owner");
    let mut s = cx.session(&database)?;
    let version = s.version();
    db::transaction(&mut *s, |s| {
        let db_owner = db::database_owner(s, &database)?;
        let mut roles = vec![db_owner.clone()];
        if !owner.is_empty() && owner != db_owner {
            roles.push(owner.clone());
        }
        db::with_roles_granted(s, &roles, |s| {
            let found = db::exists(
                s,
                &format!(
                    "SELECT TRUE AS x FROM pg_catalog.pg_namespace WHERE nspname = {}",
                    literal(&name)
                ),
                "error looking for schema",
            )?;
            let mut statements = Vec::new();
            if !found {
                statements.push(create_sql(
                    &name,
                    &owner,
                    props::boolean(inputs, "ifNotExists", true),
                    version,
                ));
            } else if !owner.is_empty() {
                // The schema is there already: take it over with its new owner.
                statements.push(format!(
                    "ALTER SCHEMA {} OWNER TO {}",
                    ident(&name),
                    ident(&owner)
                ));
            }
            for acl in merged(&policies(inputs)) {
                statements.extend(acl.grants(&name));
            }
            for sql in statements {
                db::exec(s, &sql, format!("error creating schema {name}"))?;
            }
            Ok(())
        })
    })?;
    Ok(id(&database, &name))
}

/// Reads the schema: from the recorded state, or (import) from the ID.
pub(crate) fn read(
    cx: &Ctx,
    id_text: &str,
    state: &PropertyMap,
) -> Result<Option<(String, PropertyMap)>> {
    let (database, name) = match state.get_str("name").filter(|n| !n.is_empty()) {
        Some(name) => (database_of(cx, state), name.to_owned()),
        None => parse_id(id_text)?,
    };
    {
        let mut s = cx.default_session()?;
        if !db::db_exists(&mut *s, &database)? {
            return Ok(None);
        }
    }
    let mut s = cx.session(&database)?;
    let sql = format!(
        "SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner FROM pg_catalog.pg_namespace n WHERE n.nspname = {}",
        literal(&name)
    );
    let Some(row) = db::row(&mut *s, &sql, &["owner"], "error reading schema")? else {
        return Ok(None);
    };
    let mut out = PropertyMap::new();
    out.insert("name".into(), name.as_str().into());
    out.insert("owner".into(), row[0].clone().unwrap_or_default().into());
    out.insert("database".into(), database.as_str().into());
    // Not server properties: as recorded (none when imported).
    for key in ["ifNotExists", "dropCascade"] {
        out.insert(key.into(), state.get(key).cloned().unwrap_or_default());
    }
    out.insert(
        "policies".into(),
        Value::Array(
            policies(state)
                .iter()
                .map(props::normalize_policy)
                .collect(),
        ),
    );
    Ok(Some((id(&database, &name), out)))
}

/// The statements of a policy change (Terraform's `setSchemaPolicy`): revokes for dropped
/// roles (that still exist; `exists` says), grants for added ones, both for changed ones.
pub(crate) fn policy_sql(
    schema: &str,
    olds: &[Value],
    news: &[Value],
    mut exists: impl FnMut(&str) -> Result<bool>,
) -> Result<Vec<String>> {
    let old = by_role(olds);
    let new = by_role(news);
    let mut out = Vec::new();
    for (key, acl) in &old {
        if new.iter().all(|(k, _)| k != key) && !acl.role.is_empty() && exists(&acl.role)? {
            out.extend(acl.revokes(schema));
        }
    }
    for (key, acl) in &new {
        if old.iter().all(|(k, _)| k != key) {
            out.extend(acl.grants(schema));
        }
    }
    for (key, old_acl) in &old {
        if let Some((_, new_acl)) = new.iter().find(|(k, _)| k == key)
            && old_acl != new_acl
        {
            out.extend(old_acl.revokes(schema));
            out.extend(new_acl.grants(schema));
        }
    }
    Ok(out)
}

pub(crate) fn update(cx: &Ctx, olds: &PropertyMap, news: &PropertyMap) -> Result<String> {
    let changed = |key: &str| props::changed(props::prop(PROPS, key), olds, news);
    let database = database_of(cx, olds);
    let old_name = props::string(olds, "name");
    let name = props::string(news, "name");
    let mut s = cx.session(&database)?;
    db::transaction(&mut *s, |s| {
        if changed("name") {
            if name.is_empty() {
                return Err(Error::failed(
                    "error setting schema name to an empty string",
                ));
            }
            db::exec(
                s,
                &format!(
                    "ALTER SCHEMA {} RENAME TO {}",
                    ident(&old_name),
                    ident(&name)
                ),
                "error updating schema NAME",
            )?;
        }
        if changed("owner") {
            let owner = props::string(news, "owner");
            if owner.is_empty() {
                return Err(Error::failed(
                    "error setting schema owner to an empty string",
                ));
            }
            db::exec(
                s,
                &format!("ALTER SCHEMA {} OWNER TO {}", ident(&name), ident(&owner)),
                "error updating schema OWNER",
            )?;
        }
        if changed("policies") {
            let statements = policy_sql(&name, &policies(olds), &policies(news), |role| {
                db::role_exists(s, role)
            })?;
            let owner = props::string(news, "owner");
            let owner = if owner.is_empty() {
                props::string(olds, "owner")
            } else {
                owner
            };
            let roles: Vec<String> = Some(owner).filter(|o| !o.is_empty()).into_iter().collect();
            db::with_roles_granted(s, &roles, |s| {
                for sql in &statements {
                    db::exec(s, sql, "error updating schema DCL")?;
                }
                Ok(())
            })?;
        }
        Ok(())
    })?;
    Ok(id(&database, &name))
}

pub(crate) fn delete(cx: &Ctx, olds: &PropertyMap) -> Result<()> {
    let database = database_of(cx, olds);
    let name = props::string(olds, "name");
    let owner = props::string(olds, "owner");
    let cascade = props::boolean(olds, "dropCascade", false);
    let mut s = cx.session(&database)?;
    db::transaction(&mut *s, |s| {
        if !db::schema_exists(s, &name)? {
            return Ok(());
        }
        let roles: Vec<String> = Some(owner.clone())
            .filter(|o| !o.is_empty())
            .into_iter()
            .collect();
        db::with_roles_granted(s, &roles, |s: &mut dyn Session| {
            db::exec(
                s,
                &format!(
                    "DROP SCHEMA {} {}",
                    ident(&name),
                    if cascade { "CASCADE" } else { "RESTRICT" }
                ),
                "error deleting schema",
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fake::Fake;
    use cairn_sdk::props;

    fn policy(
        role: &str,
        create: bool,
        create_grant: bool,
        usage: bool,
        usage_grant: bool,
    ) -> Value {
        Value::from(props! {
            "role" => role, "create" => create, "createWithGrant" => create_grant,
            "usage" => usage, "usageWithGrant" => usage_grant,
        })
    }

    #[test]
    fn ids() {
        assert_eq!(id("db", "s"), "db.s");
        assert_eq!(parse_id("db.s").unwrap(), ("db".to_owned(), "s".to_owned()));
        assert_eq!(
            parse_id("a.b.c").unwrap_err().to_string(),
            r#"schema ID a.b.c has not the expected format 'database.schema': ["a", "b", "c"]"#
        );
    }

    #[test]
    fn create_statements() {
        let v = Version::new(15, 0, 0);
        assert_eq!(
            create_sql("foo", "", true, v),
            r#"CREATE SCHEMA IF NOT EXISTS "foo""#
        );
        assert_eq!(
            create_sql("bar", "role_all_without_grant", false, v),
            r#"CREATE SCHEMA "bar" AUTHORIZATION "role_all_without_grant""#
        );
        assert_eq!(
            create_sql("old", "", true, Version::new(9, 2, 0)),
            r#"CREATE SCHEMA "old""#
        );
    }

    #[test]
    fn policies_become_grants() {
        let fake = Fake::new(15);
        fake.answer("SELECT rolname FROM pg_database", &[&["postgres"]])
            .answer("CURRENT_USER", &[&["postgres"]])
            .answer("rolsuper", &[&["t"]]);
        let cx = fake.ctx();
        let inputs = props! {
            "name" => "baz", "owner" => "role_all_without_grant", "ifNotExists" => true,
            "policies" => vec![
                policy("role_all_with_grant", false, true, false, true),
                policy("role_all_without_grant", true, false, true, false),
                policy("", false, false, true, false),
            ],
        };
        assert_eq!(create(&cx, &inputs).unwrap(), "postgres.baz");
        assert_eq!(
            fake.changes(),
            [
                r#"postgres: CREATE SCHEMA IF NOT EXISTS "baz" AUTHORIZATION "role_all_without_grant""#,
                r#"postgres: GRANT CREATE ON SCHEMA "baz" TO "role_all_with_grant" WITH GRANT OPTION"#,
                r#"postgres: GRANT USAGE ON SCHEMA "baz" TO "role_all_with_grant" WITH GRANT OPTION"#,
                r#"postgres: GRANT CREATE ON SCHEMA "baz" TO "role_all_without_grant""#,
                r#"postgres: GRANT USAGE ON SCHEMA "baz" TO "role_all_without_grant""#,
                r#"postgres: GRANT USAGE ON SCHEMA "baz" TO PUBLIC"#,
            ]
        );
    }

    #[test]
    fn policy_changes() {
        let olds = vec![
            policy("stay", true, false, true, false),
            policy("drop", true, false, true, false),
            policy("gone_role", true, false, false, false),
            policy("move", false, true, false, true),
        ];
        let news = vec![
            policy("stay", true, false, true, false),
            policy("move", true, false, true, false),
            policy("new", true, false, true, false),
        ];
        let statements = policy_sql("s", &olds, &news, |role| Ok(role != "gone_role")).unwrap();
        assert_eq!(
            statements,
            [
                r#"REVOKE CREATE ON SCHEMA "s" FROM "drop""#,
                r#"REVOKE USAGE ON SCHEMA "s" FROM "drop""#,
                r#"GRANT CREATE ON SCHEMA "s" TO "new""#,
                r#"GRANT USAGE ON SCHEMA "s" TO "new""#,
                r#"REVOKE GRANT OPTION FOR CREATE ON SCHEMA "s" FROM "move""#,
                r#"REVOKE GRANT OPTION FOR USAGE ON SCHEMA "s" FROM "move""#,
                r#"GRANT CREATE ON SCHEMA "s" TO "move""#,
                r#"GRANT USAGE ON SCHEMA "s" TO "move""#,
            ]
        );
    }

    #[test]
    fn read_finds_the_schema_or_says_it_is_gone() {
        let fake = Fake::new(15);
        fake.answer("FROM pg_database WHERE datname = 'app'", &[&["1"]])
            .answer("nspname = 'foo'", &[&["owner"]]);
        let cx = fake.ctx();
        let (id, out) = read(&cx, "app.foo", &PropertyMap::new()).unwrap().unwrap();
        assert_eq!(id, "app.foo");
        assert_eq!(
            out,
            props! {
                "name" => "foo", "owner" => "owner", "database" => "app", "ifNotExists" => Value::Null,
                "dropCascade" => Value::Null, "policies" => Vec::<Value>::new(),
            }
        );
        assert_eq!(read(&cx, "app.bar", &PropertyMap::new()).unwrap(), None);
        assert_eq!(read(&cx, "other.foo", &PropertyMap::new()).unwrap(), None);
    }
}
