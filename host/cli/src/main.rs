//! The `cairn` binary: the allocator, then the command line (`cairn_cli::main`).

/// mimalloc: a provider call allocates and frees many small buffers, where glibc's malloc
/// (with its consolidation passes) cost a quarter of the call.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cairn_cli::main()
}
