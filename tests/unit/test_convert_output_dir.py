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
