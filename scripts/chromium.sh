#!/usr/bin/env bash
# Make sure Debian's Chromium is installed at /usr/bin/chromium for the browser tests (web/e2e).
# Installs the `chromium` package with apt-get when it is missing: directly as root (CI), through
# `sudo -n` otherwise; fails with a message saying what to do when neither works.
# CHROMIUM=/path/to/chrome skips the install and uses that browser instead.
set -euo pipefail

bin="${CHROMIUM:-/usr/bin/chromium}"
if [ -x "$bin" ]; then
  exit 0
fi
if [ -n "${CHROMIUM:-}" ]; then
  echo "chromium: CHROMIUM=$CHROMIUM is not an executable file" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium: /usr/bin/chromium is missing and this machine has no apt-get;" \
    "install Chromium and set CHROMIUM=/path/to/chromium" >&2
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "chromium: /usr/bin/chromium is missing; the browser tests need Debian's chromium package." >&2
  echo "chromium: run 'sudo apt-get install chromium' (or set CHROMIUM=/path/to/chromium) and try again." >&2
  exit 1
fi

echo "chromium: installing Debian's chromium package (once per machine)"
export DEBIAN_FRONTEND=noninteractive
# A stale package index can name versions the mirror no longer has: update, then install.
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
if [ ! -x /usr/bin/chromium ]; then
  echo "chromium: apt-get finished but /usr/bin/chromium is still missing" >&2
  exit 1
fi
/usr/bin/chromium --version || true
