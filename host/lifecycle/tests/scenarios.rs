//! The lifecycle scenarios, against the in-process test provider and against the same provider
//! as a sandboxed wasm component in each guest language.

use cairn_lifecycle::{BackendKind, Guest, run_all};

#[test]
fn scenarios_in_process() {
    run_all(BackendKind::InProcess);
}

#[test]
fn scenarios_against_the_wasm_provider() {
    run_all(BackendKind::Wasm(Guest::Rust));
}

#[test]
fn scenarios_against_the_python_provider() {
    run_all(BackendKind::Wasm(Guest::Python));
}

#[test]
fn scenarios_against_the_typescript_provider() {
    run_all(BackendKind::Wasm(Guest::TypeScript));
}

#[test]
fn scenarios_against_the_go_provider() {
    run_all(BackendKind::Wasm(Guest::Go));
}
