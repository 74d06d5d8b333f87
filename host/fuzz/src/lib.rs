//! Fuzz targets for every decoder that reads untrusted bytes, with the properties each checks,
//! and their seed corpora. `cairn-fuzz` (src/main.rs) runs them for a fixed number of
//! executions with [`cairn_fuzz_driver`]; `tests/short.rs` runs each briefly in the test suite.
//!
//! Every target panics when a property does not hold: no panic inside the decoder, a
//! decode → encode → decode fixed point where the codec promises one, `decode(encode(v)) == v`
//! for generated values, and that what a boundary decoder accepts can be stored as state and
//! read back.
//!
//! # Every decoder of untrusted bytes is fuzzed
//!
//! Every decoder of untrusted bytes is fuzzed (`host/fuzz`, `guest-sdk/fuzz`): URNs, paths, state
//! values, deployments and journals, WIT tables (the shared validator and reader once,
//! `wire_table`; each side's decoding, `wit_value` and the SDK's `wire`), protobuf `Struct`s,
//! manifests, project, stack and grants files. What a boundary decoder (WIT, gRPC) accepts passes
//! `limits::check_value` and can be stored and read back; a new decoder gets a target, and the test
//! command runs every target briefly.

pub mod generate;
pub mod targets;

pub use cairn_fuzz_driver::{Outcome, Target};

/// Every target, in the order `all` runs them.
pub fn targets() -> Vec<Target> {
    targets::all()
}

/// Reads the seed files of a target: `host/fuzz/corpus/<name>/*` and the repository files
/// listed (relative to the repository root), skipping any that are missing.
pub fn seed_files(name: &str, repo_files: &[&str]) -> Vec<Vec<u8>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds = Vec::new();
    let corpus = root.join("corpus").join(name);
    if let Ok(entries) = std::fs::read_dir(&corpus) {
        let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        seeds.extend(files.iter().filter_map(|f| std::fs::read(f).ok()));
    }
    let repo = root.join("../..");
    for file in repo_files {
        if let Ok(bytes) = std::fs::read(repo.join(file)) {
            seeds.push(bytes);
        }
    }
    seeds
}

/// `Ok` means the decoder accepted the input.
pub(crate) fn outcome<T, E>(r: &Result<T, E>) -> Outcome {
    if r.is_ok() {
        Outcome::Accepted
    } else {
        Outcome::Rejected
    }
}
