//! The JSON schema of a policy's configuration, and the subset of JSON Schema Cairn checks a
//! configuration against: `type`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties`, `items`, `minLength` / `maxLength`, `minimum` / `maximum` (and their
//! exclusive forms), `minItems` / `maxItems`, `uniqueItems`. Other keywords (`pattern`,
//! `format`, `$ref`, …) are not checked: the pack still sees the value and may refuse it itself.
//! Messages follow the wording Pulumi's validator uses (`field: Invalid type. Expected: string,
//! given: integer`).

use serde_json::{Map, Value};

/// A policy's configuration schema: a schema per property, and the required ones.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConfigSchema {
    pub properties: Map<String, Value>,
    pub required: Vec<String>,
}

/// A JSON object: a schema, or a value's members.
type JsonObject = Map<String, Value>;

/// Nesting beyond which a schema or value is not followed (a pack chooses the schema).
const MAX_DEPTH: usize = 64;

impl ConfigSchema {
    /// The problems of `config` (a policy's properties) under this schema, each naming the
    /// property; empty when it is valid.
    pub fn validate(&self, config: &Map<String, Value>) -> Vec<String> {
        let mut errors = Vec::new();
        for name in &self.required {
            if !config.contains_key(name) {
                errors.push(format!("{name} is required"));
            }
        }
        for (key, value) in config {
            if let Some(schema) = self.properties.get(key) {
                check(schema, value, key, 0, &mut errors);
            }
        }
        errors
    }

    /// The defaults the schema gives (`default` of each property).
    pub fn defaults(&self) -> Map<String, Value> {
        self.properties
            .iter()
            .filter_map(|(k, s)| s.get("default").map(|d| (k.clone(), d.clone())))
            .collect()
    }
}

/// JSON Schema's name for the type of `value`.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_type(value: &Value, wanted: &str) -> bool {
    let actual = type_of(value);
    actual == wanted || (wanted == "number" && actual == "integer")
}

fn check(schema: &Value, value: &Value, path: &str, depth: usize, errors: &mut Vec<String>) {
    let Value::Object(schema) = schema else {
        return;
    };
    if depth > MAX_DEPTH {
        errors.push(format!("{path}: nested too deeply to check"));
        return;
    }
    // A value of the wrong type is not checked further: every other message would be noise.
    if !check_type(schema, value, path, errors) {
        return;
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let shown: Vec<String> = allowed.iter().map(Value::to_string).collect();
        errors.push(format!(
            "{path}: {path} must be one of the following: {}",
            shown.join(", ")
        ));
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        errors.push(format!("{path}: {path} does not match: {constant}"));
    }
    match value {
        Value::String(s) => check_string(schema, s, path, errors),
        Value::Number(n) => check_number(schema, n.as_f64().unwrap_or(f64::NAN), path, errors),
        Value::Array(items) => check_array(schema, items, path, depth, errors),
        Value::Object(members) => check_object(schema, members, path, depth, errors),
        _ => {}
    }
}

/// Checks `type` (a name or a list of names); false when the value has none of them.
fn check_type(schema: &JsonObject, value: &Value, path: &str, errors: &mut Vec<String>) -> bool {
    let Some(wanted) = schema.get("type") else {
        return true;
    };
    let types: Vec<&str> = match wanted {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if !types.is_empty() && !types.iter().any(|t| is_type(value, t)) {
        errors.push(format!(
            "{path}: Invalid type. Expected: {}, given: {}",
            types.join(", "),
            type_of(value)
        ));
        return false;
    }
    true
}

/// A numeric keyword of the schema (`minLength`, `maximum`, …).
fn number(schema: &JsonObject, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn check_string(schema: &JsonObject, s: &str, path: &str, errors: &mut Vec<String>) {
    let length = s.chars().count() as f64;
    if let Some(min) = number(schema, "minLength")
        && length < min
    {
        errors.push(format!(
            "{path}: String length must be greater than or equal to {min}"
        ));
    }
    if let Some(max) = number(schema, "maxLength")
        && length > max
    {
        errors.push(format!(
            "{path}: String length must be less than or equal to {max}"
        ));
    }
}

fn check_number(schema: &JsonObject, n: f64, path: &str, errors: &mut Vec<String>) {
    let or = |key: &str, default: f64| number(schema, key).unwrap_or(default);
    let bounds = [
        ("minimum", n >= or("minimum", f64::MIN), ">="),
        ("maximum", n <= or("maximum", f64::MAX), "<="),
        (
            "exclusiveMinimum",
            n > or("exclusiveMinimum", f64::MIN),
            ">",
        ),
        (
            "exclusiveMaximum",
            n < or("exclusiveMaximum", f64::MAX),
            "<",
        ),
    ];
    for (key, ok, op) in bounds {
        if !ok && let Some(bound) = number(schema, key) {
            errors.push(format!("{path}: Must be {op} {bound}"));
        }
    }
}

fn check_array(
    schema: &JsonObject,
    items: &[Value],
    path: &str,
    depth: usize,
    errors: &mut Vec<String>,
) {
    let count = items.len() as f64;
    if let Some(min) = number(schema, "minItems")
        && count < min
    {
        errors.push(format!("{path}: Array must have at least {min} items"));
    }
    if let Some(max) = number(schema, "maxItems")
        && count > max
    {
        errors.push(format!("{path}: Array must have at most {max} items"));
    }
    if schema.get("uniqueItems") == Some(&Value::Bool(true))
        && items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].contains(a))
    {
        errors.push(format!("{path}: array items must be unique"));
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{path}.{i}"), depth + 1, errors);
        }
    }
}

fn check_object(
    schema: &JsonObject,
    members: &JsonObject,
    path: &str,
    depth: usize,
    errors: &mut Vec<String>,
) {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !members.contains_key(name) {
                errors.push(format!("{path}: {name} is required"));
            }
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (key, member) in members {
        let child = format!("{path}.{key}");
        match properties.and_then(|p| p.get(key)) {
            Some(s) => check(s, member, &child, depth + 1, errors),
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => {
                    errors.push(format!("{path}: Additional property {key} is not allowed"))
                }
                Some(s @ Value::Object(_)) => check(s, member, &child, depth + 1, errors),
                _ => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(properties: Value, required: &[&str]) -> ConfigSchema {
        ConfigSchema {
            properties: properties.as_object().cloned().unwrap_or_default(),
            required: required.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn configurations_are_checked_against_the_subset() {
        let s = schema(
            json!({
                "message": {"type": "string", "minLength": 2, "maxLength": 10},
                "count": {"type": "integer", "minimum": 1},
                "ratio": {"type": "number", "exclusiveMaximum": 1},
                "level": {"enum": ["low", "high"]},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
                "nested": {"type": "object", "properties": {"a": {"type": "boolean"}},
                           "additionalProperties": false, "required": ["a"]},
            }),
            &["message"],
        );
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (json!({"message": "ok"}), vec![]),
            (json!({}), vec!["message is required"]),
            (
                json!({"message": 5}),
                vec!["message: Invalid type. Expected: string, given: integer"],
            ),
            (
                json!({"message": "this is far too long"}),
                vec!["message: String length must be less than or equal to 10"],
            ),
            (
                json!({"message": "ok", "count": 0, "ratio": 1.0}),
                vec!["count: Must be >= 1", "ratio: Must be < 1"],
            ),
            (
                json!({"message": "ok", "count": 1.5}),
                vec!["count: Invalid type. Expected: integer, given: number"],
            ),
            (
                json!({"message": "ok", "level": "mid"}),
                vec!["level: level must be one of the following: \"low\", \"high\""],
            ),
            (
                json!({"message": "ok", "tags": ["a", 1, "a"]}),
                vec![
                    "tags: array items must be unique",
                    "tags.1: Invalid type. Expected: string, given: integer",
                ],
            ),
            (
                json!({"message": "ok", "nested": {"b": 1}}),
                vec![
                    "nested: a is required",
                    "nested: Additional property b is not allowed",
                ],
            ),
        ];
        for (config, expected) in cases {
            let errors = s.validate(config.as_object().unwrap());
            assert_eq!(errors, expected, "{config}");
        }
        assert_eq!(
            schema(json!({"x": {"default": 3}, "y": {}}), &[]).defaults(),
            json!({"x": 3}).as_object().unwrap().clone()
        );
    }

    #[test]
    fn a_deep_schema_stops_at_the_depth_limit() {
        let mut schema_value = json!({"type": "array"});
        let mut value = json!(1);
        for _ in 0..100 {
            schema_value = json!({"type": "array", "items": schema_value});
            value = json!([value]);
        }
        let s = schema(json!({ "deep": schema_value }), &[]);
        let errors = s.validate(json!({ "deep": value }).as_object().unwrap());
        assert!(
            errors.iter().any(|e| e.contains("nested too deeply")),
            "{errors:?}"
        );
    }
}
