"""Text embedding (cosine gate) and tensor (error per output) models: conversion, manifest schema 2, the report."""
from __future__ import annotations

import hashlib
import json

import pytest

from convert.input_bounds import PROBE_LIMIT
TABLE_ROWS = 32  # conftest.py VOCABULARY: [PAD], [UNK], w0 ... w29

pytestmark = pytest.mark.slow


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_text_embedding_manifest(embedding_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "embedding"
    code, out, err = run_convert(embedding_saved_model, out_dir, "--quantization", "float16")
    assert code == 0, err
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert manifest["schema"] == 2 and manifest["task"] == "text_embedding"
    assert manifest["labels"] is None and manifest["output"] is None and "model_sha256" not in manifest
    assert manifest["preprocessing"] == {"type": "text", "tokenizer": "tokenizer.json", "max_length": 12,
                                         "lowercase": False}
    assert manifest["files"] == {"model.tflite": sha256(out_dir / "model.tflite"),
                                 "tokenizer.json": sha256(embedding_saved_model / "tokenizer.json")}
    assert [(tensor["role"], tensor["name"], tensor["shape"], tensor["dtype"]) for tensor in manifest["inputs"]] == [
        ("input_ids", "input_ids", [1, -1], "int32"), ("attention_mask", "attention_mask", [1, -1], "int32")]
    # The bounds convert finds in the model: ids index the 32-row embedding table; nothing bounds the open length
    # below the probe's limit (no position table), so both inputs are recorded at it.
    ids, mask = manifest["inputs"]
    assert ids["value_range"] == [0, TABLE_ROWS - 1] and "value_range" not in mask
    assert ids["max_shape"] == mask["max_shape"] == [-1, PROBE_LIMIT]
    assert [(tensor["role"], tensor["shape"]) for tensor in manifest["outputs"]] == [("embedding", [1, 8])]
    fidelity = manifest["fidelity"]
    assert fidelity["passed"] and fidelity["samples"] == 200
    assert fidelity["thresholds"] == {"min_cosine": 0.99, "mean_cosine": 0.999}
    assert 0.99 <= fidelity["min_cosine"] <= fidelity["mean_cosine"] <= 1.0
    assert "| min cosine | mean cosine |" in out and "top-1" not in out


def test_text_embedding_compare_shows_cosine_for_every_mode(embedding_saved_model, tmp_path, run_convert):
    code, out, err = run_convert(embedding_saved_model, tmp_path / "embedding", "--compare")
    assert code == 0, err
    print(out)  # the table, for the record (pytest -s)
    report = json.loads((tmp_path / "embedding" / "report.json").read_text())
    rows = report["rows"]
    assert [row["mode"] for row in rows] == ["float32", "float16", "dynamic", "mixed", "int8"]
    for row in rows:
        assert set(row["fidelity"]) >= {"min_cosine", "mean_cosine", "max_abs_diff"}
        assert row["fidelity"]["intervals"]["cosine_pass_rate"]["samples"] == 200
    assert rows[0]["fidelity"]["min_cosine"] > 0.99999
    # No model in OUT_DIR and no --quantization: the mode chosen by measurement is written and marked served.
    assert report["served_mode"] == report["choice"]["chosen"] != "int8"  # int8 fails the cosine gate here
    assert f"| **{report['served_mode']}** (served)" in out


def test_tensor_manifest_serves_every_input_and_output(tensor_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "tensor"
    code, out, err = run_convert(tensor_saved_model, out_dir, "--quantization", "dynamic")
    assert code == 0, err
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert manifest["task"] == "tensor" and manifest["schema"] == 2
    assert manifest["labels"] is None and manifest["output"] is None and manifest["preprocessing"] is None
    assert manifest["files"] == {"model.tflite": sha256(out_dir / "model.tflite")}
    # Inputs in the sidecar's order, outputs (not listed in the sidecar) sorted by name; each role is the name.
    assert [(t["name"], t["role"], t["shape"]) for t in manifest["inputs"]] == [
        ("features", "features", [1, 4]), ("extra", "extra", [1, 3])]
    assert [(t["name"], t["role"], t["shape"]) for t in manifest["outputs"]] == [
        ("category", "category", [1, 3]), ("price", "price", [1, 1])]
    fidelity = manifest["fidelity"]
    assert fidelity["passed"] and fidelity["tolerance"] == {"max_rel_error": 0.1}
    assert set(fidelity["outputs"]) == {"category", "price"}
    for errors in fidelity["outputs"].values():
        assert errors["max_rel_error"] <= 0.1 and errors["max_abs_error"] >= 0 and errors["reference_max_abs"] > 0
    assert "| category max abs error | category max rel error | price max abs error | price max rel error |" in out


def test_tensor_compare_shows_each_outputs_error_for_every_mode(tensor_saved_model, tmp_path, run_convert):
    code, out, err = run_convert(tensor_saved_model, tmp_path / "tensor", "--compare", "--quantization", "float16")
    assert code == 0, err
    print(out)
    rows = {row["mode"]: row for row in json.loads((tmp_path / "tensor" / "report.json").read_text())["rows"]}
    assert rows["float32"]["fidelity"]["outputs"]["price"]["max_rel_error"] < 1e-4
    assert rows["float16"]["passed"]


def test_tensor_int8_fails_and_says_why(tensor_saved_model, tmp_path, run_convert):
    """One int8 scale per tensor: "features" mixes columns 1000x apart in size, so the small ones are rounded away."""
    code, _, err = run_convert(tensor_saved_model, tmp_path / "out", "--quantization", "int8")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("convert: error: the converted int8 model differs from the SavedModel on output '")
    assert "of its range" in line and "above the 10.00% tolerance" in line
    assert "256 levels" in line and "its error grows with that range" in line and line.endswith("[fidelity_failed]")
    assert not (tmp_path / "out").exists()


def test_min_agreement_is_refused_for_a_gate_without_agreement(tensor_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(tensor_saved_model, tmp_path / "out", "--min-agreement", "0.9")
    assert code == 2 and "--min-agreement" in err and "tensor" in err and "[bad_min_agreement]" in err
