"""Schemathesis fuzzes every operation of GET /openapi.json against the real local HTTP server: no answer >= 500, and
every answer fits the document's own schemas (status, content type, body, error codes), schema-violating requests
are refused with a 4xx, and undeclared methods get 405 with an Allow header.

`make test` runs a bounded budget (API_FUZZ_EXAMPLES, default 20 cases per operation and phase: ~1,500 requests over
the 24 operations in 35-40 s on a shared 2-core machine); set it higher for a longer hunt, e.g. API_FUZZ_EXAMPLES=500.
The tensor routes' batches are bounded by the document itself: TF Serving's "instances" has maxItems and a v2 shape's
batch dimension a maximum, both MAX_TENSOR_BATCH in force; the tensors' inner lists need no cap (hypothesis keeps them
short: capping v2 data at 8 values did not change the time). API_FUZZ_SEED picks another seed. The
JUnit report and Schemathesis' own output land in build/test-artifacts/schemathesis/.
The models served include a text_embedding model, so /embed and /v1/embeddings are fuzzed past their model lookup.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import requests

from tests.support.function_fixtures import REPO, demo_models  # noqa: F401
from tests.support.local_api import embedding_api  # noqa: F401

EXAMPLES = int(os.environ.get("API_FUZZ_EXAMPLES", "20"))
SEED = int(os.environ.get("API_FUZZ_SEED", "1"))
CONFIG = Path(__file__).with_name("schemathesis.toml")
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
REPORT_DIR = REPO / "build" / "test-artifacts" / "schemathesis"


def test_every_operation_survives_the_fuzzer(embedding_api, tmp_path):  # noqa: F811
    assert SCHEMATHESIS.exists(), "schemathesis is missing: it is pinned in requirements-test.txt"
    document = requests.get(f"{embedding_api}/openapi.json", timeout=60).json()
    operations = sum(len(methods) for methods in document["paths"].values())
    # From a file: loaded from its own URL, Schemathesis leaves out the operation that serves the document.
    (tmp_path / "openapi.json").write_text(json.dumps(document), encoding="utf-8")
    command = [str(SCHEMATHESIS), "--config-file", str(CONFIG), "--no-color", "run", str(tmp_path / "openapi.json"),
               "--url", embedding_api, "--max-examples", str(EXAMPLES), "--seed", str(SEED), "--workers", "1",
               "--report", "junit", "--report-dir", str(REPORT_DIR)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    output = run.stdout + run.stderr
    (REPORT_DIR / "output.txt").write_text(output, encoding="utf-8")
    assert run.returncode == 0, output[-6000:]
    assert f"Selected: {operations}/{operations}" in output and f"Tested: {operations}\n" in output, output[-2000:]
    cases = re.search(r"(\d+) generated, (\d+) passed", output)
    assert cases and cases.group(1) == cases.group(2) and int(cases.group(1)) > operations, output[-2000:]
