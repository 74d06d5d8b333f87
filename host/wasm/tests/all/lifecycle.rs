//! Every lifecycle method through the host, with the `random` and `file` example providers.

use cairn_engine::PropertyValue;
use cairn_engine::deploy::provider::{
    DeleteRequest, DiffChanges, DiffRequest, InvokeRequest, Provider, ProviderError, ReadRequest,
    UpdateRequest,
};
use cairn_engine::value::PropertyMap;

use crate::support::*;

const STRING: &str = "random:index/randomString:RandomString";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_runs_the_whole_lifecycle() {
    let (p, _logs) = provider("random");
    assert_eq!(p.package(), "random");
    assert_eq!(p.version(), Some(semver::Version::new(4, 21, 4)));

    // Schema and configuration.
    let schema: serde_json::Value = serde_json::from_str(&p.get_schema().await.unwrap()).unwrap();
    assert_eq!(schema["name"], "random");
    assert!(schema["resources"][STRING].is_object());
    let config = p
        .check_config(check("pulumi:providers:random", "default", serde_json::json!({})).request())
        .await
        .unwrap();
    assert!(config.failures.is_empty());
    let diff = p
        .diff_config(DiffRequest {
            urn: &urn("pulumi:providers:random", "default"),
            id: "id",
            old_inputs: &PropertyMap::new(),
            old_outputs: &PropertyMap::new(),
            news: &PropertyMap::new(),
            ignore_changes: &[],
        })
        .await
        .unwrap();
    assert!(!diff.requires_replacement());
    p.configure(PropertyMap::new(), false).await.unwrap();

    // Check applies defaults and reports failures by property.
    let checked = p
        .check(check(STRING, "s", serde_json::json!({"length": 12})).request())
        .await
        .unwrap();
    assert!(checked.failures.is_empty(), "{:?}", checked.failures);
    assert_eq!(checked.inputs["upper"], PropertyValue::Bool(true));
    let bad = p
        .check(check(STRING, "s", serde_json::json!({"length": 0})).request())
        .await
        .unwrap();
    assert_eq!(bad.failures[0].property, "length");

    // Create.
    let created = p
        .create(create(
            STRING,
            "s",
            serde_json::to_value(json_of(&checked.inputs)).unwrap(),
        ))
        .await
        .unwrap();
    let result = created.outputs["result"].as_str().unwrap().to_owned();
    assert_eq!(result.chars().count(), 12);
    assert_eq!(created.id, result);

    // Diff: a changed input replaces.
    let mut news = checked.inputs.clone();
    news.insert("length".into(), PropertyValue::Number(13.0));
    let diff = p
        .diff(DiffRequest {
            urn: &urn(STRING, "s"),
            id: &created.id,
            old_inputs: &checked.inputs,
            old_outputs: &created.outputs,
            news: &news,
            ignore_changes: &[],
        })
        .await
        .unwrap();
    assert_eq!(diff.changes, DiffChanges::Some);
    assert!(diff.requires_replacement());

    // Read returns the recorded state; import rebuilds it from the ID.
    let read = p
        .read(ReadRequest {
            urn: urn(STRING, "s"),
            id: created.id.clone(),
            inputs: checked.inputs.clone(),
            state: created.outputs.clone(),
        })
        .await
        .unwrap();
    assert_eq!(read.outputs, created.outputs);
    let imported = p
        .read(ReadRequest {
            urn: urn(STRING, "s"),
            id: "abcDEF".into(),
            inputs: PropertyMap::new(),
            state: PropertyMap::new(),
        })
        .await
        .unwrap();
    assert_eq!(imported.inputs["length"], PropertyValue::Number(6.0));

    // Update keeps the result; delete succeeds.
    let updated = p
        .update(UpdateRequest {
            urn: urn(STRING, "s"),
            id: created.id.clone(),
            old_inputs: checked.inputs.clone(),
            old_outputs: created.outputs.clone(),
            news: checked.inputs.clone(),
            timeout: 0.0,
            ignore_changes: vec![],
            preview: false,
        })
        .await
        .unwrap();
    assert_eq!(updated.outputs["result"].as_str(), Some(result.as_str()));
    p.delete(DeleteRequest {
        urn: urn(STRING, "s"),
        id: created.id,
        inputs: checked.inputs,
        outputs: created.outputs,
        timeout: 0.0,
    })
    .await
    .unwrap();

    // A password's result comes back secret; a preview's is unknown.
    let password = p
        .create(create(
            "random:index/randomPassword:RandomPassword",
            "pw",
            serde_json::json!({"length": 8, "lower": true, "upper": true, "numeric": true, "special": false,
                "minLower": 0, "minUpper": 0, "minNumeric": 0, "minSpecial": 0}),
        ))
        .await
        .unwrap();
    assert!(matches!(
        password.outputs["result"],
        PropertyValue::Secret(_)
    ));
    let mut preview = create(STRING, "s", serde_json::json!({"length": 4}));
    preview.preview = true;
    let planned = p.create(preview).await.unwrap();
    assert_eq!(planned.outputs["result"], PropertyValue::Computed);

    // What the provider does not implement is Unimplemented, named by method.
    let err = p
        .invoke(InvokeRequest {
            token: "random:index:nothing".into(),
            args: PropertyMap::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(err, ProviderError::Unimplemented { method: "Invoke" });
    p.cancel().await;
    // Guest errors pass through with the provider's own message.
    let err = p
        .create(create("random:index:Nope", "x", serde_json::json!({})))
        .await
        .unwrap_err();
    assert_contains(
        &failure(err),
        &["unknown resource type \"random:index:Nope\""],
    );
}

/// PropertyMap → JSON for the simple values check returns.
fn json_of(map: &PropertyMap) -> serde_json::Value {
    fn one(v: &PropertyValue) -> serde_json::Value {
        match v {
            PropertyValue::Null => serde_json::Value::Null,
            PropertyValue::Bool(b) => (*b).into(),
            PropertyValue::Number(n) => serde_json::json!(n),
            PropertyValue::String(s) => s.clone().into(),
            PropertyValue::Array(a) => a.iter().map(one).collect(),
            PropertyValue::Object(o) => json_of(o),
            other => panic!("unexpected {other:?}"),
        }
    }
    serde_json::Value::Object(map.iter().map(|(k, v)| (k.clone(), one(v))).collect())
}

const FILE: &str = "file:index:File";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_writes_only_inside_its_granted_directory() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let (p, logs) = provider_with(
        "file",
        serde_json::json!({"directories": [{"host": site, "guest": "/work", "write": true}]}),
    );
    p.configure(PropertyMap::new(), false).await.unwrap();

    let inputs =
        serde_json::json!({"path": "docs/index.html", "content": "<h1>hi</h1>", "mode": "0644"});
    let checked = p
        .check(check(FILE, "index", inputs.clone()).request())
        .await
        .unwrap();
    assert!(checked.failures.is_empty(), "{:?}", checked.failures);
    let escape = p
        .check(
            check(
                FILE,
                "evil",
                serde_json::json!({"path": "../outside", "content": "x"}),
            )
            .request(),
        )
        .await
        .unwrap();
    assert_eq!(escape.failures[0].property, "path");

    let created = p.create(create(FILE, "index", inputs)).await.unwrap();
    assert_eq!(created.id, "docs/index.html");
    assert_eq!(
        std::fs::read_to_string(site.join("docs/index.html")).unwrap(),
        "<h1>hi</h1>"
    );
    // The provider's log (mode is not applied) arrives with the resource's URN.
    let warning = logs
        .find("recorded but not applied")
        .expect("the mode warning");
    assert_eq!(warning.urn, Some(urn(FILE, "index")));
    assert_eq!(warning.provider, "file@0.1.0");

    // Drift is detected by read; update puts the content back; delete removes the file.
    std::fs::write(site.join("docs/index.html"), "changed").unwrap();
    let read = p
        .read(ReadRequest {
            urn: urn(FILE, "index"),
            id: created.id.clone(),
            inputs: checked.inputs.clone(),
            state: created.outputs.clone(),
        })
        .await
        .unwrap();
    assert_eq!(read.outputs["content"].as_str(), Some("changed"));
    p.update(UpdateRequest {
        urn: urn(FILE, "index"),
        id: created.id.clone(),
        old_inputs: read.inputs.clone(),
        old_outputs: read.outputs.clone(),
        news: checked.inputs.clone(),
        timeout: 0.0,
        ignore_changes: vec![],
        preview: false,
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(site.join("docs/index.html")).unwrap(),
        "<h1>hi</h1>"
    );
    p.delete(DeleteRequest {
        urn: urn(FILE, "index"),
        id: created.id,
        inputs: checked.inputs,
        outputs: created.outputs,
        timeout: 0.0,
    })
    .await
    .unwrap();
    assert!(!site.join("docs/index.html").exists());
    assert!(!dir.path().join("outside").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_grant_cannot_be_written_and_no_grant_means_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (p, _) = provider_with(
        "file",
        serde_json::json!({"directories": [{"host": dir.path(), "guest": "/work", "write": false}]}),
    );
    p.configure(PropertyMap::new(), false).await.unwrap();
    let err = p
        .create(create(
            FILE,
            "f",
            serde_json::json!({"path": "a.txt", "content": "x"}),
        ))
        .await
        .unwrap_err();
    assert!(!dir.path().join("a.txt").exists(), "{err:?}");

    // The manifest asks for /work but nothing is granted: the directory does not exist.
    let (p, _) = provider("file");
    p.configure(PropertyMap::new(), false).await.unwrap();
    p.create(create(
        FILE,
        "f",
        serde_json::json!({"path": "a.txt", "content": "x"}),
    ))
    .await
    .unwrap_err();
}
