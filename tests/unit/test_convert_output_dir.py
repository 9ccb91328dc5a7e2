"""OUT_DIR is swapped in whole: never half-written, never replacing anything but an earlier conversion."""
from __future__ import annotations

import os
import stat

import pytest

from convert.errors import ConversionError
from convert.output_dir import staged_output_dir


class Boom(Exception):
    pass


def test_success_creates_out_dir_with_its_parents(tmp_path):
    out_dir = tmp_path / "models" / "cats"
    with staged_output_dir(out_dir) as staging:
        assert not out_dir.exists() and staging.parent == out_dir.parent
        (staging / "manifest.json").write_text("{}")
    assert (out_dir / "manifest.json").read_text() == "{}"
    assert [p.name for p in out_dir.parent.iterdir()] == ["cats"]


def test_out_dir_gets_ordinary_permissions_not_mkdtemp_private_ones(tmp_path):
    """The function image runs as a non-root user: a 0700 model directory would be unreadable there."""
    umask = os.umask(0o022)
    try:
        with staged_output_dir(tmp_path / "cats") as staging:
            (staging / "manifest.json").write_text("{}")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "cats").stat().st_mode) == 0o755


def test_failure_leaves_nothing(tmp_path):
    with pytest.raises(Boom), staged_output_dir(tmp_path / "cats") as staging:
        (staging / "model.tflite").write_bytes(b"half")
        raise Boom
    assert list(tmp_path.iterdir()) == []


def test_failure_keeps_the_previous_model(tmp_path):
    out_dir = tmp_path / "cats"
    with staged_output_dir(out_dir) as staging:
        (staging / "manifest.json").write_text("old")
    with pytest.raises(Boom), staged_output_dir(out_dir) as staging:
        (staging / "manifest.json").write_text("new")
        raise Boom
    assert (out_dir / "manifest.json").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["cats"]


def test_success_replaces_the_previous_model_entirely(tmp_path):
    out_dir = tmp_path / "cats"
    with staged_output_dir(out_dir) as staging:
        (staging / "manifest.json").write_text("old")
        (staging / "tokenizer.json").write_text("stale")
    with staged_output_dir(out_dir) as staging:
        (staging / "manifest.json").write_text("new")
    assert sorted(p.name for p in out_dir.iterdir()) == ["manifest.json"]
    assert (out_dir / "manifest.json").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["cats"]


def test_empty_directory_is_fine_but_foreign_files_and_plain_files_are_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with staged_output_dir(tmp_path / "empty") as staging:
        (staging / "manifest.json").write_text("{}")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("mine")
    with pytest.raises(ConversionError, match="not a converted model"), staged_output_dir(tmp_path / "home"):
        pass
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConversionError, match="is a file"), staged_output_dir(tmp_path / "file"):
        pass
    assert (tmp_path / "home" / "notes.txt").read_text() == "mine"


def test_the_served_mode_is_read_from_an_earlier_conversions_manifest(tmp_path):
    from convert.output_dir import served_mode_in

    assert served_mode_in(tmp_path / "missing") is None and served_mode_in(tmp_path) is None
    (tmp_path / "manifest.json").write_text('{"quantization": "int8"}')
    assert served_mode_in(tmp_path) == "int8"
    (tmp_path / "manifest.json").write_text('{"quantization": 8}')
    with pytest.raises(ConversionError) as refused:
        served_mode_in(tmp_path)
    assert refused.value.code == "bad_out_dir" and "pass --quantization MODE to replace it" in refused.value.message


def test_carrying_a_model_over_keeps_its_bytes_and_drops_the_report_files(tmp_path):
    from convert.output_dir import carry_over_model

    out_dir = tmp_path / "cats"
    out_dir.mkdir()
    files = {"model.tflite": b"\x00weights", "manifest.json": b"{}", "tokenizer.json": b'{"v": 1}',
             "report.json": b"old", "report.md": b"old", "report.samples.npz": b"old", "report.html": b"old"}
    for name, content in files.items():
        (out_dir / name).write_bytes(content)
    with staged_output_dir(out_dir) as staging:
        assert carry_over_model(out_dir, staging) == ["manifest.json", "model.tflite", "tokenizer.json"]
        (staging / "report.json").write_bytes(b"new")
    assert {path.name: path.read_bytes() for path in out_dir.iterdir()} == {
        "model.tflite": b"\x00weights", "manifest.json": b"{}", "tokenizer.json": b'{"v": 1}', "report.json": b"new"}
