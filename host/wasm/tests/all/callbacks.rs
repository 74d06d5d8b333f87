//! Engine callbacks against an attacker: a hostile component provider (`hostile-construct`)
//! tries every way out of its component, and programs send references to resources that were
//! never registered. Each case asserts the exact error, that nothing outside was touched or
//! leaked, that the state passes its integrity check, and that the next deployment works.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::deploy::events::{EngineEvent, EventSink};
use cairn_engine::deploy::journal::{PersistError, Persister, SnapshotManager};
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{
    Alias, Program, ProgramCallRequest, ProgramError, RegisterResourceRequest, ResourceOptions,
};
use cairn_engine::deploy::provider::{
    CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest, DiffRequest, DiffResult,
    LoadError, NativePlugins, Provider, ProviderError, ProviderLoader, ProviderOrigin, ReadRequest,
    ReadResult, UpdateRequest, UpdateResult,
};
use cairn_engine::deploy::{DeployError, Deployment, DeploymentOptions};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::state::{
    DeploymentV3, Manifest, SecretsMode, Snapshot, decode_deployment, encode_deployment,
    verify_integrity,
};
use cairn_engine::{PropertyMap, PropertyValue, TypeToken, Urn};
use cairn_wasm::{Grants, WasmLoader, events_log_sink};
use serde_json::{Value, json};

use crate::support::*;

const COMPONENT: &str = "hostile-construct:index:Comp";
const ROOT: &str = "urn:pulumi:test::proj::pulumi:pulumi:Stack::proj-test";

/// Keeps the last checkpoint saved, as a backend would.
#[derive(Default)]
struct Saved(Mutex<Option<DeploymentV3>>);

impl Persister for Saved {
    fn append(&self, _lines: &[u8]) -> Result<(), PersistError> {
        Ok(())
    }
    fn save(&self, deployment: &[u8]) -> Result<(), PersistError> {
        *self.0.lock().unwrap() = Some(serde_json::from_slice(deployment).unwrap());
        Ok(())
    }
}

/// A stand-in secrets manager that marks what it "encrypts".
struct Marked;

impl Crypter for Marked {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        Ok(format!("enc:{plaintext}"))
    }
    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        Ok(ciphertext.trim_start_matches("enc:").to_owned())
    }
}

#[derive(Default)]
struct Events(Mutex<Vec<EngineEvent>>);

impl EventSink for Events {
    fn emit(&self, event: EngineEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Events {
    fn text(&self) -> String {
        format!("{:?}", self.0.lock().unwrap())
    }
}

/// One declaration of a scripted program.
#[derive(Clone)]
struct Declare {
    request: RegisterResourceRequest,
    /// The error this registration must fail with (substrings), or `None` if it must succeed.
    fails_with: Option<Vec<String>>,
}

/// Registers its declarations one after another and checks each outcome.
struct Script(Vec<Declare>);

#[async_trait]
impl Program for Script {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        for declare in &self.0 {
            let name = declare.request.name.clone();
            let outcome = monitor.register_resource(declare.request.clone()).await;
            match (&declare.fails_with, outcome) {
                (None, Ok(_)) => {}
                (None, Err(e)) => panic!("registering {name} failed: {e}"),
                (Some(needles), Err(e)) => {
                    let message = e.to_string();
                    for needle in needles {
                        assert!(
                            message.contains(needle.as_str()),
                            "registering {name}: {message:?}\n  does not contain {needle:?}"
                        );
                    }
                }
                (Some(_), Ok(r)) => panic!("registering {name} succeeded: {r:?}"),
            }
        }
        Ok(())
    }
}

fn token(t: &str) -> TypeToken {
    TypeToken::parse(t).unwrap()
}

fn ok(request: RegisterResourceRequest) -> Declare {
    Declare {
        request,
        fails_with: None,
    }
}

fn refused(request: RegisterResourceRequest, needles: &[&str]) -> Declare {
    Declare {
        request,
        fails_with: Some(needles.iter().map(|s| s.to_string()).collect()),
    }
}

/// The program: its own resources (a secret password at the stack's root, a local component,
/// an explicit `random` provider it keeps to itself), then the hostile component, then a local
/// component of the hostile one's type with a secret child (so the child's URN is one the
/// hostile component could name as its own).
fn program(hostile: Declare) -> Vec<Declare> {
    let decoy = RegisterResourceRequest::component(token(COMPONENT), "decoy");
    let decoy_child = RegisterResourceRequest {
        parent: Some(Urn::parse(&format!("urn:pulumi:test::proj::{COMPONENT}::decoy")).unwrap()),
        ..RegisterResourceRequest::custom(
            token("random:index/randomPassword:RandomPassword"),
            "decoy-secret",
            map(json!({"length": 24})),
        )
    };
    let mut all = victims();
    all.push(hostile);
    all.push(ok(decoy));
    all.push(ok(decoy_child));
    all
}

fn victims() -> Vec<Declare> {
    vec![
        ok(RegisterResourceRequest::custom(
            token("random:index/randomPassword:RandomPassword"),
            "victim",
            map(json!({"length": 24})),
        )),
        ok(RegisterResourceRequest::component(
            token("app:index:Group"),
            "group",
        )),
        ok(RegisterResourceRequest::custom(
            token("pulumi:providers:random"),
            "own",
            PropertyMap::new(),
        )),
    ]
}

fn hostile(inputs: Value) -> RegisterResourceRequest {
    RegisterResourceRequest {
        remote: true,
        inputs: map(inputs),
        ..RegisterResourceRequest::component(token(COMPONENT), "evil")
    }
}

/// A benign construct: the component and a `random` child.
fn benign() -> RegisterResourceRequest {
    hostile(json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "kid"}]}))
}

fn deploy_with(
    base: Snapshot,
    program: Arc<dyn Program>,
    loader: Arc<dyn ProviderLoader>,
    native: NativePlugins,
    events: Arc<Events>,
) -> (Result<(), DeployError>, Snapshot) {
    let saved = Arc::new(Saved::default());
    let mut manifest = Manifest::new();
    manifest.time = format!("{}-{}", manifest.time, sequence());
    let journal = Arc::new(
        SnapshotManager::new(base, manifest, Some(saved.clone()), Arc::new(Marked)).unwrap(),
    );
    let mut options = DeploymentOptions::new("proj", "test");
    options.native_plugins = native;
    let deployment = Deployment::new(options, loader, events, journal).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(deployment.update(program)).map(|_| ());
    let stored = saved
        .0
        .lock()
        .unwrap()
        .clone()
        .expect("a checkpoint is saved");
    let snapshot = decode_deployment(stored, Some(&Marked)).expect("the checkpoint decodes");
    verify_integrity(&snapshot).unwrap_or_else(|e| panic!("{e}"));
    // What was saved encodes and decodes back to itself.
    let again = encode_deployment(&snapshot, SecretsMode::Encrypt(&Marked)).unwrap();
    assert_eq!(decode_deployment(again, Some(&Marked)).unwrap(), snapshot);
    (result, snapshot)
}

/// A number unique in this test binary, to give each deployment its own manifest.
fn sequence() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

fn wasm_loader(events: &Arc<Events>) -> WasmLoader {
    WasmLoader::new(
        runtime().clone(),
        Grants::none(),
        events_log_sink(events.clone()),
    )
    .with_local_plugin(wasm("random"))
    .unwrap()
    .with_local_plugin(wasm("hostile-construct"))
    .unwrap()
}

fn deploy(base: Snapshot, program: Vec<Declare>) -> (Result<(), DeployError>, Snapshot, String) {
    let events = Arc::new(Events::default());
    let loader = Arc::new(wasm_loader(&events));
    let (result, snapshot) = deploy_with(
        base,
        Arc::new(Script(program)),
        loader,
        NativePlugins::ProjectNamed,
        events.clone(),
    );
    (result, snapshot, events.text())
}

/// The stack after a first deployment of the program with a benign hostile component.
fn base() -> Snapshot {
    let (result, snapshot, _) = deploy(Snapshot::empty(None), program(ok(benign())));
    result.unwrap_or_else(|e| panic!("{e}"));
    snapshot
}

fn find<'a>(snapshot: &'a Snapshot, name: &str) -> &'a cairn_engine::state::ResourceState {
    snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == name && !r.delete)
        .unwrap_or_else(|| panic!("{name} is not in the state"))
}

fn secret_of(snapshot: &Snapshot, name: &str) -> String {
    match &find(snapshot, name).outputs["result"] {
        PropertyValue::Secret(inner) => inner.as_str().unwrap().to_owned(),
        other => panic!("the password of {name} is not secret: {other:?}"),
    }
}

/// The construct's violation message, with the URN at fault.
fn violation(detail: &str) -> Vec<String> {
    vec![
        format!(
            "constructing urn:pulumi:test::proj::{COMPONENT}::evil failed: hostile-construct@0.1.0 construct of urn:pulumi:test::proj::{COMPONENT}::evil was refused: "
        ),
        detail.to_owned(),
    ]
}

#[test]
fn a_construct_cannot_reach_outside_its_component() {
    let base = base();
    let secrets = [secret_of(&base, "victim"), secret_of(&base, "decoy-secret")];
    let own = find(&base, "own");
    let own_reference = format!("{}::{}", own.urn, own.id.clone().unwrap());
    let group = find(&base, "group").urn.to_string();
    let victim = find(&base, "victim").urn.to_string();
    let child = |name: &str| {
        format!("urn:pulumi:test::proj::{COMPONENT}$random:index/randomPet:RandomPet::{name}")
    };
    let ghost = child("ghost");
    let kid = child("kid");
    let decoy_secret = format!(
        "urn:pulumi:test::proj::{COMPONENT}$random:index/randomPassword:RandomPassword::decoy-secret"
    );

    // (case, construct inputs, expected error parts)
    let cases: Vec<(&str, Value, Vec<String>)> = vec![
        (
            "takes over a resource at the stack's root",
            json!({"steps": [{"type": "random:index/randomPassword:RandomPassword", "name": "victim", "parent": "$root", "inputs": {"length": 24}}]}),
            violation(&format!(
                "it registered {victim} with parent {ROOT}, outside the component"
            )),
        ),
        (
            "takes over the state of another component's child of the same URN",
            json!({"steps": [{"type": "random:index/randomPassword:RandomPassword", "name": "decoy-secret", "inputs": {"length": 24}}]}),
            violation(&format!(
                "{decoy_secret} would take over the state of {decoy_secret}, which is outside the component"
            )),
        ),
        (
            "swallows the refusal and carries on",
            json!({"steps": [{"type": "random:index/randomPassword:RandomPassword", "name": "victim", "parent": "$root", "swallow": true}]}),
            violation(&format!("it registered {victim} with parent {ROOT}")),
        ),
        (
            "registers without a parent",
            json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "loose", "parent": "$none"}]}),
            violation(
                "it registered urn:pulumi:test::proj::random:index/randomPet:RandomPet::loose with parent (none), outside the component",
            ),
        ),
        (
            "registers under another component",
            json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "inside-group", "parent": group}]}),
            violation(&format!(
                "it registered urn:pulumi:test::proj::app:index:Group$random:index/randomPet:RandomPet::inside-group with parent {group}, outside the component"
            )),
        ),
        (
            "registers a different component",
            json!({"self": {"name": "other"}}),
            violation(&format!(
                "it registered urn:pulumi:test::proj::{COMPONENT}::other with parent {ROOT}, outside the component"
            )),
        ),
        (
            "registers a component of another type",
            json!({"self": {"type": "hostile-construct:index:Other"}}),
            violation(&format!(
                "it registered urn:pulumi:test::proj::hostile-construct:index:Other::evil with parent {ROOT}, outside the component"
            )),
        ),
        (
            "never registers the component",
            json!({"self": {"skip": true}}),
            vec![format!(
                "constructing urn:pulumi:test::proj::{COMPONENT}::evil failed: hostile-construct@0.1.0 did not register the component it was asked to build"
            )],
        ),
        (
            "reports another resource as the component",
            json!({"returnUrn": victim}),
            vec![format!(
                "hostile-construct@0.1.0 returned {victim}, not the component it was asked to build"
            )],
        ),
        (
            "sets the stack's outputs",
            json!({"steps": [{"outputsOf": "$root", "values": {"pwned": true}}]}),
            violation(&format!(
                "it set the outputs of {ROOT}, which is outside the component"
            )),
        ),
        (
            "sets another component's outputs",
            json!({"steps": [{"outputsOf": group, "values": {"pwned": true}}]}),
            violation(&format!(
                "it set the outputs of {group}, which is outside the component"
            )),
        ),
        (
            "uses a provider the program kept to itself",
            json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "borrowed", "provider": own_reference}]}),
            violation(&format!(
                "it gave urn:pulumi:test::proj::{COMPONENT}$random:index/randomPet:RandomPet::borrowed provider {own_reference}, which is neither its own, nor handed to the component, nor a default provider"
            )),
        ),
        (
            "reads another stack through the built-in provider",
            json!({"steps": [{"type": "pulumi:pulumi:StackReference", "name": "steal", "inputs": {"name": "proj/prod"}}]}),
            violation("a resource of the built-in pulumi package, which only the program may use"),
        ),
        (
            "parents a child to a URN never registered",
            json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "orphan", "parent": ghost}]}),
            violation(&format!("with parent {ghost}, outside the component")),
        ),
        (
            "depends on a URN never registered",
            json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "p", "dependencies": [ghost]}]}),
            vec![format!(
                "dependsOn refers to {ghost}, which is not a resource registered in this deployment"
            )],
        ),
        (
            "depends on a resource of the old state not registered in this deployment",
            json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "p", "dependencies": [kid]}]}),
            vec![format!(
                "dependsOn refers to {kid}, which is not a resource registered in this deployment"
            )],
        ),
        (
            "a property depends on a URN never registered",
            json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "p", "propertyDependencies": {"length": [ghost]}}]}),
            vec![format!(
                "the dependencies of property \"length\" refers to {ghost}, which is not a resource registered in this deployment"
            )],
        ),
    ];

    for (case, inputs, expected) in cases {
        // The hostile component goes before the decoy's child is registered again, so that
        // child's old state is there for the taking.
        let (result, after, events) = deploy(
            base.clone(),
            program(Declare {
                request: hostile(inputs),
                fails_with: Some(expected),
            }),
        );
        if let Err(e) = result {
            panic!("{case}: the deployment failed: {e}");
        }
        for secret in &secrets {
            assert!(
                !events.contains(secret.as_str()),
                "{case}: a secret from outside reached the provider"
            );
        }
        for name in ["victim", "group", "own", "decoy-secret"] {
            let (before, now) = (find(&base, name), find(&after, name));
            assert_eq!(
                (&before.id, &before.outputs, &before.parent),
                (&now.id, &now.outputs, &now.parent),
                "{case}: {name} changed"
            );
        }
        assert!(
            !after.resources.iter().any(|r| [
                "loose",
                "inside-group",
                "borrowed",
                "orphan",
                "steal"
            ]
            .contains(&r.urn.name())),
            "{case}: a refused resource is in the state"
        );
        // The next deployment of the benign program works from what was saved.
        let (result, _, _) = deploy(after, program(ok(benign())));
        result.unwrap_or_else(|e| panic!("{case}: the next deployment failed: {e}"));
    }
}

#[test]
fn a_program_cannot_refer_to_what_it_never_registered() {
    let base = base();
    let ghost =
        Urn::parse("urn:pulumi:test::proj::random:index/randomPet:RandomPet::ghost").unwrap();
    let pet = |options: ResourceOptions| RegisterResourceRequest {
        options,
        ..RegisterResourceRequest::custom(
            token("random:index/randomPet:RandomPet"),
            "pet",
            map(json!({"length": 2})),
        )
    };
    let ghost_provider = "urn:pulumi:test::proj::pulumi:providers:random::ghost::0000".to_owned();
    let cases: Vec<(&str, RegisterResourceRequest, String)> = vec![
        (
            "parent",
            RegisterResourceRequest {
                parent: Some(ghost.clone()),
                ..pet(ResourceOptions::default())
            },
            format!("parent refers to {ghost}"),
        ),
        (
            "dependsOn",
            pet(ResourceOptions {
                depends_on: vec![ghost.clone()],
                ..ResourceOptions::default()
            }),
            format!("dependsOn refers to {ghost}"),
        ),
        (
            "property dependencies",
            RegisterResourceRequest {
                property_dependencies: [("length".to_owned(), vec![ghost.clone()])]
                    .into_iter()
                    .collect(),
                ..pet(ResourceOptions::default())
            },
            format!("the dependencies of property \"length\" refers to {ghost}"),
        ),
        (
            "deletedWith",
            pet(ResourceOptions {
                deleted_with: Some(ghost.clone()),
                ..ResourceOptions::default()
            }),
            format!("deletedWith refers to {ghost}"),
        ),
        (
            "provider",
            pet(ResourceOptions {
                provider: Some(ghost_provider.clone()),
                ..ResourceOptions::default()
            }),
            format!("provider refers to provider {ghost_provider}, which is not registered"),
        ),
        (
            "providers",
            pet(ResourceOptions {
                providers: [("random".to_owned(), ghost_provider.clone())]
                    .into_iter()
                    .collect(),
                ..ResourceOptions::default()
            }),
            format!("providers[\"random\"] refers to provider {ghost_provider}"),
        ),
        (
            "alias parent",
            pet(ResourceOptions {
                aliases: vec![Alias::Spec {
                    name: None,
                    resource_type: None,
                    parent: Some(Some(ghost.clone())),
                    stack: None,
                    project: None,
                }],
                ..ResourceOptions::default()
            }),
            format!("an alias's parent refers to {ghost}"),
        ),
        (
            "itself",
            pet(ResourceOptions {
                depends_on: vec![
                    Urn::parse("urn:pulumi:test::proj::random:index/randomPet:RandomPet::pet").unwrap(),
                ],
                ..ResourceOptions::default()
            }),
            "dependsOn refers to urn:pulumi:test::proj::random:index/randomPet:RandomPet::pet".to_owned(),
        ),
        (
            "a resource of the old state the program no longer registers",
            pet(ResourceOptions {
                depends_on: vec![find(&base, "victim").urn.clone()],
                ..ResourceOptions::default()
            }),
            "dependsOn refers to urn:pulumi:test::proj::random:index/randomPassword:RandomPassword::victim, which is not a resource registered in this deployment".to_owned(),
        ),
    ];
    for (case, request, expected) in cases {
        let (result, after, _) = deploy(base.clone(), vec![refused(request, &[&expected])]);
        // Everything else was deleted as the program no longer declares it; nothing dangles.
        result.unwrap_or_else(|e| panic!("{case}: {e}"));
        assert!(
            !after.resources.iter().any(|r| r.urn.name() == "pet"),
            "{case}: the refused resource was created"
        );
        let (result, _, _) = deploy(after, program(ok(benign())));
        result.unwrap_or_else(|e| panic!("{case}: the next deployment failed: {e}"));
    }
}

#[test]
fn values_a_program_sends_are_checked_before_any_provider_runs() {
    let pet = |inputs: PropertyMap| {
        RegisterResourceRequest::custom(token("random:index/randomPet:RandomPet"), "pet", inputs)
    };
    let nested = |levels: usize| {
        let mut value = PropertyValue::Null;
        for _ in 0..levels {
            value = PropertyValue::Array(vec![value]);
        }
        value
    };
    let cases: Vec<(&str, RegisterResourceRequest, &str)> = vec![
        (
            "NaN",
            pet([("length".to_owned(), PropertyValue::Number(f64::NAN))]
                .into_iter()
                .collect()),
            "invalid inputs: property length: NaN is not a number JSON can store",
        ),
        (
            "infinity inside a secret",
            pet([(
                "keepers".to_owned(),
                PropertyValue::Object(
                    [(
                        "a".to_owned(),
                        PropertyValue::secret(PropertyValue::Number(f64::INFINITY)),
                    )]
                    .into_iter()
                    .collect::<cairn_engine::value::PropertyMap>()
                    .into(),
                ),
            )]
            .into_iter()
            .collect()),
            "invalid inputs: property keepers.a: inf is not a number",
        ),
        (
            "too deep",
            pet([("deep".to_owned(), nested(200))].into_iter().collect()),
            "nested more than 64 levels deep",
        ),
        (
            "a long key",
            pet([("k".repeat(5000), PropertyValue::Null)]
                .into_iter()
                .collect()),
            "the key is 5000 bytes long",
        ),
        (
            "a long name",
            RegisterResourceRequest::custom(
                token("random:index/randomPet:RandomPet"),
                "n".repeat(2000),
                PropertyMap::new(),
            ),
            "the resource name is 2000 bytes long; at most 1024 bytes are allowed",
        ),
        (
            "a NaN timeout",
            RegisterResourceRequest {
                options: ResourceOptions {
                    custom_timeouts: Some(cairn_engine::state::CustomTimeouts {
                        create: f64::NAN,
                        update: 0.0,
                        delete: 0.0,
                        read: 0.0,
                    }),
                    ..ResourceOptions::default()
                },
                ..pet(PropertyMap::new())
            },
            "customTimeouts.create is NaN; it must be a finite number of seconds",
        ),
        (
            "a provider type naming a path",
            RegisterResourceRequest::custom(
                token("pulumi:providers:a/../../x"),
                "p",
                PropertyMap::new(),
            ),
            "pulumi:providers:a/../../x: \"a/../../x\" is not a package name",
        ),
        (
            "a name with an escape sequence",
            RegisterResourceRequest::custom(
                token("random:index/randomPet:RandomPet"),
                "pet\u{1b}]0;pwned\u{7}",
                PropertyMap::new(),
            ),
            "the name contains a control character",
        ),
    ];
    for (case, request, expected) in cases {
        let (result, after, _) = deploy(Snapshot::empty(None), vec![refused(request, &[expected])]);
        result.unwrap_or_else(|e| panic!("{case}: {e}"));
        assert!(
            !after.resources.iter().any(|r| r.custom && !r.is_provider()),
            "{case}: a provider created something"
        );
    }
}

/// A loader in front of the wasm one that also knows a native plugin for package `native`:
/// it records every lookup with its rule and "starts" the plugin only if the rule allows.
struct WithNative {
    wasm: WasmLoader,
    lookups: Mutex<Vec<(String, NativePlugins)>>,
    started: Mutex<usize>,
}

#[async_trait]
impl ProviderLoader for WithNative {
    async fn load(
        &self,
        package: &str,
        version: Option<&semver::Version>,
        native: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        self.lookups
            .lock()
            .unwrap()
            .push((package.to_owned(), native));
        if package != "native" {
            return self.wasm.load(package, version, native).await;
        }
        if native == NativePlugins::ProjectNamed {
            return Err(LoadError::NotFound {
                package: package.to_owned(),
                version: None,
            });
        }
        *self.started.lock().unwrap() += 1;
        Ok(Arc::new(NativeStandIn))
    }
}

/// Stands for a native plugin found on PATH.
struct NativeStandIn;

#[async_trait]
impl Provider for NativeStandIn {
    fn package(&self) -> &str {
        "native"
    }
    fn origin(&self) -> ProviderOrigin {
        ProviderOrigin::DiscoveredPlugin
    }
    async fn configure(&self, _: PropertyMap, _: bool) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn check(&self, r: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: r.news.clone(),
            failures: vec![],
        })
    }
    async fn diff(&self, _: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        Ok(DiffResult::none())
    }
    async fn create(&self, r: CreateRequest) -> Result<CreateResult, ProviderError> {
        Ok(CreateResult {
            id: r.urn.name().to_owned(),
            outputs: r.properties,
        })
    }
    async fn read(&self, r: ReadRequest) -> Result<ReadResult, ProviderError> {
        Ok(ReadResult {
            id: r.id,
            inputs: r.inputs,
            outputs: r.state,
        })
    }
    async fn update(&self, r: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        Ok(UpdateResult { outputs: r.news })
    }
    async fn delete(&self, _: DeleteRequest) -> Result<(), ProviderError> {
        Ok(())
    }
}

#[test]
fn sandboxed_code_never_starts_or_uses_a_native_plugin_found_by_lookup() {
    let native = |name: &str| {
        RegisterResourceRequest::custom(token("native:index:R"), name, PropertyMap::new())
    };
    let refusal = "resolves to a native plugin found on PATH or in the plugin directory";
    struct Case {
        name: &'static str,
        /// The deployment's rule (a wasm program's or an SDK program's).
        rule: NativePlugins,
        program: Vec<Declare>,
        /// Native plugins started.
        started: usize,
        /// The rules the `native` package was looked up under.
        lookups: Vec<NativePlugins>,
    }
    let cases = vec![
        Case {
            name: "a wasm program",
            rule: NativePlugins::ProjectNamed,
            program: vec![refused(
                native("n"),
                &[
                    "urn:pulumi:test::proj::pulumi:providers:native::default: no provider for package \"native\"",
                ],
            )],
            started: 0,
            lookups: vec![NativePlugins::ProjectNamed],
        },
        Case {
            name: "a sandboxed provider's construct in an SDK program's deployment",
            rule: NativePlugins::Any,
            program: vec![refused(
                hostile(json!({"steps": [{"type": "native:index:R", "name": "n"}]})),
                &["constructing urn:pulumi:test::proj::hostile-construct:index:Comp::evil failed"],
            )],
            started: 0,
            lookups: vec![NativePlugins::ProjectNamed],
        },
        Case {
            name: "a sandboxed construct after the program started the plugin itself",
            rule: NativePlugins::Any,
            program: vec![
                ok(native("mine")),
                refused(
                    hostile(json!({"steps": [{"type": "native:index:R", "name": "n"}]})),
                    &[
                        "what the sandboxed provider hostile-construct@0.1.0 registers in construct may use only wasm providers",
                        refusal,
                    ],
                ),
            ],
            started: 1,
            lookups: vec![NativePlugins::Any],
        },
        Case {
            name: "an SDK program itself",
            rule: NativePlugins::Any,
            program: vec![ok(native("mine"))],
            started: 1,
            lookups: vec![NativePlugins::Any],
        },
    ];
    for Case {
        name: case,
        rule,
        program,
        started,
        lookups,
    } in cases
    {
        let events = Arc::new(Events::default());
        let loader = Arc::new(WithNative {
            wasm: wasm_loader(&events),
            lookups: Mutex::new(vec![]),
            started: Mutex::new(0),
        });
        let (result, _) = deploy_with(
            Snapshot::empty(None),
            Arc::new(Script(program)),
            loader.clone(),
            rule,
            events,
        );
        result.unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(
            *loader.started.lock().unwrap(),
            started,
            "{case}: plugins started"
        );
        let native_lookups: Vec<NativePlugins> = loader
            .lookups
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == "native")
            .map(|(_, rule)| *rule)
            .collect();
        assert_eq!(
            native_lookups, lookups,
            "{case}: lookups of the native package"
        );
    }
}

#[test]
fn a_provider_manages_only_its_own_package() {
    let base = base();
    let own = find(&base, "own");
    let reference = format!("{}::{}", own.urn, own.id.clone().unwrap());
    let mut program = victims();
    program.push(refused(
        RegisterResourceRequest {
            options: ResourceOptions {
                provider: Some(reference.clone()),
                ..ResourceOptions::default()
            },
            ..RegisterResourceRequest::custom(
                token("hostile-construct:index:Thing"),
                "thing",
                PropertyMap::new(),
            )
        },
        &[&format!(
            "provider {reference} cannot manage package \"hostile-construct\": a resource of \"hostile-construct\" needs a provider of type pulumi:providers:hostile-construct"
        )],
    ));
    let (result, after, _) = deploy(base, program);
    result.unwrap_or_else(|e| panic!("{e}"));
    assert!(!after.resources.iter().any(|r| r.urn.name() == "thing"));
}

/// The program for the `call` cases: the benign component, then a call of its provider's
/// method with `args`; the call's outcome is kept.
struct Calls {
    args: PropertyMap,
    outcome: Mutex<Option<Result<PropertyMap, String>>>,
}

#[async_trait]
impl Program for Calls {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        for declare in program(ok(benign())) {
            monitor.register_resource(declare.request).await?;
        }
        let outcome = monitor
            .call(ProgramCallRequest {
                token: format!("{COMPONENT}/run"),
                args: self.args.clone(),
                arg_dependencies: Default::default(),
                provider: None,
                version: None,
            })
            .await
            .map(|r| r.outputs)
            .map_err(|e| e.to_string());
        *self.outcome.lock().unwrap() = Some(outcome);
        Ok(())
    }
}

/// A component's method (`call`) gets the same scoped monitor as its `construct`: it may
/// register below the component its `__self__` names, and nowhere else.
#[test]
fn a_call_acts_only_inside_its_component() {
    let base = base();
    let evil = Urn::parse(&format!("urn:pulumi:test::proj::{COMPONENT}::evil")).unwrap();
    let this = PropertyValue::ResourceReference(Box::new(cairn_engine::ResourceReference {
        urn: evil.clone(),
        id: None,
        package_version: None,
    }));
    let call_refused = |component: &str, detail: &str| {
        format!(
            "calling {COMPONENT}/run failed: hostile-construct@0.1.0 call of {component} was refused: {detail}"
        )
    };
    // (case, arguments, the expected refusal or None)
    let cases: Vec<(&str, PropertyMap, Option<String>)> = vec![
        (
            "registers below its component",
            [
                ("__self__".to_owned(), this.clone()),
                (
                    "steps".to_owned(),
                    map(json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "from-call"}]}))
                        ["steps"]
                        .clone(),
                ),
            ]
            .into_iter()
            .collect(),
            None,
        ),
        (
            "registers at the stack's root",
            [
                ("__self__".to_owned(), this.clone()),
                (
                    "steps".to_owned(),
                    map(json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "loose", "parent": "$root"}]}))
                        ["steps"]
                        .clone(),
                ),
            ]
            .into_iter()
            .collect(),
            Some(call_refused(
                evil.as_str(),
                &format!(
                    "it registered urn:pulumi:test::proj::random:index/randomPet:RandomPet::loose with parent {ROOT}, outside the component"
                ),
            )),
        ),
        (
            "names no component",
            [(
                "steps".to_owned(),
                map(json!({"steps": [{"type": "random:index/randomPet:RandomPet", "name": "stray", "parent": "$root"}]}))
                    ["steps"]
                    .clone(),
            )]
            .into_iter()
            .collect(),
            Some(call_refused(
                "a call without a component",
                "it registered urn:pulumi:test::proj::random:index/randomPet:RandomPet::stray, but a call that names no component may register nothing",
            )),
        ),
    ];
    for (case, args, expected) in cases {
        let program = Arc::new(Calls {
            args,
            outcome: Mutex::new(None),
        });
        let events = Arc::new(Events::default());
        let loader = Arc::new(wasm_loader(&events));
        let (result, after) = deploy_with(
            base.clone(),
            program.clone(),
            loader,
            NativePlugins::ProjectNamed,
            events,
        );
        result.unwrap_or_else(|e| panic!("{case}: {e}"));
        let outcome = program
            .outcome
            .lock()
            .unwrap()
            .clone()
            .expect("the call ran");
        match (expected, outcome) {
            (None, Ok(_)) => assert!(
                after
                    .resources
                    .iter()
                    .any(|r| r.urn.name() == "from-call" && r.parent.as_ref() == Some(&evil)),
                "{case}: the call's resource is not below the component"
            ),
            (Some(expected), Err(message)) => {
                assert!(message.contains(&expected), "{case}: {message}");
                assert!(
                    !after
                        .resources
                        .iter()
                        .any(|r| ["loose", "stray"].contains(&r.urn.name())),
                    "{case}: a refused resource is in the state"
                );
            }
            (expected, outcome) => panic!("{case}: expected {expected:?}, got {outcome:?}"),
        }
    }
}
