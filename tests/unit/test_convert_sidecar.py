"""sidecar.json parsing: a good one loads, and each broken field is named in one line that points at the docs."""
from __future__ import annotations

import json

import pytest

from convert.errors import ConversionError
from convert.sidecar import load_sidecar


def good_sidecar() -> dict:
    return {
        "schema": 1, "name": "cats", "task": "image_classification", "labels": ["cat", "dog"],
        "output": "logits",
        "preprocessing": {"type": "image", "color_mode": "RGB", "size": [4, 4], "resize": "bilinear",
                          "mean": [0, 0, 0], "std": [1, 1, 1]},
        "inputs": {"image": "pixels"},
        "validation": {"samples": "validation.npz"},
        "metrics": {"test_accuracy": 0.9},
    }


def write(directory, sidecar: dict) -> None:
    (directory / "validation.npz").write_bytes(b"")
    (directory / "sidecar.json").write_text(json.dumps(sidecar))


def test_no_sidecar_is_not_an_error(tmp_path):
    assert load_sidecar(tmp_path) is None


def test_good_sidecar_loads_and_representative_defaults_to_samples(tmp_path):
    write(tmp_path, good_sidecar())
    sidecar = load_sidecar(tmp_path)
    assert sidecar.name == "cats" and sidecar.labels == ["cat", "dog"] and sidecar.output == "logits"
    assert sidecar.samples == tmp_path / "validation.npz" == sidecar.representative
    assert sidecar.tokenizer is None
    assert sidecar.extra == {"metrics": {"test_accuracy": 0.9}}


def test_text_sidecar_names_its_tokenizer(tmp_path):
    sidecar = good_sidecar() | {
        "task": "text_classification", "inputs": {"input_ids": "ids", "attention_mask": "mask"},
        "preprocessing": {"type": "text", "tokenizer": "tokenizer.json", "max_length": 8, "lowercase": False}}
    (tmp_path / "tokenizer.json").write_text("{}")
    write(tmp_path, sidecar)
    assert load_sidecar(tmp_path).tokenizer == tmp_path / "tokenizer.json"


@pytest.mark.parametrize(("change", "message"), [
    ({"schema": 2}, "unsupported schema 2"),
    ({"task": "detection"}, "task 'detection' is not one of"),
    ({"labels": []}, "\"labels\" must be a non-empty list of strings"),
    ({"labels": "cat,dog"}, "\"labels\" has the wrong type"),
    ({"output": "scores"}, "output 'scores' is not one of probabilities, logits"),
    ({"inputs": {"input_ids": "ids"}}, "do not fit a image model"),
    ({"inputs": {"image": 3}}, "must map each role to a signature input name"),
    ({"validation": {"samples": "missing.npz"}}, "names missing.npz, which is not in"),
    ({"validation": {"samples": "../../etc/passwd"}}, "must be a file name inside the SavedModel directory"),
    ({"preprocessing": {"type": "text"}}, "preprocessing type 'text' does not fit task 'image_classification'"),
])
def test_each_broken_field_is_named(tmp_path, change, message):
    write(tmp_path, good_sidecar() | change)
    with pytest.raises(ConversionError) as raised:
        load_sidecar(tmp_path)
    assert raised.value.code == "bad_sidecar"
    assert message in raised.value.message and "docs/model-format.md" in raised.value.message
    assert "\n" not in raised.value.message


def test_missing_key_and_bad_json(tmp_path):
    sidecar = good_sidecar()
    del sidecar["labels"]
    write(tmp_path, sidecar)
    with pytest.raises(ConversionError, match="missing \"labels\""):
        load_sidecar(tmp_path)
    (tmp_path / "sidecar.json").write_text("{not json")
    with pytest.raises(ConversionError, match="not valid JSON"):
        load_sidecar(tmp_path)


def test_text_sidecar_without_its_tokenizer_file(tmp_path):
    sidecar = good_sidecar() | {
        "task": "text_classification", "inputs": {"input_ids": "ids"},
        "preprocessing": {"type": "text", "tokenizer": "tokenizer.json", "max_length": 8}}
    write(tmp_path, sidecar)
    with pytest.raises(ConversionError, match="preprocessing.tokenizer"):
        load_sidecar(tmp_path)
