"""A two-input text model (int32 ids stay int32 in int8) and a SavedModel that arrives without a sidecar."""
from __future__ import annotations

import json

import numpy as np
import pytest
from tokenizers import Tokenizer

TABLE_ROWS = 32  # conftest.py VOCABULARY: [PAD], [UNK], w0 ... w29

pytestmark = pytest.mark.slow


def test_int8_text_model_keeps_int32_ids_and_copies_the_tokenizer(text_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "text"
    code, _, err = run_convert(text_saved_model, out_dir, "--quantization", "int8")
    assert code == 0, err
    manifest = json.loads((out_dir / "manifest.json").read_text())
    inputs = {tensor["role"]: tensor for tensor in manifest["inputs"]}
    assert set(inputs) == {"input_ids", "attention_mask"}
    assert inputs["input_ids"]["dtype"] == "int32" and inputs["input_ids"]["quantization"] is None
    assert inputs["input_ids"]["shape"] == [1, 12]
    # Its ids index the embedding table (int8 weights, through the converter's negative-index wrap); a fixed length
    # needs no max_shape.
    assert inputs["input_ids"]["value_range"] == [0, TABLE_ROWS - 1] and "max_shape" not in inputs["input_ids"]
    assert "value_range" not in inputs["attention_mask"]
    assert manifest["outputs"][0]["dtype"] == "int8" and manifest["outputs"][0]["quantization"]["scale"] > 0
    assert manifest["preprocessing"]["tokenizer"] == "tokenizer.json"
    assert (out_dir / "tokenizer.json").read_bytes() == (text_saved_model / "tokenizer.json").read_bytes()
    assert Tokenizer.from_file(str(out_dir / "tokenizer.json")).encode("w7 w3").ids == [9, 5]
    assert manifest["fidelity"]["passed"] and manifest["fidelity"]["accuracy"] > 0.9


def test_sidecarless_model_converts_with_generated_inputs(sidecarless_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "bare"
    code, out, err = run_convert(sidecarless_saved_model, out_dir, "--quantization", "dynamic")
    assert code == 0, err
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert manifest["name"] == "bare_digits"
    assert manifest["task"] == "tensor" and manifest["labels"] is None and manifest["preprocessing"] is None
    assert manifest["output"] == "probabilities"  # guessed from rows that sum to 1
    assert manifest["inputs"][0]["role"] == "image"
    assert manifest["fidelity"]["accuracy"] is None and manifest["fidelity"]["samples"] == 32
    assert json.loads((out_dir / "report.json").read_text())["samples"]["source"] == "generated"


def test_sidecarless_int8_with_representative_file(sidecarless_saved_model, image_saved_model, tmp_path,
                                                    run_convert):
    representative = np.load(image_saved_model / "representative.npz")["inputs_image"]
    np.savez(tmp_path / "calibration.npz", inputs_image=representative)
    code, _, err = run_convert(sidecarless_saved_model, tmp_path / "bare8", "--quantization", "int8",
                               "--representative", tmp_path / "calibration.npz")
    assert code == 0, err
    manifest = json.loads((tmp_path / "bare8" / "manifest.json").read_text())
    assert manifest["inputs"][0]["quantization"]["scale"] > 0
