//! The short, deterministic runs of every fuzz target that belong in the test suite (a few
//! seconds each); long runs are `cargo run -p cairn-fuzz --release -- run all --runs N`.

#[global_allocator]
static ALLOC: cairn_fuzz_driver::CountingAlloc = cairn_fuzz_driver::CountingAlloc;

/// Executions per target: seeds first, then mutants; a few seconds in a debug build.
const RUNS: u64 = 3_000;

fn run(name: &str) {
    let targets = cairn_fuzz::targets();
    let target = targets
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no fuzz target {name}"));
    cairn_fuzz_driver::check(target, RUNS);
}

#[test]
fn every_target_has_a_test_and_seeds() {
    let names: Vec<&str> = cairn_fuzz::targets().iter().map(|t| t.name).collect();
    assert_eq!(names, TESTED, "add a #[test] below for each new target");
    for target in cairn_fuzz::targets() {
        assert!(!(target.seeds)().is_empty(), "{} has no seeds", target.name);
    }
}

macro_rules! short_runs {
    ($($name:ident),* $(,)?) => {
        const TESTED: &[&str] = &[$(stringify!($name)),*];
        $(#[test] fn $name() { run(stringify!($name)); })*
    };
}

short_runs!(
    urn,
    path,
    state_value,
    state_deployment,
    journal,
    wit_value,
    wire_table,
    grpc_struct,
    manifest,
    component,
    project,
    stack_config,
    grants,
);
