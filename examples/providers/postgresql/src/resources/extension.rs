//! `postgresql:index/extension:Extension` (Terraform's `postgresql_extension`).
//!
//! ID: `<database>.<extension>`; import by that ID. `name` and `database` replace; a new
//! schema or version is altered in place. Statements run in a transaction on the
//! extension's database (the provider's when `database` is not set).

use cairn_sdk::{Error, PropertyMap, PropertyMapExt, Result};

use crate::config::Version;
use crate::db::{self, Ctx};
use crate::props::{self, COMPUTED, Default, Prop, REPLACE, Ty};
use crate::sql::{ident, literal};

pub(crate) const PROPS: &[Prop] = &[
    Prop::new("name", Ty::Str).flags(REPLACE),
    Prop::new("schema", Ty::Str).flags(COMPUTED),
    Prop::new("version", Ty::Str).flags(COMPUTED),
    Prop::new("database", Ty::Str).flags(COMPUTED | REPLACE),
    Prop::new("dropCascade", Ty::Bool).default(Default::Bool(false)),
    Prop::new("createCascade", Ty::Bool).default(Default::Bool(false)),
];

pub(crate) fn id(database: &str, name: &str) -> String {
    format!("{database}.{name}")
}

/// `(database, extension)` from an ID.
pub(crate) fn parse_id(id: &str) -> Result<(String, String)> {
    let parts: Vec<&str> = id.split('.').collect();
    match parts.as_slice() {
        [database, name] => Ok(((*database).to_owned(), (*name).to_owned())),
        _ => Err(Error::failed(format!(
            "extension ID {id} has not the expected format 'database.extension': {parts:?}"
        ))),
    }
}

fn database_of(cx: &Ctx, map: &PropertyMap) -> String {
    map.get_str("database")
        .filter(|d| !d.is_empty())
        .unwrap_or(&cx.settings.database)
        .to_owned()
}

fn supported(version: Version) -> Result<()> {
    if version.at_least(9, 1) {
        Ok(())
    } else {
        Err(Error::failed(format!(
            "postgresql_extension resource is not supported for this Postgres version ({version})"
        )))
    }
}

/// `CREATE EXTENSION IF NOT EXISTS`.
pub(crate) fn create_sql(inputs: &PropertyMap) -> String {
    let mut sql = format!(
        "CREATE EXTENSION IF NOT EXISTS {}",
        ident(&props::string(inputs, "name"))
    );
    if let Some(schema) = inputs.get_str("schema").filter(|s| !s.is_empty()) {
        sql.push_str(&format!(" SCHEMA {}", ident(schema)));
    }
    if let Some(version) = inputs.get_str("version").filter(|s| !s.is_empty()) {
        sql.push_str(&format!(" VERSION {}", ident(version)));
    }
    if props::boolean(inputs, "createCascade", false) {
        sql.push_str(" CASCADE");
    }
    sql
}

pub(crate) fn create(cx: &Ctx, inputs: &PropertyMap) -> Result<String> {
    let database = database_of(cx, inputs);
    let name = props::string(inputs, "name");
    let mut s = cx.session(&database)?;
    supported(s.version())?;
    db::transaction(&mut *s, |s| {
        db::exec(
            s,
            &create_sql(inputs),
            format!("error creating extension {name}"),
        )
    })?;
    Ok(id(&database, &name))
}

/// Reads the extension: from the recorded state, or (import) from the ID.
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
        supported(s.version())?;
        if !db::db_exists(&mut *s, &database)? {
            return Ok(None);
        }
    }
    let mut s = cx.session(&database)?;
    let sql = format!(
        "SELECT n.nspname, e.extversion FROM pg_catalog.pg_extension e, pg_catalog.pg_namespace n \
         WHERE n.oid = e.extnamespace AND e.extname = {}",
        literal(&name)
    );
    let Some(row) = db::row(
        &mut *s,
        &sql,
        &["nspname", "extversion"],
        "error reading extension",
    )?
    else {
        return Ok(None);
    };
    let mut out = PropertyMap::new();
    out.insert("name".into(), name.as_str().into());
    out.insert("schema".into(), row[0].clone().unwrap_or_default().into());
    out.insert("version".into(), row[1].clone().unwrap_or_default().into());
    out.insert("database".into(), database.as_str().into());
    // Not server properties: as recorded (none when imported).
    for key in ["dropCascade", "createCascade"] {
        out.insert(key.into(), state.get(key).cloned().unwrap_or_default());
    }
    Ok(Some((id(&database, &name), out)))
}

/// `ALTER EXTENSION` for a new schema or version.
pub(crate) fn alter_sql(olds: &PropertyMap, news: &PropertyMap) -> Result<Vec<String>> {
    let changed = |key: &str| props::changed(props::prop(PROPS, key), olds, news);
    let name = ident(&props::string(news, "name"));
    let mut out = Vec::new();
    if changed("schema") {
        let schema = props::string(news, "schema");
        if schema.is_empty() {
            return Err(Error::failed(
                "error setting extension name to an empty string",
            ));
        }
        out.push(format!(
            "ALTER EXTENSION {name} SET SCHEMA {}",
            ident(&schema)
        ));
    }
    if changed("version") {
        let version = props::string(news, "version");
        if version.is_empty() {
            out.push(format!("ALTER EXTENSION {name} UPDATE"));
        } else {
            out.push(format!(
                "ALTER EXTENSION {name} UPDATE TO {}",
                ident(&version)
            ));
        }
    }
    Ok(out)
}

pub(crate) fn update(cx: &Ctx, olds: &PropertyMap, news: &PropertyMap) -> Result<String> {
    let database = database_of(cx, olds);
    let name = props::string(news, "name");
    let statements = alter_sql(olds, news)?;
    let mut s = cx.session(&database)?;
    supported(s.version())?;
    db::transaction(&mut *s, |s| {
        for sql in &statements {
            db::exec(s, sql, format!("error updating extension {name}"))?;
        }
        Ok(())
    })?;
    Ok(id(&database, &name))
}

pub(crate) fn delete(cx: &Ctx, olds: &PropertyMap) -> Result<()> {
    let database = database_of(cx, olds);
    let name = props::string(olds, "name");
    let mode = if props::boolean(olds, "dropCascade", false) {
        "CASCADE"
    } else {
        "RESTRICT"
    };
    let mut s = cx.session(&database)?;
    supported(s.version())?;
    db::transaction(&mut *s, |s| {
        db::exec(
            s,
            &format!("DROP EXTENSION {} {mode}", ident(&name)),
            format!("error deleting extension {name}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fake::Fake;
    use cairn_sdk::props;

    #[test]
    fn statements() {
        assert_eq!(
            create_sql(&props! {"name" => "pg_trgm"}),
            r#"CREATE EXTENSION IF NOT EXISTS "pg_trgm""#
        );
        assert_eq!(
            create_sql(
                &props! {"name" => "earthdistance", "schema" => "s", "version" => "1.1", "createCascade" => true}
            ),
            r#"CREATE EXTENSION IF NOT EXISTS "earthdistance" SCHEMA "s" VERSION "1.1" CASCADE"#
        );
        let olds = props! {"name" => "e", "schema" => "public", "version" => "1.0"};
        assert_eq!(
            alter_sql(
                &olds,
                &props! {"name" => "e", "schema" => "bar", "version" => "1.1"}
            )
            .unwrap(),
            [
                r#"ALTER EXTENSION "e" SET SCHEMA "bar""#,
                r#"ALTER EXTENSION "e" UPDATE TO "1.1""#
            ]
        );
        // Left out: the server's values stand.
        assert!(
            alter_sql(&olds, &props! {"name" => "e"})
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn ids_and_import() {
        assert_eq!(
            parse_id("db.ext").unwrap(),
            ("db".to_owned(), "ext".to_owned())
        );
        assert!(parse_id("ext").is_err());
        let fake = Fake::new(15);
        fake.answer("FROM pg_database WHERE datname = 'db'", &[&["1"]])
            .answer("e.extname = 'pgcrypto'", &[&["public", "1.3"]]);
        let cx = fake.ctx();
        let (id, out) = read(&cx, "db.pgcrypto", &PropertyMap::new())
            .unwrap()
            .unwrap();
        assert_eq!(id, "db.pgcrypto");
        assert_eq!(
            out,
            props! {
                "name" => "pgcrypto", "schema" => "public", "version" => "1.3", "database" => "db",
                "dropCascade" => cairn_sdk::Value::Null, "createCascade" => cairn_sdk::Value::Null,
            }
        );
        // Without a database, the provider's.
        assert_eq!(
            read(&cx, "x", &props! {"name" => "pgcrypto"}).unwrap(),
            None
        );
        let log = fake.log.borrow();
        assert!(
            log.last()
                .unwrap()
                .starts_with("postgres: SELECT 1 AS x FROM pg_database WHERE datname = 'postgres'"),
            "{log:?}"
        );
    }
}
