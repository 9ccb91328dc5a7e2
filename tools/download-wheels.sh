#!/usr/bin/env bash
# download-wheels.sh ARCH PYTHON_VERSION DEST: the wheel of every pin in requirements.txt for Lambda's manylinux on
# ARCH (x86_64 or aarch64) and CPython PYTHON_VERSION (3.12), into DEST, binary only: it fails if one is missing.
# Kept under build/ so the tests can install the image's dependency layer offline (kit/runtime_layer.py).
# Idempotent: skipped while DEST's stamp matches the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$1 version=$2 dest=$3
# Every manylinux tag pip must accept: with one tag only, some wheels (tokenizers: manylinux2014) are not found.
TAGS=(manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014)
PIP=(build/lambda-runtime/venv/bin/python -m pip)
stamp=$( { cat requirements.txt; echo "$arch $version ${TAGS[*]}"; } | sha256sum | cut -d' ' -f1)
if [ -f "$dest/.stamp" ] && [ "$(cat "$dest/.stamp")" = "$stamp" ]; then
  exit 0
fi
echo "==> [$(date +%T)] downloading requirements.txt's wheels for $arch, CPython $version (binary only)"
rm -rf "$dest"
platforms=()
for tag in "${TAGS[@]}"; do platforms+=(--platform "${tag}_$arch"); done
"${PIP[@]}" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --implementation cp \
  --python-version "$version" "${platforms[@]}" --dest "$dest" -r requirements.txt
echo "$stamp" >"$dest/.stamp"
