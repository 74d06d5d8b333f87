//! `lifecycle-test`: the lifecycle scenarios' test provider (package `test`) as a component.
//!
//! The provider's logic is cairn-test-provider's, the same as in process (`host/lifecycle`);
//! this crate is the component's side of it: SDK values, and a "cloud" in the granted
//! directory `/cloud`, which the harness fills before and reads back after each deployment.
//! Call recording, concurrency counting, delays and blocking stay on the host side (they observe
//! the engine, not the provider).
//!
//! Layout of `/cloud`:
//! * `resources/<id>.json` — `{name, type, inputs, outputs}`, plain JSON values (secrets
//!   `{"$secret": v}`, unknowns `"$unknown"`);
//! * `creates/<name>`, `generated/<name>` — counters behind IDs `<name>-<n>` and names
//!   `<name>-gen<n>` (one file per name, so concurrent instances never share a counter);
//! * `behaviour.json` — the deployment's behaviour (`ProviderSpec`).

use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;

use cairn_sdk::{
    CheckFailure, CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest,
    DiffRequest, DiffResult, Error, PartialState, PropertyDiff, PropertyMap, Provider, ReadRequest,
    ReadResult, Result, UpdateRequest, UpdateResult, Value,
};
use cairn_test_provider::{self as logic, Cloud, Counter, Entry, ProviderSpec};
use serde_json::Value as Json;

const CLOUD: &str = "/cloud";

#[derive(Default)]
pub struct TestProvider;

// The component's side of the test provider's logic: SDK values, the cloud in `/cloud`.
cairn_test_provider::adapter! {
    cloud: TestProvider,
    value: Value,
    unknown: Value::Unknown,
    unsecret: unsecret,
    error: Error,
    entry: |path, kind| PropertyDiff { path, kind, input_diff: true },
}

fn path(parts: &[&str]) -> PathBuf {
    let mut p = PathBuf::from(CLOUD);
    for part in parts {
        p.push(part);
    }
    p
}

fn entry_path(id: &str) -> PathBuf {
    path(&["resources", &format!("{id}.json")])
}

/// The contents of a file in the cloud; `None` when there is no such file.
fn read_file(file: PathBuf, what: &str) -> std::result::Result<Option<Vec<u8>>, String> {
    match fs::read(file) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("reading {what}: {e}")),
    }
}

/// Writes a file in the cloud, making its directory first.
fn write_file(dir: &[&str], file: &str, bytes: &[u8]) -> std::result::Result<(), String> {
    let dir = path(dir);
    fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    fs::write(dir.join(file), bytes).map_err(|e| format!("writing {file}: {e}"))
}

impl Cloud for TestProvider {
    fn behaviour(&self) -> std::result::Result<ProviderSpec, String> {
        match read_file(path(&["behaviour.json"]), "behaviour.json")? {
            Some(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("behaviour.json is malformed: {e}")),
            None => Ok(ProviderSpec::default()),
        }
    }

    fn next(&self, counter: Counter, name: &str) -> std::result::Result<u64, String> {
        let kind = counter.as_str();
        let current = match read_file(path(&[kind, name]), "a counter")? {
            Some(bytes) => String::from_utf8_lossy(&bytes)
                .trim()
                .parse::<u64>()
                .map_err(|e| format!("counter {kind}/{name}: {e}"))?,
            None => 0,
        };
        let n = current + 1;
        write_file(&[kind], name, n.to_string().as_bytes())?;
        Ok(n)
    }

    fn get(&self, id: &str) -> std::result::Result<Option<Entry<Value>>, String> {
        let Some(bytes) = read_file(entry_path(id), &format!("resource {id}"))? else {
            return Ok(None);
        };
        let json: Json = serde_json::from_slice(&bytes)
            .map_err(|e| format!("resource {id} is malformed: {e}"))?;
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

    fn put(&self, id: &str, entry: Entry<Value>) -> std::result::Result<(), String> {
        let json = serde_json::json!({
            "name": entry.name,
            "type": entry.resource_type,
            "inputs": to_json(&Value::Object(entry.inputs)),
            "outputs": to_json(&Value::Object(entry.outputs)),
        });
        write_file(
            &["resources"],
            &format!("{id}.json"),
            json.to_string().as_bytes(),
        )
    }

    fn remove(&self, id: &str) -> std::result::Result<(), String> {
        match fs::remove_file(entry_path(id)) {
            Err(e) if e.kind() != ErrorKind::NotFound => {
                Err(format!("deleting resource {id}: {e}"))
            }
            _ => Ok(()),
        }
    }
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

fn name_of(urn: &str) -> &str {
    cairn_sdk::urn::name(urn).unwrap_or(urn)
}

impl TestProvider {
    /// A create, or in a preview what it would return.
    fn created(&self, request: CreateRequest, preview: bool) -> Result<CreateResult> {
        let name = name_of(&request.urn);
        let resource_type = cairn_sdk::urn::resource_type(&request.urn).unwrap_or_default();
        let properties = request.inputs.into_map();
        let (id, outputs) =
            logic::create(self, name, resource_type, properties, preview).map_err(failure)?;
        Ok(CreateResult {
            id,
            outputs: outputs.into(),
        })
    }

    /// An update, or in a preview what it would return.
    fn updated(&self, request: UpdateRequest, preview: bool) -> Result<UpdateResult> {
        let (urn, id) = (&request.urn, &request.id);
        let news = request.inputs.into_map();
        logic::update(
            self,
            urn,
            name_of(urn),
            id,
            &request.old_outputs,
            news,
            preview,
        )
        .map(|outputs| UpdateResult {
            outputs: outputs.into(),
        })
        .map_err(failure)
    }
}

impl Provider for TestProvider {
    fn diff_config(&self, request: DiffRequest) -> Result<DiffResult> {
        logic::diff_config(self, &request.old_inputs, &request.inputs)
            .map(diff_result)
            .map_err(failure)
    }

    fn check(&self, request: CheckRequest) -> Result<CheckResult> {
        let name = name_of(&request.urn);
        let news = request.inputs.into_map();
        let (inputs, failures) =
            logic::check(self, name, &request.old_inputs, news).map_err(failure)?;
        Ok(CheckResult {
            inputs: inputs.into(),
            failures: failures
                .into_iter()
                .map(|f| CheckFailure::new(f.property, f.reason))
                .collect(),
        })
    }

    fn diff(&self, request: DiffRequest) -> Result<DiffResult> {
        logic::diff(
            self,
            name_of(&request.urn),
            &request.old_inputs,
            &request.inputs,
        )
        .map(diff_result)
        .map_err(failure)
    }

    fn create(&self, request: CreateRequest) -> Result<CreateResult> {
        self.created(request, false)
    }

    fn preview_create(&self, request: CreateRequest) -> Result<CreateResult> {
        self.created(request, true)
    }

    fn read(&self, request: ReadRequest) -> Result<ReadResult> {
        let entry = logic::read(self, name_of(&request.urn), &request.id).map_err(failure)?;
        Ok(entry.map_or_else(ReadResult::gone, |entry| ReadResult {
            id: request.id,
            inputs: entry.inputs.into(),
            outputs: entry.outputs.into(),
        }))
    }

    fn update(&self, request: UpdateRequest) -> Result<UpdateResult> {
        self.updated(request, false)
    }

    /// As in process: a failing update fails its preview too.
    fn preview_update(&self, request: UpdateRequest) -> Result<UpdateResult> {
        self.updated(request, true)
    }

    fn delete(&self, request: DeleteRequest) -> Result<()> {
        logic::delete(self, name_of(&request.urn), &request.id).map_err(failure)
    }
}

cairn_sdk::export_provider!(TestProvider, manifest = "cairn.json");
