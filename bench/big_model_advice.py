"""What `python -m convert --compare` recommends for section 18's two big models: the mode and Lambda memory size it
measured as the cheapest warm request (convert/memory_advice.py), with the numbers behind it.

Each model's SavedModel (bench/big_models.py) goes through `convert --compare` into BIG_DIR/<name>-compare (its
default-mode model and report files; the float32 model the section serves is left alone), in the dev venv, after
the section's timed runs so that the conversions never overlap them. The section's table reads each report.json.
It adds minutes to the section: 8 for ResNet50 and 16 for the BERT-base-sized encoder on 2 cores at load average
8-12 (int8 has no calibration inputs there and fails; mixed ranks the encoder's 72 fully connected layers).

`python -m bench.big_model_advice [MODEL ...]` runs it alone and prints the table.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench import big_models
from bench.paths import REPO_ROOT
from bench.report import table, verdict

TIMEOUT_SECONDS = 3600  # a BERT-base-sized --compare: five conversions, 72 layers ranked for mixed, 11 processes


def compare_dir(name: str) -> Path:
    return big_models.BIG_DIR / f"{name}-compare"


def run_compare(name: str) -> tuple[dict | None, str, float]:
    """(report.json's runtime block or None, why there is none, seconds the --compare took)."""
    big_models.build(name)
    out = compare_dir(name)
    print(f"==> convert --compare on {name}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "convert", str(big_models.saved_model_dir(name)), str(out),
                               "--compare", "--name", name], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=TIMEOUT_SECONDS, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    except subprocess.TimeoutExpired:
        return None, f"convert --compare took more than {TIMEOUT_SECONDS} s", time.perf_counter() - started
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return None, f"convert --compare exited {done.returncode}: {done.stderr.strip()[-300:]}", seconds
    block = json.loads((out / "report.json").read_text()).get("runtime")
    return block, "" if block else "the report has no runtime block", seconds


def advice_rows(found: dict[str, tuple[dict | None, str, float]]) -> list[list[str]]:
    rows = []
    for name, (block, why, seconds) in found.items():
        advice = (block or {}).get("recommendation") or {}
        if not advice.get("mode"):
            rows.append([name, "-", "-", "-", "-", "-", "-", advice.get("reason") or why, f"{seconds:.0f}"])
            continue
        measured = next(row for row in block["modes"] if row["mode"] == advice["mode"])
        rows.append([name, advice["mode"], f"{advice['memory_mb']:,} MB", str(advice["threads"]),
                     f"{advice['duration_ms']:.1f}", f"{measured['cold_start_s']:.2f}",
                     f"{measured['peak_rss_mb']:.0f}", f"${advice['cost_per_million_usd']:.2f}", f"{seconds:.0f}"])
    return rows


def advice_table(found: dict[str, tuple[dict | None, str, float]]) -> str:
    return table(["model", "mode", "memory", "threads", "warm request at that size, ms", "cold start, s",
                  "peak RSS, MB", "$ per million warm requests", "--compare took, s"], advice_rows(found))


def advice_part(found: dict[str, tuple[dict | None, str, float]]) -> tuple[str, list[str]]:
    """Section 18's sub-section (heading, what it is, the table) and one verdict per model: a mode and size named."""
    markdown = (f"\n### What `convert --compare` recommends\n\n{__doc__.split(chr(10) * 2)[0]}\n\n"
                + advice_table(found) + "\n")
    verdicts = [verdict(bool(((block or {}).get("recommendation") or {}).get("mode")),
                        f"{name}: convert --compare names a mode and a memory size" + (f" ({why})" if why else ""))
                for name, (block, why, _) in found.items()]
    return markdown, verdicts


def recommendations(models: tuple[str, ...]) -> dict[str, tuple[dict | None, str, float]]:
    return {name: run_compare(name) for name in models}


if __name__ == "__main__":
    print(advice_table(recommendations(tuple(sys.argv[1:]) or big_models.MODELS)))
