//! The SDK as Rust items before any text: every resource, function, object and enum type of
//! the schema with its module, its identifiers, and its properties' Rust types, defaults,
//! secrecy and docs. Problems in the schema (a type that does not bind, a malformed token, a
//! crate name or version Cargo refuses) are collected here with their JSON paths.

use std::collections::{BTreeMap, BTreeSet};

use cairn_schema::{ObjectTypeSpec, PackageSpec, PropertySpec, Token, Type, TypeSpec};
use serde_json::Value as Json;

use super::docs::doc_lines;
use super::names::{Scope, pascal, snake};
use super::{Problem, SdkDependency, SdkOptions};

/// Pulumi's module format for bridged providers: the token's last `/member` is not a module.
const BRIDGED_MODULE_FORMAT: &str = "(.*)(?:/[^/]*)";

/// Type names the generated code imports or relies on: a schema type of the same name gets
/// a suffix.
const RESERVED_TYPES: &[&str] = &[
    "Archive",
    "Args",
    "Asset",
    "Box",
    "Default",
    "FromValue",
    "IndexMap",
    "Input",
    "IntoInput",
    "IntoValue",
    "Option",
    "Output",
    "PropertyMap",
    "ProviderResource",
    "Resource",
    "ResourceOptions",
    "Result",
    "String",
    "Value",
    "Vec",
];

/// Function names the generated code imports or defines at the crate root.
const RESERVED_FUNCTIONS: &[&str] = &[
    "custom",
    "invoke",
    "invoke_as",
    "not_one_of",
    "object",
    "property",
    "provider",
    "read",
    "remote_component",
    "secret",
];

/// The whole crate.
pub struct Plan {
    pub package: String,
    pub crate_name: String,
    pub version: String,
    pub description: Vec<String>,
    pub license: Option<String>,
    pub repository: Option<String>,
    pub homepage: Option<String>,
    pub sdk: SdkDependency,
    /// By module identifier; `""` is the crate root (the `index` module).
    pub modules: BTreeMap<String, ModulePlan>,
}

#[derive(Default)]
pub struct ModulePlan {
    pub provider: Option<ResourcePlan>,
    pub resources: Vec<ResourcePlan>,
    pub functions: Vec<FunctionPlan>,
    pub objects: Vec<ObjectPlan>,
    pub enums: Vec<EnumPlan>,
}

/// A property of a resource's inputs or outputs, a function's, or an object type.
pub struct PropertyPlan {
    /// The schema's name (the key on the wire).
    pub key: String,
    pub ident: String,
    /// The Rust type, without the `Option` an optional property adds.
    pub ty: String,
    pub required: bool,
    /// Held in a `Box` (a recursive object type).
    pub boxed: bool,
    pub secret: bool,
    pub doc: Vec<String>,
    /// The notes ending `doc` (default, replacement, secrecy), if any.
    pub notes: Option<String>,
    pub deprecated: Option<String>,
    /// A Rust expression for the schema's `default` (applied when the input is not set).
    pub default: Option<String>,
    /// The schema's `const`, as a Rust expression: always sent, never set by the user.
    pub constant: Option<String>,
}

/// How a resource is declared.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    Custom,
    Component,
    Provider,
}

pub struct ResourcePlan {
    pub token: String,
    pub ident: String,
    pub args_ident: String,
    pub kind: ResourceKind,
    pub doc: Vec<String>,
    pub deprecated: Option<String>,
    pub inputs: Vec<PropertyPlan>,
    pub outputs: Vec<PropertyPlan>,
}

pub enum FunctionResult {
    /// An object: a generated struct.
    Object {
        ident: String,
        properties: Vec<PropertyPlan>,
    },
    /// Anything else: the outputs as one value of this type.
    Plain(String),
}

pub struct FunctionPlan {
    pub token: String,
    pub ident: String,
    /// `None` when the function takes no inputs.
    pub args_ident: Option<String>,
    pub inputs: Vec<PropertyPlan>,
    pub result: FunctionResult,
    pub doc: Vec<String>,
    pub deprecated: Option<String>,
}

pub struct ObjectPlan {
    pub ident: String,
    pub doc: Vec<String>,
    pub properties: Vec<PropertyPlan>,
}

/// The primitive an enum's values have.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Underlying {
    String,
    Integer,
    Number,
    Boolean,
}

pub struct VariantPlan {
    pub ident: String,
    /// A Rust expression of type `Value`.
    pub value: String,
    /// The value as a Rust literal of the underlying type.
    pub literal: String,
    pub doc: Vec<String>,
    pub deprecated: Option<String>,
}

pub struct EnumPlan {
    pub ident: String,
    pub doc: Vec<String>,
    pub underlying: Underlying,
    pub variants: Vec<VariantPlan>,
}

/// Where a named item lives.
#[derive(Clone)]
struct Named {
    module: String,
    ident: String,
}

/// What the planner knows while it maps types.
struct Context<'a> {
    spec: &'a PackageSpec,
    /// Object and enum types by token.
    types: BTreeMap<String, Named>,
    enums: BTreeMap<String, Underlying>,
    /// Object types (by token) reachable from each object type without an array or map.
    reach: BTreeMap<String, BTreeSet<String>>,
    problems: Vec<Problem>,
}

impl Plan {
    pub fn new(spec: &PackageSpec, options: &SdkOptions) -> Result<Plan, Vec<Problem>> {
        let mut problems = Vec::new();
        if !is_crate_name(&spec.name) {
            problems.push(Problem {
                path: "name".into(),
                message: format!(
                    "package name {:?} cannot name a crate (letters, digits, '-' and '_', starting with a letter)",
                    spec.name
                ),
            });
        }
        let version = spec
            .version
            .clone()
            .or_else(|| options.version.clone())
            .unwrap_or_else(|| "0.0.0".to_owned());
        if !is_semver(&version) {
            problems.push(Problem {
                path: "version".into(),
                message: format!("version {version:?} is not a semantic version such as 1.2.3"),
            });
        }
        let module_format = spec
            .meta
            .as_ref()
            .and_then(|m| m.get("moduleFormat"))
            .and_then(Json::as_str);
        let module_of = |token: &str, path: String, problems: &mut Vec<Problem>| {
            let parsed = Token::parse(token);
            match parsed {
                Some(t) if t.package == spec.name => Some(module_ident(&t, module_format)),
                Some(t) => {
                    problems.push(Problem {
                        path,
                        message: format!(
                            "token {token:?} belongs to package {:?}, not {:?}",
                            t.package, spec.name
                        ),
                    });
                    None
                }
                None => {
                    problems.push(Problem {
                        path,
                        message: format!(
                            "{token:?} is not a token of the form package:module:Name"
                        ),
                    });
                    None
                }
            }
        };

        // Names first (types may refer to each other in any order): per module, one scope for
        // types and one for functions, claimed in a fixed order so collisions resolve the same
        // way every time.
        let mut type_scopes: BTreeMap<String, Scope> = BTreeMap::new();
        let mut fn_scopes: BTreeMap<String, Scope> = BTreeMap::new();
        let mut claim_type = |module: &str, ident: String| {
            type_scopes
                .entry(module.to_owned())
                .or_insert_with(|| Scope::with(RESERVED_TYPES))
                .claim(ident)
        };
        let mut provider_names = None;
        if spec.provider.is_some() {
            provider_names = Some((
                claim_type("", "Provider".to_owned()),
                claim_type("", "ProviderArgs".to_owned()),
            ));
        }
        let mut resource_names = Vec::new();
        for token in sorted(spec.resources.keys()) {
            let path = format!("resources[{token:?}]");
            if let Some(module) = module_of(token, path, &mut problems) {
                let name = token_name(token);
                let ident = claim_type(&module, pascal(name));
                let args = claim_type(&module, format!("{}Args", super::names::bare(&ident)));
                resource_names.push((token.clone(), module, ident, args));
            }
        }
        // Methods (functions a resource lists under `methods`) are called on a resource, which
        // the program API has no call for: they are left out.
        let methods: BTreeSet<&String> = spec
            .resources
            .values()
            .chain(spec.provider.iter())
            .flat_map(|r| r.methods.values())
            .collect();
        let mut function_names = Vec::new();
        for token in sorted(spec.functions.keys()) {
            if methods.contains(token) {
                continue;
            }
            let path = format!("functions[{token:?}]");
            if let Some(module) = module_of(token, path, &mut problems) {
                let name = token_name(token);
                let ident = fn_scopes
                    .entry(module.clone())
                    .or_insert_with(|| Scope::with(RESERVED_FUNCTIONS))
                    .claim(snake(name));
                let base = pascal(name);
                let base = super::names::bare(&base).trim_end_matches('_').to_owned();
                let args = claim_type(&module, format!("{base}Args"));
                let result = claim_type(&module, format!("{base}Result"));
                function_names.push((token.clone(), module, ident, args, result));
            }
        }
        let mut types = BTreeMap::new();
        let mut enums = BTreeMap::new();
        for token in sorted(spec.types.keys()) {
            let path = format!("types[{token:?}]");
            if let Some(module) = module_of(token, path.clone(), &mut problems) {
                let ident = claim_type(&module, pascal(token_name(token)));
                let spec_type = &spec.types[token.as_str()];
                if spec_type.enum_values.is_some() {
                    match underlying(spec_type.object.type_name.as_deref()) {
                        Some(u) => {
                            enums.insert(token.clone(), u);
                        }
                        None => problems.push(Problem {
                            path: format!("{path}.type"),
                            message: format!(
                                "an enum's type must be string, integer, number or boolean, not {:?}",
                                spec_type.object.type_name.as_deref().unwrap_or("(none)")
                            ),
                        }),
                    }
                }
                types.insert(token.clone(), Named { module, ident });
            }
        }

        let mut context = Context {
            spec,
            types,
            enums,
            reach: BTreeMap::new(),
            problems,
        };
        context.reach = reachability(spec);

        let mut modules: BTreeMap<String, ModulePlan> = BTreeMap::new();
        if let (Some(provider), Some((ident, args_ident))) = (&spec.provider, provider_names) {
            let plan = context.resource(
                &format!("pulumi:providers:{}", spec.name),
                "provider",
                provider,
                ResourceKind::Provider,
                ident,
                args_ident,
                "",
            );
            modules.entry(String::new()).or_default().provider = Some(plan);
        }
        for (token, module, ident, args_ident) in resource_names {
            let resource = &spec.resources[token.as_str()];
            let kind = if resource.is_component {
                ResourceKind::Component
            } else {
                ResourceKind::Custom
            };
            let path = format!("resources[{token:?}]");
            let plan = context.resource(&token, &path, resource, kind, ident, args_ident, &module);
            modules.entry(module).or_default().resources.push(plan);
        }
        for (token, module, ident, args_ident, result_ident) in function_names {
            let plan = context.function(&token, ident, args_ident, result_ident, &module);
            modules.entry(module).or_default().functions.push(plan);
        }
        for (token, named) in context.types.clone() {
            let path = format!("types[{token:?}]");
            let spec_type = &spec.types[token.as_str()];
            let doc = description(spec_type.object.description.as_deref(), &token);
            if let Some(values) = &spec_type.enum_values {
                let Some(&underlying) = context.enums.get(&token) else {
                    continue;
                };
                let mut scope = Scope::default();
                let mut variants = Vec::new();
                for (i, value) in values.iter().enumerate() {
                    let at = format!("{path}.enum[{i}]");
                    let Some((value_expr, literal)) = enum_value(&value.value, underlying) else {
                        context.problems.push(Problem {
                            path: format!("{at}.value"),
                            message: format!("{} is not a value of the enum's type", value.value),
                        });
                        continue;
                    };
                    let name = value.name.clone().unwrap_or_else(|| match &value.value {
                        Json::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    variants.push(VariantPlan {
                        ident: scope.claim(pascal(&name)),
                        value: value_expr,
                        literal,
                        doc: value
                            .description
                            .as_deref()
                            .map(doc_lines)
                            .unwrap_or_default(),
                        deprecated: value.deprecation_message.clone(),
                    });
                }
                if variants.is_empty() {
                    context.problems.push(Problem {
                        path: format!("{path}.enum"),
                        message: "an enum needs at least one value".into(),
                    });
                    continue;
                }
                modules
                    .entry(named.module.clone())
                    .or_default()
                    .enums
                    .push(EnumPlan {
                        ident: named.ident.clone(),
                        doc,
                        underlying,
                        variants,
                    });
            } else {
                let properties = context.properties(
                    &spec_type.object.properties,
                    &spec_type.object.required,
                    &format!("{path}.properties"),
                    &named.module,
                    Some(&token),
                    &[],
                );
                modules
                    .entry(named.module.clone())
                    .or_default()
                    .objects
                    .push(ObjectPlan {
                        ident: named.ident.clone(),
                        doc,
                        properties,
                    });
            }
        }

        if !context.problems.is_empty() {
            return Err(context.problems);
        }
        modules.entry(String::new()).or_default();
        Ok(Plan {
            package: spec.name.clone(),
            crate_name: format!("cairn-{}", spec.name),
            version,
            description: spec
                .description
                .as_deref()
                .map(doc_lines)
                .unwrap_or_default(),
            license: spec.license.clone(),
            repository: spec.repository.clone(),
            homepage: spec.homepage.clone(),
            sdk: options.sdk.clone(),
            modules,
        })
    }
}

impl Context<'_> {
    #[allow(clippy::too_many_arguments)]
    fn resource(
        &mut self,
        token: &str,
        path: &str,
        resource: &cairn_schema::ResourceSpec,
        kind: ResourceKind,
        ident: String,
        args_ident: String,
        module: &str,
    ) -> ResourcePlan {
        let inputs = self.properties(
            &resource.input_properties,
            &resource.required_inputs,
            &format!("{path}.inputProperties"),
            module,
            None,
            &["new", "into_args", "built"],
        );
        let outputs = self.properties(
            &resource.object.properties,
            &resource.object.required,
            &format!("{path}.properties"),
            module,
            None,
            &["resource"],
        );
        let mut doc = resource
            .object
            .description
            .as_deref()
            .map(doc_lines)
            .unwrap_or_default();
        let replacing: Vec<&str> = resource
            .input_properties
            .iter()
            .filter(|(_, p)| p.will_replace_on_change || p.replace_on_changes)
            .map(|(k, _)| k.as_str())
            .collect();
        if !replacing.is_empty() {
            let list: Vec<String> = replacing.iter().map(|k| format!("`{k}`")).collect();
            if !doc.is_empty() {
                doc.push(String::new());
            }
            doc.push(format!(
                "Changing {} replaces the resource.",
                list.join(", ")
            ));
        }
        let doc = description(Some(&doc.join("\n")), token);
        ResourcePlan {
            token: token.to_owned(),
            ident,
            args_ident,
            kind,
            doc,
            deprecated: resource.deprecation_message.clone(),
            inputs,
            outputs,
        }
    }

    fn function(
        &mut self,
        token: &str,
        ident: String,
        args_ident: String,
        result_ident: String,
        module: &str,
    ) -> FunctionPlan {
        let function = &self.spec.functions[token];
        let path = format!("functions[{token:?}]");
        let inputs = match &function.inputs {
            Some(inputs) => self.properties(
                &inputs.properties,
                &inputs.required,
                &format!("{path}.inputs.properties"),
                module,
                None,
                &["new", "into_args", "built"],
            ),
            None => Vec::new(),
        };
        let outputs: Option<ObjectTypeSpec> = match (&function.outputs, &function.return_type) {
            (Some(outputs), _) => Some(outputs.clone()),
            (None, Some(returned)) => match returned.get("objectTypeSpec") {
                Some(object) => match serde_json::from_value(object.clone()) {
                    Ok(object) => Some(object),
                    Err(e) => {
                        self.problems.push(Problem {
                            path: format!("{path}.returnType.objectTypeSpec"),
                            message: e.to_string(),
                        });
                        None
                    }
                },
                None => None,
            },
            (None, None) => None,
        };
        let result = match (&outputs, &function.return_type) {
            (Some(outputs), _) => FunctionResult::Object {
                ident: result_ident,
                properties: self.properties(
                    &outputs.properties,
                    &outputs.required,
                    &format!("{path}.outputs.properties"),
                    module,
                    None,
                    &[],
                ),
            },
            (None, Some(returned)) => match returned.get("type") {
                Some(type_json) => match serde_json::from_value::<TypeSpec>(type_json.clone()) {
                    Ok(spec) => {
                        let at = format!("{path}.returnType.type");
                        FunctionResult::Plain(self.rust_type(&spec, &at, module))
                    }
                    Err(e) => {
                        self.problems.push(Problem {
                            path: format!("{path}.returnType.type"),
                            message: e.to_string(),
                        });
                        FunctionResult::Plain("Value".into())
                    }
                },
                None => FunctionResult::Plain("Value".into()),
            },
            (None, None) => FunctionResult::Plain("Value".into()),
        };
        FunctionPlan {
            token: token.to_owned(),
            ident,
            args_ident: (!inputs.is_empty()).then_some(args_ident),
            inputs,
            result,
            doc: description(function.description.as_deref(), token),
            deprecated: function.deprecation_message.clone(),
        }
    }

    /// The properties of an object, a resource's inputs or outputs, or a function's.
    fn properties(
        &mut self,
        properties: &indexmap::IndexMap<String, PropertySpec>,
        required: &[String],
        path: &str,
        module: &str,
        owner: Option<&str>,
        reserved: &[&str],
    ) -> Vec<PropertyPlan> {
        for name in required {
            if !properties.contains_key(name) {
                let required_path = match path.strip_suffix(".inputProperties") {
                    Some(resource) => format!("{resource}.requiredInputs"),
                    None => format!("{}.required", path.trim_end_matches(".properties")),
                };
                self.problems.push(Problem {
                    path: required_path,
                    message: format!("{name:?} is required but is not a property"),
                });
            }
        }
        let mut scope = Scope::with(reserved);
        let mut plans = Vec::new();
        for (key, property) in properties {
            let at = format!("{path}[{key:?}]");
            let ty = self.rust_type(&property.type_spec, &at, module);
            let bound = Type::bind(&property.type_spec, self.spec).ok();
            let boxed = match (&bound, owner) {
                (Some(Type::Object(target)), Some(owner)) => self
                    .reach
                    .get(target)
                    .is_some_and(|reached| reached.contains(owner)),
                _ => false,
            };
            let mut doc = property
                .description
                .as_deref()
                .map(doc_lines)
                .unwrap_or_default();
            let mut notes = Vec::new();
            let default = property
                .default
                .as_ref()
                .and_then(|d| self.literal(d, bound.as_ref(), module));
            if let Some(d) = &property.default {
                notes.push(format!("Default: `{d}`."));
            }
            if let Some(env) = property
                .default_info
                .as_ref()
                .and_then(|i| i.get("environment"))
                .and_then(Json::as_array)
            {
                let vars: Vec<String> = env
                    .iter()
                    .filter_map(Json::as_str)
                    .map(|v| format!("`{v}`"))
                    .collect();
                if !vars.is_empty() {
                    notes.push(format!(
                        "Other SDKs read a default from the environment ({}); a wasm program has none, so set it.",
                        vars.join(", ")
                    ));
                }
            }
            if property.will_replace_on_change || property.replace_on_changes {
                notes.push("Changing it replaces the resource.".into());
            }
            if property.secret {
                notes.push("Secret.".into());
            }
            let notes = (!notes.is_empty()).then(|| notes.join(" "));
            if let Some(notes) = &notes {
                if !doc.is_empty() {
                    doc.push(String::new());
                }
                doc.push(notes.clone());
            }
            let constant = property
                .const_value
                .as_ref()
                .and_then(|c| self.literal(c, bound.as_ref(), module));
            plans.push(PropertyPlan {
                key: key.clone(),
                ident: scope.claim(snake(key)),
                ty,
                required: required.contains(key),
                boxed,
                secret: property.secret,
                doc,
                notes,
                deprecated: property.deprecation_message.clone(),
                default,
                constant,
            });
        }
        plans
    }

    /// The Rust type of a type reference (a problem is recorded when it does not bind).
    fn rust_type(&mut self, spec: &TypeSpec, path: &str, module: &str) -> String {
        match Type::bind(spec, self.spec) {
            Ok(bound) => self.map_type(&bound, module),
            Err(e) => {
                self.problems.push(Problem {
                    path: path.to_owned(),
                    message: e.to_string(),
                });
                "Value".into()
            }
        }
    }

    fn map_type(&self, ty: &Type, module: &str) -> String {
        match ty {
            Type::Boolean => "bool".into(),
            Type::Integer => "i64".into(),
            Type::Number => "f64".into(),
            Type::String => "String".into(),
            Type::Any | Type::Json => "Value".into(),
            Type::Asset => "Asset".into(),
            Type::Archive => "Archive".into(),
            Type::Array(items) => format!("Vec<{}>", self.map_type(items, module)),
            Type::Map(values) => format!("IndexMap<String, {}>", self.map_type(values, module)),
            Type::Object(token) | Type::Enum(token) => match self.types.get(token) {
                Some(named) => path_to(named, module),
                None => "Value".into(),
            },
            // A resource reference or another package's type: passed as a plain value.
            Type::Resource(_) | Type::External { .. } => "Value".into(),
            Type::Union(members) => self.union_type(members, module),
        }
    }

    /// A union: its members' common Rust type when they have one (string enums count as
    /// strings, integers as numbers), else `Value`.
    fn union_type(&self, members: &[Type], module: &str) -> String {
        let widened: BTreeSet<String> = members
            .iter()
            .map(|m| match m {
                Type::Enum(token) => match self.enums.get(token) {
                    Some(Underlying::String) => "String".into(),
                    Some(Underlying::Integer | Underlying::Number) => "f64".into(),
                    Some(Underlying::Boolean) => "bool".into(),
                    None => "Value".into(),
                },
                Type::Integer => "f64".into(),
                other => self.map_type(other, module),
            })
            .collect();
        let exact: BTreeSet<String> = members.iter().map(|m| self.map_type(m, module)).collect();
        if exact.len() == 1 {
            exact.into_iter().next().unwrap_or_default()
        } else if widened.len() == 1 {
            widened.into_iter().next().unwrap_or_default()
        } else {
            "Value".into()
        }
    }

    /// A Rust expression for a `default` or `const` of a primitive or enum property.
    fn literal(&self, value: &Json, ty: Option<&Type>, module: &str) -> Option<String> {
        match (ty?, value) {
            (Type::Boolean, Json::Bool(b)) => Some(b.to_string()),
            (Type::Integer, Json::Number(n)) => n.as_i64().map(integer_literal),
            (Type::Number, Json::Number(n)) => n.as_f64().map(|f| format!("{f:?}")),
            (Type::String, Json::String(s)) => Some(super::docs::string_literal(s)),
            (Type::Enum(token), value) => {
                let underlying = *self.enums.get(token)?;
                let (_, literal) = enum_value(value, underlying)?;
                let values = self.spec.types.get(token)?.enum_values.as_ref()?;
                let mut scope = Scope::default();
                let named = self.types.get(token)?;
                for v in values {
                    let name = v.name.clone().unwrap_or_else(|| match &v.value {
                        Json::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    let ident = scope.claim(pascal(&name));
                    if enum_value(&v.value, underlying).is_some_and(|(_, l)| l == literal) {
                        return Some(format!("{}::{ident}", path_to(named, module)));
                    }
                }
                None
            }
            _ => None,
        }
    }
}

fn integer_literal(n: i64) -> String {
    if i32::try_from(n).is_ok() {
        n.to_string()
    } else {
        format!("{n}_i64")
    }
}

/// The `Value` expression and the literal of an enum value of `underlying` type.
fn enum_value(value: &Json, underlying: Underlying) -> Option<(String, String)> {
    let literal = match (underlying, value) {
        (Underlying::String, Json::String(s)) => super::docs::string_literal(s),
        (Underlying::Integer, Json::Number(n)) => n.as_i64().map(|n| format!("{n}_i64"))?,
        (Underlying::Number, Json::Number(n)) => n.as_f64().map(|f| format!("{f:?}"))?,
        (Underlying::Boolean, Json::Bool(b)) => b.to_string(),
        _ => return None,
    };
    Some((format!("Value::from({literal})"), literal))
}

fn underlying(type_name: Option<&str>) -> Option<Underlying> {
    match type_name? {
        "string" => Some(Underlying::String),
        "integer" => Some(Underlying::Integer),
        "number" => Some(Underlying::Number),
        "boolean" => Some(Underlying::Boolean),
        _ => None,
    }
}

/// The path of `named` as seen from `module`.
fn path_to(named: &Named, module: &str) -> String {
    if named.module == module {
        named.ident.clone()
    } else if named.module.is_empty() {
        format!("crate::{}", named.ident)
    } else {
        format!("crate::{}::{}", named.module, named.ident)
    }
}

/// The docs of an item: its description, then its token.
fn description(text: Option<&str>, token: &str) -> Vec<String> {
    let mut doc = text.map(doc_lines).unwrap_or_default();
    if !doc.is_empty() {
        doc.push(String::new());
    }
    doc.push(format!("Token: `{token}`."));
    doc
}

/// The token's last part.
fn token_name(token: &str) -> &str {
    Token::parse(token).map_or(token, |t| t.name)
}

/// The module identifier of a token (`""` for `index`): the schema's `moduleFormat` decides
/// whether a bridged `/member` suffix is dropped; nested modules are joined with `_`.
fn module_ident(token: &Token<'_>, module_format: Option<&str>) -> String {
    let module = match module_format {
        Some(BRIDGED_MODULE_FORMAT) => token.module_name(),
        _ if token.module.is_empty() => "index",
        _ => token.module,
    };
    if module == "index" {
        String::new()
    } else {
        let joined = module.replace(['/', '.', '-'], "_");
        let ident = snake(&joined);
        // A module named like a crate-root item would shadow nothing, but `r#` files are
        // awkward: modules never use raw identifiers.
        ident.trim_start_matches("r#").to_owned() + if ident.starts_with("r#") { "_" } else { "" }
    }
}

fn sorted<'a>(keys: impl Iterator<Item = &'a String>) -> Vec<&'a String> {
    let mut keys: Vec<&String> = keys.collect();
    keys.sort();
    keys
}

/// For each object type, the object types it holds directly (not through an array or map),
/// transitively: a field whose type reaches back to its owner needs a `Box`.
fn reachability(spec: &PackageSpec) -> BTreeMap<String, BTreeSet<String>> {
    let mut direct: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (token, t) in &spec.types {
        if t.enum_values.is_some() {
            continue;
        }
        let targets = t
            .object
            .properties
            .values()
            .filter_map(|p| match Type::bind(&p.type_spec, spec) {
                Ok(Type::Object(target)) => Some(target),
                _ => None,
            })
            .collect();
        direct.insert(token.clone(), targets);
    }
    let mut reach = BTreeMap::new();
    for start in direct.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = direct[start].iter().collect();
        while let Some(next) = stack.pop() {
            if seen.insert(next.clone())
                && let Some(more) = direct.get(next)
            {
                stack.extend(more.iter());
            }
        }
        reach.insert(start.clone(), seen);
    }
    reach
}

fn is_crate_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.len() <= 58
}

/// `MAJOR.MINOR.PATCH`, with an optional `-pre` and `+build` part.
fn is_semver(version: &str) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && version[core.len()..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.'))
}
