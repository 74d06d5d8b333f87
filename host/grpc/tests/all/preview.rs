//! Previews never act: a preview's `Create` and `Update` reach the plugin only when its
//! `Configure` response says it supports previews; otherwise the client answers itself, as
//! Pulumi's provider client does (the inputs as the outputs, or nothing when the provider's
//! configuration held unknowns).

use std::sync::atomic::Ordering;

use cairn_engine::deploy::provider::{CreateRequest, Provider, UpdateRequest};
use cairn_engine::urn::Urn;
use cairn_engine::value::{PropertyMap, PropertyValue};

use crate::support::*;

fn urn(name: &str) -> Urn {
    Urn::parse(&format!(
        "urn:pulumi:dev::proj::hostile:index:Thing::{name}"
    ))
    .unwrap()
}

fn inputs(size: f64) -> PropertyMap {
    [("size".to_owned(), PropertyValue::Number(size))]
        .into_iter()
        .collect()
}

fn create(name: &str, preview: bool) -> CreateRequest {
    CreateRequest {
        urn: urn(name),
        properties: inputs(1.0),
        timeout: 0.0,
        preview,
    }
}

fn update(name: &str, preview: bool) -> UpdateRequest {
    UpdateRequest {
        urn: urn(name),
        id: format!("{name}-1"),
        old_inputs: inputs(1.0),
        old_outputs: inputs(1.0),
        news: inputs(2.0),
        timeout: 0.0,
        ignore_changes: vec![],
        preview,
    }
}

struct Case {
    name: &'static str,
    supports_preview: bool,
    /// The provider's configuration holds an unknown (a preview of a provider whose config
    /// comes from another resource's output).
    unknown_config: bool,
    /// What the plugin received from the two preview calls.
    received: &'static [&'static str],
    /// The preview Create's answer: (ID, outputs).
    created: (&'static str, Option<f64>),
    /// The preview Update's outputs.
    updated: Option<f64>,
}

/// `size` of the outputs, `None` when they are empty.
fn size(outputs: &PropertyMap) -> Option<f64> {
    assert!(outputs.len() <= 1, "{outputs:?}");
    outputs.get("size").map(|v| match v {
        PropertyValue::Number(n) => *n,
        other => panic!("size is {other:?}"),
    })
}

#[tokio::test]
async fn a_preview_calls_create_and_update_only_on_plugins_that_support_previews() {
    let cases = [
        Case {
            name: "no preview support: the inputs answer, the plugin hears nothing",
            supports_preview: false,
            unknown_config: false,
            received: &[],
            created: ("", Some(1.0)),
            updated: Some(2.0),
        },
        Case {
            name: "preview support: the plugin answers with preview set",
            supports_preview: true,
            unknown_config: false,
            received: &["Create a (preview)", "Update a (preview)"],
            created: ("a-1", Some(1.0)),
            updated: Some(2.0),
        },
        Case {
            name: "unknown configuration: nothing is known, the plugin hears nothing",
            supports_preview: true,
            unknown_config: true,
            received: &[],
            created: ("", None),
            updated: None,
        },
        Case {
            name: "unknown configuration, no preview support",
            supports_preview: false,
            unknown_config: true,
            received: &[],
            created: ("", None),
            updated: None,
        },
    ];
    for case in cases {
        let plugin = Hostile::default();
        plugin
            .supports_preview
            .store(case.supports_preview, Ordering::SeqCst);
        let (plugin, running) = hostile_served(plugin).await;
        let provider = provider_at(running.port).await;
        let mut config = PropertyMap::new();
        if case.unknown_config {
            config.insert("region".into(), PropertyValue::Computed);
        }
        provider.configure(config, true).await.unwrap();

        let created = provider.create(create("a", true)).await.unwrap();
        let updated = provider.update(update("a", true)).await.unwrap();
        assert_eq!(
            (created.id.as_str(), size(&created.outputs)),
            case.created,
            "{}",
            case.name
        );
        assert_eq!(size(&updated.outputs), case.updated, "{}", case.name);
        assert_eq!(
            *plugin.mutations.lock().unwrap(),
            case.received,
            "{}",
            case.name
        );
    }
}

#[tokio::test]
async fn outside_a_preview_create_and_update_reach_a_plugin_without_preview_support() {
    let (plugin, running) = hostile_served(Hostile::default()).await;
    let provider = provider_at(running.port).await;
    provider.configure(PropertyMap::new(), false).await.unwrap();
    let created = provider.create(create("a", false)).await.unwrap();
    assert_eq!(created.id, "a-1");
    provider.update(update("a", false)).await.unwrap();
    assert_eq!(*plugin.mutations.lock().unwrap(), ["Create a", "Update a"]);
}
