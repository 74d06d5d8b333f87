//! The CNCF Wasm OCI artifact layout: an OCI image manifest whose config has media type
//! [`WASM_CONFIG_MEDIA_TYPE`] and whose one layer, of media type [`WASM_LAYER_MEDIA_TYPE`], is
//! the component byte for byte. Building what `publish` pushes, and checking what a registry
//! serves before a byte of the component is fetched.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::digest::Digest;

pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
pub const DOCKER_MANIFEST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The layer annotation that names the component's file.
pub const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";
pub const VERSION_ANNOTATION: &str = "org.opencontainers.image.version";
pub const CREATED_ANNOTATION: &str = "org.opencontainers.image.created";

/// The most bytes of a manifest Cairn reads.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;
/// The most bytes of a component Cairn fetches.
pub const MAX_COMPONENT_BYTES: u64 = 256 * 1024 * 1024;
/// The most bytes of a config blob Cairn fetches.
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// A content descriptor: what a manifest says about one blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: Digest,
    pub size: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An OCI image manifest (the fields Cairn reads and writes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The config blob of a Wasm artifact (`application/vnd.wasm.config.v0+json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    pub created: String,
    pub architecture: String,
    pub os: String,
    pub layer_digests: Vec<Digest>,
    pub component: ComponentSummary,
}

/// What a component imports and exports (its top-level interface names).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentSummary {
    pub exports: Vec<String>,
    pub imports: Vec<String>,
}

/// A component ready to push: its config blob, the manifest and their bytes.
pub struct Artifact {
    pub config: Vec<u8>,
    pub manifest: Vec<u8>,
    pub manifest_digest: Digest,
}

/// The artifact for `component`, titled `file_name`, published as `version`.
pub fn artifact(
    component: &[u8],
    file_name: &str,
    version: &semver::Version,
    created: chrono::DateTime<chrono::Utc>,
) -> Artifact {
    let layer = Digest::of(component);
    let created = created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let config = WasmConfig {
        created: created.clone(),
        architecture: "wasm".into(),
        os: "wasip2".into(),
        layer_digests: vec![layer],
        component: summarize(component),
    };
    let config = serde_json::to_vec(&config).unwrap_or_default();
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.into()),
        artifact_type: None,
        config: Descriptor {
            media_type: WASM_CONFIG_MEDIA_TYPE.into(),
            digest: Digest::of(&config),
            size: config.len() as u64,
            annotations: BTreeMap::new(),
        },
        layers: vec![Descriptor {
            media_type: WASM_LAYER_MEDIA_TYPE.into(),
            digest: layer,
            size: component.len() as u64,
            annotations: BTreeMap::from([(TITLE_ANNOTATION.to_owned(), file_name.to_owned())]),
        }],
        annotations: BTreeMap::from([
            (CREATED_ANNOTATION.to_owned(), created),
            (VERSION_ANNOTATION.to_owned(), version.to_string()),
        ]),
    };
    let manifest = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
    Artifact {
        config,
        manifest_digest: Digest::of(&manifest),
        manifest,
    }
}

/// Parses a manifest a registry served and checks that it is a Wasm artifact: one image
/// manifest (not an index), the Wasm config media type, exactly one `application/wasm` layer of
/// a size Cairn will fetch. Returns the manifest; its one layer is the component.
pub fn check(bytes: &[u8]) -> Result<Manifest, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the manifest is not JSON: {e}"))?;
    let media_type = value.get("mediaType").and_then(|m| m.as_str());
    if media_type == Some(INDEX_MEDIA_TYPE) || value.get("manifests").is_some() {
        return Err("it is an image index (several manifests), not one Wasm artifact".to_owned());
    }
    let manifest: Manifest = serde_json::from_value(value)
        .map_err(|e| format!("the manifest is not an OCI image manifest: {e}"))?;
    if manifest.schema_version != 2 {
        return Err(format!(
            "the manifest has schemaVersion {}, not 2",
            manifest.schema_version
        ));
    }
    if let Some(media_type) = &manifest.media_type
        && media_type != MANIFEST_MEDIA_TYPE
    {
        return Err(format!(
            "the manifest's media type is {media_type:?}, not {MANIFEST_MEDIA_TYPE:?}"
        ));
    }
    if manifest.config.media_type != WASM_CONFIG_MEDIA_TYPE {
        return Err(format!(
            "its config has media type {:?}, not {WASM_CONFIG_MEDIA_TYPE:?}: it is not a Wasm artifact",
            manifest.config.media_type
        ));
    }
    if manifest.config.size > MAX_CONFIG_BYTES {
        return Err(format!(
            "its config is {} bytes, more than the {MAX_CONFIG_BYTES} Cairn reads",
            manifest.config.size
        ));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(format!(
            "it has {} layers; a Wasm artifact has exactly one, the component",
            manifest.layers.len()
        ));
    };
    if layer.media_type != WASM_LAYER_MEDIA_TYPE {
        return Err(format!(
            "its layer has media type {:?}, not {WASM_LAYER_MEDIA_TYPE:?}",
            layer.media_type
        ));
    }
    if layer.size > MAX_COMPONENT_BYTES {
        return Err(format!(
            "its component is {} bytes, more than the {MAX_COMPONENT_BYTES} Cairn fetches",
            layer.size
        ));
    }
    Ok(manifest)
}

/// The names a component imports and exports at its top level.
fn summarize(component: &[u8]) -> ComponentSummary {
    use wasmparser::{Parser, Payload};
    let mut summary = ComponentSummary::default();
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(component) {
        let Ok(payload) = payload else { break };
        match payload {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(imports) if depth == 0 => {
                for import in imports.into_iter().flatten() {
                    summary.imports.push(import.name.name.to_owned());
                }
            }
            Payload::ComponentExportSection(exports) if depth == 0 => {
                for export in exports.into_iter().flatten() {
                    summary.exports.push(export.name.name.to_owned());
                }
            }
            _ => {}
        }
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> serde_json::Value {
        let d = format!("sha256:{}", "a".repeat(64));
        serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": {"mediaType": WASM_CONFIG_MEDIA_TYPE, "digest": d, "size": 10},
            "layers": [{"mediaType": WASM_LAYER_MEDIA_TYPE, "digest": d, "size": 100}],
        })
    }

    #[test]
    fn the_layout_is_enforced() {
        assert!(check(&serde_json::to_vec(&good()).unwrap()).is_ok());
        let d = format!("sha256:{}", "b".repeat(64));
        type Change = Box<dyn Fn(&mut serde_json::Value)>;
        let cases: Vec<(Change, &str)> = vec![
            (
                Box::new(|m| {
                    let l = m["layers"][0].clone();
                    m["layers"].as_array_mut().unwrap().push(l)
                }),
                "2 layers",
            ),
            (
                Box::new(|m| m["layers"] = serde_json::json!([])),
                "0 layers",
            ),
            (
                Box::new(|m| {
                    m["layers"][0]["mediaType"] =
                        "application/vnd.oci.image.layer.v1.tar+gzip".into()
                }),
                "its layer has media type",
            ),
            (
                Box::new(|m| {
                    m["config"]["mediaType"] = "application/vnd.oci.image.config.v1+json".into()
                }),
                "not a Wasm artifact",
            ),
            (
                Box::new(|m| m["mediaType"] = INDEX_MEDIA_TYPE.into()),
                "image index",
            ),
            (
                Box::new(|m| m["schemaVersion"] = 1.into()),
                "schemaVersion 1",
            ),
            (
                Box::new(|m| m["layers"][0]["size"] = (MAX_COMPONENT_BYTES + 1).into()),
                "more than",
            ),
            (
                Box::new(|m| m["layers"][0]["size"] = (-1).into()),
                "not an OCI image manifest",
            ),
            (
                Box::new(move |m| m["layers"][0]["digest"] = d.replace("sha256", "sha512").into()),
                "not a sha256 digest",
            ),
        ];
        for (change, why) in cases {
            let mut m = good();
            change(&mut m);
            let err = check(&serde_json::to_vec(&m).unwrap()).unwrap_err();
            assert!(err.contains(why), "{why}: {err}");
        }
        assert!(check(b"[1,2").unwrap_err().contains("not JSON"));
    }

    #[test]
    fn a_published_artifact_passes_its_own_check() {
        let component = wat_component();
        let version = semver::Version::parse("1.2.3").unwrap();
        let a = artifact(&component, "x-1.2.3.wasm", &version, chrono::Utc::now());
        let m = check(&a.manifest).unwrap();
        assert_eq!(m.layers[0].digest, Digest::of(&component));
        assert_eq!(m.layers[0].annotations[TITLE_ANNOTATION], "x-1.2.3.wasm");
        assert_eq!(m.config.digest, Digest::of(&a.config));
        let config: WasmConfig = serde_json::from_slice(&a.config).unwrap();
        assert_eq!(config.architecture, "wasm");
        assert_eq!(config.layer_digests, vec![Digest::of(&component)]);
        assert_eq!(config.component.imports, vec!["wasi:cli/environment@0.2.0"]);
        assert_eq!(config.component.exports, vec!["run"]);
    }

    /// A component importing an interface and exporting a function, built by hand.
    fn wat_component() -> Vec<u8> {
        // (component (import "wasi:cli/environment@0.2.0" (instance)) (core module $m (func (export "f")))
        //  (core instance $i (instantiate $m)) (func $f (canon lift (core func $i "f"))) (export "run" (func $f)))
        wat::parse_str(
            r#"(component
                (import "wasi:cli/environment@0.2.0" (instance))
                (core module $m (func (export "f")))
                (core instance $i (instantiate $m))
                (func $f (canon lift (core func $i "f")))
                (export "run" (func $f)))"#,
        )
        .unwrap()
    }
}
