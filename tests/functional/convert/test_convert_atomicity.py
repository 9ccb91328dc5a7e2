"""OUT_DIR is all or nothing: a failed conversion leaves no trace and never harms an earlier good model."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def test_failed_conversion_leaves_no_out_dir_and_no_staging(weightless_saved_model, tmp_path, run_convert):
    code, _, _ = run_convert(weightless_saved_model, tmp_path / "out")
    assert code == 2
    assert list(tmp_path.iterdir()) == []


def test_failed_conversion_keeps_the_previous_good_model(image_saved_model, weightless_saved_model, tmp_path,
                                                          run_convert):
    out_dir = tmp_path / "served"
    assert run_convert(image_saved_model, out_dir, "--quantization", "float16")[0] == 0
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    code, _, _ = run_convert(weightless_saved_model, out_dir)
    assert code == 2
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["served"]


def test_successful_conversion_replaces_the_previous_model(image_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "served"
    assert run_convert(image_saved_model, out_dir, "--quantization", "float32")[0] == 0
    assert run_convert(image_saved_model, out_dir, "--quantization", "dynamic")[0] == 0
    assert json.loads((out_dir / "manifest.json").read_text())["quantization"] == "dynamic"
    assert [p.name for p in tmp_path.iterdir()] == ["served"]


def test_compare_stops_at_the_weightless_probe_and_writes_nothing(weightless_saved_model, tmp_path, run_convert):
    """Every mode would inherit the missing weights: one line of advice, no table of four identical failures."""
    code, out, err = run_convert(weightless_saved_model, tmp_path / "out", "--compare", "--quantization", "float16")
    assert code == 2 and err.strip().endswith("[weightless_export]")
    assert "converting to float16" not in out and "| mode |" not in out
    assert list(tmp_path.iterdir()) == []
