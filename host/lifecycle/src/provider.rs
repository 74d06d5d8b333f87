//! The test provider (package `test`) in this process: [`World`], everything one scenario's
//! provider instances share (the in-memory "cloud", call records, behaviour); [`Instrumented`],
//! which records, delays and blocks calls around either side's logic; and [`InMemoryProvider`],
//! the adapter that runs the logic (cairn-test-provider) on engine values and the in-memory cloud.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::deploy::provider::{
    CheckFailure, CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest,
    DiffRequest, DiffResult, LoadError, NativePlugins, PartialState, PropertyDiff, Provider,
    ProviderError, ProviderLoader, ReadRequest, ReadResult, UpdateRequest, UpdateResult,
};
use cairn_engine::value::{PropertyMap, PropertyValue};
use cairn_test_provider::{self as logic, Cloud, Counter, Entry, ProviderSpec};
use indexmap::IndexMap;

pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One resource in the cloud.
pub type CloudEntry = Entry<PropertyValue>;

/// A map of the engine as the test provider's logic holds it (its own map type, shared with
/// the guest side).
pub fn to_cloud(map: &PropertyMap) -> logic::Map<PropertyValue> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A map of the test provider's logic as the engine holds it.
pub fn from_cloud(map: logic::Map<PropertyValue>) -> PropertyMap {
    map.into_iter().collect()
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
    /// The in-process cloud's counters (IDs `<name>-<n>`, names `<name>-gen<n>`).
    counters: Mutex<HashMap<(Counter, String), u64>>,
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

    fn record(&self, call: Call) {
        lock(&self.calls).push(call);
    }
}

// The in-process side of the test provider's logic: engine values, the cloud in memory.
cairn_test_provider::adapter! {
    cloud: World,
    value: PropertyValue,
    unknown: PropertyValue::Computed,
    unsecret: |value: &PropertyValue| value.clone().unsecret(),
    error: ProviderError,
    entry: |path, kind| (path, PropertyDiff { kind, input_diff: true }),
}

impl Cloud for World {
    fn behaviour(&self) -> Result<ProviderSpec, String> {
        Ok(lock(&self.behaviour).clone())
    }

    fn next(&self, counter: Counter, name: &str) -> Result<u64, String> {
        let mut counters = lock(&self.counters);
        let n = counters.entry((counter, name.to_owned())).or_default();
        *n += 1;
        Ok(*n)
    }

    fn get(&self, id: &str) -> Result<Option<CloudEntry>, String> {
        Ok(lock(&self.cloud).get(id).cloned())
    }

    fn put(&self, id: &str, entry: CloudEntry) -> Result<(), String> {
        lock(&self.cloud).insert(id.to_owned(), entry);
        Ok(())
    }

    fn remove(&self, id: &str) -> Result<(), String> {
        lock(&self.cloud).shift_remove(id);
        Ok(())
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
    /// Records a call of `method` about `name` with these properties.
    fn record(&self, method: &'static str, name: &str, news: &PropertyMap, olds: &PropertyMap) {
        self.world.record(Call {
            news: news.clone(),
            olds: olds.clone(),
            ..self.call(method, name)
        });
    }

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

    /// Runs a create, update or delete of resource `name`, counted in flight: first delayed or
    /// blocked, then, once it took effect, blocked or dying, as the behaviour says.
    async fn operate<T>(
        &self,
        method: &str,
        name: &str,
        operation: impl Future<Output = Result<T, ProviderError>>,
    ) -> Result<T, ProviderError> {
        let _in_flight = InFlight::enter(&self.world);
        let behaviour = lock(&self.world.behaviour).for_resource(name);
        if let Some(ms) = behaviour.delay_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        if behaviour.block.as_deref() == Some(method) {
            self.world.blocked.notify_one();
            futures::future::pending::<()>().await;
        }
        let result = operation.await;
        let behaviour = lock(&self.world.behaviour).for_resource(name);
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

    async fn check_config(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        *lock(&self.name) = request.urn.name().to_owned();
        self.record(
            "checkConfig",
            request.urn.name(),
            request.news,
            request.olds,
        );
        self.inner.check_config(request).await
    }

    async fn diff_config(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        self.record(
            "diffConfig",
            request.urn.name(),
            request.news,
            request.old_inputs,
        );
        self.inner.diff_config(request).await
    }

    async fn configure(&self, inputs: PropertyMap, preview: bool) -> Result<(), ProviderError> {
        *lock(&self.config) = inputs.clone();
        let name = lock(&self.name).clone();
        let name = if name.is_empty() { "?" } else { &name };
        self.world.record(Call {
            preview,
            news: inputs.clone(),
            ..self.call("configure", name)
        });
        self.inner.configure(inputs, preview).await
    }

    async fn check(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        self.record("check", request.urn.name(), request.news, request.olds);
        self.inner.check(request).await
    }

    async fn diff(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        self.record("diff", request.urn.name(), request.news, request.old_inputs);
        self.inner.diff(request).await
    }

    async fn create(&self, request: CreateRequest) -> Result<CreateResult, ProviderError> {
        let name = request.urn.name().to_owned();
        self.world.record(Call {
            preview: request.preview,
            timeout: request.timeout,
            news: request.properties.clone(),
            ..self.call("create", &name)
        });
        let create = self.inner.create(request);
        self.operate("create", &name, create).await
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResult, ProviderError> {
        self.record("read", request.urn.name(), &request.inputs, &request.state);
        self.inner.read(request).await
    }

    async fn update(&self, request: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        let name = request.urn.name().to_owned();
        self.world.record(Call {
            preview: request.preview,
            timeout: request.timeout,
            news: request.news.clone(),
            olds: request.old_inputs.clone(),
            ..self.call("update", &name)
        });
        let update = self.inner.update(request);
        self.operate("update", &name, update).await
    }

    async fn delete(&self, request: DeleteRequest) -> Result<(), ProviderError> {
        let name = request.urn.name().to_owned();
        self.world.record(Call {
            timeout: request.timeout,
            olds: request.inputs.clone(),
            ..self.call("delete", &name)
        });
        let delete = self.inner.delete(request);
        self.operate("delete", &name, delete).await
    }

    async fn cancel(&self) {
        self.world.record(self.call("cancel", ""));
        self.inner.cancel().await;
    }
}

/// The test provider's logic in process: the adapter from the engine's provider types to
/// cairn-test-provider, with [`World`] as the cloud.
pub struct InMemoryProvider {
    world: Arc<World>,
}

#[async_trait]
impl Provider for InMemoryProvider {
    fn package(&self) -> &str {
        "test"
    }

    async fn diff_config(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        logic::diff_config(
            &*self.world,
            &to_cloud(request.old_inputs),
            &to_cloud(request.news),
        )
        .map(diff_result)
        .map_err(failure)
    }

    async fn configure(&self, _: PropertyMap, _: bool) -> Result<(), ProviderError> {
        Ok(())
    }

    async fn check(&self, request: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        let name = request.urn.name();
        let (inputs, failures) = logic::check(
            &*self.world,
            name,
            &to_cloud(request.olds),
            to_cloud(request.news),
        )
        .map_err(failure)?;
        let failures = failures
            .into_iter()
            .map(|f| CheckFailure {
                property: f.property,
                reason: f.reason,
            })
            .collect();
        Ok(CheckResult {
            inputs: from_cloud(inputs),
            failures,
        })
    }

    async fn diff(&self, request: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        let name = request.urn.name();
        logic::diff(
            &*self.world,
            name,
            &to_cloud(request.old_inputs),
            &to_cloud(request.news),
        )
        .map(diff_result)
        .map_err(failure)
    }

    async fn create(&self, request: CreateRequest) -> Result<CreateResult, ProviderError> {
        let urn = &request.urn;
        let (id, outputs) = logic::create(
            &*self.world,
            urn.name(),
            urn.resource_type(),
            to_cloud(&request.properties),
            request.preview,
        )
        .map_err(failure)?;
        Ok(CreateResult {
            id,
            outputs: from_cloud(outputs),
        })
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResult, ProviderError> {
        let entry = logic::read(&*self.world, request.urn.name(), &request.id).map_err(failure)?;
        Ok(entry.map_or_else(ReadResult::default, |entry| ReadResult {
            id: request.id,
            inputs: from_cloud(entry.inputs),
            outputs: from_cloud(entry.outputs),
        }))
    }

    async fn update(&self, request: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        let urn = &request.urn;
        let outputs = logic::update(
            &*self.world,
            &urn.to_string(),
            urn.name(),
            &request.id,
            &to_cloud(&request.old_outputs),
            to_cloud(&request.news),
            request.preview,
        )
        .map_err(failure)?;
        Ok(UpdateResult {
            outputs: from_cloud(outputs),
        })
    }

    async fn delete(&self, request: DeleteRequest) -> Result<(), ProviderError> {
        logic::delete(&*self.world, request.urn.name(), &request.id).map_err(failure)
    }
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
    pub info: cairn_engine::deploy::analyzer::AnalyzerInfo,
}

impl PolicyPack {
    pub fn new(policies: Vec<crate::scenario::PolicySpec>) -> PolicyPack {
        PolicyPack {
            policies,
            info: cairn_engine::deploy::analyzer::AnalyzerInfo {
                name: "test-policies".into(),
                version: "0.0.1".into(),
                ..Default::default()
            },
        }
    }
}

#[async_trait::async_trait]
impl cairn_engine::deploy::analyzer::Analyzer for PolicyPack {
    fn info(&self) -> &cairn_engine::deploy::analyzer::AnalyzerInfo {
        &self.info
    }

    async fn analyze(
        &self,
        resource: &cairn_engine::deploy::analyzer::AnalyzedResource<'_>,
    ) -> Result<
        Vec<cairn_engine::deploy::analyzer::Violation>,
        cairn_engine::deploy::analyzer::AnalyzerError,
    > {
        use cairn_engine::deploy::analyzer::{AnalyzerError, Enforcement, Violation};
        let mut out = Vec::new();
        for policy in &self.policies {
            let forbidden = crate::values::from_yaml(&policy.equals).map_err(AnalyzerError)?;
            if resource.properties.get(&policy.property) == Some(&forbidden) {
                out.push(Violation {
                    policy: policy.policy.clone(),
                    description: String::new(),
                    message: format!("{} must not be {:?}", policy.property, forbidden),
                    enforcement: if policy.enforcement == "mandatory" {
                        Enforcement::Mandatory
                    } else {
                        Enforcement::Advisory
                    },
                    urn: None,
                    severity: None,
                });
            }
        }
        Ok(out)
    }
}
