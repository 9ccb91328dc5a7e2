"""A sidecar that does not fit the SavedModel is refused before anything is converted or written: exit 2, one line
that names the sidecar field and what to write instead (tests/unit/test_convert_signature_checks.py has the rest)."""
from __future__ import annotations

import json
import shutil

import pytest

pytestmark = pytest.mark.slow


def with_sidecar(saved_model, tmp_path, change) -> object:
    """A copy of the SavedModel whose sidecar.json went through `change(sidecar)`."""
    copy = tmp_path / saved_model.name
    shutil.copytree(saved_model, copy)
    sidecar = json.loads((copy / "sidecar.json").read_text())
    change(sidecar)
    (copy / "sidecar.json").write_text(json.dumps(sidecar))
    return copy


def refusal(run_convert, saved_model, tmp_path) -> str:
    code, out, err = run_convert(saved_model, tmp_path / "out", "--quantization", "int8")
    assert code == 2, out
    (line,) = err.strip().splitlines()
    assert line.startswith("convert: error: sidecar.json: ") and "Traceback" not in err
    assert "converting to" not in out  # refused before any conversion
    assert not (tmp_path / "out").exists()
    return line


def test_unknown_key_is_named_with_its_likely_meaning(image_saved_model, tmp_path, run_convert):
    def typo(sidecar):
        sidecar["preprocessing"]["resise"] = sidecar["preprocessing"].pop("resize")

    line = refusal(run_convert, with_sidecar(image_saved_model, tmp_path, typo), tmp_path)
    assert "\"preprocessing.resise\" is not a known key (did you mean \"resize\"?)" in line
    assert "type, color_mode, size, resize, divisor, mean, std, exif_orientation, keras_applications" in line
    assert line.endswith("[bad_sidecar]")


def test_colour_mode_in_the_wrong_case(image_saved_model, tmp_path, run_convert):
    line = refusal(run_convert, with_sidecar(image_saved_model, tmp_path,
                                             lambda s: s["preprocessing"].update(color_mode="l")), tmp_path)
    assert "\"preprocessing.color_mode\" is \"l\": write \"L\"" in line and line.endswith("[bad_sidecar]")


def test_image_size_that_is_not_the_models(image_saved_model, tmp_path, run_convert):
    line = refusal(run_convert, with_sidecar(image_saved_model, tmp_path,
                                             lambda s: s["preprocessing"].update(size=[64, 64])), tmp_path)
    assert "\"preprocessing.size\" is [64, 64] but input 'pixels' takes 8x8 images (N, 8, 8, 1)" in line
    assert "write \"size\": [8, 8]" in line and line.endswith("[sidecar_mismatch]")


def test_colour_mode_that_gives_the_wrong_number_of_channels(image_saved_model, tmp_path, run_convert):
    line = refusal(run_convert, with_sidecar(image_saved_model, tmp_path,
                                             lambda s: s["preprocessing"].update(color_mode="RGB")), tmp_path)
    assert "\"preprocessing.color_mode\" is \"RGB\" (3 channels) but input 'pixels' takes 1" in line
    assert "write \"color_mode\": \"L\"" in line


def test_wrong_number_of_labels(image_saved_model, tmp_path, run_convert):
    line = refusal(run_convert, with_sidecar(image_saved_model, tmp_path,
                                             lambda s: s.update(labels=["cat", "dog"])), tmp_path)
    assert "\"labels\" has 2 labels but output 'output_0' has 10 unit(s): give 10 labels" in line


def test_role_naming_an_input_the_model_does_not_have(image_saved_model, tmp_path, run_convert):
    line = refusal(run_convert, with_sidecar(image_saved_model, tmp_path,
                                             lambda s: s.update(inputs={"image": "pixel_values"})), tmp_path)
    assert "\"inputs.image\" names 'pixel_values', which the serving signature does not have" in line
    assert "use one of its inputs: 'pixels'" in line


def test_feature_model_declared_as_an_image_classifier(feature_model_declared_as_image, tmp_path, run_convert):
    line = refusal(run_convert, feature_model_declared_as_image, tmp_path)
    assert "\"task\" is \"image_classification\" but input 'features' (float32 (N, 4)) is not an image" in line
    assert "use \"task\": \"tensor\"" in line


def test_classifier_with_a_second_output_must_name_its_class_output(two_output_image_saved_model, tmp_path,
                                                                      run_convert):
    line = refusal(run_convert, two_output_image_saved_model, tmp_path)
    assert "\"class_output\" is missing, and the signature has 2 outputs ('digit', 'ink')" in line
    assert "name the one the labels score (\"class_output\": \"<output>\"; the others are answered beside" in line
    line = refusal(run_convert, with_sidecar(two_output_image_saved_model, tmp_path,
                                             lambda s: s.update(class_output="digits")), tmp_path)
    assert "\"class_output\" names 'digits', which the serving signature does not have: use one of its outputs: " \
           "'digit', 'ink'" in line


def test_tensor_sidecar_that_leaves_out_an_output(tensor_saved_model, tmp_path, run_convert):
    line = refusal(run_convert, with_sidecar(tensor_saved_model, tmp_path,
                                             lambda s: s.update(outputs=["price"])), tmp_path)
    assert "\"outputs\" leaves out signature output 'category', which would be dropped" in line


def test_embedding_sidecar_with_labels(embedding_saved_model, tmp_path, run_convert):
    line = refusal(run_convert, with_sidecar(embedding_saved_model, tmp_path,
                                             lambda s: s.update(labels=["a", "b"])), tmp_path)
    assert "\"labels\" does not apply to task \"text_embedding\" (an embedding has no classes): remove it" in line
