//! What the pages show, as JSON: stored values with their secrets masked (or, with
//! `--show-secrets`, decrypted), a stack's resources and their relations, its configuration.
//!
//! Every string here came from a program, a provider or a state file and is untrusted; the page
//! only ever puts it into the document as text.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_engine::secrets::Crypter;
use cairn_engine::state::codec::{SECRET_SIG, SIG_KEY};
use cairn_engine::state::graph::{EdgeKind, EdgeKinds, ResourceGraph};
use cairn_engine::state::{DeploymentV3, JsonMap};
use serde_json::{Value, json};

/// How secret values reach the page.
#[derive(Clone)]
pub enum Reveal {
    /// Shown as `{"$secret": true}`: the value never leaves the server.
    Masked,
    /// Decrypted (`cairn console --show-secrets`): `{"$secret": true, "value": …}`.
    Shown(Arc<dyn Crypter>),
    /// Asked for, but the stack's secrets cannot be opened (the message says why).
    Unavailable(String),
}

/// The marker a masked secret becomes.
pub fn masked() -> Value {
    json!({"$secret": true})
}

/// A stored value (a resource's inputs or outputs, as the checkpoint holds them) for the page.
pub fn display_value(value: &Value, reveal: &Reveal) -> Value {
    match value {
        Value::Object(object)
            if object.get(SIG_KEY).and_then(Value::as_str) == Some(SECRET_SIG) =>
        {
            secret(object, reveal)
        }
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(k, v)| (k.clone(), display_value(v, reveal)))
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| display_value(v, reveal)).collect())
        }
        other => other.clone(),
    }
}

/// A stored map for the page.
pub fn display_map(map: &JsonMap, reveal: &Reveal) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), display_value(v, reveal)))
            .collect(),
    )
}

fn secret(object: &JsonMap, reveal: &Reveal) -> Value {
    match reveal {
        Reveal::Masked => masked(),
        Reveal::Unavailable(why) => json!({"$secret": true, "error": why}),
        Reveal::Shown(crypter) => {
            let plaintext = match (object.get("plaintext"), object.get("ciphertext")) {
                (Some(Value::String(plain)), _) => Ok(plain.clone()),
                (_, Some(Value::String(cipher))) => {
                    crypter.decrypt(cipher).map_err(|e| e.to_string())
                }
                _ => Err("a secret without ciphertext".to_owned()),
            };
            match plaintext
                .and_then(|p| serde_json::from_str::<Value>(&p).map_err(|e| e.to_string()))
            {
                Ok(inner) => json!({"$secret": true, "value": display_value(&inner, reveal)}),
                Err(why) => json!({"$secret": true, "error": format!("could not decrypt: {why}")}),
            }
        }
    }
}

/// A config value as an update recorded it (Pulumi's form: a string, an object, or
/// `{"secure": "<ciphertext>"}`, also as an object's leaves), for the page; and whether it
/// holds a secret.
pub fn display_config(value: &Value, reveal: &Reveal) -> (Value, bool) {
    let mut secret = false;
    let shown = config_value(value, reveal, &mut secret);
    (shown, secret)
}

fn config_value(value: &Value, reveal: &Reveal, secret: &mut bool) -> Value {
    let secure = value
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("secure"))
        .and_then(Value::as_str);
    if let Some(ciphertext) = secure {
        *secret = true;
        return match reveal {
            Reveal::Masked => masked(),
            Reveal::Unavailable(why) => json!({"$secret": true, "error": why}),
            Reveal::Shown(crypter) => match crypter.decrypt(ciphertext) {
                Ok(plain) => json!({"$secret": true, "value": plain}),
                Err(e) => json!({"$secret": true, "error": format!("could not decrypt: {e}")}),
            },
        };
    }
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(k, v)| (k.clone(), config_value(v, reveal, secret)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| config_value(v, reveal, secret))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A stack's latest deployment, indexed for the pages.
pub struct StackView {
    pub deployment: DeploymentV3,
    pub graph: ResourceGraph,
    /// For each graph node, the index of its (last) entry in `deployment.resources`, if any.
    entry: Vec<Option<usize>>,
}

impl StackView {
    pub fn new(deployment: DeploymentV3) -> StackView {
        let graph = ResourceGraph::of(&deployment.resources, EdgeKinds::default());
        let mut entry = vec![None; graph.nodes.len()];
        let by_urn: BTreeMap<&str, usize> = graph
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.urn.as_str(), i))
            .collect();
        for (at, resource) in deployment.resources.iter().enumerate() {
            if let Some(&node) = by_urn.get(resource.urn.as_str()) {
                entry[node] = Some(at);
            }
        }
        StackView {
            deployment,
            graph,
            entry,
        }
    }

    /// The resource list: enough for the tree and the table, no property values.
    pub fn resources(&self) -> Value {
        let rows: Vec<Value> = self
            .deployment
            .resources
            .iter()
            .map(|r| {
                json!({
                    "urn": r.urn.as_str(),
                    "type": r.resource_type.as_str(),
                    "name": r.urn.name(),
                    "parent": r.parent.as_ref().map(|p| p.as_str()),
                    "custom": r.custom,
                    "id": r.id,
                    "provider": r.provider.as_ref().map(|p| p.urn.as_str()),
                    "protect": r.protect,
                    "delete": r.delete,
                })
            })
            .collect();
        Value::Array(rows)
    }

    /// The stack's outputs: those of its `pulumi:pulumi:Stack` resource.
    pub fn outputs(&self, reveal: &Reveal) -> Value {
        self.deployment
            .resources
            .iter()
            .find(|r| r.resource_type.as_str() == "pulumi:pulumi:Stack" && r.parent.is_none())
            .map(|r| display_map(&r.outputs, reveal))
            .unwrap_or_else(|| json!({}))
    }

    /// One resource in full: its properties, provider, and what it relates to.
    pub fn resource(&self, urn: &str, reveal: &Reveal) -> Option<Value> {
        let node = self
            .graph
            .nodes
            .iter()
            .position(|n| n.urn.as_str() == urn)?;
        let mut dependents = Vec::new();
        let mut children = Vec::new();
        for edge in self.graph.nodes.iter().flat_map(|n| &n.edges) {
            let other = self.graph.nodes[edge.to].urn.as_str();
            match edge.kind {
                EdgeKind::Dependency if edge.from == node => {
                    dependents.push(json!({"urn": other, "properties": edge.properties}));
                }
                EdgeKind::Parent if edge.to == node => {
                    children.push(self.graph.nodes[edge.from].urn.as_str());
                }
                _ => {}
            }
        }
        let Some(at) = self.entry[node] else {
            // Named by another resource but absent from the state.
            return Some(json!({
                "urn": urn,
                "missing": true,
                "dependents": dependents,
                "children": children,
            }));
        };
        let r = &self.deployment.resources[at];
        let property_dependencies: BTreeMap<&str, Vec<&str>> = r
            .property_dependencies
            .iter()
            .map(|(k, urns)| (k.as_str(), urns.iter().map(|u| u.as_str()).collect()))
            .collect();
        Some(json!({
            "urn": r.urn.as_str(),
            "type": r.resource_type.as_str(),
            "name": r.urn.name(),
            "id": r.id,
            "custom": r.custom,
            "parent": r.parent.as_ref().map(|p| p.as_str()),
            "provider": r.provider.as_ref().map(|p| json!({"urn": p.urn.as_str(), "id": p.id})),
            "protect": r.protect,
            "external": r.external,
            "delete": r.delete,
            "pendingReplacement": r.pending_replacement,
            "inputs": display_map(&r.inputs, reveal),
            "outputs": display_map(&r.outputs, reveal),
            "dependencies": r.dependencies.iter().map(|u| u.as_str()).collect::<Vec<_>>(),
            "propertyDependencies": property_dependencies,
            "dependents": dependents,
            "children": children,
            "initErrors": r.init_errors,
        }))
    }
}

#[cfg(test)]
mod tests {
    use cairn_engine::secrets::SecretsError;

    use super::*;

    /// Reverses the text: enough to tell decrypted from masked.
    struct Mirror;

    impl Crypter for Mirror {
        fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
            Ok(plaintext.chars().rev().collect())
        }
        fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
            Ok(ciphertext.chars().rev().collect())
        }
    }

    #[test]
    fn secrets_are_masked_at_any_depth_unless_shown() {
        let ciphertext: String = "\"hunter2\"".chars().rev().collect();
        let stored = json!({
            "plain": "visible",
            "nested": [{"deep": {SIG_KEY: SECRET_SIG, "ciphertext": ciphertext}}],
        });
        let masked_text = display_value(&stored, &Reveal::Masked).to_string();
        assert!(!masked_text.contains("hunter2") && !masked_text.contains("2retnuh"));
        assert_eq!(
            display_value(&stored, &Reveal::Masked)["nested"][0]["deep"],
            json!({"$secret": true})
        );
        assert_eq!(
            display_value(&stored, &Reveal::Shown(Arc::new(Mirror)))["nested"][0]["deep"],
            json!({"$secret": true, "value": "hunter2"})
        );
        assert_eq!(display_value(&stored, &Reveal::Masked)["plain"], "visible");
    }

    #[test]
    fn secure_config_is_masked_unless_shown() {
        let (value, secret) = display_config(&json!({"secure": "terces"}), &Reveal::Masked);
        assert!(secret);
        assert_eq!(value, json!({"$secret": true}));
        let (value, _) = display_config(
            &json!({"secure": "terces"}),
            &Reveal::Shown(Arc::new(Mirror)),
        );
        assert_eq!(value, json!({"$secret": true, "value": "secret"}));
        let (value, secret) = display_config(&json!("plain"), &Reveal::Masked);
        assert!(!secret);
        assert_eq!(value, json!("plain"));
        let nested = json!({"db": {"user": "admin", "password": {"secure": "terces"}}});
        let (value, secret) = display_config(&nested, &Reveal::Masked);
        assert!(secret);
        assert_eq!(
            value,
            json!({"db": {"user": "admin", "password": {"$secret": true}}})
        );
    }
}
