//! A hostile plugin's replies, case by case: each is refused (or kept in part) with the exact
//! error, and the next call to the same plugin, answered honestly, works.

use cairn_engine::deploy::provider::{
    CheckRequest, CreateRequest, DiffRequest, InvokeRequest, Provider, ProviderError, ReadRequest,
    UpdateRequest,
};
use cairn_engine::limits::{MAX_ID_BYTES, MAX_KEY_BYTES, MAX_MESSAGE_BYTES};
use cairn_engine::state::codec::RESOURCE_REFERENCE_SIG;
use cairn_engine::urn::Urn;
use cairn_engine::value::{PropertyMap, PropertyValue};
use cairn_grpc::GrpcProvider;
use cairn_grpc::proto::pulumirpc as rpc;
use prost::Message;
use tonic::Status;

use crate::support::*;

const NAN_PROBLEM: &str = "is not a number JSON can store (NaN and infinities are refused)";

fn urn() -> Urn {
    Urn::parse("urn:pulumi:dev::proj::hostile:index:Thing::thing").unwrap()
}

fn inputs() -> PropertyMap {
    [("size".to_owned(), PropertyValue::Number(1.0))]
        .into_iter()
        .collect()
}

/// The call a case makes.
#[derive(Clone, Copy, Debug)]
enum Call {
    Create,
    Update,
    Check,
    Diff,
    Read,
    Invoke,
}

/// What a call gave, reduced to what the cases compare.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Success: the ID (Create, Read) and the top-level keys of the outputs or inputs.
    Ok { id: String, keys: Vec<String> },
    /// Check failures: how many, and the last one's reason.
    Failures { count: usize, last: String },
    Failed {
        message: String,
        partial: Option<(String, Vec<String>, Vec<String>)>,
    },
}

fn keys(map: &PropertyMap) -> Vec<String> {
    map.keys().cloned().collect()
}

async fn run(provider: &GrpcProvider, call: Call) -> Outcome {
    let result = match call {
        Call::Create => provider
            .create(CreateRequest {
                urn: urn(),
                properties: inputs(),
                timeout: 0.0,
                preview: false,
            })
            .await
            .map(|r| Outcome::Ok {
                id: r.id,
                keys: keys(&r.outputs),
            }),
        Call::Update => provider
            .update(UpdateRequest {
                urn: urn(),
                id: "thing-1".into(),
                old_inputs: inputs(),
                old_outputs: inputs(),
                news: inputs(),
                timeout: 0.0,
                ignore_changes: vec![],
                preview: false,
            })
            .await
            .map(|r| Outcome::Ok {
                id: String::new(),
                keys: keys(&r.outputs),
            }),
        Call::Check => provider
            .check(CheckRequest {
                urn: &urn(),
                olds: &PropertyMap::new(),
                news: &inputs(),
                random_seed: &[],
            })
            .await
            .map(|r| {
                if r.failures.is_empty() {
                    Outcome::Ok {
                        id: String::new(),
                        keys: keys(&r.inputs),
                    }
                } else {
                    Outcome::Failures {
                        count: r.failures.len(),
                        last: r.failures.last().unwrap().reason.clone(),
                    }
                }
            }),
        Call::Diff => provider
            .diff(DiffRequest {
                urn: &urn(),
                id: "thing-1",
                old_inputs: &inputs(),
                old_outputs: &inputs(),
                news: &inputs(),
                ignore_changes: &[],
            })
            .await
            .map(|r| Outcome::Ok {
                id: String::new(),
                keys: r.replace_keys,
            }),
        Call::Read => provider
            .read(ReadRequest {
                urn: urn(),
                id: "thing-1".into(),
                inputs: inputs(),
                state: inputs(),
            })
            .await
            .map(|r| Outcome::Ok {
                id: r.id,
                keys: keys(&r.outputs),
            }),
        Call::Invoke => provider
            .invoke(InvokeRequest {
                token: "hostile:index:get".into(),
                args: inputs(),
            })
            .await
            .map(|r| Outcome::Ok {
                id: String::new(),
                keys: keys(&r.outputs),
            }),
    };
    match result {
        Ok(outcome) => outcome,
        Err(ProviderError::Failed { message, partial }) => Outcome::Failed {
            message,
            partial: partial.map(|p| (p.id, keys(&p.inputs), keys(&p.outputs))),
        },
        Err(other) => panic!("{call:?}: {other:?}"),
    }
}

fn failed(message: &str) -> Outcome {
    Outcome::Failed {
        message: message.to_owned(),
        partial: None,
    }
}

fn partial(message: &str, id: &str, inputs: &[&str], outputs: &[&str]) -> Outcome {
    let owned = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect();
    Outcome::Failed {
        message: message.to_owned(),
        partial: Some((id.to_owned(), owned(inputs), owned(outputs))),
    }
}

fn honest(call: Call) -> Outcome {
    match call {
        Call::Create => Outcome::Ok {
            id: "thing-1".into(),
            keys: vec!["size".into()],
        },
        Call::Read => Outcome::Ok {
            id: "thing-1".into(),
            keys: vec!["size".into()],
        },
        Call::Diff => Outcome::Ok {
            id: String::new(),
            keys: vec![],
        },
        _ => Outcome::Ok {
            id: String::new(),
            keys: vec!["size".into()],
        },
    }
}

struct Case {
    name: &'static str,
    call: Call,
    script: Box<dyn FnOnce(&mut Script)>,
    expected: Outcome,
}

fn case(
    name: &'static str,
    call: Call,
    script: impl FnOnce(&mut Script) + 'static,
    expected: Outcome,
) -> Case {
    Case {
        name,
        call,
        script: Box::new(script),
        expected,
    }
}

fn created(outputs: prost_types::Struct) -> Result<rpc::CreateResponse, Status> {
    Ok(rpc::CreateResponse {
        id: "thing-1".into(),
        properties: Some(outputs),
    })
}

fn cases() -> Vec<Case> {
    let long_key = "k".repeat(MAX_KEY_BYTES + 1);
    let long_id = "i".repeat(MAX_ID_BYTES + 1);
    let shown_key = format!("[\"{}…\"]", "k".repeat(64));
    let bad_urn = "urn:pulumi:dev::proj::hostile:index:Thing::x\x1b[2J";
    let bad_urn_error = Urn::parse(bad_urn).unwrap_err();
    let huge = "e".repeat(200 * 1024);
    let thing = urn();
    vec![
        case(
            "NaN deep in a created resource's outputs",
            Call::Create,
            |s| {
                s.create = Some(created(fields(vec![
                    ("ok", text("kept")),
                    (
                        "tags",
                        object(vec![("a b", list(vec![null(), num(f64::NAN)]))]),
                    ),
                ])))
            },
            partial(
                &format!(
                    "hostile plugin Create: the resource \"thing-1\" was created but the plugin's outputs cannot be accepted (property tags[\"a b\"][1]: NaN {NAN_PROBLEM}); it is recorded without them"
                ),
                "thing-1",
                &["size"],
                &["ok"],
            ),
        ),
        case(
            "infinity and a long key in created outputs: both named, the rest kept",
            Call::Create,
            {
                let long_key = long_key.clone();
                move |s| {
                    s.create = Some(created(fields(vec![
                        ("port", num(f64::INFINITY)),
                        (&long_key, num(1.0)),
                        ("size", num(2.0)),
                    ])))
                }
            },
            partial(
                &format!(
                    "hostile plugin Create: the resource \"thing-1\" was created but the plugin's outputs cannot be accepted (property {shown_key}: the key is {} bytes long; keys may be at most {MAX_KEY_BYTES} bytes; property port: inf {NAN_PROBLEM}); it is recorded without them",
                    MAX_KEY_BYTES + 1
                ),
                "thing-1",
                &["size"],
                &["size"],
            ),
        ),
        case(
            "a resource reference with an escape sequence in its URN",
            Call::Create,
            move |s| {
                s.create = Some(created(fields(vec![(
                    "ref",
                    object(vec![
                        (
                            cairn_engine::state::codec::SIG_KEY,
                            text(RESOURCE_REFERENCE_SIG),
                        ),
                        ("urn", text(bad_urn)),
                    ]),
                )])))
            },
            partial(
                &format!(
                    "hostile plugin Create: the resource \"thing-1\" was created but the plugin's outputs cannot be accepted (property ref: a resource reference's urn: {bad_urn_error}); it is recorded without them"
                ),
                "thing-1",
                &["size"],
                &[],
            ),
        ),
        case(
            "no ID from Create",
            Call::Create,
            |s| {
                s.create = Some(Ok(rpc::CreateResponse {
                    id: String::new(),
                    properties: None,
                }))
            },
            failed(&format!(
                "hostile plugin Create: the plugin returned no ID; the resource {thing} may have been created and is not recorded"
            )),
        ),
        case(
            "an ID over the limit from Create",
            Call::Create,
            {
                let long_id = long_id.clone();
                move |s| {
                    s.create = Some(Ok(rpc::CreateResponse {
                        id: long_id,
                        properties: None,
                    }))
                }
            },
            failed(&format!(
                "hostile plugin Create: id: the ID is {} bytes long; at most {MAX_ID_BYTES} bytes are allowed; the resource {} may have been created and is not recorded",
                MAX_ID_BYTES + 1,
                urn()
            )),
        ),
        case(
            "an ID with escape sequences is opaque data: kept as it is",
            Call::Create,
            |s| {
                s.create = Some(Ok(rpc::CreateResponse {
                    id: "x\x1b]0;pwned\x07".into(),
                    properties: None,
                }))
            },
            Outcome::Ok {
                id: "x\x1b]0;pwned\x07".into(),
                keys: vec![],
            },
        ),
        case(
            "NaN in an updated resource's outputs",
            Call::Update,
            |s| {
                s.update = Some(Ok(rpc::UpdateResponse {
                    properties: Some(fields(vec![
                        ("size", num(f64::NEG_INFINITY)),
                        ("name", text("n")),
                    ])),
                }))
            },
            partial(
                &format!(
                    "hostile plugin Update: the resource \"thing-1\" was updated but the plugin's outputs cannot be accepted (property size: -inf {NAN_PROBLEM}); it is recorded without them"
                ),
                "thing-1",
                &["size"],
                &["name"],
            ),
        ),
        case(
            "a partial failure whose state holds NaN: the rest is kept",
            Call::Create,
            |s| {
                s.create = Some(Err(init_failed(
                    "created but not healthy",
                    rpc::ErrorResourceInitFailed {
                        id: "half-1".into(),
                        properties: Some(fields(vec![("ok", num(1.0)), ("bad", num(f64::NAN))])),
                        reasons: vec!["unhealthy".into()],
                        inputs: Some(fields(vec![("size", num(1.0))])),
                    },
                )))
            },
            partial(
                &format!(
                    "unhealthy; hostile plugin Create: properties of the partly created resource were dropped: output property bad: NaN {NAN_PROBLEM}"
                ),
                "half-1",
                &["size"],
                &["ok"],
            ),
        ),
        case(
            "a partial failure's reasons are its error (the first 20, each cut), not the status text",
            Call::Create,
            {
                let huge = huge.clone();
                move |s| {
                    let mut reasons = vec![huge.clone()];
                    reasons.extend((1..30).map(|i| format!("reason {i}")));
                    s.create = Some(Err(init_failed(
                        "Resource failed to initialize",
                        rpc::ErrorResourceInitFailed {
                            id: "half-1".into(),
                            reasons,
                            ..Default::default()
                        },
                    )))
                }
            },
            partial(
                &format!(
                    "{}… [{} more bytes dropped]; {}",
                    "e".repeat(MAX_MESSAGE_BYTES),
                    huge.len() - MAX_MESSAGE_BYTES,
                    (1..20)
                        .map(|i| format!("reason {i}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
                "half-1",
                &[],
                &[],
            ),
        ),
        case(
            "a partial failure whose ID cannot be stored",
            Call::Create,
            {
                let long_id = long_id.clone();
                move |s| {
                    s.create = Some(Err(init_failed(
                        "created but not healthy",
                        rpc::ErrorResourceInitFailed {
                            id: long_id,
                            ..Default::default()
                        },
                    )))
                }
            },
            failed(&format!(
                "created but not healthy; hostile plugin Create: the plugin reported a partly created resource with an ID that cannot be recorded (id: the ID is {} bytes long; at most {MAX_ID_BYTES} bytes are allowed); the resource may exist and is not tracked",
                MAX_ID_BYTES + 1
            )),
        ),
        case(
            "an error message over the limit is cut",
            Call::Create,
            {
                let huge = huge.clone();
                move |s| s.create = Some(Err(Status::unknown(huge)))
            },
            failed(&format!(
                "{}… [{} more bytes dropped]",
                "e".repeat(MAX_MESSAGE_BYTES),
                huge.len() - MAX_MESSAGE_BYTES
            )),
        ),
        case(
            "NaN in checked inputs",
            Call::Check,
            |s| {
                s.check = Some(Ok(rpc::CheckResponse {
                    inputs: Some(fields(vec![("size", num(f64::NAN))])),
                    failures: vec![],
                }))
            },
            failed(&format!(
                "hostile plugin Check: the plugin's reply was refused: property size: NaN {NAN_PROBLEM}"
            )),
        ),
        case(
            "a flood of check failures is capped",
            Call::Check,
            |s| {
                s.check = Some(Ok(rpc::CheckResponse {
                    inputs: None,
                    failures: (0..1000)
                        .map(|i| rpc::CheckFailure {
                            property: format!("p{i}"),
                            reason: "r".repeat(10_000),
                        })
                        .collect(),
                }))
            },
            Outcome::Failures {
                count: 101,
                last: "and 900 more failures (not shown)".into(),
            },
        ),
        case(
            "a replace key over the key limit",
            Call::Diff,
            {
                let long_key = long_key.clone();
                move |s| {
                    s.diff = Some(Ok(rpc::DiffResponse {
                        replaces: vec![long_key],
                        ..Default::default()
                    }))
                }
            },
            failed(&format!(
                "hostile plugin Diff: the plugin's reply was refused: replaces: the key is {} bytes long; at most {MAX_KEY_BYTES} bytes are allowed",
                MAX_KEY_BYTES + 1
            )),
        ),
        case(
            "Read answers an ID over the limit",
            Call::Read,
            {
                let long_id = long_id.clone();
                move |s| {
                    s.read = Some(Ok(rpc::ReadResponse {
                        id: long_id,
                        ..Default::default()
                    }))
                }
            },
            failed(&format!(
                "hostile plugin Read: the plugin's reply was refused: id: the ID is {} bytes long; at most {MAX_ID_BYTES} bytes are allowed",
                MAX_ID_BYTES + 1
            )),
        ),
        case(
            "Invoke returns negative infinity",
            Call::Invoke,
            |s| {
                s.invoke = Some(Ok(rpc::InvokeResponse {
                    r#return: Some(fields(vec![("n", num(f64::NEG_INFINITY))])),
                    failures: vec![],
                }))
            },
            failed(&format!(
                "hostile plugin Invoke: the plugin's reply was refused: property n: -inf {NAN_PROBLEM}"
            )),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_replies_are_refused_and_the_plugin_still_works() {
    let (plugin, provider, _running) = hostile().await;
    for case in cases() {
        plugin.set(case.script);
        let outcome = run(&provider, case.call).await;
        assert_eq!(outcome, case.expected, "{}", case.name);
        assert_eq!(
            run(&provider, case.call).await,
            honest(case.call),
            "the next call after: {}",
            case.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_over_the_size_limit_names_the_limit_and_the_setting() {
    let (plugin, provider, _running) = hostile().await;
    let reply = rpc::InvokeResponse {
        r#return: Some(fields(vec![(
            "blob",
            text(&"b".repeat(cairn_grpc::wire::DEFAULT_MAX_MESSAGE_BYTES)),
        )])),
        failures: vec![],
    };
    let size = reply.encoded_len() as u64;
    plugin.set(|s| s.invoke = Some(Ok(reply)));
    assert_eq!(
        run(&provider, Call::Invoke).await,
        failed(&format!(
            "hostile plugin Invoke: the plugin's reply was refused: the message is {size} bytes ({}), more than the limit of 64 MiB (CAIRN_GRPC_MAX_MESSAGE_MB raises it)",
            cairn_grpc::wire::mib(size)
        ))
    );
    assert_eq!(run(&provider, Call::Invoke).await, honest(Call::Invoke));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_nested_past_the_protobuf_limit_are_refused_as_invalid_messages() {
    let (plugin, provider, _running) = hostile().await;
    let mut deep = null();
    for _ in 0..200 {
        deep = list(vec![deep]);
    }
    plugin.set(|s| {
        s.invoke = Some(Ok(rpc::InvokeResponse {
            r#return: Some(fields(vec![("deep", deep)])),
            failures: vec![],
        }))
    });
    match run(&provider, Call::Invoke).await {
        Outcome::Failed {
            message,
            partial: None,
        } => {
            assert!(
                message.starts_with(
                    "hostile plugin Invoke: the plugin's reply is not a valid Invoke response: failed to decode Protobuf message: "
                ),
                "{message}"
            );
            assert!(message.contains("recursion limit reached"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(run(&provider, Call::Invoke).await, honest(Call::Invoke));
}
