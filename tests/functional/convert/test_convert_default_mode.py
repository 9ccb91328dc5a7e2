"""Without --quantization, the digits CNN's mode is chosen by measurement (every mode converted, gated and timed; the
fastest that passes with margin served), and a verdict its 297 validation samples cannot support is named as such."""
from __future__ import annotations

import json

import pytest

from convert.mode_choice import margin_problems
from convert.report_page import write_page

pytestmark = pytest.mark.slow


def test_the_served_mode_is_the_fastest_with_margin_and_the_report_says_why(image_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "digits"
    code, out, err = run_convert(image_saved_model, out_dir)
    assert code == 0, err
    report = json.loads((out_dir / "report.json").read_text())
    rows = {row["mode"]: row for row in report["rows"]}
    assert list(rows) == ["float32", "float16", "dynamic", "mixed", "int8"]
    chosen = report["choice"]["chosen"]
    assert report["served_mode"] == chosen == json.loads((out_dir / "manifest.json").read_text())["quantization"]
    qualified = {mode for mode, row in rows.items()
                 if row["passed"] and (mode == "float32" or not margin_problems(row["fidelity"]))}
    assert chosen in qualified
    # 297 samples cannot show the 99% that float16 is held to, however they agree: it has no margin.
    assert "not enough samples: 297 samples cannot show >= 99.0% agreement at 95% confidence: give at least 381" \
        in report["choice"]["others"]["float16"]
    assert "float16" not in qualified
    faster = [mode for mode in qualified if rows[mode]["p50_ms"] < rows[chosen]["p50_ms"] / 1.1]
    assert faster == []  # no qualifying mode is clearly faster than the one served
    interval = rows[chosen]["fidelity"]["intervals"]["top1_agreement"]
    assert interval["samples"] == 297 and interval["low"] <= rows[chosen]["fidelity"]["top1_agreement"] <= \
        interval["high"]
    assert f"Served mode chosen by measurement: **{chosen}**" in out
    assert f"Served mode chosen by measurement: **{chosen}**" in (out_dir / "report.md").read_text()
    page = write_page(out_dir).read_text()
    assert f"<h2>How the served mode was chosen</h2><p><b>{chosen}</b>" in page
    assert "<th>95% CI</th>" in page and "top-1 98.7%-100.0%" in page  # 297 of 297 agreeing, as float32 does


def test_an_explicit_mode_whose_samples_are_too_few_is_written_with_a_warning(image_saved_model, tmp_path,
                                                                                run_convert):
    code, out, err = run_convert(image_saved_model, tmp_path / "digits", "--quantization", "float16")
    assert code == 0, err
    assert err.strip() == ("convert: warning: the float16 model's verdict rests on too few samples: 297 samples cannot "
                           "show >= 99.0% agreement at 95% confidence: give at least 381 [not_enough_samples]")
    row = json.loads((tmp_path / "digits" / "report.json").read_text())["rows"][0]
    assert row["passed"] and row["shortfall"].startswith("297 samples cannot show")
    assert "| not enough samples: 297 samples cannot show" in out
    assert '<span class="fail">not enough samples</span> 297 samples cannot show' in \
        write_page(tmp_path / "digits").read_text()
    assert json.loads((tmp_path / "digits" / "report.json").read_text())["choice"] is None  # the user chose
