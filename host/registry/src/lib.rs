//! Providers from OCI registries and URLs: `oci://` references ([`reference`]), the CNCF Wasm
//! OCI artifact layout ([`layout`]), a client that verifies everything it is sent
//! ([`client`]) and the credentials it presents ([`credentials`]). IO at the edge: the CLI
//! decides what to fetch and where to store it.

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
