//! Runs the guest-side fuzz targets natively for a fixed number of executions:
//! `cargo run --manifest-path guest-sdk/Cargo.toml --release --example fuzz -- run all --runs N`.

#[path = "../fuzz/wire.rs"]
mod wire;

#[global_allocator]
static ALLOC: cairn_fuzz_driver::CountingAlloc = cairn_fuzz_driver::CountingAlloc;

fn main() {
    cairn_fuzz_driver::main(&wire::targets())
}
