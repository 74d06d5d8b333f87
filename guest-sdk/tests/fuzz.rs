//! Short, deterministic runs of the guest-side fuzz targets (long runs: `examples/fuzz.rs`).

#[path = "../fuzz/wire.rs"]
mod wire;

#[global_allocator]
static ALLOC: cairn_fuzz_driver::CountingAlloc = cairn_fuzz_driver::CountingAlloc;

#[test]
fn wire_tables_short_run() {
    cairn_fuzz_driver::check_all(&wire::targets(), 5_000);
}
