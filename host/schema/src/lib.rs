//! Pulumi package schemas: the typed model ([`model`]), the binding of type references to the
//! package's own types ([`types`]), and the checks of a schema document ([`check`]: Cairn's
//! metaschema, then the semantic rules of [`semantic`]). Pure: no IO; callers read the JSON or
//! YAML.

pub mod check;
pub mod model;
pub mod semantic;
pub mod types;

pub use check::{
    InvalidSchema, JsonPath, MAX_REPORTED_ERRORS, METASCHEMA, Rule, SchemaError, Segment, Summary,
    check_schema,
};
pub use model::{
    AliasSpec, ComplexTypeSpec, ConfigSpec, EnumValueSpec, FunctionSpec, ObjectTypeSpec,
    PackageSpec, PropertySpec, ResourceSpec, TypeSpec,
};
pub use semantic::Check;
pub use types::{Token, Type, TypeError};
