"""Each user mistake ends in exit code 2 and one line on stderr that says what to do, and writes nothing."""
from __future__ import annotations


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


def test_a_keras_file_that_keras_cannot_load(tmp_path, run_convert):
    (tmp_path / "model.keras").write_bytes(b"PK")
    code, _, err = run_convert(tmp_path / "model.keras", tmp_path / "out")
    assert_one_line_error(code, err, "Keras cannot load model.keras", "[not_a_keras_file]")


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


WEIGHTLESS_LINE = ("convert: error: the converted model has no weights (it reads uninitialised variables): the "
                   "SavedModel was written with tf.saved_model.save(); export the Keras model with model.export(DIR) "
                   "[weightless_export]")


@pytest.mark.parametrize("mode", ["float32", "float16", "dynamic", "mixed", "int8"])
def test_weightless_tf_saved_model_save_export_gets_the_same_advice_in_every_mode(mode, weightless_saved_model,
                                                                                   tmp_path, run_convert):
    """tf.saved_model.save converts without error to a model without weights (int8 calibration used to die on
    READ_VARIABLE instead): a float32 probe catches it before any mode-specific conversion."""
    code, out, err = run_convert(weightless_saved_model, tmp_path / "out", "--quantization", mode)
    assert code == 2 and err.strip().splitlines() == [WEIGHTLESS_LINE]
    assert f"converting to {mode}" not in out or mode == "float32"
    assert not (tmp_path / "out").exists()


def test_int8_without_representative_data(sidecarless_saved_model, tmp_path, run_convert):
    code, _, err = run_convert(sidecarless_saved_model, tmp_path / "out", "--quantization", "int8")
    assert_one_line_error(code, err, "--representative FILE.npz", "[no_representative_data]")


def test_representative_file_with_wrong_shape(sidecarless_saved_model, tmp_path, run_convert):
    np.savez(tmp_path / "rep.npz", inputs_image=np.zeros((4, 28, 28, 1), np.float32))
    code, out, err = run_convert(sidecarless_saved_model, tmp_path / "out", "--quantization", "int8",
                                 "--representative", tmp_path / "rep.npz")
    assert_one_line_error(code, err, "rep.npz: inputs_image has shape (4, 28, 28, 1)", "(N, 8, 8, 1)")
    assert "converting to" not in out  # the samples are checked before anything is converted


def test_refuses_to_replace_a_folder_that_is_not_a_model(image_saved_model, tmp_path, run_convert):
    precious = tmp_path / "documents"
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    code, _, err = run_convert(image_saved_model, precious)
    assert_one_line_error(code, err, "not a converted model", "[bad_out_dir]")
    assert (precious / "thesis.txt").read_text() == "years of work"
