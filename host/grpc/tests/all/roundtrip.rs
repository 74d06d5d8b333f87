//! An in-process provider served over gRPC ([`serve_provider`]) and driven by [`GrpcProvider`]:
//! every lifecycle method crosses the real protocol in both directions.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::deploy::provider::{
    CheckFailure, CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest,
    DiffChanges, DiffKind, DiffRequest, DiffResult, InvokeRequest, InvokeResult, PartialState,
    PropertyDiff, Provider, ProviderError, ReadRequest, ReadResult, UpdateRequest, UpdateResult,
};
use cairn_engine::urn::Urn;
use cairn_engine::value::{PropertyMap, PropertyValue};
use cairn_grpc::{GrpcProvider, serve_provider};

/// Records what it receives; behaviour keyed by the resource name.
#[derive(Default)]
struct Echo {
    configured: Mutex<Option<PropertyMap>>,
    deleted: Mutex<Vec<String>>,
}

fn urn(name: &str) -> Urn {
    Urn::parse(&format!("urn:pulumi:dev::proj::echo:index:Thing::{name}")).unwrap()
}

fn props(pairs: &[(&str, PropertyValue)]) -> PropertyMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn text(s: &str) -> PropertyValue {
    PropertyValue::String(s.to_owned())
}

#[async_trait]
impl Provider for Echo {
    fn package(&self) -> &str {
        "echo"
    }

    fn version(&self) -> Option<semver::Version> {
        Some(semver::Version::new(1, 2, 3))
    }

    async fn get_schema(&self) -> Result<String, ProviderError> {
        Ok(r#"{"name":"echo"}"#.to_owned())
    }

    async fn configure(&self, inputs: PropertyMap, _preview: bool) -> Result<(), ProviderError> {
        *self.configured.lock().unwrap() = Some(inputs);
        Ok(())
    }

    async fn check(&self, r: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        let mut failures = vec![];
        if r.news
            .get("size")
            .is_some_and(|v| v == &PropertyValue::Number(-1.0))
        {
            failures.push(CheckFailure {
                property: "size".into(),
                reason: "must not be negative".into(),
            });
        }
        Ok(CheckResult {
            inputs: r.news.clone(),
            failures,
        })
    }

    async fn diff(&self, r: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        let changed = r.old_inputs.get("size") != r.news.get("size");
        Ok(DiffResult {
            changes: if changed {
                DiffChanges::Some
            } else {
                DiffChanges::None
            },
            replace_keys: if changed { vec!["size".into()] } else { vec![] },
            changed_keys: if changed { vec!["size".into()] } else { vec![] },
            detailed_diff: Some(
                [(
                    "size".to_owned(),
                    PropertyDiff {
                        kind: DiffKind::UpdateReplace,
                        input_diff: true,
                    },
                )]
                .into_iter()
                .filter(|_| changed)
                .collect(),
            ),
            delete_before_replace: true,
            ..DiffResult::default()
        })
    }

    async fn create(&self, r: CreateRequest) -> Result<CreateResult, ProviderError> {
        if r.urn.name() == "half" {
            return Err(ProviderError::Failed {
                message: "created but never became healthy".into(),
                partial: Some(Box::new(PartialState {
                    id: "half-1".into(),
                    inputs: r.properties.clone(),
                    outputs: r.properties,
                    reasons: vec![],
                })),
            });
        }
        let mut outputs = r.properties;
        outputs.insert("created".into(), PropertyValue::Bool(!r.preview));
        Ok(CreateResult {
            id: format!("{}-1", r.urn.name()),
            outputs,
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

    async fn delete(&self, r: DeleteRequest) -> Result<(), ProviderError> {
        self.deleted.lock().unwrap().push(r.id);
        Ok(())
    }

    async fn invoke(&self, r: InvokeRequest) -> Result<InvokeResult, ProviderError> {
        Ok(InvokeResult {
            outputs: props(&[
                ("token", text(&r.token)),
                ("args", PropertyValue::Object(Box::new(r.args))),
            ]),
            failures: vec![],
        })
    }
}

async fn connected() -> (Arc<Echo>, GrpcProvider, cairn_grpc::Served) {
    let echo = Arc::new(Echo::default());
    let served = serve_provider(echo.clone()).await.unwrap();
    let channel = cairn_grpc::plugin::connect(
        "echo",
        served.address.port(),
        std::time::Duration::from_secs(5),
    )
    .await
    .unwrap();
    let mut client = GrpcProvider::over("echo", channel, None);
    client.introduce("127.0.0.1:1").await.unwrap();
    (echo, client, served)
}

#[tokio::test]
async fn every_lifecycle_method_crosses_the_protocol() {
    let (echo, client, _served) = connected().await;
    assert_eq!(client.version(), Some(semver::Version::new(1, 2, 3)));
    assert_eq!(client.get_schema().await.unwrap(), r#"{"name":"echo"}"#);

    client
        .configure(
            props(&[
                ("region", text("eu")),
                ("token", PropertyValue::secret(text("t"))),
            ]),
            false,
        )
        .await
        .unwrap();
    assert_eq!(
        echo.configured.lock().unwrap().as_ref().unwrap()["region"],
        text("eu")
    );

    let news = props(&[
        ("size", PropertyValue::Number(2.0)),
        ("password", PropertyValue::secret(text("hunter2"))),
        ("later", PropertyValue::Computed),
    ]);
    let checked = client
        .check(CheckRequest {
            urn: &urn("a"),
            olds: &PropertyMap::new(),
            news: &news,
            random_seed: &[1, 2, 3],
        })
        .await
        .unwrap();
    assert!(checked.failures.is_empty());
    assert_eq!(
        checked.inputs["password"],
        PropertyValue::secret(text("hunter2")),
        "secrets survive both directions"
    );
    assert_eq!(checked.inputs["later"], PropertyValue::Computed);

    let failed = client
        .check(CheckRequest {
            urn: &urn("a"),
            olds: &PropertyMap::new(),
            news: &props(&[("size", PropertyValue::Number(-1.0))]),
            random_seed: &[],
        })
        .await
        .unwrap();
    assert_eq!(failed.failures[0].property, "size");

    let diff = client
        .diff(DiffRequest {
            urn: &urn("a"),
            id: "a-1",
            old_inputs: &props(&[("size", PropertyValue::Number(1.0))]),
            old_outputs: &PropertyMap::new(),
            news: &props(&[("size", PropertyValue::Number(2.0))]),
            ignore_changes: &[],
        })
        .await
        .unwrap();
    assert_eq!(diff.changes, DiffChanges::Some);
    assert_eq!(diff.replace_keys, ["size"]);
    assert!(diff.delete_before_replace);
    assert_eq!(
        diff.detailed_diff.unwrap()["size"].kind,
        DiffKind::UpdateReplace
    );

    let created = client
        .create(CreateRequest {
            urn: urn("a"),
            properties: props(&[("size", PropertyValue::Number(2.0))]),
            timeout: 0.0,
            preview: false,
        })
        .await
        .unwrap();
    assert_eq!(created.id, "a-1");
    assert_eq!(created.outputs["created"], PropertyValue::Bool(true));

    let read = client
        .read(ReadRequest {
            urn: urn("a"),
            id: "a-1".into(),
            inputs: props(&[("size", PropertyValue::Number(2.0))]),
            state: created.outputs.clone(),
        })
        .await
        .unwrap();
    assert_eq!(read.id, "a-1");
    let mut expected = created.outputs.clone();
    expected.sort_keys();
    assert_eq!(
        read.outputs, expected,
        "struct fields come back in key order"
    );

    let updated = client
        .update(UpdateRequest {
            urn: urn("a"),
            id: "a-1".into(),
            old_inputs: PropertyMap::new(),
            old_outputs: PropertyMap::new(),
            news: props(&[("size", PropertyValue::Number(3.0))]),
            timeout: 0.0,
            ignore_changes: vec![],
            preview: false,
        })
        .await
        .unwrap();
    assert_eq!(updated.outputs["size"], PropertyValue::Number(3.0));

    client
        .delete(DeleteRequest {
            urn: urn("a"),
            id: "a-1".into(),
            inputs: PropertyMap::new(),
            outputs: PropertyMap::new(),
            timeout: 0.0,
        })
        .await
        .unwrap();
    assert_eq!(*echo.deleted.lock().unwrap(), ["a-1"]);

    let invoked = client
        .invoke(InvokeRequest {
            token: "echo:index:getThing".into(),
            args: props(&[("n", PropertyValue::Number(1.0))]),
        })
        .await
        .unwrap();
    assert_eq!(invoked.outputs["token"], text("echo:index:getThing"));
}

#[tokio::test]
async fn partial_failures_keep_their_state() {
    let (_echo, client, _served) = connected().await;
    client.configure(PropertyMap::new(), false).await.unwrap();
    let err = client
        .create(CreateRequest {
            urn: urn("half"),
            properties: props(&[("size", PropertyValue::Number(1.0))]),
            timeout: 0.0,
            preview: false,
        })
        .await
        .unwrap_err();
    match err {
        ProviderError::Failed { message, partial } => {
            assert_eq!(message, "created but never became healthy");
            let partial = partial.expect("the partial state crosses as ErrorResourceInitFailed");
            assert_eq!(partial.id, "half-1");
            assert_eq!(partial.inputs["size"], PropertyValue::Number(1.0));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn construct_on_a_served_provider_is_unimplemented() {
    let (_echo, _client, served) = connected().await;
    let channel = cairn_grpc::plugin::connect(
        "echo",
        served.address.port(),
        std::time::Duration::from_secs(5),
    )
    .await
    .unwrap();
    let mut raw =
        cairn_grpc::proto::pulumirpc::resource_provider_client::ResourceProviderClient::new(
            channel,
        );
    let status = raw
        .construct(cairn_grpc::proto::pulumirpc::ConstructRequest::default())
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented);
}
