#!/usr/bin/env bash
# What `make bench` needs beyond the dev venv, idempotent and quiet when all is there: wrk (Debian, when root and
# missing), requirements-bench.txt in the dev venv, the function's requirements.txt-only venv + the Lambda emulator
# (the deploy harness's own script), and the baseline venvs under build/bench/ (TensorFlow; ONNX Runtime for /classify;
# ONNX Runtime + tokenizers for the text routes; sentence-transformers on PyTorch, CPU, for the embedding routes),
# strace for the image section.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

# A Debian tool a section needs: installed when root, else that section says it was not measured.
debian_tool() {  # debian_tool COMMAND SECTION WHAT-FOR
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> [$(date +%T)] installing $1 (Debian) for $3"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
  else
    echo "==> $1 not found and not root: section $2 will say it was not measured"
  fi
}
debian_tool wrk "6 (throughput)" "the throughput section"
debian_tool strace "12 (image)" "the image section's bytes read at cold start"

stamp=build/bench/.requirements-bench.stamp
if [ ! -f "$stamp" ] || [ requirements-bench.txt -nt "$stamp" ]; then
  echo "==> [$(date +%T)] installing requirements-bench.txt into the dev venv"
  "$PY" -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt
  mkdir -p build/bench && touch "$stamp"
fi

bash tools/prepare-lambda-runtime.sh
"$PY" -m bench.venvs tensorflow onnxruntime onnxruntime-tokenizers sentence-transformers >/dev/null
