#!/usr/bin/env bash
# Runs pytest inside a private network namespace when it can (root, unshare, ip): DynamoDB Local binds every
# interface and has no host option, so the servers the suite starts must live where nothing else reaches them.
# Everything that needs the package registries happens before this, in tools/install-test-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTEST=(.venv/bin/python -m pytest "$@")
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
  echo "==> running the tests in a private network namespace (loopback only)"
  exec unshare -n -- bash -c 'ip link set lo up && export TEST_PRIVATE_NETNS=1 && exec "$@"' bash "${PYTEST[@]}"
fi
echo "==> no private network namespace here: DynamoDB tests use moto's server on 127.0.0.1"
exec "${PYTEST[@]}"
