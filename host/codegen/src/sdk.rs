//! Typed Rust SDKs for wasm programs from a package schema: `cairn package gen-sdk --language rust`.
