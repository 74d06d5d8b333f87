//! Providers from OCI registries and URLs: `oci://` references ([`reference`]), the CNCF Wasm
//! OCI artifact layout ([`layout`]), a client that verifies everything it is sent
//! ([`client`]) and the credentials it presents ([`credentials`]). IO at the edge: the CLI
//! decides what to fetch and where to store it.
//!
//! # Providers from registries are verified before they are stored, and pinned
//!
//! The OCI client (`host/registry`) checks the layout before fetching a blob and each blob's size
//! and digest as it streams; the CLI then checks it is the provider asked for and that the trust
//! policy accepts its signature, and only then installs it. `cairn.lock` records the component's
//! digest (= the layer digest), so a fresh home fetches those bytes or nothing, from the source or
//! any mirror of it. reqwest is used over the workspace's ring rustls (its default provider would
//! build aws-lc with a C toolchain).

pub mod client;
pub mod credentials;
pub mod digest;
pub mod error;
mod files;
pub mod layout;
pub mod lock;
pub mod reference;
pub mod signature;
pub mod sources;

pub use client::{Client, ClientOptions, Pulled};
pub use credentials::{Credential, Credentials};
pub use digest::Digest;
pub use error::RegistryError;
pub use reference::{Reference, Target};
