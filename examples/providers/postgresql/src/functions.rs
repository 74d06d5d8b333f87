//! The package's functions (Terraform's data sources): `getSchemas`, `getTables`,
//! `getSequences`. Each queries `information_schema` in the given database, filtered by the
//! pattern arguments (every pattern a quoted literal), and returns its arguments, the rows
//! found and Terraform's ID for the query.

use cairn_sdk::{CheckFailure, Error, InvokeResult, PropertyMap, PropertyMapExt, Result, Value};

use crate::db::{self, Ctx};
use crate::props;
use crate::sql::{self, literal};

pub(crate) const GET_SCHEMAS: &str = "postgresql:index/getSchemas:getSchemas";
pub(crate) const GET_TABLES: &str = "postgresql:index/getTables:getTables";
pub(crate) const GET_SEQUENCES: &str = "postgresql:index/getSequences:getSequences";
pub(crate) const TERRAFORM_CONFIG: &str = "pulumi:providers:postgresql/terraformConfig";

/// The pattern arguments, in the order Terraform applies them.
const PATTERNS: [(&str, &str, &str); 3] = [
    ("likeAnyPatterns", "LIKE", "ANY"),
    ("likeAllPatterns", "LIKE", "ALL"),
    ("notLikeAllPatterns", "NOT LIKE", "ALL"),
];

/// The filters of the pattern arguments on `target`.
fn pattern_filters(args: &PropertyMap, target: &str) -> Vec<String> {
    let mut filters = Vec::new();
    for (key, op, keyword) in PATTERNS {
        let patterns = props::strings(args, key);
        if !patterns.is_empty() {
            filters.push(format!(
                "{target} {op} {}",
                sql::array_filter(&patterns, keyword, literal)
            ));
        }
    }
    if let Some(regex) = args.get_str("regexPattern").filter(|r| !r.is_empty()) {
        filters.push(format!("{target} ~ {}", literal(regex)));
    }
    filters
}

/// `<column> = ANY (array[...])` for a non-empty list argument.
fn in_filter(args: &PropertyMap, key: &str, column: &str) -> Option<String> {
    let items = props::strings(args, key);
    (!items.is_empty()).then(|| format!("{column} = {}", sql::array_filter(&items, "ANY", literal)))
}

/// `query` with `filters` joined after `keyword`.
fn finish(query: &str, keyword: &str, filters: &[String]) -> String {
    if filters.is_empty() {
        query.to_owned()
    } else {
        format!("{query} {keyword} {}", filters.join(" AND "))
    }
}

/// A list argument as Terraform writes it into a data source ID (items bare in quotes).
fn id_part(args: &PropertyMap, key: &str, keyword: &str) -> String {
    sql::array_filter(&props::strings(args, key), keyword, |s| format!("'{s}'"))
}

/// The query of a function call.
pub(crate) fn query(token: &str, args: &PropertyMap) -> Option<(String, Vec<&'static str>)> {
    match token {
        GET_SCHEMAS => {
            let filters = pattern_filters(args, "schema_name");
            let sql = if props::boolean(args, "includeSystemSchemas", false) {
                finish(
                    "SELECT schema_name FROM information_schema.schemata",
                    "WHERE",
                    &filters,
                )
            } else {
                finish(
                    "SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT LIKE 'pg_%' AND schema_name <> 'information_schema'",
                    "AND",
                    &filters,
                )
            };
            Some((sql, vec!["schema_name"]))
        }
        GET_TABLES => {
            let mut filters: Vec<String> = [
                in_filter(args, "schemas", "table_schema"),
                in_filter(args, "tableTypes", "table_type"),
            ]
            .into_iter()
            .flatten()
            .collect();
            filters.extend(pattern_filters(args, "table_name"));
            Some((
                finish(
                    "SELECT table_name, table_schema, table_type FROM information_schema.tables",
                    "WHERE",
                    &filters,
                ),
                vec!["table_name", "table_schema", "table_type"],
            ))
        }
        GET_SEQUENCES => {
            let mut filters: Vec<String> = in_filter(args, "schemas", "sequence_schema")
                .into_iter()
                .collect();
            filters.extend(pattern_filters(args, "sequence_name"));
            Some((
                finish(
                    "SELECT sequence_name, sequence_schema, data_type FROM information_schema.sequences",
                    "WHERE",
                    &filters,
                ),
                vec!["sequence_name", "sequence_schema", "data_type"],
            ))
        }
        _ => None,
    }
}

/// Terraform's ID of a function call.
pub(crate) fn id(token: &str, args: &PropertyMap) -> String {
    let database = props::string(args, "database");
    let mut parts = vec![database];
    if token == GET_SCHEMAS {
        parts.push(props::boolean(args, "includeSystemSchemas", false).to_string());
    } else {
        parts.push(id_part(args, "schemas", "ANY"));
        if token == GET_TABLES {
            parts.push(id_part(args, "tableTypes", "ANY"));
        }
    }
    for (key, _, keyword) in PATTERNS {
        parts.push(id_part(args, key, keyword));
    }
    parts.push(props::string(args, "regexPattern"));
    parts.join("_")
}

/// Runs a function.
pub(crate) fn invoke(cx: &Ctx, token: &str, args: &PropertyMap) -> Result<InvokeResult> {
    let Some((sql, columns)) = query(token, args) else {
        return Err(if token == TERRAFORM_CONFIG {
            crate::resources::refusal(token)
        } else {
            Error::failed(format!(
                "unknown function {token:?}: the postgresql package has {GET_SCHEMAS}, {GET_TABLES}, {GET_SEQUENCES}"
            ))
        });
    };
    let database = match args.get_str("database") {
        Some(d) if !d.is_empty() => d.to_owned(),
        _ => {
            return Ok(InvokeResult {
                outputs: PropertyMap::new().into(),
                failures: vec![CheckFailure::new("database", "missing required property")],
            });
        }
    };
    let mut s = cx.session(&database)?;
    let rows = db::rows(
        &mut *s,
        &sql,
        &columns,
        format!("error querying database {database}"),
    )?;
    let mut outputs: PropertyMap = args
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let text = |row: &[Option<String>], i: usize| Value::from(row[i].clone().unwrap_or_default());
    match token {
        GET_SCHEMAS => {
            outputs
                .entry("includeSystemSchemas".into())
                .or_insert(Value::Bool(false));
            let names: Vec<String> = rows.iter().filter_map(|r| r[0].clone()).collect();
            outputs.insert(
                "schemas".into(),
                props::string_array(&sql::sorted_set(&names)),
            );
        }
        GET_TABLES => {
            let tables = rows
                .iter()
                .map(|r| {
                    Value::from(cairn_sdk::props! {
                        "objectName" => text(r, 0), "schemaName" => text(r, 1), "tableType" => text(r, 2),
                    })
                })
                .collect::<Vec<_>>();
            outputs.insert("tables".into(), Value::Array(tables));
        }
        _ => {
            let sequences = rows
                .iter()
                .map(|r| {
                    Value::from(cairn_sdk::props! {
                        "objectName" => text(r, 0), "schemaName" => text(r, 1), "dataType" => text(r, 2),
                    })
                })
                .collect::<Vec<_>>();
            outputs.insert("sequences".into(), Value::Array(sequences));
        }
    }
    outputs.insert("id".into(), id(token, args).into());
    Ok(InvokeResult {
        outputs: outputs.into(),
        failures: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::fake::Fake;
    use cairn_sdk::props;

    fn strs(items: &[&str]) -> Value {
        props::string_array(items)
    }

    #[test]
    fn queries_quote_every_pattern() {
        let args = props! {
            "database" => "db", "likeAnyPatterns" => strs(&["test%", "it's%"]),
            "notLikeAllPatterns" => strs(&["%x"]), "regexPattern" => "^a",
        };
        let (sql, _) = query(GET_SCHEMAS, &args).unwrap();
        assert_eq!(
            sql,
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name NOT LIKE 'pg_%' AND schema_name <> 'information_schema' \
             AND schema_name LIKE ANY (array['test%','it''s%']) AND schema_name NOT LIKE ALL (array['%x']) AND schema_name ~ '^a'"
        );
        let (sql, _) = query(
            GET_SCHEMAS,
            &props! {"database" => "db", "includeSystemSchemas" => true},
        )
        .unwrap();
        assert_eq!(sql, "SELECT schema_name FROM information_schema.schemata");
        let (sql, _) = query(
            GET_TABLES,
            &props! {"database" => "db", "schemas" => strs(&["public"]), "tableTypes" => strs(&["BASE TABLE"]), "likeAllPatterns" => strs(&["t%"])},
        )
        .unwrap();
        assert_eq!(
            sql,
            "SELECT table_name, table_schema, table_type FROM information_schema.tables WHERE table_schema = ANY (array['public']) \
             AND table_type = ANY (array['BASE TABLE']) AND table_name LIKE ALL (array['t%'])"
        );
        let (sql, _) = query(GET_SEQUENCES, &props! {"database" => "db"}).unwrap();
        assert_eq!(
            sql,
            "SELECT sequence_name, sequence_schema, data_type FROM information_schema.sequences"
        );
    }

    #[test]
    fn ids_as_terraform_builds_them() {
        let args = props! {"database" => "db", "likeAnyPatterns" => strs(&["a%", "b%"])};
        assert_eq!(
            id(GET_SCHEMAS, &args),
            "db_false_ANY (array['a%','b%'])_ALL (array[])_ALL (array[])_"
        );
        assert_eq!(
            id(
                GET_TABLES,
                &props! {"database" => "db", "regexPattern" => "x"}
            ),
            "db_ANY (array[])_ANY (array[])_ANY (array[])_ALL (array[])_ALL (array[])_x"
        );
    }

    #[test]
    fn invoke_returns_rows() {
        let fake = Fake::new(15);
        fake.answer(
            "information_schema.tables",
            &[&["t", "public", "BASE TABLE"]],
        )
        .answer("information_schema.schemata", &[&["public"], &["app"]]);
        let cx = fake.ctx();
        let r = invoke(&cx, GET_TABLES, &props! {"database" => "db"}).unwrap();
        assert_eq!(
            r.outputs["tables"],
            Value::Array(vec![Value::from(
                props! {"objectName" => "t", "schemaName" => "public", "tableType" => "BASE TABLE"}
            )])
        );
        let r = invoke(&cx, GET_SCHEMAS, &props! {"database" => "db"}).unwrap();
        assert_eq!(r.outputs["schemas"], strs(&["app", "public"]));
        assert_eq!(r.outputs["includeSystemSchemas"], Value::Bool(false));
        let r = invoke(&cx, GET_SCHEMAS, &PropertyMap::new()).unwrap();
        assert_eq!(
            r.failures[0].to_string(),
            "database: missing required property"
        );
        assert_eq!(
            invoke(&cx, TERRAFORM_CONFIG, &PropertyMap::new())
                .unwrap_err()
                .to_string(),
            "pulumi:providers:postgresql/terraformConfig is not supported by this provider (Cairn's sandboxed postgresql)"
        );
    }
}
