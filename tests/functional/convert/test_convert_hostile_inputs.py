"""Hostile files beside a SavedModel (a sidecar.json built to break the JSON parser, a validation.npz built to
exhaust memory) end as every user mistake does: exit 2, one line on stderr with a stable code, nothing written."""
from __future__ import annotations

import json
import resource
import shutil

import pytest

from convert.npz_reader import MAX_NPZ_BYTES
from tests.support.hostile_npz import npy_header, write_npz, write_zip_bomb

pytestmark = pytest.mark.slow


def copy_of(saved_model, tmp_path):
    copy = tmp_path / saved_model.name
    shutil.copytree(saved_model, copy)
    return copy


def refusal(run_convert, model, tmp_path, code: str) -> str:
    exit_code, out, err = run_convert(model, tmp_path / "out", "--quantization", "float32")
    assert exit_code == 2, out
    (line,) = err.strip().splitlines()
    assert line.startswith("convert: error: ") and line.endswith(f"[{code}]") and "Traceback" not in err
    assert "converting to" not in out  # refused before any conversion
    assert not (tmp_path / "out").exists()
    return line


def with_sidecar_text(model, change) -> None:
    path = model / "sidecar.json"
    path.write_text(change(json.dumps(json.loads(path.read_text()))))


def test_a_sidecar_integer_of_5000_digits(image_saved_model, tmp_path, run_convert):
    model = copy_of(image_saved_model, tmp_path)
    with_sidecar_text(model, lambda text: text[:-1] + ', "metrics": {"n": ' + "9" * 5000 + "}}")
    line = refusal(run_convert, model, tmp_path, "bad_sidecar")
    assert "sidecar.json: holds an integer longer than the 4,300 digits convert reads" in line


@pytest.mark.parametrize("depth", [500, 10_000])
def test_a_sidecar_nested_deeply(image_saved_model, tmp_path, run_convert, depth):
    model = copy_of(image_saved_model, tmp_path)
    with_sidecar_text(model, lambda text: text[:-1] + ', "labels": ' + "[" * depth + "]" * depth + "}")
    assert "sidecar.json: nests objects or lists more than 16 levels deep" in refusal(run_convert, model, tmp_path,
                                                                                      "bad_sidecar")


def test_a_validation_header_claiming_an_enormous_shape(image_saved_model, tmp_path, run_convert):
    model = copy_of(image_saved_model, tmp_path)
    write_npz(model / "validation.npz", {"inputs_image": npy_header((10 ** 11, 8, 8, 1))})
    line = refusal(run_convert, model, tmp_path, "bad_samples")
    assert "validation.npz: inputs_image's header claims shape (100000000000, 8, 8, 1) of float32" in line


def test_a_validation_bomb_is_refused_within_a_memory_bound(image_saved_model, tmp_path, run_convert):
    model = copy_of(image_saved_model, tmp_path)
    write_zip_bomb(model / "validation.npz", "inputs_image", MAX_NPZ_BYTES)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    line = refusal(run_convert, model, tmp_path, "bad_samples")
    assert f"validation.npz: its arrays hold {MAX_NPZ_BYTES + 128:,} bytes uncompressed" in line
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB: nothing was inflated


def test_a_hostile_validation_file_beside_a_model_without_sidecar(sidecarless_saved_model, tmp_path, run_convert):
    """Inferring the sidecar reads validation.npz too (its `expected`, `labels`, raw samples): the same bound."""
    model = copy_of(sidecarless_saved_model, tmp_path)
    write_npz(model / "validation.npz", {"expected": npy_header((10 ** 12, 10))})
    line = refusal(run_convert, model, tmp_path, "bad_samples")
    assert "validation.npz: expected's header claims shape (1000000000000, 10) of float32" in line
