"""Checks that need no TensorFlow: path sanity and the SavedModel digest."""
from __future__ import annotations

import pytest

from convert.errors import ConversionError
from convert.saved_model_inspect import check_saved_model_dir, saved_model_digest


def fake_saved_model(directory):
    (directory / "variables").mkdir(parents=True)
    (directory / "saved_model.pb").write_bytes(b"graph")
    (directory / "variables" / "variables.index").write_bytes(b"index")
    (directory / "variables" / "variables.data-00000-of-00001").write_bytes(b"weights")
    return directory


def test_path_checks(tmp_path):
    with pytest.raises(ConversionError, match="does not exist"):
        check_saved_model_dir(tmp_path / "absent")
    (tmp_path / "model.keras").write_bytes(b"")
    with pytest.raises(ConversionError, match="convert takes a .keras file as it is"):
        check_saved_model_dir(tmp_path / "model.keras")
    with pytest.raises(ConversionError, match="no saved_model.pb") as raised:
        check_saved_model_dir(tmp_path)
    assert raised.value.code == "not_a_saved_model"
    check_saved_model_dir(fake_saved_model(tmp_path / "ok"))


def test_digest_covers_graph_and_weights_but_not_other_files(tmp_path):
    model = fake_saved_model(tmp_path / "m")
    first = saved_model_digest(model)
    assert len(first) == 64
    (model / "sidecar.json").write_text("{}")
    (model / "fingerprint.pb").write_bytes(b"changes on every export")
    assert saved_model_digest(model) == first
    (model / "variables" / "variables.data-00000-of-00001").write_bytes(b"retrained")
    assert saved_model_digest(model) != first


def test_digest_does_not_depend_on_where_the_model_lives(tmp_path):
    assert saved_model_digest(fake_saved_model(tmp_path / "a")) == saved_model_digest(fake_saved_model(tmp_path / "b"))

