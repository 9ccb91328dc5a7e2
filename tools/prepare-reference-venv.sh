#!/usr/bin/env bash
# Builds .venv-reference: sentence-transformers on PyTorch (CPU) from requirements-reference.txt, on the dev venv's
# Python, for the tests that hold converted sentence-transformers models against sentence-transformers' own encode()
# (tests/support/sentence_transformers_reference.py runs in it). Kept apart from .venv so that the dev venv and
# everything measured in it stay free of torch. Idempotent: rebuilt only when requirements-reference.txt changes.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-reference
stamp="$VENV/.requirements.sha256"
wanted=$(sha256sum requirements-reference.txt | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
  exit 0
fi
echo "==> [$(date +%T)] building $VENV (sentence-transformers + PyTorch CPU, ~1 min, ~1.4 GB)"
base=$(.venv/bin/python -c "import sys; print(sys._base_executable)")
rm -rf "$VENV"
"$base" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements-reference.txt
echo "$wanted" > "$stamp"
