//! `postgresql:index/grantRole:GrantRole` (Terraform's `postgresql_grant_role`).
//!
//! ID: `<role>_<grantRole>_<withAdminOption>`; not importable, as in Terraform. Every
//! property replaces. Create revokes and grants the membership in one transaction on the
//! provider's database; delete revokes it.

use cairn_sdk::{Error, PropertyMap, Result};

use crate::db::{self, Ctx};
use crate::props::{self, Default, Prop, REPLACE, REQUIRED, Ty};
use crate::sql::{self, ident, literal};

pub(crate) const PROPS: &[Prop] = &[
    Prop::new("role", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("grantRole", Ty::Str).flags(REQUIRED | REPLACE),
    Prop::new("withAdminOption", Ty::Bool)
        .default(Default::Bool(false))
        .flags(REPLACE),
];

/// `(role, grantRole, withAdminOption)`.
fn parts(map: &PropertyMap) -> (String, String, bool) {
    (
        props::string(map, "role"),
        props::string(map, "grantRole"),
        props::boolean(map, "withAdminOption", false),
    )
}

pub(crate) fn id(role: &str, grant_role: &str, admin: bool) -> String {
    format!("{role}_{grant_role}_{admin}")
}

pub(crate) fn grant_sql(role: &str, grant_role: &str, admin: bool) -> String {
    let mut sql = format!("GRANT {} TO {}", ident(grant_role), ident(role));
    if admin {
        sql.push_str(" WITH ADMIN OPTION");
    }
    sql
}

pub(crate) fn revoke_sql(role: &str, grant_role: &str) -> String {
    format!("REVOKE {} FROM {}", ident(grant_role), ident(role))
}

fn supported(version: crate::config::Version) -> Result<()> {
    if version.at_least(9, 0) {
        Ok(())
    } else {
        Err(Error::failed(format!(
            "postgresql_grant_role resource is not supported for this Postgres version ({version})"
        )))
    }
}

pub(crate) fn create(cx: &Ctx, inputs: &PropertyMap) -> Result<String> {
    let (role, grant_role, admin) = parts(inputs);
    let mut s = cx.default_session()?;
    supported(s.version())?;
    db::transaction(&mut *s, |s| {
        db::exec(
            s,
            &revoke_sql(&role, &grant_role),
            "could not execute revoke query",
        )?;
        db::exec(
            s,
            &grant_sql(&role, &grant_role, admin),
            "could not execute grant query",
        )
    })?;
    Ok(id(&role, &grant_role, admin))
}

/// Reads the membership recorded in `state`: `None` when it is gone.
pub(crate) fn read(cx: &Ctx, state: &PropertyMap) -> Result<Option<(String, PropertyMap)>> {
    let (role, grant_role, _) = parts(state);
    let mut s = cx.default_session()?;
    supported(s.version())?;
    let sql = format!(
        "SELECT pg_get_userbyid(member) AS role, pg_get_userbyid(roleid) AS grant_role, admin_option \
         FROM pg_auth_members WHERE pg_get_userbyid(member) = {} AND pg_get_userbyid(roleid) = {}",
        literal(&role),
        literal(&grant_role)
    );
    let Some(row) = db::row(
        &mut *s,
        &sql,
        &["role", "grant_role", "admin_option"],
        "error reading grant role",
    )?
    else {
        return Ok(None);
    };
    let role = row[0].clone().unwrap_or(role);
    let grant_role = row[1].clone().unwrap_or(grant_role);
    let admin = sql::parse_bool(row[2].as_deref());
    let mut out = PropertyMap::new();
    out.insert("role".into(), role.as_str().into());
    out.insert("grantRole".into(), grant_role.as_str().into());
    out.insert("withAdminOption".into(), admin.into());
    Ok(Some((id(&role, &grant_role, admin), out)))
}

pub(crate) fn delete(cx: &Ctx, olds: &PropertyMap) -> Result<()> {
    let (role, grant_role, _) = parts(olds);
    let mut s = cx.default_session()?;
    supported(s.version())?;
    db::transaction(&mut *s, |s| {
        db::exec(
            s,
            &revoke_sql(&role, &grant_role),
            "could not execute revoke query",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fake::Fake;
    use cairn_sdk::props;

    /// The Terraform provider's own cases (TestCreateGrantRoleQuery, TestRevokeRoleQuery).
    #[test]
    fn statements_and_ids() {
        assert_eq!(grant_sql("bar", "foo", false), r#"GRANT "foo" TO "bar""#);
        assert_eq!(
            grant_sql("bar", "foo", true),
            r#"GRANT "foo" TO "bar" WITH ADMIN OPTION"#
        );
        assert_eq!(revoke_sql("bar", "foo"), r#"REVOKE "foo" FROM "bar""#);
        assert_eq!(id("bar", "foo", true), "bar_foo_true");
        assert_eq!(
            grant_sql(r#"x"; DROP ROLE postgres; --"#, "g", false),
            r#"GRANT "g" TO "x""; DROP ROLE postgres; --""#
        );
    }

    #[test]
    fn create_read_delete() {
        let fake = Fake::new(16);
        fake.answer("FROM pg_auth_members WHERE", &[&["bar", "foo", "t"]]);
        let cx = fake.ctx();
        let inputs = props! {"role" => "bar", "grantRole" => "foo", "withAdminOption" => true};
        assert_eq!(create(&cx, &inputs).unwrap(), "bar_foo_true");
        let (id, out) = read(&cx, &inputs).unwrap().unwrap();
        assert_eq!(id, "bar_foo_true");
        assert_eq!(out, inputs);
        delete(&cx, &inputs).unwrap();
        assert_eq!(
            fake.changes(),
            [
                r#"postgres: REVOKE "foo" FROM "bar""#,
                r#"postgres: GRANT "foo" TO "bar" WITH ADMIN OPTION"#,
                r#"postgres: REVOKE "foo" FROM "bar""#,
            ]
        );
    }
}
