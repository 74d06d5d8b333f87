#!/usr/bin/env bash
# Quick start: builds cairn and the example providers, then deploys the quick-start program
# (examples/programs/quickstart) to a local stack in a temporary directory: up, a no-op up, a
# config change previewed and applied, the outputs, and destroy.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
target="$repo/target/guests"

echo "== installing the wasm32-wasip2 target (programs and providers are components)"
rustup target add wasm32-wasip2 >/dev/null 2>&1 || rustup target add wasm32-wasip2

echo "== building cairn and the example providers"
cargo build --quiet --manifest-path "$repo/Cargo.toml" -p cairn-cli
CARGO_TARGET_DIR="$target" cargo build --quiet --release --target wasm32-wasip2 \
    --manifest-path "$repo/examples/Cargo.toml" -p random -p file
cairn="$repo/target/debug/cairn"
components="$target/wasm32-wasip2/release"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CAIRN_HOME="$work/home"
export CAIRN_CONFIG_PASSPHRASE="quick-start passphrase"
# `cairn up` builds the program with cargo; share the guest target directory.
export CARGO_TARGET_DIR="$target"
mkdir -p "$work/quickstart/site-files"
cd "$work/quickstart"
cat > Pulumi.yaml <<YAML
name: quickstart
runtime: wasm
description: Cairn quick start
main: $repo/examples/programs/quickstart
YAML

run() {
    echo
    printf '$ cairn'; printf ' %q' "$@"; echo
    "$cairn" "$@"
}

run plugin install "$components/random.wasm"
run plugin install "$components/file.wasm"
run stack init dev
# The file provider may write only here (it sees the directory as /work).
run config set --path '["cairn:grants"].file.directories[0].host' ./site-files
run config set --path '["cairn:grants"].file.directories[0].guest' /work
run config set --path '["cairn:grants"].file.directories[0].write' true

run up --yes
echo
echo "\$ find site-files -type f"
find site-files -type f | sort
echo "\$ cat site-files/site/index.html"
cat site-files/site/index.html

run up --yes                      # nothing changed: nothing to do
run config set greeting "Welcome back"
run preview                       # the planned update, with its diff
run up --yes
run stack output
run stack output --json --show-secrets

run destroy --yes
echo
echo "\$ find site-files -type f   # the files are gone"
find site-files -type f | sort
echo
echo "Quick start finished: the stack lived under $CAIRN_HOME (removed on exit)."
