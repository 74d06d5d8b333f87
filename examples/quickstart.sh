#!/usr/bin/env bash
# Quick start: builds cairn, then walks a stack through its life in a temporary directory.
# (Once wasm programs land, this deploys the quick-start program instead.)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

echo "== building cairn"
cargo build --quiet --manifest-path "$repo/Cargo.toml" -p cairn-cli
cairn="$repo/target/debug/cairn"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CAIRN_HOME="$work/home"
export CAIRN_CONFIG_PASSPHRASE="quick-start passphrase"
mkdir -p "$work/site"
cd "$work/site"
cat > Pulumi.yaml <<'YAML'
name: site
runtime: wasm
description: Cairn quick start
config:
  greeting:
    type: string
    default: hello
YAML

run() {
    echo
    printf '$ cairn'; printf ' %q' "$@"; echo
    "$cairn" "$@"
}

run stack init dev
run config set name "Cairn user"
run config set --secret dbPassword "s3cr3t-passw0rd"
run config set --path 'network.ports[0]' 8080
run config set --path 'network.public' true
run config
run config get dbPassword
echo
echo "\$ cat Pulumi.dev.yaml   # the secret is stored encrypted"
cat Pulumi.dev.yaml

# A state with a provider and a resource holding a secret, as `stack import` accepts it.
cat > state.json <<'JSON'
{"version": 3, "deployment": {
  "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": ""},
  "resources": [
    {"urn": "urn:pulumi:dev::site::pulumi:pulumi:Stack::site-dev", "custom": false, "type": "pulumi:pulumi:Stack"},
    {"urn": "urn:pulumi:dev::site::pulumi:providers:random::default", "custom": true, "id": "p1", "type": "pulumi:providers:random"},
    {"urn": "urn:pulumi:dev::site::random:index/randomPassword:RandomPassword::admin", "custom": true, "id": "pw1",
     "type": "random:index/randomPassword:RandomPassword",
     "parent": "urn:pulumi:dev::site::pulumi:pulumi:Stack::site-dev",
     "provider": "urn:pulumi:dev::site::pulumi:providers:random::default::p1",
     "inputs": {"length": 20},
     "outputs": {"length": 20, "result": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "plaintext": "\"generated-secret\""}}}
  ]}}
JSON
run stack import --file state.json
run stack
echo
echo "\$ cairn stack export   # secrets stay ciphertext"
"$cairn" stack export | grep -m1 '"ciphertext"'

# A broken edit: the password now comes before the provider it refers to. The import is refused
# and the stored state is untouched.
cat > broken.json <<'JSON'
{"version": 3, "deployment": {
  "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": ""},
  "resources": [
    {"urn": "urn:pulumi:dev::site::random:index/randomPassword:RandomPassword::admin", "custom": true, "id": "pw1",
     "type": "random:index/randomPassword:RandomPassword",
     "provider": "urn:pulumi:dev::site::pulumi:providers:random::default::p1"},
    {"urn": "urn:pulumi:dev::site::pulumi:providers:random::default", "custom": true, "id": "p1", "type": "pulumi:providers:random"}
  ]}}
JSON
echo
echo "\$ cairn stack import --file broken.json"
if "$cairn" stack import --file broken.json; then
    echo "unexpected: the broken state was accepted" >&2
    exit 1
fi
run stack ls
echo
echo "Quick start finished: the stack lives under $CAIRN_HOME (removed on exit)."
