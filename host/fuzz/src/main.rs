//! `cairn-fuzz`: runs the decoder fuzz targets for a fixed number of executions.
//!
//! ```text
//! cargo run -p cairn-fuzz --release -- list
//! cargo run -p cairn-fuzz --release -- run <target|all> --runs 1000000 [--seed S]
//! cargo run -p cairn-fuzz --release -- replay <target> FILE...
//! ```

#[global_allocator]
static ALLOC: cairn_fuzz_driver::CountingAlloc = cairn_fuzz_driver::CountingAlloc;

fn main() {
    cairn_fuzz_driver::main(&cairn_fuzz::targets())
}
