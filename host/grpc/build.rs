//! Compiles `proto/` (pulumirpc and grpc.health.v1) with a vendored `protoc`, so a build needs
//! nothing installed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // SAFETY: build scripts are single-threaded; prost-build reads PROTOC from the environment.
    unsafe { std::env::set_var("PROTOC", protoc) };
    // Read at run time, not baked in by `env!`: a build script compiled in another checkout
    // sharing this target directory must still read this checkout's protos.
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let files = [
        "pulumi/plugin.proto",
        "pulumi/alias.proto",
        "pulumi/callback.proto",
        "pulumi/engine.proto",
        "pulumi/provider.proto",
        "pulumi/resource.proto",
        "pulumi/analyzer.proto",
        "grpc/health/v1/health.proto",
    ];
    let include = protoc_bin_vendored::include_path()?;
    tonic_prost_build::configure()
        .compile_protos(&files.map(|f| root.join(f)), &[root.clone(), include])?;
    println!("cargo:rerun-if-changed={}", root.display());
    Ok(())
}
