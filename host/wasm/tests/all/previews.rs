//! Previews never act. A provider that implements only `create`, `update` and `delete`
//! (`side-effects`, which writes a file in its granted directory for every act) is previewed
//! through the SDK's defaults and must write nothing; the example providers' own preview
//! methods touch nothing either. Each case also runs for real, so the test can tell an act.

use std::path::Path;

use cairn_engine::PropertyValue;
use cairn_engine::deploy::provider::{Provider, UpdateRequest};
use cairn_wasm::WasmProvider;

use crate::support::*;

/// A configured provider with `dir` granted at `guest`, writable.
async fn granted(name: &str, dir: &Path, guest: &str) -> WasmProvider {
    let (p, _) = provider_with(
        name,
        serde_json::json!({"directories": [{"host": dir, "guest": guest, "write": true}]}),
    );
    p.configure(Default::default(), false).await.unwrap();
    p
}

fn preview_create(
    resource_type: &str,
    name: &str,
    inputs: serde_json::Value,
) -> cairn_engine::deploy::provider::CreateRequest {
    let mut request = create(resource_type, name, inputs);
    request.preview = true;
    request
}

fn update(
    resource_type: &str,
    name: &str,
    id: &str,
    olds: serde_json::Value,
    news: serde_json::Value,
    preview: bool,
) -> UpdateRequest {
    UpdateRequest {
        urn: urn(resource_type, name),
        id: id.to_owned(),
        old_inputs: map(olds.clone()),
        old_outputs: map(olds),
        news: map(news),
        timeout: 0.0,
        ignore_changes: vec![],
        preview,
    }
}

/// The files under `dir` with their contents.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap_or_default())
        })
        .collect();
    all.sort();
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_through_the_sdk_defaults_runs_no_create_or_update_body() {
    const MARK: &str = "side-effects:index:Mark";
    let dir = tempfile::tempdir().unwrap();
    let p = granted("side-effects", dir.path(), "/out").await;

    // Even a create that would trap after acting is only described.
    let inputs = serde_json::json!({"content": "planned", "trap": "panic"});
    let previewed = p
        .create(preview_create(MARK, "m", inputs.clone()))
        .await
        .unwrap();
    assert_eq!(previewed.id, "");
    assert_eq!(previewed.outputs, map(inputs));
    assert_eq!(files(dir.path()), [], "a preview of create wrote");

    // For real, the same provider acts.
    let created = p
        .create(create(MARK, "m", serde_json::json!({"content": "v1"})))
        .await
        .unwrap();
    assert_eq!(created.id, "m");
    assert_eq!(files(dir.path()), [("m".to_owned(), "v1".to_owned())]);

    let news = serde_json::json!({"content": "v2"});
    let olds = serde_json::json!({"content": "v1"});
    let previewed = p
        .update(update(MARK, "m", "m", olds.clone(), news.clone(), true))
        .await
        .unwrap();
    assert_eq!(previewed.outputs, map(news.clone()));
    assert_eq!(
        files(dir.path()),
        [("m".to_owned(), "v1".to_owned())],
        "a preview of update wrote"
    );
    p.update(update(MARK, "m", "m", olds, news, false))
        .await
        .unwrap();
    assert_eq!(files(dir.path()), [("m".to_owned(), "v2".to_owned())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_providers_previews_touch_nothing() {
    // file: a file, a directory and an update, previewed, leave the directory as it was.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kept"), "old").unwrap();
    let p = granted("file", dir.path(), "/work").await;
    let created = p
        .create(preview_create(
            "file:index:File",
            "f",
            serde_json::json!({"path": "new.txt", "content": "hello"}),
        ))
        .await
        .unwrap();
    assert_eq!(created.id, "");
    assert_eq!(created.outputs["size"], PropertyValue::Number(5.0));
    p.create(preview_create(
        "file:index:Directory",
        "d",
        serde_json::json!({"path": "sub/dir"}),
    ))
    .await
    .unwrap();
    let updated = p
        .update(update(
            "file:index:File",
            "k",
            "kept",
            serde_json::json!({"path": "kept", "content": "old"}),
            serde_json::json!({"path": "kept", "content": "changed"}),
            true,
        ))
        .await
        .unwrap();
    assert_eq!(updated.outputs["size"], PropertyValue::Number(7.0));
    assert_eq!(files(dir.path()), [("kept".to_owned(), "old".to_owned())]);
    // For real, the same requests act.
    p.create(create(
        "file:index:File",
        "f",
        serde_json::json!({"path": "new.txt", "content": "hello"}),
    ))
    .await
    .unwrap();
    assert!(dir.path().join("new.txt").exists());

    // random: the value is unknown until the resource is created.
    let (random, _) = provider("random");
    random.configure(Default::default(), false).await.unwrap();
    let previewed = random
        .create(preview_create(
            "random:index/randomString:RandomString",
            "s",
            serde_json::json!({"length": 8}),
        ))
        .await
        .unwrap();
    assert_eq!(previewed.outputs["result"], PropertyValue::Computed);
    assert_eq!(previewed.id, "");

    // hello (the SDK README's sample): what follows from the inputs is known.
    let (hello, _) = provider("hello");
    hello.configure(Default::default(), false).await.unwrap();
    let previewed = hello
        .create(preview_create(
            "hello:index:Greeting",
            "g",
            serde_json::json!({"name": "Ada"}),
        ))
        .await
        .unwrap();
    assert_eq!(
        previewed.outputs["message"],
        PropertyValue::from("Hello, Ada!")
    );
    assert_eq!(previewed.id, "");
}
