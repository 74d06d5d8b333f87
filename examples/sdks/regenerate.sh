#!/bin/sh
# Regenerates the example SDKs (examples/sdks/random, examples/sdks/file, examples/sdks/postgresql) from their providers'
# schemas (examples/providers/<package>/cairn.json) with `cairn package gen-sdk`; the crates'
# versions are the providers' (their manifests', else their Cargo.toml's). The e2e test
# gen_sdk_example_sdks_equal_a_fresh_generation fails while a checked-in crate differs.
set -eu
cd "$(dirname "$0")/../.."
for package in random file postgresql; do
    cargo run --quiet -p cairn-cli -- package gen-sdk \
        "examples/providers/$package/cairn.json" \
        -o "examples/sdks/$package" --sdk-path ../../../guest-sdk
done
