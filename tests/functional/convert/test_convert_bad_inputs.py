"""Each user mistake ends in exit code 2 and one line on stderr that says what to do, and writes nothing."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytestmark = pytest.mark.slow


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("convert: error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_missing_directory(tmp_path, run_convert):
    code, _, err = run_convert(tmp_path / "nowhere", tmp_path / "out")
    assert_one_line_error(code, err, "does not exist", "[missing_directory]")
    assert not (tmp_path / "out").exists()


def test_directory_that_is_not_a_saved_model(tmp_path, run_convert):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    code, _, err = run_convert(tmp_path / "photos", tmp_path / "out")
    assert_one_line_error(code, err, "not a SavedModel", "model.export(", "[not_a_saved_model]")


def test_keras_file_instead_of_a_directory(tmp_path, run_convert):
    (tmp_path / "model.keras").write_bytes(b"PK")
    code, _, err = run_convert(tmp_path / "model.keras", tmp_path / "out")
    assert_one_line_error(code, err, "a .keras file is not a SavedModel", "model.export(DIR)")


def test_corrupt_saved_model_pb(tmp_path, run_convert):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "saved_model.pb").write_bytes(b"not a protobuf at all")
    code, _, err = run_convert(tmp_path / "broken", tmp_path / "out")
    assert_one_line_error(code, err, "could not be loaded as a SavedModel", "[not_a_saved_model]")


def test_no_serving_signature(no_signature_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(no_signature_saved_model, tmp_path / "out")
    assert_one_line_error(code, err, "no 'serving_default' signature", "model.export(DIR)", "[no_serving_signature]")
    assert not (tmp_path / "out").exists()


def test_inputs_it_cannot_map_to_roles(two_float_inputs_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(two_float_inputs_saved_model, tmp_path / "out")
    assert_one_line_error(code, err, "left, right", "sidecar.json", "\"inputs\"", "[unmappable_inputs]")


def test_string_ops_need_flex(string_input_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(string_input_saved_model, tmp_path / "out", "--quantization", "float32")
    assert_one_line_error(code, err, "tokenize outside the model, feed int32 ids", "[needs_flex]")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", ["float32", "dynamic"])
def test_weightless_tf_saved_model_save_export_is_caught(mode, weightless_saved_model, tmp_path, run_convert):
    """FACTS: tf.saved_model.save converts without error to a model without weights; the gate must stop it."""
    code, _, err = run_convert(weightless_saved_model, tmp_path / "out", "--quantization", mode)
    assert_one_line_error(code, err, "export the Keras model with model.export(DIR)", "tf.saved_model.save()",
                          "[weightless_export]")
    assert not (tmp_path / "out").exists()


def test_int8_without_representative_data(sidecarless_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(sidecarless_saved_model, tmp_path / "out", "--quantization", "int8")
    assert_one_line_error(code, err, "--representative FILE.npz", "[no_representative_data]")


def test_representative_file_with_wrong_shape(sidecarless_saved_model, tmp_path, run_convert):
    np.savez(tmp_path / "rep.npz", inputs_image=np.zeros((4, 28, 28, 1), np.float32))
    code, _, err = run_convert(sidecarless_saved_model, tmp_path / "out", "--quantization", "int8",
                               "--representative", tmp_path / "rep.npz")
    assert_one_line_error(code, err, "rep.npz: inputs_image has shape (4, 28, 28, 1)", "(N, 8, 8, 1)")


def test_sidecar_naming_a_missing_input(image_saved_model, tmp_path, run_convert):
    broken = tmp_path / "saved"
    shutil.copytree(image_saved_model, broken)
    sidecar = json.loads((broken / "sidecar.json").read_text())
    sidecar["inputs"] = {"image": "pixel_values"}
    (broken / "sidecar.json").write_text(json.dumps(sidecar))
    code, _, err = run_convert(broken, tmp_path / "out")
    assert_one_line_error(code, err, "'pixel_values'", "has inputs: pixels", "[bad_sidecar]")


def test_sidecar_with_the_wrong_number_of_labels(image_saved_model, tmp_path, run_convert):
    broken = tmp_path / "saved"
    shutil.copytree(image_saved_model, broken)
    sidecar = json.loads((broken / "sidecar.json").read_text())
    sidecar["labels"] = ["cat", "dog"]
    (broken / "sidecar.json").write_text(json.dumps(sidecar))
    code, _, err = run_convert(broken, tmp_path / "out")
    assert_one_line_error(code, err, "2 labels", "10 unit(s)", "[bad_sidecar]")


def test_refuses_to_replace_a_folder_that_is_not_a_model(image_saved_model, tmp_path, run_convert):
    precious = tmp_path / "documents"
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    code, _, err = run_convert(image_saved_model, precious)
    assert_one_line_error(code, err, "not a converted model", "[bad_out_dir]")
    assert (precious / "thesis.txt").read_text() == "years of work"
