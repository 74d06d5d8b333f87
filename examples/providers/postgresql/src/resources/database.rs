//! `postgresql:index/database:Database` (Terraform's `postgresql_database`).
//!
//! ID: the database name; import by the name. `template`, `encoding`, `lcCollate` and
//! `lcCtype` replace; the rest (a new name included) is altered in place. Statements run on
//! the provider's database, outside transactions (`CREATE DATABASE` cannot run in one); when
//! an owner is named, the connected user is made a member of it for the statement (and a
//! lock on the connected user held meanwhile), as a non-superuser needs. Delete blocks new
//! connections, ends the database's sessions and drops it (`WITH (FORCE)` from 13).

use cairn_sdk::{Checker, Error, PropertyMap, PropertyMapExt, Result, Value, log};

use crate::config::Version;
use crate::db::{self, Ctx, Session};
use crate::props::{self, COMPUTED, Default, Prop, REPLACE, Ty};
use crate::sql::{self, ident, literal};

pub(crate) const PROPS: &[Prop] = &[
    Prop::new("name", Ty::Str),
    Prop::new("owner", Ty::Str).flags(COMPUTED),
    Prop::new("template", Ty::Str).flags(COMPUTED | REPLACE),
    Prop::new("encoding", Ty::Str).flags(COMPUTED | REPLACE),
    Prop::new("lcCollate", Ty::Str).flags(COMPUTED | REPLACE),
    Prop::new("lcCtype", Ty::Str).flags(COMPUTED | REPLACE),
    Prop::new("tablespaceName", Ty::Str).flags(COMPUTED),
    Prop::new("connectionLimit", Ty::Int).default(Default::Int(-1)),
    Prop::new("allowConnections", Ty::Bool).default(Default::Bool(true)),
    Prop::new("isTemplate", Ty::Bool).flags(COMPUTED),
    Prop::new("alterObjectOwnership", Ty::Bool).default(Default::Bool(false)),
];

pub(crate) fn check(c: &mut Checker) {
    props::at_least(c, "connectionLimit", -1);
}

/// A string input Terraform counts as set (`d.GetOk`: present and not empty).
fn given<'a>(inputs: &'a PropertyMap, key: &str) -> Option<&'a str> {
    inputs.get_str(key).filter(|s| !s.is_empty())
}

/// `CREATE DATABASE` with the options in the Terraform provider's order.
pub(crate) fn create_sql(inputs: &PropertyMap, current_user: &str, version: Version) -> String {
    let name = props::string(inputs, "name");
    let mut sql = format!("CREATE DATABASE {}", ident(&name));
    let owner = given(inputs, "owner").unwrap_or(current_user);
    sql.push_str(&format!(" OWNER {}", ident(owner)));
    let is_default = |v: &str| v.eq_ignore_ascii_case("DEFAULT");
    match given(inputs, "template") {
        Some(t) if is_default(t) => sql.push_str(" TEMPLATE DEFAULT"),
        Some(t) => sql.push_str(&format!(" TEMPLATE {}", ident(t))),
        None => sql.push_str(" TEMPLATE template0"),
    }
    match given(inputs, "encoding") {
        Some(e) if is_default(e) => sql.push_str(" ENCODING DEFAULT"),
        Some(e) => sql.push_str(&format!(" ENCODING {}", literal(e))),
        None => sql.push_str(" ENCODING 'UTF8'"),
    }
    for (key, word) in [("lcCollate", "LC_COLLATE"), ("lcCtype", "LC_CTYPE")] {
        match given(inputs, key) {
            Some(v) if is_default(v) => sql.push_str(&format!(" {word} DEFAULT")),
            Some(v) => sql.push_str(&format!(" {word} {}", literal(v))),
            None => {}
        }
    }
    match given(inputs, "tablespaceName") {
        Some(t) if is_default(t) => sql.push_str(" TABLESPACE DEFAULT"),
        Some(t) => sql.push_str(&format!(" TABLESPACE {}", ident(t))),
        None => {}
    }
    if version.at_least(9, 5) {
        sql.push_str(&format!(
            " ALLOW_CONNECTIONS {}",
            props::boolean(inputs, "allowConnections", true)
        ));
    }
    sql.push_str(&format!(
        " CONNECTION LIMIT {}",
        props::integer(inputs, "connectionLimit", -1)
    ));
    if version.at_least(9, 5) {
        sql.push_str(&format!(
            " IS_TEMPLATE {}",
            props::boolean(inputs, "isTemplate", false)
        ));
    }
    sql
}

/// Runs `f` on a session of the provider's database with the connected user made a member
/// of `owner` meanwhile (when it is not already), holding an advisory lock on the connected
/// user in another session so that concurrent operations do not revoke it under us.
fn with_owner_granted<T>(
    cx: &Ctx,
    owner: &str,
    f: impl FnOnce(&mut dyn Session) -> Result<T>,
) -> Result<T> {
    let mut work = cx.default_session()?;
    if owner.is_empty() {
        return f(&mut *work);
    }
    let current = cx.settings.current_user().to_owned();
    let mut lock = cx.default_session()?;
    db::exec(&mut *lock, "BEGIN", "could not start transaction")?;
    let result = db::lock_role(&mut *lock, &current).and_then(|()| {
        let granted = db::grant_role_membership(&mut *work, owner, &current)?;
        let result = f(&mut *work);
        if granted && let Err(e) = db::revoke_role_membership(&mut *work, owner, &current) {
            log::warn(
                cx.urn,
                format!("could not revoke {owner} from {current}: {e}"),
            );
        }
        result
    });
    let _ = lock.execute("ROLLBACK");
    result
}

pub(crate) fn create(cx: &Ctx, inputs: &PropertyMap) -> Result<String> {
    let name = props::string(inputs, "name");
    let owner = given(inputs, "owner").unwrap_or_default().to_owned();
    with_owner_granted(cx, &owner, |s| {
        let sql = create_sql(inputs, cx.settings.current_user(), s.version());
        db::exec(s, &sql, format!("error creating database {name:?}"))
    })?;
    Ok(name)
}

/// The catalog query of a database.
pub(crate) fn read_sql(name: &str, version: Version) -> (String, Vec<&'static str>) {
    let mut columns = vec![
        "datname",
        "owner",
        "encoding",
        "datcollate",
        "datctype",
        "spcname",
        "datconnlimit",
    ];
    let mut select = String::from(
        "SELECT d.datname, pg_catalog.pg_get_userbyid(d.datdba) AS owner, \
         pg_catalog.pg_encoding_to_char(d.encoding) AS encoding, d.datcollate, d.datctype, \
         ts.spcname, d.datconnlimit",
    );
    if version.at_least(9, 5) {
        columns.extend(["datallowconn", "datistemplate"]);
        select.push_str(", d.datallowconn, d.datistemplate");
    }
    select.push_str(&format!(
        " FROM pg_catalog.pg_database AS d, pg_catalog.pg_tablespace AS ts WHERE d.datname = {} AND d.dattablespace = ts.oid",
        literal(name)
    ));
    (select, columns)
}

/// Reads the database named `name`; `state` gives what the server does not know
/// (`template`, `alterObjectOwnership`).
pub(crate) fn read(cx: &Ctx, name: &str, state: &PropertyMap) -> Result<Option<PropertyMap>> {
    let mut s = cx.default_session()?;
    let version = s.version();
    let (sql, columns) = read_sql(name, version);
    let Some(row) = db::row(&mut *s, &sql, &columns, "error reading database")? else {
        return Ok(None);
    };
    let col = |c: &str| {
        columns
            .iter()
            .position(|x| *x == c)
            .and_then(|i| row[i].clone())
            .unwrap_or_default()
    };
    let mut out = PropertyMap::new();
    out.insert("name".into(), col("datname").into());
    out.insert("owner".into(), col("owner").into());
    out.insert("encoding".into(), col("encoding").into());
    out.insert("lcCollate".into(), col("datcollate").into());
    out.insert("lcCtype".into(), col("datctype").into());
    out.insert("tablespaceName".into(), col("spcname").into());
    out.insert(
        "connectionLimit".into(),
        Value::from(col("datconnlimit").parse::<i64>().unwrap_or(-1)),
    );
    let template = given(state, "template").unwrap_or("template0");
    out.insert("template".into(), template.into());
    let (allow, template_flag) = if version.at_least(9, 5) {
        (
            sql::parse_bool(Some(&col("datallowconn"))),
            sql::parse_bool(Some(&col("datistemplate"))),
        )
    } else {
        (
            props::boolean(state, "allowConnections", true),
            props::boolean(state, "isTemplate", false),
        )
    };
    out.insert("allowConnections".into(), allow.into());
    out.insert("isTemplate".into(), template_flag.into());
    // Not a server property: as recorded (none when imported).
    out.insert(
        "alterObjectOwnership".into(),
        state
            .get("alterObjectOwnership")
            .cloned()
            .unwrap_or_default(),
    );
    Ok(Some(out))
}

/// The in-place changes other than the owner: tablespace, connection limit, connections
/// allowed, template flag.
pub(crate) fn alter_sql(
    olds: &PropertyMap,
    news: &PropertyMap,
    version: Version,
) -> Result<Vec<String>> {
    let changed = |key: &str| props::changed(props::prop(PROPS, key), olds, news);
    let name = ident(&props::string(news, "name"));
    let mut out = Vec::new();
    if changed("tablespaceName") {
        let tablespace = props::string(news, "tablespaceName");
        if tablespace.is_empty() || tablespace.eq_ignore_ascii_case("DEFAULT") {
            out.push(format!("ALTER DATABASE {name} RESET TABLESPACE"));
        } else {
            out.push(format!(
                "ALTER DATABASE {name} SET TABLESPACE {}",
                ident(&tablespace)
            ));
        }
    }
    if changed("connectionLimit") {
        out.push(format!(
            "ALTER DATABASE {name} CONNECTION LIMIT = {}",
            props::integer(news, "connectionLimit", -1)
        ));
    }
    if changed("allowConnections") {
        if !version.at_least(9, 5) {
            return Err(Error::failed(format!(
                "PostgreSQL client is talking with a server ({version}) that does not support database ALLOW_CONNECTIONS"
            )));
        }
        out.push(format!(
            "ALTER DATABASE {name} ALLOW_CONNECTIONS {}",
            props::boolean(news, "allowConnections", true)
        ));
    }
    if changed("isTemplate") {
        if !version.at_least(9, 5) {
            return Err(Error::failed(format!(
                "PostgreSQL client is talking with a server ({version}) that does not support database IS_TEMPLATE"
            )));
        }
        out.push(format!(
            "ALTER DATABASE {name} IS_TEMPLATE {}",
            props::boolean(news, "isTemplate", false)
        ));
    }
    Ok(out)
}

pub(crate) fn update(cx: &Ctx, olds: &PropertyMap, news: &PropertyMap) -> Result<String> {
    let changed = |key: &str| props::changed(props::prop(PROPS, key), olds, news);
    let old_name = props::string(olds, "name");
    let name = props::string(news, "name");
    let current = cx.settings.current_user().to_owned();
    if changed("name") {
        if name.is_empty() {
            return Err(Error::failed(
                "error setting database name to an empty string",
            ));
        }
        cx.conn.forget(&old_name);
        let mut s = cx.default_session()?;
        db::exec(
            &mut *s,
            &format!(
                "ALTER DATABASE {} RENAME TO {}",
                ident(&old_name),
                ident(&name)
            ),
            "error updating database name",
        )?;
    }
    let owner = given(news, "owner").unwrap_or_default().to_owned();
    // alterObjectOwnership: objects of the old owner in the database go to the new one.
    if (changed("owner") || changed("alterObjectOwnership"))
        && !owner.is_empty()
        && props::boolean(news, "alterObjectOwnership", false)
    {
        let current_owner = {
            let mut s = cx.default_session()?;
            db::database_owner(&mut *s, &name)
                .map_err(|e| Error::failed(format!("error getting current database OWNER: {e}")))?
        };
        if current_owner != owner {
            let mut inside = cx.session(&name)?;
            db::transaction(&mut *inside, |t| {
                db::lock_role(t, &current)?;
                let mut work = cx.default_session()?;
                let granted = db::grant_role_membership(&mut *work, &current_owner, &current)?;
                let result = db::exec(
                    t,
                    &format!(
                        "REASSIGN OWNED BY {} TO {}",
                        ident(&current_owner),
                        ident(&owner)
                    ),
                    format!("error reassigning objects owned by '{current_owner}'"),
                );
                if granted {
                    let _ = db::revoke_role_membership(&mut *work, &current_owner, &current);
                }
                result
            })?;
        }
    }
    if changed("owner") && !owner.is_empty() {
        with_owner_granted(cx, &owner, |s| {
            db::exec(
                s,
                &format!("ALTER DATABASE {} OWNER TO {}", ident(&name), ident(&owner)),
                "error updating database OWNER",
            )
        })?;
    }
    let mut s = cx.default_session()?;
    let statements = alter_sql(olds, news, s.version())?;
    if changed("tablespaceName") {
        // Moving a database needs it to have no sessions: ours go first.
        cx.conn.forget(&name);
    }
    for sql in statements {
        db::exec(&mut *s, &sql, format!("error updating database {name}"))?;
    }
    Ok(name)
}

/// The statements that end a database's sessions and drop it.
pub(crate) fn drop_sql(name: &str, is_template: bool, version: Version) -> Vec<String> {
    let quoted = ident(name);
    let mut out = Vec::new();
    if version.at_least(9, 5) && is_template {
        out.push(format!("ALTER DATABASE {quoted} IS_TEMPLATE false"));
    }
    if version.at_least(9, 5) {
        out.push(format!("ALTER DATABASE {quoted} ALLOW_CONNECTIONS false"));
    }
    let pid = if version.at_least(9, 2) {
        "pid"
    } else {
        "procpid"
    };
    out.push(format!(
        "SELECT pg_terminate_backend({pid}) FROM pg_stat_activity WHERE datname = {} AND {pid} <> pg_backend_pid()",
        literal(name)
    ));
    if version.at_least(13, 0) {
        out.push(format!("DROP DATABASE {quoted} WITH ( FORCE )"));
    } else {
        out.push(format!("DROP DATABASE {quoted}"));
    }
    out
}

pub(crate) fn delete(cx: &Ctx, olds: &PropertyMap) -> Result<()> {
    let name = props::string(olds, "name");
    let owner = given(olds, "owner").unwrap_or_default().to_owned();
    let is_template = props::boolean(olds, "isTemplate", false);
    cx.conn.forget(&name);
    with_owner_granted(cx, &owner, |s| {
        for sql in drop_sql(&name, is_template, s.version()) {
            let what = if sql.starts_with("DROP") {
                "error dropping database".to_owned()
            } else if sql.starts_with("SELECT") {
                "error terminating database connections".to_owned()
            } else {
                "error blocking connections to database".to_owned()
            };
            db::exec(s, &sql, what)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fake::Fake;
    use cairn_sdk::props;

    fn checked(inputs: PropertyMap) -> PropertyMap {
        let mut c = Checker::new(inputs);
        props::check_table(PROPS, &mut c);
        c.finish().inputs.into_map()
    }

    #[test]
    fn create_statements() {
        let v15 = Version::new(15, 0, 0);
        let cases: Vec<(PropertyMap, Version, &str)> = vec![
            (
                props! {"name" => "db"},
                v15,
                r#"CREATE DATABASE "db" OWNER "postgres" TEMPLATE template0 ENCODING 'UTF8' ALLOW_CONNECTIONS true CONNECTION LIMIT -1 IS_TEMPLATE false"#,
            ),
            (
                props! {"name" => "all_opts", "owner" => "myrole", "template" => "template1", "encoding" => "SQL_ASCII", "lcCollate" => "C", "lcCtype" => "C", "tablespaceName" => "pg_default", "connectionLimit" => 10, "allowConnections" => false, "isTemplate" => true},
                v15,
                r#"CREATE DATABASE "all_opts" OWNER "myrole" TEMPLATE "template1" ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TABLESPACE "pg_default" ALLOW_CONNECTIONS false CONNECTION LIMIT 10 IS_TEMPLATE true"#,
            ),
            (
                props! {"name" => "d", "template" => "default", "encoding" => "DEFAULT", "lcCollate" => "DEFAULT", "lcCtype" => "Default", "tablespaceName" => "DEFAULT"},
                Version::new(9, 4, 0),
                r#"CREATE DATABASE "d" OWNER "postgres" TEMPLATE DEFAULT ENCODING DEFAULT LC_COLLATE DEFAULT LC_CTYPE DEFAULT TABLESPACE DEFAULT CONNECTION LIMIT -1"#,
            ),
        ];
        for (inputs, version, expected) in cases {
            assert_eq!(create_sql(&checked(inputs), "postgres", version), expected);
        }
    }

    #[test]
    fn an_owner_is_granted_to_the_connected_user_meanwhile() {
        let fake = Fake::new(15);
        let membership =
            "pg_get_userbyid(roleid) = 'test_owner' AND pg_get_userbyid(member) = 'postgres'";
        fake.answer_once(membership, &[])
            .answer(membership, &[&["1"]]);
        let cx = fake.ctx();
        create(
            &cx,
            &checked(props! {"name" => "db", "owner" => "test_owner"}),
        )
        .unwrap();
        let log = fake.log.borrow();
        let changes: Vec<&String> = log
            .iter()
            .filter(|l| !l.contains("SELECT 1 AS x"))
            .collect();
        assert_eq!(
            changes,
            [
                "postgres: BEGIN",
                "postgres: SET statement_timeout = 0",
                "postgres: SELECT pg_advisory_xact_lock(oid::bigint) FROM pg_roles WHERE rolname = 'postgres'",
                "postgres: SELECT pg_advisory_xact_lock(member::bigint) FROM pg_auth_members JOIN pg_roles ON roleid = pg_roles.oid WHERE rolname = 'postgres'",
                "postgres: GRANT \"test_owner\" TO \"postgres\"",
                "postgres: CREATE DATABASE \"db\" OWNER \"test_owner\" TEMPLATE template0 ENCODING 'UTF8' ALLOW_CONNECTIONS true CONNECTION LIMIT -1 IS_TEMPLATE false",
                "postgres: REVOKE \"test_owner\" FROM \"postgres\"",
                "postgres: ROLLBACK",
            ]
        );
    }

    #[test]
    fn drop_ends_sessions_first() {
        assert_eq!(
            drop_sql("x'; --", true, Version::new(15, 0, 0)),
            [
                r#"ALTER DATABASE "x'; --" IS_TEMPLATE false"#,
                r#"ALTER DATABASE "x'; --" ALLOW_CONNECTIONS false"#,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'x''; --' AND pid <> pg_backend_pid()",
                r#"DROP DATABASE "x'; --" WITH ( FORCE )"#,
            ]
        );
        assert_eq!(
            drop_sql("d", false, Version::new(9, 1, 0)),
            [
                "SELECT pg_terminate_backend(procpid) FROM pg_stat_activity WHERE datname = 'd' AND procpid <> pg_backend_pid()",
                r#"DROP DATABASE "d""#,
            ]
        );
    }

    #[test]
    fn updates_in_place() {
        let state = props! {
            "name" => "test_db", "owner" => "postgres", "template" => "template0",
            "encoding" => "UTF8", "lcCollate" => "C", "lcCtype" => "C",
            "tablespaceName" => "pg_default", "connectionLimit" => -1,
            "allowConnections" => true, "isTemplate" => false, "alterObjectOwnership" => false,
        };
        let news = checked(
            props! {"name" => "test_db", "connectionLimit" => 2, "allowConnections" => false, "isTemplate" => true},
        );
        assert_eq!(
            alter_sql(&state, &news, Version::new(15, 0, 0)).unwrap(),
            [
                r#"ALTER DATABASE "test_db" CONNECTION LIMIT = 2"#,
                r#"ALTER DATABASE "test_db" ALLOW_CONNECTIONS false"#,
                r#"ALTER DATABASE "test_db" IS_TEMPLATE true"#,
            ]
        );
        // Replacements are the diff's business; here nothing else changes.
        let same = checked(props! {"name" => "test_db"});
        assert!(
            alter_sql(&state, &same, Version::new(15, 0, 0))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn catalog_rows_become_outputs() {
        let fake = Fake::new(15);
        fake.answer(
            "WHERE d.datname = 'db'",
            &[&[
                "db",
                "owner",
                "UTF8",
                "C.UTF-8",
                "C.UTF-8",
                "pg_default",
                "7",
                "t",
                "f",
            ]],
        );
        let cx = fake.ctx();
        let out = read(&cx, "db", &PropertyMap::new()).unwrap().unwrap();
        assert_eq!(
            out,
            props! {
                "name" => "db", "owner" => "owner", "encoding" => "UTF8",
                "lcCollate" => "C.UTF-8", "lcCtype" => "C.UTF-8", "tablespaceName" => "pg_default",
                "connectionLimit" => 7, "template" => "template0", "allowConnections" => true,
                "isTemplate" => false, "alterObjectOwnership" => Value::Null,
            }
        );
        assert_eq!(read(&cx, "gone", &PropertyMap::new()).unwrap(), None);
    }
}
