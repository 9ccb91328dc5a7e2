#!/usr/bin/env bash
# Prepares what kit/lambda_runtime.py runs offline: a clean Python 3.12+ venv holding requirements.txt ALONE
# (plus the runtime client the Lambda base image ships), pruned by runtime-prune.txt exactly as the Dockerfile prunes
# the image (what was dropped is kept aside in pruned/ for tests/e2e/test_runtime_prune.py), the wheels of the
# image's dependency layer, and AWS's Runtime Interface Emulator binary, all under build/lambda-runtime/.
# Idempotent: skips each part while its inputs are unchanged. Needs the registries; pytest not.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=build/lambda-runtime
VENV="$OUT/venv"
PRUNED="$OUT/pruned"
# What public.ecr.aws/lambda/python:3.12 ships outside LAMBDA_TASK_ROOT: the runtime client and its dependencies.
BASE_IMAGE_PACKAGES=(awslambdaric==4.2.2 simplejson==4.3.0 snapshot-restore-py==1.0.0)
# The emulator is not on PyPI on its own; AWS ships it inside the SAM CLI wheel.
SAM_CLI_VERSION=1.170.0

log() { echo "==> [$(date +%T)] $*"; }

# The interpreter Lambda runs is 3.12: prefer exactly that, then 3.13, and only then whatever python3 is.
pick_python() {
  local pyenv_root candidates=("${LAMBDA_PYTHON:-}" python3.12 python3.13)
  # pyenv's shims refuse versions that are not selected, so also look in its versions/ directly.
  pyenv_root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
  candidates+=("$pyenv_root"/versions/3.12.*/bin/python3.12 "$pyenv_root"/versions/3.13.*/bin/python3.13)
  local py
  for py in "${candidates[@]}"; do
    [ -n "$py" ] || continue
    if "$py" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 12))' >/dev/null 2>&1; then
      echo "$py"
      return
    fi
  done
  echo "==> no Python 3.12+ found: the Lambda runtime venv falls back to python3 ($(python3 --version))" >&2
  echo python3
}

prepare_venv() {
  local python stamp
  python=$(pick_python)
  # Rebuilt when the lock, the prune list, the base-image packages or the interpreter change.
  stamp=$( { cat requirements.txt runtime-prune.txt tools/prune_runtime.py; printf '%s\n' "${BASE_IMAGE_PACKAGES[@]}"
             "$python" -VV; } | sha256sum | cut -d' ' -f1)
  if [ -f "$VENV/.stamp" ] && [ "$(cat "$VENV/.stamp")" = "$stamp" ]; then
    return
  fi
  log "creating the Lambda runtime venv ($("$python" --version)) from requirements.txt alone"
  rm -rf "$VENV" "$PRUNED"
  "$python" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt \
    "${BASE_IMAGE_PACKAGES[@]}"
  # The Dockerfile's prune, on the same list; the files go to pruned/ instead of away.
  "$VENV/bin/python" tools/prune_runtime.py "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
    --list runtime-prune.txt --move-to "$PRUNED" | tail -1
  echo "$stamp" >"$VENV/.stamp"
  log "Lambda runtime venv ready: $(du -sh "$VENV" | cut -f1)"
}

prepare_emulator() {
  local arch binary download
  case "$(uname -m)" in
    x86_64) arch=x86_64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "==> no Runtime Interface Emulator for $(uname -m)" >&2; return 1 ;;
  esac
  binary="$OUT/aws-lambda-rie-$arch"
  if [ -x "$binary" ] && [ "$(cat "$binary.version" 2>/dev/null)" = "$SAM_CLI_VERSION" ]; then
    return
  fi
  log "fetching the Lambda Runtime Interface Emulator (aws-sam-cli==$SAM_CLI_VERSION wheel)"
  download=$(mktemp -d)
  "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps --dest "$download" \
    "aws-sam-cli==$SAM_CLI_VERSION"
  "$VENV/bin/python" - "$download"/aws_sam_cli-*.whl "samcli/local/rapid/aws-lambda-rie-$arch" "$binary" <<'PY'
import shutil, sys, zipfile
wheel, member, target = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, open(target, "wb") as sink:
    shutil.copyfileobj(source, sink)
PY
  chmod +x "$binary"
  rm -rf "$download"
  echo "$SAM_CLI_VERSION" >"$binary.version"
  log "emulator ready: $binary"
}

mkdir -p "$OUT"
prepare_venv
prepare_emulator
# The image's dependency layer for each architecture serverless.yml offers, installed offline by the layer tests and
# the benchmark; for aarch64 this also proves that every pin has an arm64 wheel.
bash tools/download-wheels.sh x86_64 3.12 "$OUT/wheels/x86_64-cp312"
bash tools/download-wheels.sh aarch64 3.12 "$OUT/wheels/aarch64-cp312"
