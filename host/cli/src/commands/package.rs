//! `cairn package`: work with Pulumi package schemas (`gen-sdk`: a typed Rust SDK for wasm
//! programs).

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::workspace::Context;

#[derive(Debug, Args)]
pub struct PackageArgs {
    #[command(subcommand)]
    command: PackageCommand,
}

#[derive(Debug, Subcommand)]
enum PackageCommand {
    /// Generate a typed SDK crate for wasm programs from a package schema.
    GenSdk(super::gen_sdk::GenSdkArgs),
}

pub fn run(context: &Context, args: PackageArgs) -> Result<()> {
    match args.command {
        PackageCommand::GenSdk(args) => super::gen_sdk::run(context, args),
    }
}
