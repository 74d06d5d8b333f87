//! Pulumi package schemas: the typed model ([`model`]) and the binding of type references to
//! the package's own types ([`types`]). Pure: no IO; callers read the JSON or YAML.

pub mod model;
pub mod types;

pub use model::{
    AliasSpec, ComplexTypeSpec, ConfigSpec, EnumValueSpec, FunctionSpec, ObjectTypeSpec,
    PackageSpec, PropertySpec, ResourceSpec, TypeSpec,
};
pub use types::{Token, Type, TypeError};
