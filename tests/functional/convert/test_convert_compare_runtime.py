"""`--compare` serves every mode with the function itself in fresh processes and recommends a mode and a Lambda
memory size: the numbers it used are in report.json, report.md, the printed table and the report page."""
from __future__ import annotations

import json

from convert.memory_advice import MEMORY_SIZES_MB
from convert.report_page import write_page

MODES = ["float32", "float16", "dynamic", "mixed", "int8"]


def test_compare_measures_each_mode_served_and_recommends_a_memory_size(image_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "digits"
    # `python -m convert MODEL OUT_DIR --compare`, as docs/deploy.md ("Memory and threads") and docs/conversion.md
    code, out, err = run_convert(image_saved_model, out_dir, "--compare")
    assert code == 0, err
    block = json.loads((out_dir / "report.json").read_text())["runtime"]
    assert [row["mode"] for row in block["modes"]] == MODES
    for row in block["modes"]:
        measured = [row["cold_start_s"], row["first_invoke_ms"], row["warm_p50_ms"]["1"], row["warm_p50_ms"]["2"],
                    row["peak_rss_mb"]]
        assert all(isinstance(value, float) and value > 0 for value in measured), row
        assert row["over_thread_line"] is False  # a 100 KB model keeps one thread
    passed = {row["mode"] for row in block["modes"] if row["passed"]}
    advice = block["recommendation"]
    assert advice["mode"] in passed and advice["memory_mb"] in MEMORY_SIZES_MB and advice["threads"] == 1
    sizes = block["candidates"][advice["mode"]]
    assert [size["memory_mb"] for size in sizes] == list(MEMORY_SIZES_MB)
    chosen = next(size for size in sizes if size["memory_mb"] == advice["memory_mb"])
    assert chosen["fits"] and chosen["cost_per_million_usd"] == advice["cost_per_million_usd"] > 0
    peak = next(row["peak_rss_mb"] for row in block["modes"] if row["mode"] == advice["mode"])
    assert advice["memory_mb"] > peak
    headline = f"Recommended: {advice['mode']} at {advice['memory_mb']:,} MB (1 thread)"
    assert headline in out and headline in (out_dir / "report.md").read_text()
    assert "| mode | gate | cold start | first invoke | warm p50, 1 thread | warm p50, 2 threads |" in out
    assert headline in write_page(out_dir).read_text()


def test_a_single_mode_conversion_measures_no_runtime(image_saved_model, tmp_path, run_convert):
    code, out, err = run_convert(image_saved_model, tmp_path / "one", "--quantization", "float16")
    assert code == 0, err
    assert json.loads((tmp_path / "one" / "report.json").read_text())["runtime"] is None
    assert "Recommended:" not in out
