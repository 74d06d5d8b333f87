//! `lifecycle-test`: the lifecycle scenarios' test provider (package `test`) as a component.
//!
//! It behaves exactly like the in-process test provider of `host/lifecycle` (see the scenario
//! README): the "cloud" is the granted directory `/cloud`, which the harness fills before and
//! reads back after each deployment, and the scenario's behaviour comes from
//! `/cloud/behaviour.json`. Call recording, concurrency counting, delays and blocking stay on the
//! host side (they observe the engine, not the provider).
//!
//! Layout of `/cloud`:
//! * `resources/<id>.json` — `{name, type, inputs, outputs}`, plain JSON values;
//! * `creates/<name>`, `generated/<name>` — counters behind IDs `<name>-<n>` and names
//!   `<name>-gen<n>` (one file per name, so concurrent instances never share a counter);
//! * `behaviour.json` — `{all, resources: {name: behaviour}, configReplaceKeys}`.

use std::collections::HashMap;
use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;

use cairn_sdk::{
    CheckFailure, CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest,
    DiffChanges, DiffKind, DiffRequest, DiffResult, Error, PartialState, PropertyDiff, PropertyMap,
    Provider, ReadRequest, ReadResult, Result, UpdateRequest, UpdateResult, Value,
};
use serde::Deserialize;
use serde_json::Value as Json;

const CLOUD: &str = "/cloud";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Behaviour {
    replace_on: Option<Vec<String>>,
    delete_before_replace: Option<bool>,
    diff: Option<String>,
    auto_name: Option<bool>,
    fail_create: Option<String>,
    fail_update: Option<String>,
    fail_delete: Option<String>,
    fail_read: Option<String>,
    partial: Option<bool>,
    bad_output: Option<String>,
    check_failures: Option<Vec<FailureSpec>>,
}

/// Adds the output `bad` a behaviour asks for (`nan`, `inf`): a number no state can store.
fn with_bad_output(behaviour: &Behaviour, outputs: &mut PropertyMap) {
    let bad = match behaviour.bad_output.as_deref() {
        Some("nan") => f64::NAN,
        Some("inf") => f64::INFINITY,
        _ => return,
    };
    outputs.insert("bad".into(), Value::Number(bad));
}

#[derive(Debug, Clone, Deserialize)]
struct FailureSpec {
    property: String,
    reason: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BehaviourFile {
    #[serde(default)]
    all: Behaviour,
    /// Per resource name, already merged over `all` by the host.
    #[serde(default)]
    resources: HashMap<String, Behaviour>,
    config_replace_keys: Option<Vec<String>>,
}

#[derive(Default)]
pub struct TestProvider;

fn io_error(what: &str, e: std::io::Error) -> Error {
    Error::failed(format!("{what}: {e}"))
}

fn path(parts: &[&str]) -> PathBuf {
    let mut p = PathBuf::from(CLOUD);
    for part in parts {
        p.push(part);
    }
    p
}

fn behaviours() -> Result<BehaviourFile> {
    match fs::read(path(&["behaviour.json"])) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| Error::failed(format!("behaviour.json is malformed: {e}"))),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(BehaviourFile::default()),
        Err(e) => Err(io_error("reading behaviour.json", e)),
    }
}

fn behaviour(name: &str) -> Result<Behaviour> {
    let mut file = behaviours()?;
    Ok(file.resources.remove(name).unwrap_or(file.all))
}

/// Increments the counter `kind/name` and returns its new value.
fn next(kind: &str, name: &str) -> Result<u64> {
    let dir = path(&[kind]);
    fs::create_dir_all(&dir).map_err(|e| io_error("creating the counter directory", e))?;
    let file = dir.join(name);
    let current = match fs::read_to_string(&file) {
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .map_err(|e| Error::failed(format!("counter {kind}/{name}: {e}")))?,
        Err(e) if e.kind() == ErrorKind::NotFound => 0,
        Err(e) => return Err(io_error("reading a counter", e)),
    };
    let n = current + 1;
    fs::write(&file, n.to_string()).map_err(|e| io_error("writing a counter", e))?;
    Ok(n)
}

/// A cloud entry: `{name, type, inputs, outputs}`.
struct Entry {
    name: String,
    resource_type: String,
    inputs: PropertyMap,
    outputs: PropertyMap,
}

fn entry_path(id: &str) -> PathBuf {
    path(&["resources", &format!("{id}.json")])
}

fn load(id: &str) -> Result<Option<Entry>> {
    let bytes = match fs::read(entry_path(id)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&format!("reading resource {id}"), e)),
    };
    let json: Json = serde_json::from_slice(&bytes)
        .map_err(|e| Error::failed(format!("resource {id} is malformed: {e}")))?;
    let text = |key: &str| json.get(key).and_then(Json::as_str).unwrap_or_default();
    let map = |key: &str| match json.get(key).map(from_json) {
        Some(Value::Object(m)) => m,
        _ => PropertyMap::new(),
    };
    Ok(Some(Entry {
        name: text("name").to_owned(),
        resource_type: text("type").to_owned(),
        inputs: map("inputs"),
        outputs: map("outputs"),
    }))
}

fn store(id: &str, entry: &Entry) -> Result<()> {
    let json = serde_json::json!({
        "name": entry.name,
        "type": entry.resource_type,
        "inputs": to_json(&Value::Object(entry.inputs.clone())),
        "outputs": to_json(&Value::Object(entry.outputs.clone())),
    });
    fs::create_dir_all(path(&["resources"]))
        .map_err(|e| io_error("creating the resources directory", e))?;
    fs::write(entry_path(id), json.to_string())
        .map_err(|e| io_error(&format!("writing resource {id}"), e))
}

fn from_json(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Value::Number(n.as_f64().unwrap_or_default()),
        Json::String(s) if s == "$unknown" => Value::Unknown,
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(from_json).collect()),
        Json::Object(map) => {
            if map.len() == 1
                && let Some(inner) = map.get("$secret")
            {
                return Value::secret(from_json(inner));
            }
            Value::Object(map.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

fn to_json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => serde_json::Number::from_f64(*n).map_or(Json::Null, Json::Number),
        Value::String(s) => Json::String(s.clone()),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Object(map) => {
            Json::Object(map.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
        Value::Secret(inner) => serde_json::json!({"$secret": to_json(inner)}),
        Value::Output(o) => match &o.value {
            Some(inner) => to_json(inner),
            None => Json::String("$unknown".into()),
        },
        // The scenarios never put assets, archives or references into the cloud.
        Value::Unknown | Value::Asset(_) | Value::Archive(_) | Value::ResourceReference(_) => {
            Json::String("$unknown".into())
        }
    }
}

/// The value with every secret marker removed.
fn unsecret(value: &Value) -> Value {
    match value {
        Value::Secret(inner) => unsecret(inner),
        Value::Array(items) => Value::Array(items.iter().map(unsecret).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), unsecret(v))).collect())
        }
        Value::Output(o) => {
            let mut o = o.clone();
            o.secret = false;
            o.value = o.value.map(|v| Box::new(unsecret(&v)));
            Value::Output(o)
        }
        other => other.clone(),
    }
}

/// What an update leaves: the news (secrets stripped) and the recorded `out`.
fn updated_outputs(request: &UpdateRequest) -> PropertyMap {
    let mut outputs = strip_secrets(&request.news);
    let out = request
        .old_outputs
        .get("out")
        .map(unsecret)
        .unwrap_or(Value::Unknown);
    outputs.insert("out".into(), out);
    outputs
}

fn strip_secrets(map: &PropertyMap) -> PropertyMap {
    map.iter().map(|(k, v)| (k.clone(), unsecret(v))).collect()
}

fn differs(old: &Value, new: &Value) -> bool {
    new.contains_unknowns() || unsecret(old) != unsecret(new)
}

/// Top-level keys whose values differ (an unknown new value always differs).
fn changed_keys(olds: &PropertyMap, news: &PropertyMap) -> Vec<String> {
    let mut keys: Vec<String> = news
        .iter()
        .filter(|(k, new)| olds.get(*k).is_none_or(|old| differs(old, new)))
        .map(|(k, _)| k.clone())
        .collect();
    keys.extend(olds.keys().filter(|k| !news.contains_key(*k)).cloned());
    keys
}

/// The changed paths between two values: objects and arrays element by element.
fn changed_paths(
    prefix: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    out: &mut Vec<(String, DiffKind)>,
) {
    match (old, new) {
        (None, None) => {}
        (None, Some(_)) => out.push((prefix.to_owned(), DiffKind::Add)),
        (Some(_), None) => out.push((prefix.to_owned(), DiffKind::Delete)),
        (Some(Value::Object(o)), Some(Value::Object(n))) => {
            for key in o.keys().chain(n.keys().filter(|k| !o.contains_key(*k))) {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                changed_paths(&path, o.get(key), n.get(key), out);
            }
        }
        (Some(Value::Array(o)), Some(Value::Array(n))) => {
            for i in 0..o.len().max(n.len()) {
                changed_paths(&format!("{prefix}[{i}]"), o.get(i), n.get(i), out);
            }
        }
        (Some(o), Some(n)) => {
            if differs(o, n) {
                out.push((prefix.to_owned(), DiffKind::Update));
            }
        }
    }
}

fn name_of(urn: &str) -> &str {
    cairn_sdk::urn::name(urn).unwrap_or(urn)
}

impl Provider for TestProvider {
    fn diff_config(&self, request: DiffRequest) -> Result<DiffResult> {
        let replace_on = behaviours()?
            .config_replace_keys
            .unwrap_or_else(|| vec!["region".to_owned()]);
        let changed = changed_keys(&request.old_inputs, &request.news);
        Ok(DiffResult {
            changes: if changed.is_empty() {
                DiffChanges::None
            } else {
                DiffChanges::Some
            },
            replace_keys: changed
                .iter()
                .filter(|k| replace_on.contains(k))
                .cloned()
                .collect(),
            changed_keys: changed,
            ..DiffResult::default()
        })
    }

    fn check(&self, request: CheckRequest) -> Result<CheckResult> {
        let name = name_of(&request.urn);
        let behaviour = behaviour(name)?;
        if let Some(failures) = behaviour.check_failures {
            return Ok(CheckResult {
                inputs: request.news,
                failures: failures
                    .into_iter()
                    .map(|f| CheckFailure::new(f.property, f.reason))
                    .collect(),
            });
        }
        let mut inputs = request.news;
        if behaviour.auto_name == Some(true) && !inputs.contains_key("name") {
            let generated = match request.olds.get("name") {
                Some(old) => old.clone(),
                None => Value::from(format!("{name}-gen{}", next("generated", name)?)),
            };
            inputs.insert("name".into(), generated);
        }
        Ok(CheckResult::ok(inputs))
    }

    fn diff(&self, request: DiffRequest) -> Result<DiffResult> {
        let behaviour = behaviour(name_of(&request.urn))?;
        let changed = changed_keys(&request.old_inputs, &request.news);
        let replace_on = behaviour.replace_on.unwrap_or_default();
        let replace: Vec<String> = changed
            .iter()
            .filter(|k| replace_on.contains(k))
            .cloned()
            .collect();
        let dbr = behaviour.delete_before_replace == Some(true) && !replace.is_empty();
        if behaviour.diff.as_deref() == Some("unknown") {
            return Ok(DiffResult {
                changes: DiffChanges::Unknown,
                replace_keys: replace,
                delete_before_replace: dbr,
                ..DiffResult::default()
            });
        }
        let (olds, news) = (&request.old_inputs, &request.news);
        let mut paths = Vec::new();
        for key in olds
            .keys()
            .chain(news.keys().filter(|k| !olds.contains_key(*k)))
        {
            changed_paths(key, olds.get(key), news.get(key), &mut paths);
        }
        let detailed = paths
            .into_iter()
            .map(|(path, kind)| {
                let top = path.split(['.', '[']).next().unwrap_or_default();
                let kind = if replace.iter().any(|k| k == top) {
                    kind.with_replace()
                } else {
                    kind
                };
                PropertyDiff {
                    path,
                    kind,
                    input_diff: true,
                }
            })
            .collect();
        Ok(DiffResult {
            changes: if changed.is_empty() {
                DiffChanges::None
            } else {
                DiffChanges::Some
            },
            replace_keys: replace,
            changed_keys: changed,
            detailed_diff: Some(detailed),
            delete_before_replace: dbr,
            ..DiffResult::default()
        })
    }

    fn create(&self, request: CreateRequest) -> Result<CreateResult> {
        let name = name_of(&request.urn).to_owned();
        let behaviour = behaviour(&name)?;
        let mut outputs = strip_secrets(&request.properties);
        let partial = behaviour.partial == Some(true);
        if let Some(message) = &behaviour.fail_create
            && !partial
        {
            return Err(Error::failed(message.clone()));
        }
        let n = next("creates", &name)?;
        let id = format!("{name}-{n}");
        outputs.insert("out".into(), Value::from(format!("{name}-out-{n}")));
        let resource_type = cairn_sdk::urn::resource_type(&request.urn)
            .unwrap_or_default()
            .to_owned();
        store(
            &id,
            &Entry {
                name,
                resource_type,
                inputs: strip_secrets(&request.properties),
                outputs: outputs.clone(),
            },
        )?;
        if let Some(message) = behaviour.fail_create {
            return Err(Error::partial(
                message,
                PartialState {
                    id,
                    inputs: request.properties.into_map(),
                    outputs,
                },
            ));
        }
        with_bad_output(&behaviour, &mut outputs);
        Ok(CreateResult {
            id,
            outputs: outputs.into(),
        })
    }

    fn preview_create(&self, request: CreateRequest) -> Result<CreateResult> {
        behaviour(name_of(&request.urn))?;
        let mut outputs = strip_secrets(&request.properties);
        outputs.insert("out".into(), Value::Unknown);
        Ok(CreateResult {
            id: String::new(),
            outputs: outputs.into(),
        })
    }

    fn read(&self, request: ReadRequest) -> Result<ReadResult> {
        let behaviour = behaviour(name_of(&request.urn))?;
        if let Some(message) = behaviour.fail_read {
            return Err(Error::failed(message));
        }
        Ok(match load(&request.id)? {
            Some(entry) => ReadResult {
                id: request.id,
                inputs: entry.inputs.into(),
                outputs: entry.outputs.into(),
            },
            None => ReadResult::gone(),
        })
    }

    /// As the in-process provider: a failing update fails its preview too.
    fn preview_update(&self, request: UpdateRequest) -> Result<UpdateResult> {
        let behaviour = behaviour(name_of(&request.urn))?;
        if let Some(message) = behaviour.fail_update
            && behaviour.partial != Some(true)
        {
            return Err(Error::failed(message));
        }
        Ok(UpdateResult {
            outputs: updated_outputs(&request).into(),
        })
    }

    fn update(&self, request: UpdateRequest) -> Result<UpdateResult> {
        let behaviour = behaviour(name_of(&request.urn))?;
        if let Some(message) = &behaviour.fail_update
            && behaviour.partial != Some(true)
        {
            return Err(Error::failed(message.clone()));
        }
        let mut outputs = updated_outputs(&request);
        let Some(mut entry) = load(&request.id)? else {
            return Err(Error::failed(format!(
                "cannot update {}: no resource with ID {} exists",
                request.urn, request.id
            )));
        };
        entry.inputs = strip_secrets(&request.news);
        entry.outputs = outputs.clone();
        store(&request.id, &entry)?;
        if let Some(message) = behaviour.fail_update {
            return Err(Error::partial(
                message,
                PartialState {
                    id: request.id,
                    inputs: request.news.into_map(),
                    outputs,
                },
            ));
        }
        with_bad_output(&behaviour, &mut outputs);
        Ok(UpdateResult {
            outputs: outputs.into(),
        })
    }

    fn delete(&self, request: DeleteRequest) -> Result<()> {
        let behaviour = behaviour(name_of(&request.urn))?;
        if let Some(message) = behaviour.fail_delete {
            return Err(Error::failed(message));
        }
        match fs::remove_file(entry_path(&request.id)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error(&format!("deleting resource {}", request.id), e)),
        }
    }
}

cairn_sdk::export_provider!(TestProvider, manifest = "cairn.json");
