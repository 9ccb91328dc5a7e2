#!/usr/bin/env bash
# What `make bench` needs beyond the dev venv, idempotent and quiet when all is there: wrk (Debian, when root and
# missing), requirements-bench.txt in the dev venv, the function's requirements.txt-only venv + the Lambda emulator
# (the deploy harness's own script), and the baseline venvs under build/bench/ (TensorFlow; ONNX Runtime for /classify;
# ONNX Runtime + tokenizers for the text routes; sentence-transformers on PyTorch, CPU, for the embedding routes),
# strace for the image section.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> [$(date +%T)] installing wrk (Debian) for the throughput section"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  else
    echo "==> wrk not found and not root: section 6 (throughput) will say it was not measured"
  fi
fi

if ! command -v strace >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> [$(date +%T)] installing strace (Debian) for the image section's bytes read at cold start"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null
  else
    echo "==> strace not found and not root: section 12 (image) will say it was not measured"
  fi
fi

stamp=build/bench/.requirements-bench.stamp
if [ ! -f "$stamp" ] || [ requirements-bench.txt -nt "$stamp" ]; then
  echo "==> [$(date +%T)] installing requirements-bench.txt into the dev venv"
  "$PY" -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt
  mkdir -p build/bench && touch "$stamp"
fi

bash tools/prepare-lambda-runtime.sh
"$PY" -m bench.venvs tensorflow onnxruntime onnxruntime-tokenizers sentence-transformers >/dev/null
