//! The test provider (package `test`): generic resources backed by an in-memory "cloud", with
//! per-scenario behaviour, and a log of every call it receives.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::deploy::provider::{
    CheckFailure, CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest,
    DiffChanges, DiffKind, DiffRequest, DiffResult, LoadError, NativePlugins, PartialState,
    PropertyDiff, Provider, ProviderError, ProviderLoader, ReadRequest, ReadResult, UpdateRequest,
    UpdateResult,
};
use cairn_engine::value::{PropertyMap, PropertyValue};
use indexmap::IndexMap;

use crate::scenario::{Behaviour, ProviderSpec};

pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One resource in the cloud.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudEntry {
    pub name: String,
    pub resource_type: String,
    pub inputs: PropertyMap,
    pub outputs: PropertyMap,
}

/// One call the provider received.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: &'static str,
    /// The resource's name (URN name), or the provider's for config methods.
    pub name: String,
    pub preview: bool,
    pub timeout: f64,
    /// The configuration of the instance that received the call.
    pub config: PropertyMap,
    pub news: PropertyMap,
    pub olds: PropertyMap,
}

impl Call {
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.name)
    }
}

/// Everything the provider instances of one scenario share.
#[derive(Default)]
pub struct World {
    pub cloud: Mutex<IndexMap<String, CloudEntry>>,
    pub calls: Mutex<Vec<Call>>,
    pub behaviour: Mutex<ProviderSpec>,
    /// Creates per resource name (IDs are `<name>-<n>`).
    creates: Mutex<HashMap<String, u64>>,
    /// Generated names per resource name.
    generated: Mutex<HashMap<String, u64>>,
    in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    /// Signalled when an operation blocks for good (`block`).
    pub blocked: tokio::sync::Notify,
    /// Signalled when a create, update or delete starts (`interrupt`).
    pub started: tokio::sync::Notify,
    pub loads: Mutex<Vec<String>>,
}

impl World {
    /// Prepares for the next deployment: its behaviour, and fresh call records.
    pub fn start_deployment(&self, behaviour: ProviderSpec) {
        *lock(&self.behaviour) = behaviour;
        lock(&self.calls).clear();
        lock(&self.loads).clear();
        self.in_flight.store(0, Ordering::SeqCst);
        self.max_in_flight.store(0, Ordering::SeqCst);
    }

    fn behaviour(&self, name: &str) -> Behaviour {
        lock(&self.behaviour).for_resource(name)
    }

    fn record(&self, call: Call) {
        lock(&self.calls).push(call);
    }
}

/// Leaves the in-flight count when dropped (also when the operation is cancelled).
struct InFlight<'a>(&'a World);

impl<'a> InFlight<'a> {
    fn enter(world: &'a World) -> InFlight<'a> {
        let now = world
            .in_flight
            .fetch_add(1, Ordering::SeqCst)
            .wrapping_add(1);
        world.max_in_flight.fetch_max(now, Ordering::SeqCst);
        world.started.notify_one();
        InFlight(world)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

fn strip_secrets(map: &PropertyMap) -> PropertyMap {
    map.iter()
        .map(|(k, v)| (k.clone(), v.clone().unsecret()))
        .collect()
}

/// Top-level keys whose values differ (an unknown new value always differs).
fn changed_keys(olds: &PropertyMap, news: &PropertyMap) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for (key, new) in news {
        let differs = match olds.get(key) {
            None => true,
            Some(old) => {
                new.contains_unknowns() || old.clone().unsecret() != new.clone().unsecret()
            }
        };
        if differs {
            keys.push(key.clone());
        }
    }
    for key in olds.keys() {
        if !news.contains_key(key) {
            keys.push(key.clone());
        }
    }
    keys
}

/// The changed paths between two values, as a detailed diff reports them: objects and arrays
/// are compared element by element (`tags.env`, `ports[0]`), anything else as a whole.
fn changed_paths(
    prefix: &str,
    old: Option<&PropertyValue>,
    new: Option<&PropertyValue>,
    out: &mut Vec<(String, DiffKind)>,
) {
    let join_key = |key: &str| {
        if prefix.is_empty() {
            key.to_owned()
        } else {
            format!("{prefix}.{key}")
        }
    };
    match (old, new) {
        (None, None) => {}
        (None, Some(_)) => out.push((prefix.to_owned(), DiffKind::Add)),
        (Some(_), None) => out.push((prefix.to_owned(), DiffKind::Delete)),
        (Some(PropertyValue::Object(o)), Some(PropertyValue::Object(n))) => {
            for key in o.keys().chain(n.keys().filter(|k| !o.contains_key(*k))) {
                changed_paths(&join_key(key), o.get(key), n.get(key), out);
            }
        }
        (Some(PropertyValue::Array(o)), Some(PropertyValue::Array(n))) => {
            for i in 0..o.len().max(n.len()) {
                changed_paths(&format!("{prefix}[{i}]"), o.get(i), n.get(i), out);
            }
        }
        (Some(o), Some(n)) => {
            if n.contains_unknowns() || o.clone().unsecret() != n.clone().unsecret() {
                out.push((prefix.to_owned(), DiffKind::Update));
            }
        }
    }
}

/// Where the test provider's logic runs.
#[derive(Clone)]
pub enum Backend {
    /// [`InMemoryProvider`], in the test process.
    InProcess,
    /// The `lifecycle-test` component (tests/guests), sandboxed, with the cloud in a granted
    /// directory (see [`crate::wasm`]).
    Wasm(Arc<crate::wasm::WasmBackend>),
}

/// What every test provider instance does whatever runs its logic: records each call, counts
/// operations in flight, and delays or blocks them as the behaviour says. These observe the
/// engine, so they stay on the host side for the wasm backend too.
pub struct Instrumented {
    world: Arc<World>,
    inner: Arc<dyn Provider>,
    version: Option<semver::Version>,
    config: Mutex<PropertyMap>,
    /// The provider resource's name, once CheckConfig told it.
    name: Mutex<String>,
}

impl Instrumented {
    fn call(&self, method: &'static str, name: &str) -> Call {
        Call {
            method,
            name: name.to_owned(),
            preview: false,
            timeout: 0.0,
            config: lock(&self.config).clone(),
            news: PropertyMap::new(),
            olds: PropertyMap::new(),
        }
    }

    /// Delay or block as the behaviour says.
    async fn perform(&self, method: &str, name: &str) {
        let behaviour = self.world.behaviour(name);
        if let Some(ms) = behaviour.delay_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        if behaviour.block.as_deref() == Some(method) {
            self.world.blocked.notify_one();
            futures::future::pending::<()>().await;
        }
    }

    /// After the operation took effect: block, or die, as the behaviour says.
    async fn performed<T>(
        &self,
        method: &str,
        name: &str,
        result: Result<T, ProviderError>,
    ) -> Result<T, ProviderError> {
        let behaviour = self.world.behaviour(name);
        if result.is_ok() && behaviour.block_after.as_deref() == Some(method) {
            self.world.blocked.notify_one();
            futures::future::pending::<()>().await;
        }
        if result.is_ok() && behaviour.die_after.as_deref() == Some(method) {
            return Err(ProviderError::outcome_unknown(format!(
                "test@1.0.0 {method}: the provider process exited"
            )));
        }
        result
    }
}

#[async_trait]
impl Provider for Instrumented {
    fn package(&self) -> &str {
        "test"
    }

    fn version(&self) -> Option<semver::Version> {
        self.version.clone()
    }

    async fn check_config(&self, request: CheckRequest) -> Result<CheckResult, ProviderError> {
        *lock(&self.name) = request.urn.name().to_owned();
        let mut call = self.call("checkConfig", request.urn.name());
        call.news = request.news.clone();
        call.olds = request.olds.clone();
        self.world.record(call);
        self.inner.check_config(request).await
    }

    async fn diff_config(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        let mut call = self.call("diffConfig", request.urn.name());
        call.news = request.news.clone();
        call.olds = request.old_inputs.clone();
        self.world.record(call);
        self.inner.diff_config(request).await
    }

    async fn configure(&self, inputs: PropertyMap, preview: bool) -> Result<(), ProviderError> {
        *lock(&self.config) = inputs.clone();
        let name = lock(&self.name).clone();
        let mut call = self.call("configure", if name.is_empty() { "?" } else { &name });
        call.preview = preview;
        call.news = inputs.clone();
        self.world.record(call);
        self.inner.configure(inputs, preview).await
    }

    async fn check(&self, request: CheckRequest) -> Result<CheckResult, ProviderError> {
        let mut call = self.call("check", request.urn.name());
        call.news = request.news.clone();
        call.olds = request.olds.clone();
        self.world.record(call);
        self.inner.check(request).await
    }

    async fn diff(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        let mut call = self.call("diff", request.urn.name());
        call.news = request.news.clone();
        call.olds = request.old_inputs.clone();
        self.world.record(call);
        self.inner.diff(request).await
    }

    async fn create(&self, request: CreateRequest) -> Result<CreateResult, ProviderError> {
        let mut call = self.call("create", request.urn.name());
        call.preview = request.preview;
        call.timeout = request.timeout;
        call.news = request.properties.clone();
        self.world.record(call);
        let _in_flight = InFlight::enter(&self.world);
        let name = request.urn.name().to_owned();
        self.perform("create", &name).await;
        let result = self.inner.create(request).await;
        self.performed("create", &name, result).await
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResult, ProviderError> {
        let mut call = self.call("read", request.urn.name());
        call.news = request.inputs.clone();
        call.olds = request.state.clone();
        self.world.record(call);
        self.inner.read(request).await
    }

    async fn update(&self, request: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        let mut call = self.call("update", request.urn.name());
        call.preview = request.preview;
        call.timeout = request.timeout;
        call.news = request.news.clone();
        call.olds = request.old_inputs.clone();
        self.world.record(call);
        let _in_flight = InFlight::enter(&self.world);
        let name = request.urn.name().to_owned();
        self.perform("update", &name).await;
        let result = self.inner.update(request).await;
        self.performed("update", &name, result).await
    }

    async fn delete(&self, request: DeleteRequest) -> Result<(), ProviderError> {
        let mut call = self.call("delete", request.urn.name());
        call.timeout = request.timeout;
        call.olds = request.inputs.clone();
        self.world.record(call);
        let _in_flight = InFlight::enter(&self.world);
        let name = request.urn.name().to_owned();
        self.perform("delete", &name).await;
        let result = self.inner.delete(request).await;
        self.performed("delete", &name, result).await
    }

    async fn cancel(&self) {
        self.world.record(self.call("cancel", ""));
        self.inner.cancel().await;
    }
}

/// The test provider's logic, in process: generic resources in [`World::cloud`].
pub struct InMemoryProvider {
    world: Arc<World>,
}

#[async_trait]
impl Provider for InMemoryProvider {
    fn package(&self) -> &str {
        "test"
    }

    async fn check_config(&self, request: CheckRequest) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: request.news,
            failures: vec![],
        })
    }

    async fn diff_config(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        let replace_on = lock(&self.world.behaviour)
            .config_replace_keys
            .clone()
            .unwrap_or_else(|| vec!["region".to_owned()]);
        let changed = changed_keys(request.old_inputs, request.news);
        let replace: Vec<String> = changed
            .iter()
            .filter(|k| replace_on.contains(k))
            .cloned()
            .collect();
        Ok(DiffResult {
            changes: if changed.is_empty() {
                DiffChanges::None
            } else {
                DiffChanges::Some
            },
            replace_keys: replace,
            changed_keys: changed,
            ..DiffResult::default()
        })
    }

    async fn configure(&self, inputs: PropertyMap, preview: bool) -> Result<(), ProviderError> {
        let _ = (inputs, preview);
        Ok(())
    }

    async fn check(&self, request: CheckRequest) -> Result<CheckResult, ProviderError> {
        let name = request.urn.name().to_owned();
        let behaviour = self.world.behaviour(&name);
        if let Some(failures) = &behaviour.check_failures {
            return Ok(CheckResult {
                inputs: request.news,
                failures: failures
                    .iter()
                    .map(|f| CheckFailure {
                        property: f.property.clone(),
                        reason: f.reason.clone(),
                    })
                    .collect(),
            });
        }
        let mut inputs = request.news;
        if behaviour.auto_name == Some(true) && !inputs.contains_key("name") {
            let generated = match request.olds.get("name") {
                Some(old) => old.clone(),
                None => {
                    let mut counters = lock(&self.world.generated);
                    let n = counters.entry(name.clone()).or_default();
                    *n += 1;
                    PropertyValue::String(format!("{name}-gen{n}"))
                }
            };
            inputs.insert("name".into(), generated);
        }
        Ok(CheckResult {
            inputs,
            failures: vec![],
        })
    }

    async fn diff(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        let name = request.urn.name().to_owned();
        let behaviour = self.world.behaviour(&name);
        let changed = changed_keys(request.old_inputs, request.news);
        let replace_on = behaviour.replace_on.clone().unwrap_or_default();
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
        let mut paths = Vec::new();
        for key in request.old_inputs.keys().chain(
            request
                .news
                .keys()
                .filter(|k| !request.old_inputs.contains_key(*k)),
        ) {
            changed_paths(
                key,
                request.old_inputs.get(key),
                request.news.get(key),
                &mut paths,
            );
        }
        let detailed: IndexMap<String, PropertyDiff> = paths
            .into_iter()
            .map(|(path, kind)| {
                let top = path.split(['.', '[']).next().unwrap_or_default();
                let kind = if replace.iter().any(|k| k == top) {
                    kind.with_replace()
                } else {
                    kind
                };
                (
                    path,
                    PropertyDiff {
                        kind,
                        input_diff: true,
                    },
                )
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

    async fn create(&self, request: CreateRequest) -> Result<CreateResult, ProviderError> {
        let name = request.urn.name().to_owned();
        let behaviour = self.world.behaviour(&name);
        let mut outputs = strip_secrets(&request.properties);
        if request.preview {
            outputs.insert("out".into(), PropertyValue::Computed);
            return Ok(CreateResult {
                id: String::new(),
                outputs,
            });
        }
        if let Some(message) = &behaviour.fail_create
            && behaviour.partial != Some(true)
        {
            return Err(ProviderError::failed(message.clone()));
        }
        let n = {
            let mut creates = lock(&self.world.creates);
            let n = creates.entry(name.clone()).or_default();
            *n += 1;
            *n
        };
        let id = format!("{name}-{n}");
        outputs.insert(
            "out".into(),
            PropertyValue::String(format!("{name}-out-{n}")),
        );
        lock(&self.world.cloud).insert(
            id.clone(),
            CloudEntry {
                name: name.clone(),
                resource_type: request.urn.resource_type().to_owned(),
                inputs: strip_secrets(&request.properties),
                outputs: outputs.clone(),
            },
        );
        if let Some(message) = &behaviour.fail_create {
            return Err(ProviderError::Failed {
                message: message.clone(),
                partial: Some(Box::new(PartialState {
                    id,
                    inputs: request.properties,
                    outputs,
                })),
            });
        }
        with_bad_output(&behaviour, &mut outputs);
        Ok(CreateResult { id, outputs })
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResult, ProviderError> {
        let name = request.urn.name().to_owned();
        let behaviour = self.world.behaviour(&name);
        if let Some(message) = &behaviour.fail_read {
            return Err(ProviderError::failed(message.clone()));
        }
        Ok(match lock(&self.world.cloud).get(&request.id) {
            Some(entry) => ReadResult {
                id: request.id.clone(),
                inputs: entry.inputs.clone(),
                outputs: entry.outputs.clone(),
            },
            None => ReadResult::default(),
        })
    }

    async fn update(&self, request: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        let name = request.urn.name().to_owned();
        let behaviour = self.world.behaviour(&name);
        if let Some(message) = &behaviour.fail_update
            && behaviour.partial != Some(true)
        {
            return Err(ProviderError::failed(message.clone()));
        }
        let mut outputs = strip_secrets(&request.news);
        let out = request
            .old_outputs
            .get("out")
            .cloned()
            .unwrap_or(PropertyValue::Computed)
            .unsecret();
        outputs.insert("out".into(), out);
        if request.preview {
            return Ok(UpdateResult { outputs });
        }
        let mut cloud = lock(&self.world.cloud);
        let Some(entry) = cloud.get_mut(&request.id) else {
            return Err(ProviderError::failed(format!(
                "cannot update {}: no resource with ID {} exists",
                request.urn, request.id
            )));
        };
        entry.inputs = strip_secrets(&request.news);
        entry.outputs = outputs.clone();
        if let Some(message) = &behaviour.fail_update {
            return Err(ProviderError::Failed {
                message: message.clone(),
                partial: Some(Box::new(PartialState {
                    id: request.id.clone(),
                    inputs: request.news,
                    outputs,
                })),
            });
        }
        with_bad_output(&behaviour, &mut outputs);
        Ok(UpdateResult { outputs })
    }

    async fn delete(&self, request: DeleteRequest) -> Result<(), ProviderError> {
        let name = request.urn.name().to_owned();
        let behaviour = self.world.behaviour(&name);
        if let Some(message) = &behaviour.fail_delete {
            return Err(ProviderError::failed(message.clone()));
        }
        lock(&self.world.cloud).shift_remove(&request.id);
        Ok(())
    }
}

/// Adds the output `bad` a behaviour asks for (`nan`, `inf`): a number no state can store.
fn with_bad_output(behaviour: &Behaviour, outputs: &mut PropertyMap) {
    let bad = match behaviour.bad_output.as_deref() {
        Some("nan") => f64::NAN,
        Some("inf") => f64::INFINITY,
        _ => return,
    };
    outputs.insert("bad".into(), PropertyValue::Number(bad));
}

/// Loads the test provider for package `test` (any version), its logic on `backend`.
pub struct TestLoader {
    pub world: Arc<World>,
    pub backend: Backend,
}

#[async_trait]
impl ProviderLoader for TestLoader {
    async fn load(
        &self,
        package: &str,
        version: Option<&semver::Version>,
        _: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        lock(&self.world.loads).push(match version {
            Some(v) => format!("{package}@{v}"),
            None => package.to_owned(),
        });
        if package != "test" {
            return Err(LoadError::NotFound {
                package: package.to_owned(),
                version: version.map(ToString::to_string),
            });
        }
        let inner: Arc<dyn Provider> = match &self.backend {
            Backend::InProcess => Arc::new(InMemoryProvider {
                world: self.world.clone(),
            }),
            Backend::Wasm(wasm) => Arc::new(wasm.instantiate().await?),
        };
        Ok(Arc::new(Instrumented {
            world: self.world.clone(),
            inner,
            version: version.cloned(),
            config: Mutex::new(PropertyMap::new()),
            name: Mutex::new(String::new()),
        }))
    }
}

/// The scenario's analyzer: flags resources whose input equals a forbidden value.
pub struct PolicyPack {
    pub policies: Vec<crate::scenario::PolicySpec>,
}

#[async_trait::async_trait]
impl cairn_engine::deploy::analyzer::Analyzer for PolicyPack {
    fn name(&self) -> &str {
        "test-policies"
    }

    async fn analyze(
        &self,
        _urn: &cairn_engine::Urn,
        _resource_type: &cairn_engine::TypeToken,
        inputs: &cairn_engine::PropertyMap,
    ) -> Result<Vec<cairn_engine::deploy::analyzer::Violation>, String> {
        use cairn_engine::deploy::analyzer::{Enforcement, Violation};
        let mut out = Vec::new();
        for policy in &self.policies {
            let forbidden = crate::values::from_yaml(&policy.equals)?;
            if inputs.get(&policy.property) == Some(&forbidden) {
                out.push(Violation {
                    policy: policy.policy.clone(),
                    message: format!("{} must not be {:?}", policy.property, forbidden),
                    enforcement: if policy.enforcement == "mandatory" {
                        Enforcement::Mandatory
                    } else {
                        Enforcement::Advisory
                    },
                });
            }
        }
        Ok(out)
    }
}
