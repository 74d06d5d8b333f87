//! The package schema as data: serde types for the documents the metaschema describes
//! (package, config, types, provider, resources, functions). Unknown fields are kept out of the
//! model (validation against the metaschema reports them); maps keep the document's order.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole package schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageSpec {
    /// The unqualified package name (`random`); the first component of every token.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The package's semver version, when the schema records one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_url: Option<String>,
    #[serde(
        default,
        rename = "pluginDownloadURL",
        skip_serializing_if = "Option::is_none"
    )]
    pub plugin_download_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `meta.moduleFormat`: the regex that extracts a module from a token's middle part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_package_names: Vec<String>,
    /// Per-language code generation options (opaque to Cairn's Rust generator).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub language: IndexMap<String, Value>,
    #[serde(default, skip_serializing_if = "ConfigSpec::is_empty")]
    pub config: ConfigSpec,
    /// Object and enum types by token.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub types: IndexMap<String, ComplexTypeSpec>,
    /// The provider resource: its input properties are the package's provider configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ResourceSpec>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub resources: IndexMap<String, ResourceSpec>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub functions: IndexMap<String, FunctionSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameterization: Option<Value>,
}

/// The package's configuration variables (`config`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSpec {
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub variables: IndexMap<String, PropertySpec>,
    /// `required` in the spec, `defaults` in Pulumi's own schemas.
    #[serde(default, alias = "defaults", skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
}

impl ConfigSpec {
    pub fn is_empty(&self) -> bool {
        self.variables.is_empty() && self.required.is_empty()
    }
}

/// A reference to a type: a primitive (`type`), an array (`items`), a map
/// (`additionalProperties`), a named type (`$ref`) or a union (`oneOf`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeSpec {
    /// `boolean`, `integer`, `number`, `string`, `array` or `object`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    #[serde(default, rename = "$ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<TypeSpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<Box<TypeSpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<TypeSpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discriminator: Option<Value>,
    /// The value is passed plainly, never as an output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plain: bool,
}

/// A property of a resource, function, object type or the configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertySpec {
    #[serde(flatten)]
    pub type_spec: TypeSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, rename = "const", skip_serializing_if = "Option::is_none")]
    pub const_value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// `{"environment": [...], "language": {...}}`: where a default comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_message: Option<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub language: IndexMap<String, Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replace_on_changes: bool,
    /// `willReplaceOnChange` in the spec, `willReplaceOnChanges` in Pulumi's own schemas.
    #[serde(
        default,
        alias = "willReplaceOnChanges",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub will_replace_on_change: bool,
}

/// The parts an object type, a resource and a function's inputs/outputs share.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectTypeSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub properties: IndexMap<String, PropertySpec>,
    /// `object` for an object type; the enum's underlying primitive for an enum type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    /// Properties passed plainly (older schemas; newer ones mark `plain` on the type).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plain: Vec<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub language: IndexMap<String, Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_overlay: bool,
}

/// An entry of `types`: an object type, or an enum when `enum` is present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComplexTypeSpec {
    #[serde(flatten)]
    pub object: ObjectTypeSpec,
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<EnumValueSpec>>,
}

/// One value of an enum type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnumValueSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A string, number, integer or boolean, of the enum's underlying type.
    pub value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_message: Option<String>,
}

/// An alias of a resource type (`aliases`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AliasSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
}

/// A resource (or the provider): `properties` are its outputs, `inputProperties` its inputs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpec {
    #[serde(flatten)]
    pub object: ObjectTypeSpec,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub input_properties: IndexMap<String, PropertySpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_inputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plain_inputs: Vec<String>,
    /// The properties `get` takes to look up an existing resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_inputs: Option<ObjectTypeSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<AliasSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_message: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_component: bool,
    /// Method name → function token.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub methods: IndexMap<String, String>,
}

/// A function (an invoke): its inputs, and outputs as an object or a `returnType`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FunctionSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<ObjectTypeSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<ObjectTypeSpec>,
    /// Newer schemas: `{"type": ...}` or `{"objectTypeSpec": ...}` instead of `outputs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_type: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_message: Option<String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub language: IndexMap<String, Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_overlay: bool,
    /// The input properties, in the order they are passed as separate arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub multi_argument_inputs: Vec<String>,
}

impl PackageSpec {
    /// Parses a schema document (JSON). Structural errors name the path serde reached; run
    /// the metaschema validation first for errors that name the rule.
    pub fn from_json(text: &str) -> Result<PackageSpec, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Reads a schema from an already-parsed JSON value.
    pub fn from_value(value: Value) -> Result<PackageSpec, serde_json::Error> {
        serde_json::from_value(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_resources_types_functions_and_config() {
        let spec = PackageSpec::from_json(
            r##"{
              "name": "demo", "version": "1.2.3",
              "config": {"variables": {"region": {"type": "string", "default": "x"}}, "required": ["region"]},
              "types": {
                "demo:index:Color": {"type": "string", "enum": [{"name": "Red", "value": "red"}]},
                "demo:index:Tree": {"type": "object", "properties": {
                    "children": {"type": "array", "items": {"$ref": "#/types/demo:index:Tree"}}}}
              },
              "resources": {"demo:index:Thing": {
                "properties": {"id2": {"type": "string", "secret": true}},
                "inputProperties": {"size": {"type": "integer", "willReplaceOnChange": true}},
                "requiredInputs": ["size"]
              }},
              "functions": {"demo:index:getThing": {
                "inputs": {"properties": {"name": {"type": "string"}}},
                "outputs": {"properties": {"id": {"type": "string"}}, "required": ["id"]}
              }}
            }"##,
        )
        .unwrap();
        assert_eq!(spec.config.required, ["region"]);
        let color = &spec.types["demo:index:Color"];
        assert_eq!(color.enum_values.as_ref().unwrap()[0].value, "red");
        let tree = &spec.types["demo:index:Tree"].object.properties["children"];
        assert_eq!(
            tree.type_spec.items.as_ref().unwrap().reference.as_deref(),
            Some("#/types/demo:index:Tree")
        );
        let thing = &spec.resources["demo:index:Thing"];
        assert!(thing.object.properties["id2"].secret);
        assert!(thing.input_properties["size"].will_replace_on_change);
        assert_eq!(thing.required_inputs, ["size"]);
        let get = &spec.functions["demo:index:getThing"];
        assert_eq!(get.outputs.as_ref().unwrap().required, ["id"]);
    }
}
