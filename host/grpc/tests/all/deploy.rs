//! The real engine with a hostile plugin and a hostile SDK client: what a deployment records is
//! always a valid, storable state, and the next deployment works.
//!
//! * A plugin whose `Create` succeeded but whose outputs hold NaN: the resource is recorded with
//!   its ID and the outputs that could be kept, the step fails naming the property, and the next
//!   update does not create it again.
//! * A plugin whose `Construct` answers with another resource's URN: refused.
//! * An SDK client (a program over the served monitor) sending NaN, control characters, bad
//!   paths and endless timeouts: each request refused naming the field and the property; the
//!   program's valid requests go on.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::deploy::DeployError;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::state::Snapshot;
use cairn_engine::{PropertyMap, PropertyValue, TypeToken};
use cairn_grpc::monitor::{Failures, serve_monitor};
use cairn_grpc::proto::pulumirpc as rpc;
use cairn_grpc::proto::pulumirpc::resource_monitor_client::ResourceMonitorClient;
use cairn_grpc::proto::pulumirpc::resource_provider_server::ResourceProviderServer;

use crate::support::*;

const NAN_PROBLEM: &str = "is not a number JSON can store (NaN and infinities are refused)";

/// Registers one custom resource `hostile:index:Thing` named `t`.
struct OneThing;

#[async_trait]
impl Program for OneThing {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let inputs: PropertyMap = [("size".to_owned(), PropertyValue::Number(1.0))]
            .into_iter()
            .collect();
        monitor
            .register_resource(RegisterResourceRequest::custom(
                TypeToken::parse("hostile:index:Thing").unwrap(),
                "t",
                inputs,
            ))
            .await?;
        Ok(())
    }
}

async fn hostile_plugin() -> (Arc<Hostile>, Running) {
    let plugin = Arc::new(Hostile::default());
    let running = serve(
        tonic::transport::Server::builder()
            .add_service(ResourceProviderServer::from_arc(plugin.clone())),
    )
    .await;
    (plugin, running)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_resource_with_unstorable_outputs_is_recorded_and_the_next_update_works() {
    let (plugin, running) = hostile_plugin().await;
    plugin.set(|s| {
        s.create = Some(Ok(rpc::CreateResponse {
            id: "t-1".into(),
            properties: Some(fields(vec![("size", num(1.0)), ("ratio", num(f64::NAN))])),
        }))
    });
    let (outcome, snapshot) = deploy(Snapshot::empty(None), running.port, Arc::new(OneThing)).await;
    let error = outcome.unwrap_err().to_string();
    assert!(
        error.contains(&format!(
            "hostile plugin Create: the resource \"t-1\" was created but the plugin's outputs cannot be accepted (property ratio: NaN {NAN_PROBLEM}); it is recorded without them"
        )),
        "{error}"
    );
    let thing = snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == "t")
        .expect("the created resource is recorded");
    assert_eq!(thing.id.as_deref(), Some("t-1"));
    assert_eq!(thing.outputs.keys().collect::<Vec<_>>(), ["size"]);
    assert!(snapshot.pending_operations.is_empty());

    // The plugin behaves now: the resource is kept, not created a second time.
    let (outcome, snapshot) = deploy(snapshot, running.port, Arc::new(OneThing)).await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
    let thing = snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == "t")
        .unwrap();
    assert_eq!(thing.id.as_deref(), Some("t-1"));
    assert_eq!(*plugin.created.lock().unwrap(), ["t"]);
}

/// Registers the remote component `hostile:index:Comp` named `c`.
struct OneComponent;

#[async_trait]
impl Program for OneComponent {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        monitor
            .register_resource(RegisterResourceRequest {
                remote: true,
                ..RegisterResourceRequest::component(
                    TypeToken::parse("hostile:index:Comp").unwrap(),
                    "c",
                )
            })
            .await?;
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_construct_answering_with_another_urn_is_refused() {
    let (plugin, running) = hostile_plugin().await;
    let other = "urn:pulumi:dev::proj::other:index:Secret::s";
    plugin.set(|s| {
        s.construct = Some(Ok(rpc::ConstructResponse {
            urn: other.into(),
            ..Default::default()
        }))
    });
    let (outcome, snapshot) =
        deploy(Snapshot::empty(None), running.port, Arc::new(OneComponent)).await;
    let error = outcome.unwrap_err().to_string();
    assert!(
        error.contains(&format!(
            "hostile plugin Construct: the plugin answered with the URN \"{other}\", not the component's urn:pulumi:dev::proj::hostile:index:Comp::c"
        )),
        "{error}"
    );
    // A construct answering with its component's URN without registering it is refused too.
    plugin.set(|s| {
        s.construct = Some(Ok(rpc::ConstructResponse {
            urn: "urn:pulumi:dev::proj::hostile:index:Comp::c".into(),
            ..Default::default()
        }))
    });
    let (outcome, snapshot) = deploy(snapshot, running.port, Arc::new(OneComponent)).await;
    let error = outcome.unwrap_err().to_string();
    assert!(
        error.contains("hostile@1.0.0 did not register the component it was asked to build"),
        "{error}"
    );
    let (outcome, _) = deploy(snapshot, running.port, Arc::new(Nothing)).await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
}

/// A program that declares nothing.
struct Nothing;

#[async_trait]
impl Program for Nothing {
    async fn run(&self, _monitor: Monitor) -> Result<(), ProgramError> {
        Ok(())
    }
}

/// One malformed request and the exact refusal it gets.
struct Bad {
    what: &'static str,
    change: Box<dyn Fn(&mut rpc::RegisterResourceRequest) + Send + Sync>,
    expected: String,
}

fn bad(
    what: &'static str,
    change: impl Fn(&mut rpc::RegisterResourceRequest) + Send + Sync + 'static,
    expected: impl Into<String>,
) -> Bad {
    Bad {
        what,
        change: Box::new(change),
        expected: expected.into(),
    }
}

fn bad_requests() -> Vec<Bad> {
    let register = "RegisterResource hostile:index:Thing \"t\"";
    vec![
        bad(
            "NaN in the inputs",
            |r| r.object = Some(fields(vec![("tags", object(vec![("n", num(f64::NAN))]))])),
            format!("{register}: object: property tags.n: NaN {NAN_PROBLEM}"),
        ),
        bad(
            "infinity in a list",
            |r| {
                r.object = Some(fields(vec![(
                    "ports",
                    list(vec![num(1.0), num(f64::INFINITY)]),
                )]))
            },
            format!("{register}: object: property ports[1]: inf {NAN_PROBLEM}"),
        ),
        bad(
            "a name with an escape sequence",
            |r| r.name = "t\x1b[2J".into(),
            "RegisterResource hostile:index:Thing \"t\\\\x1b[2J\": name: the name \"t\\\\x1b[2J\" contains a control character; names must be printable",
        ),
        bad(
            "a type with a control character",
            |r| r.r#type = "hostile:index:Th\ring".into(),
            format!(
                "RegisterResource hostile:index:Th\\ring \"t\": type: {}",
                TypeToken::parse("hostile:index:Th\ring").unwrap_err()
            ),
        ),
        bad(
            "an ignoreChanges path that does not parse",
            |r| r.ignore_changes = vec!["ok".into(), "tags[\"a".into()],
            format!(
                "{register}: ignoreChanges[1]: {}",
                cairn_engine::path::PropertyPath::parse("tags[\"a").unwrap_err()
            ),
        ),
        bad(
            "an endless custom timeout",
            |r| {
                r.custom_timeouts = Some(rpc::register_resource_request::CustomTimeouts {
                    create: format!("{}h", "9".repeat(400)),
                    ..Default::default()
                })
            },
            format!(
                "{register}: customTimeouts.create: \"{}…\" is too long a duration",
                "9".repeat(64)
            ),
        ),
        bad(
            "a dependency that is not a URN",
            |r| r.dependencies = vec!["urn:pulumi:dev::proj::a:b:C::x\x07".into()],
            format!(
                "{register}: dependencies: {}",
                cairn_engine::Urn::parse("urn:pulumi:dev::proj::a:b:C::x\x07").unwrap_err()
            ),
        ),
        bad(
            "an import ID over the limit",
            |r| r.import_id = "i".repeat(cairn_engine::limits::MAX_ID_BYTES + 1),
            format!(
                "{register}: importId: the ID is {} bytes long; at most {} bytes are allowed",
                cairn_engine::limits::MAX_ID_BYTES + 1,
                cairn_engine::limits::MAX_ID_BYTES
            ),
        ),
        bad(
            "a provider reference that is not one",
            |r| r.provider = "urn:pulumi:dev::proj::hostile:index:Thing::x::id".into(),
            format!(
                "{register}: provider: {}",
                cairn_engine::state::ProviderReference::parse(
                    "urn:pulumi:dev::proj::hostile:index:Thing::x::id"
                )
                .unwrap_err()
            ),
        ),
        bad(
            "a version that is not one",
            |r| r.version = "latest\x1b".into(),
            format!(
                "{register}: version: \"latest\\\\x1b\" is not a semantic version: unexpected character 'l' while parsing major version number"
            ),
        ),
    ]
}

/// A program that talks to the served monitor as an SDK does: each malformed request, then a
/// valid one.
struct SdkClient {
    refusals: Mutex<Vec<(String, tonic::Code, String)>>,
}

#[async_trait]
impl Program for SdkClient {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let root = monitor.root_urn().clone();
        let served = serve_monitor(
            monitor,
            4,
            Arc::new(Events::default()),
            Arc::new(Failures::default()),
        )
        .await
        .unwrap();
        let channel =
            tonic::transport::Endpoint::from_shared(format!("http://{}", served.target()))
                .unwrap()
                .connect()
                .await
                .unwrap();
        let mut client = ResourceMonitorClient::new(channel);
        let valid = || rpc::RegisterResourceRequest {
            r#type: "hostile:index:Thing".into(),
            name: "t".into(),
            custom: true,
            object: Some(fields(vec![("size", num(1.0))])),
            ..Default::default()
        };
        for case in bad_requests() {
            let mut request = valid();
            (case.change)(&mut request);
            let status = client.register_resource(request).await.unwrap_err();
            self.refusals.lock().unwrap().push((
                case.what.to_owned(),
                status.code(),
                status.message().to_owned(),
            ));
        }
        let response = client
            .register_resource(valid())
            .await
            .map_err(|s| ProgramError::new(s.message()))?
            .into_inner();
        assert_eq!(response.id, "t-1");

        // Stack outputs go through the same checks.
        let outputs = |value| rpc::RegisterResourceOutputsRequest {
            urn: root.to_string(),
            outputs: Some(fields(vec![("ratio", value)])),
        };
        let status = client
            .register_resource_outputs(outputs(num(f64::NAN)))
            .await
            .unwrap_err();
        self.refusals.lock().unwrap().push((
            "NaN in the stack outputs".to_owned(),
            status.code(),
            status.message().to_owned(),
        ));
        client
            .register_resource_outputs(outputs(num(0.5)))
            .await
            .map_err(|s| ProgramError::new(s.message()))?;

        // Reads, invokes and calls too.
        let refused = |what: &str, status: tonic::Status| {
            self.refusals.lock().unwrap().push((
                what.to_owned(),
                status.code(),
                status.message().to_owned(),
            ));
        };
        let status = client
            .read_resource(rpc::ReadResourceRequest {
                id: "i".repeat(cairn_engine::limits::MAX_ID_BYTES + 1),
                r#type: "hostile:index:Thing".into(),
                name: "r".into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        refused("a read with an ID over the limit", status);
        let status = client
            .invoke(rpc::ResourceInvokeRequest {
                tok: "hostile:index:get".into(),
                args: Some(fields(vec![("n", num(f64::INFINITY))])),
                ..Default::default()
            })
            .await
            .unwrap_err();
        refused("infinity in invoke args", status);
        let status = client
            .call(rpc::ResourceCallRequest {
                tok: "hostile:index:Comp/method".into(),
                arg_dependencies: [(
                    "x".to_owned(),
                    rpc::resource_call_request::ArgumentDependencies {
                        urns: vec!["not a urn".into()],
                    },
                )]
                .into_iter()
                .collect(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        refused("a call argument dependency that is not a URN", status);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sdk_client_s_malformed_requests_are_refused_naming_field_and_property() {
    let (_plugin, running) = hostile_plugin().await;
    let program = Arc::new(SdkClient {
        refusals: Mutex::default(),
    });
    let (outcome, snapshot) = deploy(Snapshot::empty(None), running.port, program.clone()).await;
    outcome.unwrap_or_else(|e: DeployError| panic!("{e}"));
    let refusals = program.refusals.lock().unwrap();
    let mut expected: Vec<String> = bad_requests().into_iter().map(|b| b.expected).collect();
    expected.extend([
        format!(
            "RegisterResourceOutputs urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev: outputs: property ratio: NaN {NAN_PROBLEM}"
        ),
        format!(
            "ReadResource hostile:index:Thing \"r\": id: the ID is {} bytes long; at most {} bytes are allowed",
            cairn_engine::limits::MAX_ID_BYTES + 1,
            cairn_engine::limits::MAX_ID_BYTES
        ),
        format!("Invoke hostile:index:get: args: property n: inf {NAN_PROBLEM}"),
        format!(
            "Call hostile:index:Comp/method: argDependencies[\"x\"]: {}",
            cairn_engine::Urn::parse("not a urn").unwrap_err()
        ),
    ]);
    assert_eq!(refusals.len(), expected.len());
    for ((what, code, message), expected) in refusals.iter().zip(expected) {
        assert_eq!(*code, tonic::Code::InvalidArgument, "{what}");
        assert_eq!(message, &expected, "{what}");
    }
    let stack = snapshot
        .resources
        .iter()
        .find(|r| r.resource_type.as_str() == "pulumi:pulumi:Stack")
        .unwrap();
    assert_eq!(stack.outputs["ratio"], PropertyValue::Number(0.5));
    assert!(
        snapshot.resources.iter().any(|r| r.urn.name() == "t"),
        "the valid request went on"
    );
}

/// The program of the component-scope tests: the remote component `c` first (its outcome kept),
/// then a resource of its own (`victim`) and a provider it keeps to itself (`kept`).
struct Escape(Mutex<Option<String>>);

#[async_trait]
impl Program for Escape {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let component = monitor
            .register_resource(RegisterResourceRequest {
                remote: true,
                ..RegisterResourceRequest::component(
                    TypeToken::parse("hostile:index:Comp").unwrap(),
                    "c",
                )
            })
            .await;
        *self.0.lock().unwrap() = component.err().map(|e| e.to_string());
        monitor
            .register_resource(RegisterResourceRequest::custom(
                TypeToken::parse("hostile:index:Thing").unwrap(),
                "victim",
                PropertyMap::new(),
            ))
            .await?;
        monitor
            .register_resource(RegisterResourceRequest::custom(
                TypeToken::parse("pulumi:providers:hostile").unwrap(),
                "kept",
                PropertyMap::new(),
            ))
            .await?;
        Ok(())
    }
}

const ROOT: &str = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev";
const COMPONENT: &str = "urn:pulumi:dev::proj::hostile:index:Comp::c";
const VICTIM: &str = "urn:pulumi:dev::proj::hostile:index:Thing::victim";

/// The registration of the component itself, as the engine asked for it.
fn component_itself() -> rpc::RegisterResourceRequest {
    rpc::RegisterResourceRequest {
        r#type: "hostile:index:Comp".into(),
        name: "c".into(),
        parent: ROOT.into(),
        ..Default::default()
    }
}

/// A child of the component.
fn child(name: &str) -> rpc::RegisterResourceRequest {
    rpc::RegisterResourceRequest {
        r#type: "hostile:index:Thing".into(),
        name: name.into(),
        parent: COMPONENT.into(),
        custom: true,
        ..Default::default()
    }
}

/// A component provider over gRPC gets the same scoped monitor as a wasm one: through aliases,
/// imports, provider references and nested components it still cannot reach what the program
/// owns. Each attempt is refused naming the provider, the component and the URN; the program's
/// resources are untouched; the next deployment works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_construct_cannot_reach_outside_its_component() {
    let (plugin, running) = hostile_plugin().await;
    plugin.set(|s| s.construct_registrations = vec![component_itself()]);
    let program = Arc::new(Escape(Mutex::new(None)));
    let (outcome, base) = deploy(Snapshot::empty(None), running.port, program.clone()).await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(*program.0.lock().unwrap(), None);
    let find = |snapshot: &Snapshot, name: &str| {
        snapshot
            .resources
            .iter()
            .find(|r| r.urn.name() == name && !r.delete)
            .cloned()
            .unwrap_or_else(|| panic!("{name} is not in the state"))
    };
    let victim = find(&base, "victim");
    let victim_id = victim.id.clone().unwrap();
    let kept = find(&base, "kept");
    let kept = format!("{}::{}", kept.urn, kept.id.clone().unwrap());
    let refused =
        |detail: &str| format!("hostile@1.0.0 construct of {COMPONENT} was refused: {detail}");
    let cases: Vec<(&str, rpc::RegisterResourceRequest, String)> = vec![
        (
            "takes over the program's resource through an alias",
            rpc::RegisterResourceRequest {
                aliases: vec![rpc::Alias {
                    alias: Some(rpc::alias::Alias::Urn(VICTIM.into())),
                }],
                ..child("x")
            },
            refused(&format!(
                "urn:pulumi:dev::proj::hostile:index:Comp$hostile:index:Thing::x would take over the state of {VICTIM}, which is outside the component"
            )),
        ),
        (
            "takes over the program's resource through an alias spec",
            rpc::RegisterResourceRequest {
                aliases: vec![rpc::Alias {
                    alias: Some(rpc::alias::Alias::Spec(rpc::alias::Spec {
                        name: "victim".into(),
                        parent: Some(rpc::alias::spec::Parent::NoParent(true)),
                        ..Default::default()
                    })),
                }],
                alias_specs: true,
                ..child("y")
            },
            refused(&format!(
                "urn:pulumi:dev::proj::hostile:index:Comp$hostile:index:Thing::y would take over the state of {VICTIM}"
            )),
        ),
        (
            "imports the program's resource by its ID",
            rpc::RegisterResourceRequest {
                import_id: victim_id.clone(),
                ..child("imported")
            },
            refused(&format!(
                "it named ID {victim_id:?} for urn:pulumi:dev::proj::hostile:index:Comp$hostile:index:Thing::imported, the ID of {VICTIM}, which the stack manages outside the component"
            )),
        ),
        (
            "uses the provider the program kept",
            rpc::RegisterResourceRequest {
                provider: kept.clone(),
                ..child("borrowed")
            },
            refused(&format!(
                "it gave urn:pulumi:dev::proj::hostile:index:Comp$hostile:index:Thing::borrowed provider {kept}, which is neither its own"
            )),
        ),
        (
            "hands the kept provider to a nested component",
            rpc::RegisterResourceRequest {
                r#type: "hostile:index:Comp".into(),
                name: "inner".into(),
                parent: COMPONENT.into(),
                remote: true,
                providers: [("hostile".to_owned(), kept.clone())].into_iter().collect(),
                ..Default::default()
            },
            refused(&format!(
                "it gave urn:pulumi:dev::proj::hostile:index:Comp$hostile:index:Comp::inner provider {kept}, which is neither its own"
            )),
        ),
        (
            "registers under the stack's root",
            rpc::RegisterResourceRequest {
                parent: ROOT.into(),
                ..child("loose")
            },
            refused(&format!(
                "it registered urn:pulumi:dev::proj::hostile:index:Thing::loose with parent {ROOT}, outside the component"
            )),
        ),
        (
            "registers the component as a custom resource",
            rpc::RegisterResourceRequest {
                custom: true,
                ..component_itself()
            },
            refused(&format!(
                "it registered {COMPONENT} differently from the component the program asked for"
            )),
        ),
    ];
    for (case, registration, expected) in cases {
        plugin.construct_results.lock().unwrap().clear();
        let is_root = registration.name == "c";
        let registrations = if is_root {
            vec![registration]
        } else {
            vec![component_itself(), registration]
        };
        plugin.set(|s| s.construct_registrations = registrations);
        let program = Arc::new(Escape(Mutex::new(None)));
        let (outcome, after) = deploy(base.clone(), running.port, program.clone()).await;
        outcome.unwrap_or_else(|e| panic!("{case}: {e}"));
        let failure = program.0.lock().unwrap().clone().unwrap_or_default();
        assert!(
            failure.contains(&format!("constructing {COMPONENT} failed: "))
                && failure.contains(&expected),
            "{case}: {failure}\n  does not contain {expected:?}"
        );
        let refusal = plugin
            .construct_results
            .lock()
            .unwrap()
            .iter()
            .find_map(|r| r.clone().err())
            .unwrap_or_default();
        assert!(
            refusal.contains(&expected),
            "{case}: the callback got {refusal:?}"
        );
        assert_eq!(
            (find(&after, "victim").id, find(&after, "victim").parent),
            (victim.id.clone(), victim.parent.clone()),
            "{case}: the victim changed"
        );
        assert_eq!(
            after
                .resources
                .iter()
                .filter(|r| r.urn.name() == "victim")
                .count(),
            1,
            "{case}: the victim was duplicated"
        );
        // The next honest deployment works from what was saved.
        plugin.set(|s| s.construct_registrations = vec![component_itself()]);
        let (outcome, _) = deploy(after, running.port, Arc::new(Escape(Mutex::new(None)))).await;
        outcome.unwrap_or_else(|e| panic!("{case}: the next deployment failed: {e}"));
    }
}
