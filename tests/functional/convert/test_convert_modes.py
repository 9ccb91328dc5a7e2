"""Every quantization mode on a real (tiny) Keras model: files, manifest contract, and answers LiteRT gives."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

pytestmark = pytest.mark.slow


def reference_top1(saved_model_dir, inputs: dict) -> np.ndarray:
    import tensorflow as tf

    function = tf.saved_model.load(str(saved_model_dir)).signatures["serving_default"]
    (output,) = function(**{name: tf.constant(array) for name, array in inputs.items()}).values()
    return np.asarray(output).argmax(axis=1)


@pytest.mark.parametrize("mode", ["float32", "float16", "dynamic", "mixed", "int8"])
def test_each_mode_writes_a_model_that_passes_the_gate(mode, image_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "model"
    code, out, err = run_convert(image_saved_model, out_dir, "--quantization", mode)
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == ["manifest.json", "model.tflite", "report.json", "report.md",
                                                         "report.samples.npz"]
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert list(manifest) == ["schema", "name", "task", "labels", "output", "preprocessing", "model_file", "files",
                              "quantization", "signature", "inputs", "outputs", "source", "fidelity", "created_at"]
    assert manifest["schema"] == 2 and manifest["quantization"] == mode
    assert manifest["files"] == {"model.tflite": hashlib.sha256((out_dir / "model.tflite").read_bytes()).hexdigest()}
    assert manifest["name"] == "tiny_digits" and manifest["labels"] == [str(d) for d in range(10)]
    assert manifest["preprocessing"] == {"type": "image", "color_mode": "L", "size": [8, 8], "resize": "bilinear",
                                         "divisor": 1.0, "mean": [0.0], "std": [16.0]}
    (tensor_in,), (tensor_out,) = manifest["inputs"], manifest["outputs"]
    assert list(tensor_in) == ["name", "role", "shape", "dtype", "quantization"]
    assert (tensor_in["name"], tensor_in["role"], tensor_in["shape"]) == ("pixels", "image", [1, 8, 8, 1])
    assert (tensor_out["name"], tensor_out["role"], tensor_out["shape"]) == ("output_0", "scores", [1, 10])
    fidelity = manifest["fidelity"]
    assert set(fidelity) == {"samples", "top1_agreement", "max_abs_diff", "accuracy", "reference_accuracy",
                             "threshold", "served", "passed"}
    assert fidelity["served"] == {"checked": False}  # preprocessed tensors only: the served path is not checked
    assert fidelity["passed"] and fidelity["samples"] == 297
    assert fidelity["top1_agreement"] >= fidelity["threshold"]
    assert fidelity["accuracy"] > 0.8 and fidelity["reference_accuracy"] > 0.8
    assert len(manifest["source"]["saved_model_sha256"]) == 64
    assert manifest["source"]["converter"].startswith("tensorflow ")
    row = json.loads((out_dir / "report.json").read_text())["rows"][0]
    # Timings exist; their sizes are the bench's.
    assert row["mode"] == mode and row["mean_ms"] > 0 and row["p99_ms"] > 0
    # mixed names the dense layers it kept float32: none here, the CNN's one dense layer passes in int8.
    assert row["float32_layers"] == ([] if mode == "mixed" else None)
    assert f"| **{mode}** (served)" in out


def test_quantized_modes_are_smaller_than_float32(image_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(image_saved_model, tmp_path / "m", "--quantization", "dynamic")
    assert code == 0, err
    row = json.loads((tmp_path / "m" / "report.json").read_text())["rows"][0]
    assert row["size_ratio_vs_float32"] < 0.5


def test_int8_manifest_quantization_reproduces_predictions(image_saved_model, tmp_path, run_convert):
    """The function-side formula, from the manifest alone, must give the SavedModel's answers."""
    code, _, err = run_convert(image_saved_model, tmp_path / "int8", "--quantization", "int8")
    assert code == 0, err
    manifest = json.loads((tmp_path / "int8" / "manifest.json").read_text())
    (tensor_in,), (tensor_out,) = manifest["inputs"], manifest["outputs"]
    assert tensor_in["dtype"] == "int8" and tensor_out["dtype"] == "int8"
    assert tensor_in["quantization"]["scale"] > 0 and -128 <= tensor_in["quantization"]["zero_point"] <= 127
    assert tensor_out["quantization"]["scale"] > 0

    samples = np.load(image_saved_model / "validation.npz")
    images = samples["inputs_image"][:60]
    scale, zero_point = tensor_in["quantization"]["scale"], tensor_in["quantization"]["zero_point"]
    quantized = np.clip(np.round(images / scale) + zero_point, -128, 127).astype(np.int8)
    runner = Interpreter(model_path=str(tmp_path / "int8" / "model.tflite")).get_signature_runner(
        manifest["signature"])
    raw = runner(**{tensor_in["name"]: quantized})[tensor_out["name"]]
    out_q = tensor_out["quantization"]
    probabilities = (raw.astype(np.float32) - out_q["zero_point"]) * out_q["scale"]
    assert np.all(np.abs(probabilities.sum(axis=1) - 1.0) < 0.05)
    agreement = np.mean(probabilities.argmax(axis=1) == reference_top1(image_saved_model, {"pixels": images}))
    assert agreement >= 0.95


def test_float_modes_have_no_tensor_quantization(image_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(image_saved_model, tmp_path / "f16", "--quantization", "float16")
    assert code == 0, err
    manifest = json.loads((tmp_path / "f16" / "manifest.json").read_text())
    assert manifest["inputs"][0]["quantization"] is None and manifest["outputs"][0]["quantization"] is None
    assert manifest["inputs"][0]["dtype"] == "float32"


def test_compare_puts_every_mode_in_the_report(image_saved_model, tmp_path, run_convert):
    out_dir = tmp_path / "compared"
    code, out, err = run_convert(image_saved_model, out_dir, "--compare", "--quantization", "int8")
    assert code == 0, err
    report = json.loads((out_dir / "report.json").read_text())
    assert [row["mode"] for row in report["rows"]] == ["float32", "float16", "dynamic", "mixed", "int8"]
    assert all(row["passed"] for row in report["rows"])
    assert report["rows"][0]["size_ratio_vs_float32"] == 1.0
    assert report["served_mode"] == "int8"
    assert json.loads((out_dir / "manifest.json").read_text())["quantization"] == "int8"
    assert list(out_dir.glob("*.tflite")) == [out_dir / "model.tflite"]
    assert "| **int8** (served)" in (out_dir / "report.md").read_text()
    assert out.count("| mode | size | vs float32 |") == 1  # the modes table, printed once (then the runtime table)


def test_compare_leaves_the_served_model_byte_identical(image_saved_model, tmp_path, run_convert):
    """An int8 conversion, then --compare as README lists it: the five modes land in the report, the int8 model
    files stay byte for byte as they were; --compare --quantization MODE is how to replace it."""
    out_dir = tmp_path / "digits"
    code, _, err = run_convert(image_saved_model, out_dir, "--quantization", "int8")
    assert code == 0, err
    model_files = ("model.tflite", "manifest.json")
    before = {name: (out_dir / name).read_bytes() for name in model_files}
    (out_dir / "report.html").write_text("a page of the int8 conversion")  # stale once the report changes

    code, out, err = run_convert(image_saved_model, out_dir, "--compare")
    assert code == 0, err
    assert {name: (out_dir / name).read_bytes() for name in model_files} == before
    assert sorted(p.name for p in out_dir.iterdir()) == ["manifest.json", "model.tflite", "report.json", "report.md",
                                                         "report.samples.npz"]
    report = json.loads((out_dir / "report.json").read_text())
    assert [row["mode"] for row in report["rows"]] == ["float32", "float16", "dynamic", "mixed", "int8"]
    assert report["served_mode"] == "int8" and report["model_kept"] is True
    assert "| **int8** (served)" in out and "kept manifest.json, model.tflite" in out
    samples = np.load(out_dir / "report.samples.npz")
    assert list(samples["modes"]) == ["int8", "float32", "float16", "dynamic", "mixed"]
    assert samples["served_float16"].shape == samples["expected"].shape == (297, 10)

    code, _, err = run_convert(image_saved_model, out_dir, "--compare", "--quantization", "float16")
    assert code == 0, err
    assert json.loads((out_dir / "manifest.json").read_text())["quantization"] == "float16"
    assert json.loads((out_dir / "report.json").read_text())["model_kept"] is False


def test_min_agreement_overrides_the_modes_threshold_both_ways(image_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(image_saved_model, tmp_path / "strict", "--quantization", "int8",
                               "--min-agreement", "1.01")
    assert code == 2 and "bad_min_agreement" in err and not (tmp_path / "strict").exists()
    code, _, err = run_convert(image_saved_model, tmp_path / "lenient", "--quantization", "int8",
                               "--min-agreement", "0.5")
    assert code == 0, err
    assert json.loads((tmp_path / "lenient" / "manifest.json").read_text())["fidelity"]["threshold"] == 0.5
