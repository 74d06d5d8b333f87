//! The lifecycle scenarios, against the in-process test provider and against the same provider
//! as a sandboxed wasm component.

use cairn_lifecycle::{BackendKind, run_all};

#[test]
fn scenarios_in_process() {
    run_all(BackendKind::InProcess);
}

#[test]
fn scenarios_against_the_wasm_provider() {
    run_all(BackendKind::Wasm);
}
