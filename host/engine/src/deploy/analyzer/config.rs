//! Policy configuration, as Pulumi reconciles it: each policy starts with the level its pack
//! gives it and the defaults of its configuration schema; the pack's own initial configuration
//! applies next, then the user's file (`--policy-pack-config`), where the key `all` sets every
//! policy's level; the result is checked against each policy's schema before the pack is
//! configured.
//!
//! The file is JSON: `{"policy": "mandatory", "other": {"enforcementLevel": "advisory",
//! "key": value}}`.
//!
//! # Policy config schemas are checked with a subset of JSON Schema
//!
//! Policy config schemas are checked with a subset of JSON Schema (`type`, `enum`, `const`,
//! `properties`, `required`, `additionalProperties`, `items`, lengths, bounds, item counts,
//! `uniqueItems`), written in the engine, rather than a full validator crate (a large dependency
//! tree for a few keywords); unchecked keywords (`pattern`, `format`, `$ref`) are left to the pack.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::{AnalyzerInfo, Enforcement};

/// One policy's configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PolicyConfig {
    pub enforcement: Option<Enforcement>,
    pub properties: Map<String, Value>,
}

/// Configuration by policy name.
pub type PolicyConfigs = IndexMap<String, PolicyConfig>;

/// Parses a `--policy-pack-config` file (empty text: no configuration).
pub fn parse_file(text: &str) -> Result<PolicyConfigs, String> {
    if text.trim().is_empty() {
        return Ok(PolicyConfigs::new());
    }
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(entries) = value else {
        return Err("must be a JSON object of policy names".to_owned());
    };
    let mut configs = PolicyConfigs::new();
    for (policy, value) in entries {
        if policy == "environments" {
            return Err("\"environments\" (Pulumi ESC environments) are not supported".to_owned());
        }
        let config = match value {
            Value::String(level) => PolicyConfig {
                enforcement: Some(level_of(&policy, &level)?),
                properties: Map::new(),
            },
            Value::Object(mut properties) => {
                let enforcement = match properties.shift_remove("enforcementLevel") {
                    None => None,
                    Some(Value::String(level)) => Some(level_of(&policy, &level)?),
                    Some(other) => {
                        return Err(format!(
                            "parsing enforcement level for {policy:?}: {other} is not a valid enforcement level; must be a string"
                        ));
                    }
                };
                PolicyConfig {
                    enforcement,
                    properties,
                }
            }
            other => {
                return Err(format!(
                    "parsing {policy:?}: {other} is not a valid value; must be a string or object"
                ));
            }
        };
        if config.enforcement.is_some() || !config.properties.is_empty() {
            configs.insert(policy, config);
        }
    }
    Ok(configs)
}

fn level_of(policy: &str, level: &str) -> Result<Enforcement, String> {
    Enforcement::parse(level).ok_or_else(|| {
        format!(
            "parsing enforcement level for {policy:?}: {level:?} is not a valid enforcement level"
        )
    })
}

/// The configuration a pack is given: defaults, then the pack's initial configuration, then
/// `file`; or the problems found checking it against the policies' schemas (each naming its
/// policy), sorted.
pub fn reconcile(info: &AnalyzerInfo, file: &PolicyConfigs) -> Result<PolicyConfigs, Vec<String>> {
    let mut result: PolicyConfigs = info
        .policies
        .iter()
        .map(|p| {
            let properties = p
                .config_schema
                .as_ref()
                .map(|s| s.defaults())
                .unwrap_or_default();
            (
                p.name.clone(),
                PolicyConfig {
                    enforcement: Some(p.enforcement),
                    properties,
                },
            )
        })
        .collect();
    apply(&mut result, &info.initial_config);
    apply(&mut result, file);
    let mut errors: Vec<String> = info
        .policies
        .iter()
        .filter_map(|p| Some((p, p.config_schema.as_ref()?)))
        .flat_map(|(p, schema)| {
            let empty = Map::new();
            let props = result.get(&p.name).map_or(&empty, |c| &c.properties);
            schema
                .validate(props)
                .into_iter()
                .map(|e| format!("{}: {e}", p.name))
                .collect::<Vec<_>>()
        })
        .collect();
    if errors.is_empty() {
        Ok(result)
    } else {
        errors.sort();
        Err(errors)
    }
}

fn apply(result: &mut PolicyConfigs, given: &PolicyConfigs) {
    if let Some(level) = given.get("all").and_then(|c| c.enforcement) {
        for config in result.values_mut() {
            config.enforcement = Some(level);
        }
    }
    for (policy, config) in given {
        let entry = result.entry(policy.clone()).or_default();
        if config.enforcement.is_some() {
            entry.enforcement = config.enforcement;
        }
        for (k, v) in &config.properties {
            entry.properties.insert(k.clone(), v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::schema::ConfigSchema;
    use super::super::{PolicyInfo, PolicyKind};
    use super::*;
    use serde_json::json;

    fn info() -> AnalyzerInfo {
        let policy = |name: &str, enforcement, schema: Option<Value>| PolicyInfo {
            name: name.into(),
            description: String::new(),
            enforcement,
            kind: PolicyKind::Resource,
            severity: None,
            config_schema: schema.map(|s| ConfigSchema {
                properties: s.as_object().cloned().unwrap_or_default(),
                required: vec![],
            }),
        };
        AnalyzerInfo {
            name: "pack".into(),
            version: "1.0.0".into(),
            supports_config: true,
            policies: vec![
                policy("a", Enforcement::Mandatory, None),
                policy(
                    "b",
                    Enforcement::Advisory,
                    Some(json!({"max": {"type": "integer", "default": 3}})),
                ),
            ],
            initial_config: PolicyConfigs::new(),
        }
    }

    #[test]
    fn files_parse_as_pulumi_reads_them() {
        let parsed = parse_file(
            r#"{"a": "disabled", "b": {"enforcementLevel": "mandatory", "max": 5}, "c": {}}"#,
        )
        .unwrap();
        assert_eq!(parsed.len(), 2, "empty entries are dropped");
        assert_eq!(parsed["a"].enforcement, Some(Enforcement::Disabled));
        assert_eq!(parsed["b"].properties["max"], json!(5));
        assert!(parse_file("  ").unwrap().is_empty());
        for (text, error) in [
            ("[]", "must be a JSON object"),
            (
                r#"{"a": "loud"}"#,
                "\"loud\" is not a valid enforcement level",
            ),
            (r#"{"a": 3}"#, "must be a string or object"),
            (r#"{"a": {"enforcementLevel": 1}}"#, "must be a string"),
            (r#"{"environments": []}"#, "not supported"),
            ("{", "not valid JSON"),
        ] {
            let e = parse_file(text).unwrap_err();
            assert!(e.contains(error), "{text}: {e}");
        }
    }

    #[test]
    fn configuration_layers_and_is_checked() {
        let got = reconcile(&info(), &PolicyConfigs::new()).unwrap();
        assert_eq!(got["a"].enforcement, Some(Enforcement::Mandatory));
        assert_eq!(got["b"].properties["max"], json!(3), "schema default");

        let file = parse_file(r#"{"all": "advisory", "b": {"max": 9}}"#).unwrap();
        let got = reconcile(&info(), &file).unwrap();
        assert_eq!(got["a"].enforcement, Some(Enforcement::Advisory));
        assert_eq!(got["b"].properties["max"], json!(9));

        let file = parse_file(r#"{"b": {"max": "many"}}"#).unwrap();
        assert_eq!(
            reconcile(&info(), &file).unwrap_err(),
            vec!["b: max: Invalid type. Expected: integer, given: string"]
        );
    }
}
