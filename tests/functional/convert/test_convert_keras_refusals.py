"""Every refusal of the .keras path and of multi-label sidecars: one line on stderr, the field named, a stable code."""
from __future__ import annotations

import json

import numpy as np
import pytest

from kit import keras_text_models as kt

pytestmark = pytest.mark.slow

TEXTS = ["a good film", "a bad film", "good acting", "a bad plot", "great fun", "dull and long"]


def tiny_text_dir(directory, sidecar: dict | None = None, arrays: dict | None = None, **settings):
    """An untrained TextVectorization model in a .keras file (settings passed to the layer), its sidecar and
    validation raw texts."""
    k = kt.keras()
    ids = settings.get("output_mode", "int") == "int"
    layer = k.layers.TextVectorization(max_tokens=20, name="vectorize", **settings,
                                       **({"output_sequence_length": 6} if ids else {}))
    layer.adapt(TEXTS)
    text = k.Input((1,), dtype="string", name="text")
    vectors = layer(text)
    if ids:
        vectors = k.layers.GlobalAveragePooling1D(name="pool")(k.layers.Embedding(20, 4, name="embed")(vectors))
    model = k.Model(text, k.layers.Dense(1, activation="sigmoid", name="scores")(vectors))
    directory.mkdir(parents=True, exist_ok=True)
    model.save(directory / "model.keras")
    np.savez(directory / "validation.npz", **(arrays or {"raw_texts": np.array(TEXTS)}))
    (directory / "sidecar.json").write_text(json.dumps(sidecar or kt.sentiment_sidecar("tiny")))
    return directory


def refusal(run_convert, *argv) -> str:
    code, _, err = run_convert(*argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("convert: error: "), err
    return lines[0]


def test_a_multi_hot_text_vectorization_is_refused_naming_the_setting(tmp_path, run_convert):
    source = tiny_text_dir(tmp_path / "multi_hot", output_mode="multi_hot")
    line = refusal(run_convert, source / "model.keras", tmp_path / "out", "--sidecar", source / "sidecar.json")
    assert line.endswith("[unsupported_text_vectorization]")
    assert "TextVectorization layer 'vectorize': output_mode is 'multi_hot'" in line
    assert not (tmp_path / "out").exists()


def test_a_sidecar_that_sets_what_the_layer_decides_is_refused(tmp_path, run_convert):
    sidecar = kt.sentiment_sidecar("tiny", preprocessing={"type": "text", "tokenizer": "t.json", "max_length": 6})
    source = tiny_text_dir(tmp_path / "with_preprocessing", sidecar)
    line = refusal(run_convert, source / "model.keras", tmp_path / "out", "--sidecar", source / "sidecar.json")
    assert line.endswith("[bad_sidecar]") and "\"preprocessing\" comes from the model's TextVectorization" in line


def test_a_text_model_without_a_sidecar_gets_one_inferred_and_without_validation_is_refused(tmp_path, run_convert):
    source = tiny_text_dir(tmp_path / "no_sidecar")
    (source / "sidecar.json").unlink()  # a sidecar.json beside a .keras file is read (what `init` writes)
    code, out, err = run_convert(source / "model.keras", tmp_path / "out", "--quantization", "float32")
    assert code == 0, err
    assert "sidecar task: a TextVectorization input and the last layer (Dense, activation sigmoid, 1 unit(s))" in out
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert (manifest["name"], manifest["task"], manifest["labels"]) == ("model", "text_classification", ["0", "1"])
    (source / "validation.npz").unlink()
    line = refusal(run_convert, source / "model.keras", tmp_path / "out2")
    assert line.endswith("[cannot_infer]") and "no validation.npz beside the model" in line


def test_validation_without_raw_texts_is_refused(tmp_path, run_convert):
    source = tiny_text_dir(tmp_path / "no_raw", arrays={"inputs_input_ids": np.zeros((6, 6), np.int32)})
    line = refusal(run_convert, source / "model.keras", tmp_path / "out", "--sidecar", source / "sidecar.json")
    assert line.endswith("[bad_samples]") and "raw_texts" in line


def test_sidecar_option_for_a_saved_model_directory_and_missing_files(tmp_path, run_convert, image_saved_model):
    line = refusal(run_convert, image_saved_model, tmp_path / "out", "--sidecar", tmp_path / "s.json")
    assert line.endswith("[bad_sidecar]") and "--sidecar is for .keras files" in line
    assert refusal(run_convert, tmp_path / "absent.keras", tmp_path / "out").endswith("[missing_file]")
    (tmp_path / "model.h5").write_bytes(b"not a model")
    assert refusal(run_convert, tmp_path / "model.h5", tmp_path / "out").endswith("[not_a_keras_file]")
    (tmp_path / "broken.keras").write_bytes(b"not a zip")
    assert refusal(run_convert, tmp_path / "broken.keras", tmp_path / "out").endswith("[not_a_keras_file]")
    source = tiny_text_dir(tmp_path / "text")
    line = refusal(run_convert, source / "model.keras", tmp_path / "out", "--sidecar", tmp_path / "missing.json")
    assert line.endswith("[bad_sidecar]") and "does not exist" in line
