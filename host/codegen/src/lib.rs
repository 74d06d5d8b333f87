//! Code generation from package schemas: [`sdk`] writes a typed Rust crate for wasm programs
//! from a package schema (`cairn package gen-sdk`); [`program`] writes program code that
//! declares imported resources (`cairn import`). Pure: returns files as text, writes nothing.

pub mod program;
pub mod sdk;
