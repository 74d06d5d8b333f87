//! The monitor features SDKs use, against the real engine: `pulumi:pulumi:getResource` (what
//! this deployment registered, scoped for component providers), transforms run through the
//! program's `Callbacks` service (order, what they are shown, their answers admitted like the
//! program's own requests), invoke transforms, and `StreamInvoke`.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::state::codec::{OUTPUT_VALUE_SIG, RESOURCE_REFERENCE_SIG, SECRET_SIG, SIG_KEY};
use cairn_engine::state::{ResourceState, Snapshot};
use cairn_engine::value::ResourceReference;
use cairn_engine::{PropertyMap, PropertyValue, TypeToken, Urn};
use cairn_grpc::proto::pulumirpc as rpc;
use cairn_grpc::proto::pulumirpc::callbacks_server::{Callbacks, CallbacksServer};
use cairn_grpc::proto::pulumirpc::resource_provider_server::ResourceProviderServer;
use prost::Message;
use prost_types::value::Kind;
use prost_types::{Struct, Value};
use tonic::{Request, Response, Status};

use crate::support::*;

const ROOT: &str = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev";
const THING: &str = "urn:pulumi:dev::proj::hostile:index:Thing::t";
const BOX: &str = "urn:pulumi:dev::proj::hostile:index:Box::box";
const COMPONENT: &str = "urn:pulumi:dev::proj::hostile:index:Comp::c";
const GET_RESOURCE: &str = "pulumi:pulumi:getResource";

async fn hostile_plugin() -> (Arc<Hostile>, Running) {
    let plugin = Arc::new(Hostile::default());
    let running = serve(
        tonic::transport::Server::builder()
            .add_service(ResourceProviderServer::from_arc(plugin.clone())),
    )
    .await;
    (plugin, running)
}

fn thing(name: &str, inputs: Struct) -> rpc::RegisterResourceRequest {
    rpc::RegisterResourceRequest {
        r#type: "hostile:index:Thing".into(),
        name: name.into(),
        custom: true,
        object: Some(inputs),
        accept_secrets: true,
        accept_resources: true,
        ..Default::default()
    }
}

fn get_resource(urn: Value) -> rpc::ResourceInvokeRequest {
    rpc::ResourceInvokeRequest {
        tok: GET_RESOURCE.into(),
        args: Some(fields(vec![("urn", urn)])),
        // An SDK that does not accept references still gets them from getResource.
        accept_resources: false,
        ..Default::default()
    }
}

fn field<'a>(s: &'a Struct, key: &str) -> &'a Value {
    s.fields
        .get(key)
        .unwrap_or_else(|| panic!("no {key} in {s:?}"))
}

fn as_struct(v: &Value) -> &Struct {
    match &v.kind {
        Some(Kind::StructValue(s)) => s,
        other => panic!("not an object: {other:?}"),
    }
}

fn as_text(v: &Value) -> &str {
    match &v.kind {
        Some(Kind::StringValue(s)) => s,
        other => panic!("not a string: {other:?}"),
    }
}

/// What a program's requests got, kept for the assertions after the deployment.
type Results = Arc<Mutex<Vec<Result<rpc::InvokeResponse, String>>>>;

/// getResource answers with the state of a resource this deployment registered: its URN, ID,
/// provider reference and outputs, secrets kept and references as references whatever the SDK
/// accepts; never one that is only in the old state, and nothing for what is not a URN.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_resource_answers_with_what_this_deployment_registered() {
    let (_plugin, running) = hostile_plugin().await;
    let results: Results = Arc::default();
    let seen = results.clone();
    let program = SdkScript::new(move |mut client| {
        let seen = seen.clone();
        async move {
            let t = client
                .register_resource(thing(
                    "t",
                    fields(vec![
                        ("size", num(1.0)),
                        (
                            "password",
                            object(vec![
                                (SIG_KEY, text(SECRET_SIG)),
                                ("value", text("hunter2-pw")),
                            ]),
                        ),
                    ]),
                ))
                .await
                .map_err(failed)?
                .into_inner();
            client
                .register_resource(rpc::RegisterResourceRequest {
                    r#type: "hostile:index:Box".into(),
                    name: "box".into(),
                    parent: ROOT.into(),
                    ..Default::default()
                })
                .await
                .map_err(failed)?;
            client
                .register_resource_outputs(rpc::RegisterResourceOutputsRequest {
                    urn: BOX.into(),
                    outputs: Some(fields(vec![(
                        "thing",
                        object(vec![
                            (SIG_KEY, text(RESOURCE_REFERENCE_SIG)),
                            ("urn", text(&t.urn)),
                            ("id", text(&t.id)),
                        ]),
                    )])),
                })
                .await
                .map_err(failed)?;
            for urn in [
                text(THING),
                text(BOX),
                text("urn:pulumi:dev::proj::hostile:index:Thing::never"),
                num(5.0),
            ] {
                let result = client
                    .invoke(get_resource(urn))
                    .await
                    .map(Response::into_inner)
                    .map_err(|s| s.message().to_owned());
                seen.lock().unwrap().push(result);
            }
            Ok(())
        }
    });
    let (outcome, saved) = deploy(Snapshot::empty(None), running.port, program).await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
    let first = std::mem::take(&mut *results.lock().unwrap());
    let [t, boxed, never, five] = <[_; 4]>::try_from(first).unwrap();

    let t = t.unwrap().r#return.unwrap();
    assert_eq!(as_text(field(&t, "urn")), THING);
    assert_eq!(as_text(field(&t, "id")), "t-1");
    assert!(
        as_text(field(&t, "provider"))
            .starts_with("urn:pulumi:dev::proj::pulumi:providers:hostile::default::"),
        "{t:?}"
    );
    let state = as_struct(field(&t, "state"));
    assert_eq!(field(state, "size"), &num(1.0));
    let password = as_struct(field(state, "password"));
    assert_eq!(field(password, SIG_KEY), &text(SECRET_SIG), "kept secret");

    let boxed = boxed.unwrap().r#return.unwrap();
    assert_eq!(as_text(field(&boxed, "id")), "", "a component has no ID");
    let reference = as_struct(field(as_struct(field(&boxed, "state")), "thing"));
    assert_eq!(
        field(reference, SIG_KEY),
        &text(RESOURCE_REFERENCE_SIG),
        "a reference stays one"
    );

    let never = never.unwrap_err();
    assert!(
        never.contains("unknown resource urn:pulumi:dev::proj::hostile:index:Thing::never"),
        "{never}"
    );
    let five = five.unwrap_err();
    assert!(
        five.contains("the argument urn must be a URN (a string)"),
        "{five}"
    );

    // In the next deployment, `t` is in the old state, but not registered (yet): unknown.
    let seen = results.clone();
    let program = SdkScript::new(move |mut client| {
        let seen = seen.clone();
        async move {
            let result = client
                .invoke(get_resource(text(THING)))
                .await
                .map(Response::into_inner)
                .map_err(|s| s.message().to_owned());
            seen.lock().unwrap().push(result);
            client
                .register_resource(thing("t", fields(vec![("size", num(1.0))])))
                .await
                .map_err(failed)?;
            let result = client
                .invoke(get_resource(text(THING)))
                .await
                .map(Response::into_inner)
                .map_err(|s| s.message().to_owned());
            seen.lock().unwrap().push(result);
            Ok(())
        }
    });
    let (outcome, _) = deploy(saved, running.port, program).await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
    let second = std::mem::take(&mut *results.lock().unwrap());
    assert!(
        second[0].as_ref().unwrap_err().contains("unknown resource"),
        "{:?}",
        second[0]
    );
    let state = second[1].as_ref().unwrap().r#return.clone().unwrap();
    assert_eq!(as_text(field(&state, "id")), "t-1", "the same step's state");
}

/// The program of the scope test: two resources of its own, then the remote component `c`,
/// handed a reference to one of them.
struct Handing {
    outcome: Mutex<Option<String>>,
}

#[async_trait]
impl Program for Handing {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let mut urns = Vec::new();
        for name in ["victim", "handed"] {
            let done = monitor
                .register_resource(RegisterResourceRequest::custom(
                    TypeToken::parse("hostile:index:Thing").unwrap(),
                    name,
                    PropertyMap::new(),
                ))
                .await?;
            urns.push(done.urn);
        }
        let inputs: PropertyMap = [(
            "it".to_owned(),
            PropertyValue::ResourceReference(Box::new(ResourceReference {
                urn: urns[1].clone(),
                id: Some(Box::new(PropertyValue::from("handed-1"))),
                package_version: None,
            })),
        )]
        .into_iter()
        .collect();
        let component = monitor
            .register_resource(RegisterResourceRequest {
                remote: true,
                inputs,
                ..RegisterResourceRequest::component(
                    TypeToken::parse("hostile:index:Comp").unwrap(),
                    "c",
                )
            })
            .await;
        *self.outcome.lock().unwrap() = component.err().map(|e| e.to_string());
        Ok(())
    }
}

/// A provider building a component reads (getResource) what is in its component and what the
/// program handed it; reading anything else, or registering a stack transform, is refused, and
/// the construct fails naming the provider, the component and the URN.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_construct_reads_only_its_component_and_what_it_was_handed() {
    let (plugin, running) = hostile_plugin().await;
    let kid = "urn:pulumi:dev::proj::hostile:index:Comp$hostile:index:Thing::kid";
    let victim = "urn:pulumi:dev::proj::hostile:index:Thing::victim";
    let handed = "urn:pulumi:dev::proj::hostile:index:Thing::handed";
    plugin.set(|s| {
        s.construct_registrations = vec![
            rpc::RegisterResourceRequest {
                r#type: "hostile:index:Comp".into(),
                name: "c".into(),
                parent: ROOT.into(),
                ..Default::default()
            },
            rpc::RegisterResourceRequest {
                r#type: "hostile:index:Thing".into(),
                name: "kid".into(),
                parent: COMPONENT.into(),
                custom: true,
                ..Default::default()
            },
        ];
        s.construct_invokes = [kid, handed, victim]
            .into_iter()
            .map(|urn| get_resource(text(urn)))
            .collect();
        s.construct_stack_transform = Some(rpc::Callback {
            target: "127.0.0.1:9".into(),
            token: "mine".into(),
        });
    });
    let program = Arc::new(Handing {
        outcome: Mutex::new(None),
    });
    let (outcome, _) = deploy(Snapshot::empty(None), running.port, program.clone()).await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
    let results = plugin.construct_invoke_results.lock().unwrap().clone();
    let refused =
        |detail: &str| format!("hostile@1.0.0 construct of {COMPONENT} was refused: {detail}");
    let [transform, kid_state, handed_state, victim_state] = <[_; 4]>::try_from(results).unwrap();
    let transform = transform.unwrap_err();
    assert!(
        transform.contains(&refused(
            "it registered a stack transform, which would apply outside the component"
        )),
        "{transform}"
    );
    let state = kid_state.unwrap().r#return.unwrap();
    assert_eq!(as_text(field(&state, "urn")), kid);
    let state = handed_state.unwrap().r#return.unwrap();
    assert_eq!(as_text(field(&state, "id")), "handed-1");
    let expected = refused(&format!(
        "it read {victim} with {GET_RESOURCE}, which is outside the component and was not handed to it"
    ));
    let victim_state = victim_state.unwrap_err();
    assert!(victim_state.contains(&expected), "{victim_state}");
    // The construct fails with the first refusal, though the provider carried on.
    let failure = program.outcome.lock().unwrap().clone().unwrap_or_default();
    assert!(
        failure.contains(&format!("constructing {COMPONENT} failed: "))
            && failure.contains("it registered a stack transform"),
        "{failure}"
    );
}

/// The program's `Callbacks` service: each token a transform with its own behaviour; every
/// request is recorded.
#[derive(Default)]
struct Transformer {
    calls: Mutex<Vec<(String, rpc::TransformRequest)>>,
}

#[tonic::async_trait]
impl Callbacks for Transformer {
    async fn invoke(
        &self,
        request: Request<rpc::CallbackInvokeRequest>,
    ) -> Result<Response<rpc::CallbackInvokeResponse>, Status> {
        let r = request.into_inner();
        let answer = |message: &dyn Fn() -> Vec<u8>| {
            Ok(Response::new(rpc::CallbackInvokeResponse {
                response: message(),
            }))
        };
        if r.token == "args-times-ten" {
            let request = rpc::TransformInvokeRequest::decode(r.request.as_slice())
                .map_err(|e| Status::invalid_argument(e.to_string()))?;
            let mut args = request.args.clone().unwrap_or_default();
            if let Some(Kind::NumberValue(n)) = args.fields.get("size").and_then(|v| v.kind.clone())
            {
                args.fields.insert("size".into(), num(n * 10.0));
            }
            return answer(&|| {
                rpc::TransformInvokeResponse {
                    args: Some(args.clone()),
                    options: request.options.clone(),
                }
                .encode_to_vec()
            });
        }
        let request = rpc::TransformRequest::decode(r.request.as_slice())
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        self.calls
            .lock()
            .unwrap()
            .push((r.token.clone(), request.clone()));
        let mut properties = request.properties.clone().unwrap_or_default();
        let mut options = request.options.clone().unwrap_or_default();
        match r.token.as_str() {
            "own" => options.additional_secret_outputs.push("out".into()),
            "parent" => {
                properties
                    .fields
                    .insert("prefix".into(), text("fromParent"));
            }
            "stack" if request.r#type == "hostile:index:Thing" => {
                properties.fields.insert("prefix".into(), text("fromStack"));
            }
            "bad-option" => options.ignore_changes = vec!["a[\"b".into()],
            "fails" => return Err(Status::unknown("boom")),
            "silent" => return answer(&|| rpc::TransformResponse::default().encode_to_vec()),
            _ => {}
        }
        answer(&|| {
            rpc::TransformResponse {
                properties: Some(properties.clone()),
                options: Some(options.clone()),
            }
            .encode_to_vec()
        })
    }
}

fn callback(port: u16, token: &str) -> rpc::Callback {
    rpc::Callback {
        target: format!("127.0.0.1:{port}"),
        token: token.into(),
    }
}

fn find<'a>(snapshot: &'a Snapshot, name: &str) -> &'a ResourceState {
    snapshot
        .resources
        .iter()
        .find(|r| r.urn.name() == name && !r.delete)
        .unwrap_or_else(|| panic!("{name} is not in the state"))
}

/// Transforms run own → parent's → stack's; a registration that brought transforms shows them
/// its inputs with their dependencies (as output values); what they answer is admitted like
/// the program's own request (options checked naming the option; the dependencies of kept
/// inputs kept); a failing transform fails the registration; a callback off this machine is
/// refused. Invoke transforms change what the provider is invoked with; `StreamInvoke`
/// streams the invoke's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transforms_run_in_order_and_their_answers_are_admitted() {
    let (plugin, running) = hostile_plugin().await;
    let transformer = Arc::new(Transformer::default());
    let callbacks = serve(
        tonic::transport::Server::builder()
            .add_service(CallbacksServer::from_arc(transformer.clone())),
    )
    .await;
    let port = callbacks.port;
    let results: Results = Arc::default();
    let seen = results.clone();
    let program = SdkScript::new(move |mut client| {
        let seen = seen.clone();
        async move {
            client
                .register_stack_transform(callback(port, "stack"))
                .await
                .map_err(failed)?;
            client
                .register_resource(rpc::RegisterResourceRequest {
                    r#type: "hostile:index:Box".into(),
                    name: "box".into(),
                    parent: ROOT.into(),
                    transforms: vec![callback(port, "parent")],
                    ..Default::default()
                })
                .await
                .map_err(failed)?;
            let mut t = thing(
                "t",
                fields(vec![("size", num(1.0)), ("from", text("the box"))]),
            );
            t.parent = BOX.into();
            t.property_dependencies = [(
                "from".to_owned(),
                rpc::register_resource_request::PropertyDependencies {
                    urns: vec![BOX.into()],
                },
            )]
            .into_iter()
            .collect();
            t.transforms = vec![callback(port, "own"), callback(port, "silent")];
            client.register_resource(t).await.map_err(failed)?;
            for (name, token, target) in [
                ("bad", "bad-option", format!("127.0.0.1:{port}")),
                ("failing", "fails", format!("127.0.0.1:{port}")),
                ("remote", "x", "10.0.0.1:4000".to_owned()),
            ] {
                let mut request = thing(name, Struct::default());
                request.transforms = vec![rpc::Callback {
                    target,
                    token: token.into(),
                }];
                let refused = client
                    .register_resource(request)
                    .await
                    .map(|_| rpc::InvokeResponse::default())
                    .map_err(|s| s.message().to_owned());
                seen.lock().unwrap().push(refused);
            }
            client
                .register_stack_invoke_transform(callback(port, "args-times-ten"))
                .await
                .map_err(failed)?;
            let invoke = rpc::ResourceInvokeRequest {
                tok: "hostile:index:get".into(),
                args: Some(fields(vec![("size", num(2.0))])),
                ..Default::default()
            };
            let result = client
                .invoke(invoke.clone())
                .await
                .map(Response::into_inner)
                .map_err(|s| s.message().to_owned());
            seen.lock().unwrap().push(result);
            let mut stream = client
                .stream_invoke(invoke)
                .await
                .map_err(failed)?
                .into_inner();
            while let Some(message) = stream.message().await.map_err(failed)? {
                seen.lock().unwrap().push(Ok(message));
            }
            Ok(())
        }
    });
    let (outcome, saved) = deploy(Snapshot::empty(None), running.port, program).await;
    outcome.unwrap_or_else(|e| panic!("{e}"));

    // The order, and what each transform was shown.
    let calls = transformer.calls.lock().unwrap().clone();
    let order: Vec<(&str, &str)> = calls
        .iter()
        .filter(|(_, r)| r.name == "t" || r.name == "box")
        .map(|(token, r)| (r.name.as_str(), token.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            ("box", "parent"),
            ("box", "stack"),
            ("t", "own"),
            ("t", "silent"),
            ("t", "parent"),
            ("t", "stack")
        ]
    );
    let (_, own) = calls.iter().find(|(token, _)| token == "own").unwrap();
    assert_eq!(own.r#type, "hostile:index:Thing");
    assert_eq!(own.parent, BOX);
    assert!(own.custom);
    let from = as_struct(field(own.properties.as_ref().unwrap(), "from"));
    assert_eq!(field(from, SIG_KEY), &text(OUTPUT_VALUE_SIG));
    assert_eq!(
        field(from, "dependencies"),
        &list(vec![text(BOX)]),
        "an input's dependencies, as an output value"
    );

    // What the transforms answered is what was registered.
    let t = find(&saved, "t");
    assert_eq!(t.inputs["prefix"], PropertyValue::from("fromStack"));
    assert_eq!(t.inputs["from"], PropertyValue::from("the box"));
    assert_eq!(t.additional_secret_outputs, ["out"]);
    assert_eq!(
        t.property_dependencies.get("from"),
        Some(&vec![Urn::parse(BOX).unwrap()]),
        "the dependencies of a kept input survive the transforms"
    );
    assert_eq!(
        find(&saved, "box").inputs.get("prefix"),
        Some(&PropertyValue::from("fromParent"))
    );

    let results = std::mem::take(&mut *results.lock().unwrap());
    let [bad, failing, remote, invoked, streamed] = <[_; 5]>::try_from(results).unwrap();
    let bad = bad.unwrap_err();
    assert!(
        bad.contains(&format!(
            "registering hostile:index:Thing \"bad\": transform bad-option at 127.0.0.1:{port} failed: its answer was refused: options.ignore_changes[0]: invalid property path"
        )),
        "{bad}"
    );
    let failing = failing.unwrap_err();
    assert!(
        failing.contains("transform fails at") && failing.contains("failed: boom"),
        "{failing}"
    );
    let remote = remote.unwrap_err();
    assert!(
        remote.contains("transforms[0].target: \"10.0.0.1:4000\" is not a loopback address"),
        "{remote}"
    );
    for result in [invoked, streamed] {
        let answer = result.unwrap().r#return.unwrap();
        assert_eq!(field(&answer, "size"), &num(20.0), "the transformed args");
    }
    for name in ["bad", "failing", "remote"] {
        assert!(
            !saved.resources.iter().any(|r| r.urn.name() == name),
            "{name} was registered"
        );
    }
    assert!(!plugin.created.lock().unwrap().contains(&"bad".to_owned()));
}

/// The program that registers the remote component `c` with a transform of its own.
fn remote_with_transform(port: u16) -> Arc<SdkScript> {
    SdkScript::new(move |mut client| async move {
        client
            .register_resource(rpc::RegisterResourceRequest {
                r#type: "hostile:index:Comp".into(),
                name: "c".into(),
                parent: ROOT.into(),
                remote: true,
                transforms: vec![callback(port, "parent")],
                ..Default::default()
            })
            .await
            .map_err(failed)?;
        Ok(())
    })
}

/// A remote component's transforms run on its registration, again on the component its
/// provider registers, and on everything the provider registers below it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_component_s_transforms_reach_what_its_provider_registers() {
    let (plugin, running) = hostile_plugin().await;
    plugin.set(|s| {
        s.construct_registrations = vec![
            rpc::RegisterResourceRequest {
                r#type: "hostile:index:Comp".into(),
                name: "c".into(),
                parent: ROOT.into(),
                ..Default::default()
            },
            rpc::RegisterResourceRequest {
                r#type: "hostile:index:Thing".into(),
                name: "kid".into(),
                parent: COMPONENT.into(),
                custom: true,
                ..Default::default()
            },
        ];
    });
    let transformer = Arc::new(Transformer::default());
    let callbacks = serve(
        tonic::transport::Server::builder()
            .add_service(CallbacksServer::from_arc(transformer.clone())),
    )
    .await;
    let (outcome, saved) = deploy(
        Snapshot::empty(None),
        running.port,
        remote_with_transform(callbacks.port),
    )
    .await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
    let calls: Vec<(String, String)> = transformer
        .calls
        .lock()
        .unwrap()
        .iter()
        .map(|(token, r)| (token.clone(), r.name.clone()))
        .collect();
    let expected: Vec<(String, String)> = [("parent", "c"), ("parent", "c"), ("parent", "kid")]
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    assert_eq!(calls, expected);
    // The program's transform changed what the provider was handed and what it registered.
    let inputs = plugin.construct_inputs.lock().unwrap().clone().unwrap();
    assert_eq!(field(&inputs, "prefix"), &text("fromParent"));
    assert_eq!(
        find(&saved, "kid").inputs.get("prefix"),
        Some(&PropertyValue::from("fromParent"))
    );
}
