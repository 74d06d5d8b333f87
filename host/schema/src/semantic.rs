//! The rules of a package schema that its metaschema cannot state — the ones Pulumi's schema
//! binder reports: tokens belong to the package, references resolve, required names exist,
//! enum values, defaults and constants are of their type, methods name functions shaped for
//! them, reserved names stay unused, required properties never loop back to their own type.
//! Runs on a document that already has the metaschema's shape.

use std::collections::{BTreeMap, HashMap, HashSet};

use indexmap::IndexMap;
use serde_json::Value;

use crate::check::{JsonPath, SchemaError, quote, show};
use crate::model::{ObjectTypeSpec, PackageSpec, PropertySpec, TypeSpec};
use crate::types::{Token, Type};

/// A semantic rule; [`Check::name`] is how errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// A token's package part is the package's name or one of `allowedPackageNames`.
    TokenPackage,
    /// A token's module is not nested under `index` (`index/x`, after `meta.moduleFormat`).
    TokenModule,
    /// `meta.moduleFormat` compiles as a regular expression.
    ModuleFormat,
    /// Names reserved by Pulumi's SDKs stay unused (`pulumi`; `provider` in the root module;
    /// a provider's `version` input; `id` in `stateInputs`; a method named as a property).
    ReservedName,
    /// Property names are printable and hold no whitespace.
    PrintableName,
    /// A `$ref` names a type or resource that exists, in a form Pulumi reads.
    Reference,
    /// `required`, `requiredInputs`, `config.required` name properties that exist.
    RequiredExists,
    /// The removed `plain` / `plainInputs` lists are not used.
    PlainRemoved,
    /// An enum's values are of its type.
    EnumValueType,
    /// An enum's values, and the names given to them, are unique.
    EnumUnique,
    /// A `default` or `const` is of its property's type.
    DefaultType,
    /// A `defaultInfo` names at least one environment variable.
    DefaultEnvironment,
    /// A method names a function of this package, `RESOURCE/NAME`, taking `__self__`, used once.
    Method,
    /// `multiArgumentInputs` lists exactly the function's input properties.
    MultiArgumentInputs,
    /// No object type requires, through required properties, a value of its own type.
    RequiredCycle,
}

impl Check {
    pub fn name(self) -> &'static str {
        match self {
            Check::TokenPackage => "token-package",
            Check::TokenModule => "token-module",
            Check::ModuleFormat => "module-format",
            Check::ReservedName => "reserved-name",
            Check::PrintableName => "printable-name",
            Check::Reference => "reference",
            Check::RequiredExists => "required-exists",
            Check::PlainRemoved => "plain-removed",
            Check::EnumValueType => "enum-value-type",
            Check::EnumUnique => "enum-unique",
            Check::DefaultType => "default-type",
            Check::DefaultEnvironment => "default-environment",
            Check::Method => "method",
            Check::MultiArgumentInputs => "multi-argument-inputs",
            Check::RequiredCycle => "required-cycle",
        }
    }
}

/// Every semantic error of `spec`, unsorted. `config_required_key` is the key the document
/// lists required configuration under (`required`, or Pulumi's `defaults`).
pub fn check(spec: &PackageSpec, config_required_key: &str) -> Vec<SchemaError> {
    let mut checker = Checker {
        spec,
        config_required_key,
        errors: Vec::new(),
        module_format: None,
    };
    checker.run();
    checker.errors
}

struct Checker<'a> {
    spec: &'a PackageSpec,
    config_required_key: &'a str,
    errors: Vec<SchemaError>,
    module_format: Option<regex::Regex>,
}

impl<'a> Checker<'a> {
    fn error(&mut self, path: JsonPath, check: Check, message: impl Into<String>) {
        self.errors
            .push(SchemaError::semantic(path, check, message.into()));
    }

    fn run(&mut self) {
        let spec = self.spec;
        let root = JsonPath::root();
        if let Some(format) = spec
            .meta
            .as_ref()
            .and_then(|m| m.get("moduleFormat"))
            .and_then(Value::as_str)
        {
            match regex::Regex::new(format) {
                Ok(regex) => self.module_format = Some(regex),
                Err(e) => self.error(
                    root.keys(["meta", "moduleFormat"]),
                    Check::ModuleFormat,
                    format!(
                        "does not compile as a regular expression: {}",
                        // The parser's report spans lines; its last names the fault.
                        e.to_string().lines().last().unwrap_or_default().trim()
                    ),
                ),
            }
        }

        // Configuration.
        let config = root.key("config");
        self.properties(&config.key("variables"), &spec.config.variables);
        self.required(
            &config.key(self.config_required_key),
            &spec.config.required,
            &spec.config.variables,
        );

        // Types.
        for (token, complex) in &spec.types {
            let path = root.key("types").key(token);
            self.token(&path, token, false);
            match &complex.enum_values {
                Some(values) => self.enum_type(&path, complex.object.type_name.as_deref(), values),
                None => self.object(&path, &complex.object),
            }
        }

        // The provider and resources.
        if let Some(provider) = &spec.provider {
            self.resource(&root.key("provider"), "", provider, true);
        }
        for (token, resource) in &spec.resources {
            let path = root.key("resources").key(token);
            self.token(&path, token, false);
            self.resource(&path, token, resource, false);
        }

        // Functions.
        for (token, function) in &spec.functions {
            let path = root.key("functions").key(token);
            self.token(&path, token, true);
            if let Some(inputs) = &function.inputs {
                self.object(&path.key("inputs"), inputs);
            }
            if let Some(outputs) = &function.outputs {
                self.function_result(&path.key("outputs"), outputs);
            }
            if let Some(result) = &function.return_type {
                self.return_type(&path.key("returnType"), result);
            }
            self.multi_argument_inputs(&path, function);
        }

        self.methods();
        self.required_cycles();
    }

    /// A token's package, module and reserved names.
    fn token(&mut self, path: &JsonPath, token: &str, is_function: bool) {
        let Some(parsed) = Token::parse(token) else {
            return; // The metaschema's pattern has said so.
        };
        let spec = self.spec;
        let own = parsed.package == spec.name
            || spec
                .allowed_package_names
                .iter()
                .any(|n| n == parsed.package)
            || (is_function && parsed.package == "pulumi" && parsed.module == "providers");
        if !own {
            let mut allowed = vec![quote(&spec.name)];
            allowed.extend(spec.allowed_package_names.iter().map(|n| quote(n)));
            self.error(
                path.clone(),
                Check::TokenPackage,
                format!(
                    "the token's package {} is not the package's name (allowed: {})",
                    quote(parsed.package),
                    allowed.join(", ")
                ),
            );
        }
        let root_module = parsed.module.is_empty() || parsed.module.eq_ignore_ascii_case("index");
        if root_module && parsed.name.eq_ignore_ascii_case("provider") {
            self.error(
                path.clone(),
                Check::ReservedName,
                "`provider` is reserved in the root module (the package's provider resource)",
            );
        }
        if parsed.name == "pulumi" {
            self.error(
                path.clone(),
                Check::ReservedName,
                "`pulumi` is a reserved name",
            );
        }
        let module = match &self.module_format {
            Some(format) => format
                .captures(parsed.module)
                .and_then(|c| c.get(1))
                .map_or(parsed.module, |m| m.as_str()),
            None => parsed.module,
        };
        if module.starts_with("index/") {
            self.error(
                path.clone(),
                Check::TokenModule,
                format!("the module {} nests a module under `index`", quote(module)),
            );
        }
    }

    fn resource(
        &mut self,
        path: &JsonPath,
        token: &str,
        resource: &crate::model::ResourceSpec,
        is_provider: bool,
    ) {
        self.object(path, &resource.object);
        let inputs = path.key("inputProperties");
        self.properties(&inputs, &resource.input_properties);
        self.required(
            &path.key("requiredInputs"),
            &resource.required_inputs,
            &resource.input_properties,
        );
        if !resource.plain_inputs.is_empty() {
            self.error(
                path.key("plainInputs"),
                Check::PlainRemoved,
                "`plainInputs` is no longer read: mark each input's type `plain: true` instead",
            );
        }
        if is_provider && resource.input_properties.contains_key("version") {
            self.error(
                inputs.key("version"),
                Check::ReservedName,
                "`version` is reserved among a provider's inputs (the SDKs' version option)",
            );
        }
        if let Some(state) = &resource.state_inputs {
            let state_path = path.key("stateInputs");
            self.object(&state_path, state);
            if state.properties.contains_key("id") {
                self.error(
                    state_path.keys(["properties", "id"]),
                    Check::ReservedName,
                    "`id` is reserved in `stateInputs` (the resource's ID is passed apart)",
                );
            }
        }
        for name in resource.methods.keys() {
            if resource.object.properties.contains_key(name) {
                self.error(
                    path.keys(["methods", name]),
                    Check::ReservedName,
                    format!(
                        "{} already has a property named {}",
                        if token.is_empty() {
                            "the provider"
                        } else {
                            "the resource"
                        },
                        quote(name)
                    ),
                );
            }
        }
    }

    /// An object type's (or a resource's outputs', a function's inputs') properties and list of
    /// required ones.
    fn object(&mut self, path: &JsonPath, object: &ObjectTypeSpec) {
        self.properties(&path.key("properties"), &object.properties);
        self.required(&path.key("required"), &object.required, &object.properties);
        if !object.plain.is_empty() {
            self.error(
                path.key("plain"),
                Check::PlainRemoved,
                "the `plain` list is no longer read: mark each property's type `plain: true` instead",
            );
        }
    }

    /// `outputs` of a function: an object when it has properties, else a type.
    fn function_result(&mut self, path: &JsonPath, outputs: &ObjectTypeSpec) {
        if outputs.properties.is_empty() && outputs.type_name.is_some() {
            // A type, not an object: its `type` (and any `$ref`) were checked by the metaschema
            // and are bound where the model keeps them (`returnType`).
            return;
        }
        self.object(path, outputs);
    }

    /// `returnType`: an object type's details or a type reference.
    fn return_type(&mut self, path: &JsonPath, result: &Value) {
        if result.get("properties").is_some() {
            if let Ok(object) = serde_json::from_value::<ObjectTypeSpec>(result.clone()) {
                self.object(path, &object);
            }
        } else if let Ok(type_spec) = serde_json::from_value::<TypeSpec>(result.clone()) {
            self.references(path, &type_spec);
        }
    }

    fn properties(&mut self, path: &JsonPath, properties: &IndexMap<String, PropertySpec>) {
        for (name, property) in properties {
            let path = path.key(name);
            if let Some(bad) = name.chars().find(|c| c.is_control() || c.is_whitespace()) {
                self.error(
                    path.clone(),
                    Check::PrintableName,
                    format!(
                        "property names hold only printable characters and no whitespace (found U+{:04X})",
                        u32::from(bad)
                    ),
                );
            }
            if name == "pulumi" {
                self.error(
                    path.clone(),
                    Check::ReservedName,
                    "`pulumi` is a reserved property name",
                );
            }
            self.property(&path, property);
        }
    }

    fn property(&mut self, path: &JsonPath, property: &PropertySpec) {
        let sound = self.references(path, &property.type_spec);
        if let Some(info) = &property.default_info {
            let empty = info
                .get("environment")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            if empty {
                self.error(
                    path.keys(["defaultInfo", "environment"]),
                    Check::DefaultEnvironment,
                    "a default's information names at least one environment variable",
                );
            }
        }
        if !sound || (property.default.is_none() && property.const_value.is_none()) {
            return; // No value to check, or a type that does not bind.
        }
        let Ok(bound) = Type::bind(&property.type_spec, self.spec) else {
            return;
        };
        for (key, value) in [
            ("default", &property.default),
            ("const", &property.const_value),
        ] {
            if let Some(value) = value
                && let Err(message) = self.value_of_type(value, &bound, &property.type_spec)
            {
                self.error(path.key(key), Check::DefaultType, message);
            }
        }
    }

    /// Whether `value` may be a default or constant of `bound` (Pulumi's rule: booleans,
    /// 32-bit integers, numbers and strings of those types, enums by their underlying type,
    /// unions by their declared primitive or any member).
    fn value_of_type(&self, value: &Value, bound: &Type, spec: &TypeSpec) -> Result<(), String> {
        match bound {
            Type::Boolean | Type::Integer | Type::Number | Type::String => scalar_of(value, bound)
                .map_err(|expected| {
                    format!("{} is not {expected}, the property's type", show(value))
                }),
            Type::Enum(token) => {
                let primitive = self
                    .spec
                    .types
                    .get(token)
                    .and_then(|t| t.object.type_name.as_deref())
                    .and_then(primitive_type);
                match primitive {
                    Some(primitive) => scalar_of(value, &primitive).map_err(|expected| {
                        format!(
                            "{} is not {expected}, the type of the enum {}",
                            show(value),
                            quote(token)
                        )
                    }),
                    None => Ok(()), // The enum's own type is reported at the enum.
                }
            }
            Type::Union(members) => {
                if let Some(primitive) = spec.type_name.as_deref().and_then(primitive_type) {
                    return scalar_of(value, &primitive).map_err(|expected| {
                        format!("{} is not {expected}, the union's type", show(value))
                    });
                }
                let fits = members.iter().zip(spec.one_of.iter().flatten()).any(
                    |(member, member_spec)| self.value_of_type(value, member, member_spec).is_ok(),
                );
                if fits {
                    Ok(())
                } else {
                    Err(format!("{} is of none of the union's types", show(value)))
                }
            }
            // Another package's type: not known here.
            Type::External { .. } => Ok(()),
            other => Err(format!(
                "a property of type {} cannot have a default or constant (only booleans, integers, numbers, strings and enums can)",
                type_name(other)
            )),
        }
    }

    /// Checks every `$ref` inside a type; true when all resolve.
    fn references(&mut self, path: &JsonPath, spec: &TypeSpec) -> bool {
        let mut sound = true;
        if let Some(reference) = &spec.reference {
            let alone = TypeSpec {
                reference: Some(reference.clone()),
                ..TypeSpec::default()
            };
            let path = path.key("$ref");
            match Type::bind(&alone, self.spec) {
                Err(e) => {
                    self.error(path, Check::Reference, e.to_string());
                    sound = false;
                }
                Ok(Type::External { package: None, .. }) => {
                    self.error(
                        path,
                        Check::Reference,
                        format!(
                            "reference {}: another package's types are referred to as /NAME/vX.Y.Z/schema.json#/types/TOKEN",
                            quote(reference)
                        ),
                    );
                    sound = false;
                }
                Ok(Type::External {
                    version: Some(version),
                    ..
                }) if semver::Version::parse(&version).is_err() => {
                    self.error(
                        path,
                        Check::Reference,
                        format!(
                            "reference {}: {} is not a semantic version",
                            quote(reference),
                            quote(&version)
                        ),
                    );
                    sound = false;
                }
                Ok(_) => {}
            }
            return sound;
        }
        if let Some(items) = &spec.items {
            sound &= self.references(&path.key("items"), items);
        }
        if let Some(values) = &spec.additional_properties {
            sound &= self.references(&path.key("additionalProperties"), values);
        }
        for (i, member) in spec.one_of.iter().flatten().enumerate() {
            sound &= self.references(&path.key("oneOf").index(i), member);
        }
        sound
    }

    fn required(
        &mut self,
        path: &JsonPath,
        required: &[String],
        properties: &IndexMap<String, PropertySpec>,
    ) {
        for (i, name) in required.iter().enumerate() {
            if !properties.contains_key(name) {
                self.error(
                    path.index(i),
                    Check::RequiredExists,
                    format!("{} is not one of the properties", quote(name)),
                );
            }
        }
    }

    fn enum_type(
        &mut self,
        path: &JsonPath,
        type_name: Option<&str>,
        values: &[crate::model::EnumValueSpec],
    ) {
        let Some(primitive) = type_name.and_then(primitive_type) else {
            return; // The metaschema has said so.
        };
        let mut seen_values: Vec<(usize, &Value)> = Vec::new();
        let mut seen_names: HashMap<&str, usize> = HashMap::new();
        for (i, value) in values.iter().enumerate() {
            let value_path = path.key("enum").index(i);
            if let Err(expected) = scalar_of(&value.value, &primitive) {
                self.error(
                    value_path.key("value"),
                    Check::EnumValueType,
                    format!("{} is not {expected}, the enum's type", show(&value.value)),
                );
            }
            if let Some((first, _)) = seen_values
                .iter()
                .find(|(_, seen)| same_value(seen, &value.value))
            {
                self.error(
                    value_path.key("value"),
                    Check::EnumUnique,
                    format!("{} is also value [{first}]", show(&value.value)),
                );
            } else {
                seen_values.push((i, &value.value));
            }
            if let Some(name) = value.name.as_deref() {
                if let Some(first) = seen_names.get(name) {
                    self.error(
                        value_path.key("name"),
                        Check::EnumUnique,
                        format!("the name {} is also value [{first}]'s", quote(name)),
                    );
                } else {
                    seen_names.insert(name, i);
                }
            }
        }
    }

    fn multi_argument_inputs(&mut self, path: &JsonPath, function: &crate::model::FunctionSpec) {
        if function.multi_argument_inputs.is_empty() {
            return;
        }
        let list_path = path.key("multiArgumentInputs");
        let Some(inputs) = &function.inputs else {
            self.error(
                list_path,
                Check::MultiArgumentInputs,
                "multi-argument inputs need `inputs`",
            );
            return;
        };
        let listed: HashSet<&str> = function
            .multi_argument_inputs
            .iter()
            .map(String::as_str)
            .collect();
        for (i, name) in function.multi_argument_inputs.iter().enumerate() {
            if !inputs.properties.contains_key(name) {
                self.error(
                    list_path.index(i),
                    Check::MultiArgumentInputs,
                    format!("{} is not an input property", quote(name)),
                );
            }
        }
        for name in inputs.properties.keys() {
            if !listed.contains(name.as_str()) {
                self.error(
                    path.keys(["inputs", "properties", name]),
                    Check::MultiArgumentInputs,
                    "an input property missing from `multiArgumentInputs` (it must list them all)",
                );
            }
        }
    }

    /// Methods: each names a function of this package shaped `RESOURCE/NAME` that takes
    /// `__self__`, and no function serves two methods.
    fn methods(&mut self) {
        let spec = self.spec;
        let provider = spec.provider.iter().map(|p| {
            (
                JsonPath::root().key("provider"),
                format!("pulumi:providers:{}", spec.name),
                p,
            )
        });
        let resources = spec.resources.iter().map(|(token, r)| {
            (
                JsonPath::root().key("resources").key(token),
                token.clone(),
                r,
            )
        });
        let mut used: HashMap<&str, JsonPath> = HashMap::new();
        for (path, token, resource) in provider.chain(resources) {
            for (name, function_token) in &resource.methods {
                let method_path = path.keys(["methods", name]);
                let Some(function) = spec.functions.get(function_token) else {
                    self.error(
                        method_path,
                        Check::Method,
                        format!("no function {} in the package", quote(function_token)),
                    );
                    continue;
                };
                if let Some(first) = used.get(function_token.as_str()) {
                    self.error(
                        method_path,
                        Check::Method,
                        format!(
                            "the function {} is already the method at {first}",
                            quote(function_token)
                        ),
                    );
                    continue;
                }
                used.insert(function_token, method_path.clone());
                let owner = function_token.rsplit_once('/').map(|(owner, _)| owner);
                if owner != Some(token.as_str()) {
                    self.error(
                        method_path,
                        Check::Method,
                        format!(
                            "the function's token {} is not of the form {}",
                            quote(function_token),
                            quote(&format!("{token}/METHOD"))
                        ),
                    );
                    continue;
                }
                let takes_self = function
                    .inputs
                    .as_ref()
                    .is_some_and(|i| i.properties.contains_key("__self__"));
                if !takes_self {
                    self.error(
                        method_path,
                        Check::Method,
                        format!(
                            "the function {} has no `__self__` input",
                            quote(function_token)
                        ),
                    );
                }
            }
        }
    }

    /// Object types whose required properties lead back to themselves (only direct object
    /// references count: arrays, maps, unions and optional properties have finite values).
    fn required_cycles(&mut self) {
        let spec = self.spec;
        let mut edges: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (token, complex) in &spec.types {
            if complex.enum_values.is_some() {
                continue;
            }
            let object = &complex.object;
            let targets = object
                .required
                .iter()
                .filter_map(|name| object.properties.get(name))
                .filter_map(|p| match Type::bind(&p.type_spec, spec) {
                    Ok(Type::Object(target)) => {
                        spec.types.get_key_value(&target).map(|(k, _)| k.as_str())
                    }
                    _ => None,
                })
                .collect();
            edges.insert(token, targets);
        }
        let mut reported: HashSet<&str> = HashSet::new();
        let tokens: Vec<&str> = edges.keys().copied().collect();
        for start in tokens {
            if reported.contains(start) {
                continue;
            }
            if let Some(cycle) = find_cycle(&edges, start) {
                reported.extend(cycle.iter().copied());
                let shown: Vec<String> = cycle.iter().map(|t| quote(t)).collect();
                self.error(
                    JsonPath::root().key("types").key(start),
                    Check::RequiredCycle,
                    format!(
                        "required properties form a cycle no finite value satisfies: {}",
                        shown.join(" -> ")
                    ),
                );
            }
        }
    }
}

/// A cycle through `start` in the required-property graph, iteratively (schemas are untrusted:
/// no recursion on their depth), as the tokens from `start` back to it.
fn find_cycle<'a>(edges: &BTreeMap<&'a str, Vec<&'a str>>, start: &'a str) -> Option<Vec<&'a str>> {
    // Depth-first with an explicit stack of (node, next edge index).
    let mut stack: Vec<(&'a str, usize)> = vec![(start, 0)];
    let mut on_path: HashSet<&'a str> = HashSet::from([start]);
    let mut finished: HashSet<&'a str> = HashSet::new();
    while let Some((node, next)) = stack.last_mut() {
        let targets = edges.get(*node).map(Vec::as_slice).unwrap_or_default();
        if let Some(&target) = targets.get(*next) {
            *next += 1;
            if target == start {
                let mut cycle: Vec<&str> = stack.iter().map(|(n, _)| *n).collect();
                cycle.push(start);
                return Some(cycle);
            }
            if !on_path.contains(target) && !finished.contains(target) {
                on_path.insert(target);
                stack.push((target, 0));
            }
        } else {
            let node = *node;
            on_path.remove(node);
            finished.insert(node);
            stack.pop();
        }
    }
    None
}

fn primitive_type(name: &str) -> Option<Type> {
    match name {
        "boolean" => Some(Type::Boolean),
        "integer" => Some(Type::Integer),
        "number" => Some(Type::Number),
        "string" => Some(Type::String),
        _ => None,
    }
}

/// `Ok` when `value` is of the primitive `ty`; else what was expected.
fn scalar_of(value: &Value, ty: &Type) -> Result<(), &'static str> {
    let ok = match ty {
        Type::Boolean => value.is_boolean(),
        Type::String => value.is_string(),
        Type::Number => value.is_number(),
        Type::Integer => value.as_f64().is_some_and(|n| {
            n.fract() == 0.0 && n >= f64::from(i32::MIN) && n <= f64::from(i32::MAX)
        }),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(match ty {
            Type::Boolean => "a boolean",
            Type::String => "a string",
            Type::Number => "a number",
            Type::Integer => "a 32-bit integer",
            _ => "a primitive",
        })
    }
}

/// Enum values compare as numbers when both are numbers (`1` and `1.0` are one value).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn type_name(ty: &Type) -> String {
    match ty {
        Type::Any => "pulumi.json#/Any".to_owned(),
        Type::Archive => "pulumi.json#/Archive".to_owned(),
        Type::Asset => "pulumi.json#/Asset".to_owned(),
        Type::Json => "pulumi.json#/Json".to_owned(),
        Type::Array(_) => "array".to_owned(),
        Type::Map(_) => "map".to_owned(),
        Type::Object(token) => format!("object {}", quote(token)),
        Type::Resource(token) => format!("resource {}", quote(token)),
        other => format!("{other:?}"),
    }
}
