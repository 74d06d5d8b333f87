//! Cairn's pure engine: values, URNs, property paths, assets, deployment state, secrets and
//! configuration. It does no terminal or process IO and knows nothing of wasmtime or gRPC.

// Functions stay short enough to read in one sitting: the threshold (120 lines of code; clippy
// counts neither comments nor blank lines) is in the workspace's clippy.toml. Tests are exempt:
// their tables of cases are long by nature.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod asset;
pub mod config;
pub mod deploy;
pub mod limits;
pub mod ordered_map;
pub mod path;
pub mod project;
pub mod secrets;
pub mod state;
pub mod text;
pub mod urn;
pub mod value;

pub use urn::{TypeToken, Urn};
pub use value::{OutputValue, PropertyMap, PropertyValue, ResourceReference};
