"""Section 5: installed size of requirements.txt (the function's venv) vs the TensorFlow and ONNX Runtime baselines.

Measured as the bytes of every file under each venv's site-packages (what an image layer would carry), plus the
biggest distributions of each, read from their RECORD files, so a miss points at a package, not a guess.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from bench import venvs
from bench.report import SectionResult, table, verdict
from bench.stats import ratio

NUMBER = 5
TITLE = "Footprint: installed size of the runtime dependencies"
TARGET_MB = 200
TARGET_RATIO = 8
MB = 1024 * 1024
# In every venv whatever the requirements: the venv's own pip and what the Lambda base image ships.
NOT_REQUIREMENTS = {"pip", "awslambdaric", "simplejson", "snapshot_restore_py"}

# Runs inside each venv: bytes per installed distribution, from the files its RECORD lists.
_PER_DISTRIBUTION = """
import importlib.metadata as md, json, os
sizes = {}
for dist in md.distributions():
    total = 0
    for f in dist.files or []:
        path = dist.locate_file(f)
        if os.path.isfile(path):
            total += os.path.getsize(path)
    sizes[dist.metadata["Name"]] = total
print(json.dumps(sizes))
"""


def tree_bytes(root: Path) -> int:
    """Apparent size of every regular file below root (symlinks not followed), like `du -sb`."""
    return sum(path.lstat().st_size for path in root.rglob("*") if path.is_file() and not path.is_symlink())


def distribution_bytes(venv: venvs.Venv) -> dict[str, int]:
    done = subprocess.run([str(venv.python), "-c", _PER_DISTRIBUTION], check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def run(context) -> SectionResult:
    started = time.perf_counter()
    configurations = [("(a) function: requirements.txt", venvs.litert_venv()),
                      ("(b) TensorFlow baseline", venvs.baseline_venv("tensorflow")),
                      ("(c) ONNX Runtime baseline", venvs.baseline_venv("onnxruntime"))]
    measured = []
    for label, venv in configurations:
        site = venv.site_packages()
        per_dist = distribution_bytes(venv)
        tooling = sum(size for name, size in per_dist.items() if _canonical(name) in NOT_REQUIREMENTS)
        requirements = {name: size for name, size in per_dist.items() if _canonical(name) not in NOT_REQUIREMENTS}
        biggest = sorted(requirements.items(), key=lambda item: item[1], reverse=True)[:4]
        whole = tree_bytes(site)
        measured.append((label, whole, whole - tooling, len(requirements), biggest))

    ours = measured[0][2]
    tensorflow = measured[1][2]
    rows = [[label, f"{whole / MB:.0f} MB", f"**{net / MB:.0f} MB**", str(count), ratio(net, ours),
             ", ".join(f"{name} {size / MB:.0f}" for name, size in biggest)]
            for label, whole, net, count, biggest in measured]
    markdown = "\n".join([
        "Bytes of all files under each venv's `site-packages`, counted once (one measurement: sizes do not vary). "
        "Each venv is built from its pin list alone on the same Python; all three also hold what the Lambda base "
        "image ships beside the function (awslambdaric, simplejson, snapshot-restore-py), so the comparison is "
        "like for like. (a) is `pip install --no-deps -r requirements.txt` then runtime-prune.txt, as the image "
        "(tools/prepare-lambda-runtime.sh; section 12 has the image's layer itself); "
        "(b) and (c) resolve their dependencies normally (bench/baselines/requirements-*.txt), as a tutorial "
        "reader's `pip install` does.",
        "",
        "The target compares the dependency sets themselves: *installed* is site-packages minus what every "
        "venv carries regardless (pip, and the base image's awslambdaric, simplejson, snapshot-restore-py).",
        "",
        table(["configuration", "whole site-packages", "installed", "distributions", "vs (a)",
               "biggest distributions (MB)"], rows),
    ])
    verdicts = [
        verdict(ours <= TARGET_MB * MB, f"requirements.txt installed {ours / MB:.0f} MB (target <= {TARGET_MB} MB)"),
        verdict(tensorflow >= TARGET_RATIO * ours,
                f"{ratio(tensorflow, ours)} smaller than the TensorFlow baseline (target >= {TARGET_RATIO}x)"),
    ]
    return SectionResult(NUMBER, TITLE, markdown, verdicts, time.perf_counter() - started)
