#!/usr/bin/env bash
# `scripts/node.sh check`: succeeds when Node.js 20 or newer and npm are installed (the only
# tools the web page needs besides Go); otherwise says what is missing and fails.
set -euo pipefail

if ! command -v node >/dev/null 2>&1; then
  echo "node: Node.js is not installed (the web page needs Node.js 20 or newer and npm)" >&2
  exit 1
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "node: Node.js $(node --version) is too old (the web page needs 20 or newer)" >&2
  exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "node: npm is not installed (it comes with Node.js; the web page needs it)" >&2
  exit 1
fi
