//! Typed Rust SDKs for wasm programs from a package schema: `cairn package gen-sdk --language rust`.
//!
//! [`generate`] turns a [`PackageSpec`] into the files of a crate (`Cargo.toml`, `src/lib.rs`,
//! one `src/<module>.rs` per token module other than `index`), as text, formatted as rustfmt
//! formats it. The crate wraps the guest SDK's untyped program API (`custom`, `read`,
//! `provider`, `invoke`, `Args`) in one struct per resource (typed [`Output`] fields, a builder
//! of arguments with the required inputs in `new`), one function per invoke, and one struct or
//! enum per schema type. The same schema always gives the same bytes: items are ordered by
//! token, names are derived from tokens alone.
//!
//! [`Output`]: https://docs.rs/cairn-sdk

mod docs;
mod emit;
mod names;
mod plan;

use cairn_schema::PackageSpec;
use thiserror::Error;

pub use emit::LINE_WIDTH;

/// Where the generated crate gets `cairn-sdk` from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkDependency {
    /// A path, relative to the generated crate's directory (or absolute).
    Path(String),
    /// A registry version requirement.
    Version(String),
}

/// What the schema does not say about the crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdkOptions {
    /// The crate's version when the schema has none (the provider's version, say); `0.0.0`
    /// when neither says.
    pub version: Option<String>,
    pub sdk: SdkDependency,
}

/// One file of the generated crate: its path relative to the crate's directory, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    pub path: String,
    pub text: String,
}

/// One thing wrong with the schema, at a JSON path (`resources["pkg:index:Thing"].inputProperties["size"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Why no SDK was generated.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SdkError {
    #[error(
        "the schema of package {package:?} cannot be turned into an SDK:\n{}",
        list(problems)
    )]
    Schema {
        package: String,
        problems: Vec<Problem>,
    },
}

fn list(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("  {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files of the crate for `spec`.
pub fn generate(spec: &PackageSpec, options: &SdkOptions) -> Result<Vec<GeneratedFile>, SdkError> {
    let plan = plan::Plan::new(spec, options).map_err(|problems| SdkError::Schema {
        package: spec.name.clone(),
        problems,
    })?;
    Ok(emit::crate_files(&plan))
}

#[cfg(test)]
mod tests;
