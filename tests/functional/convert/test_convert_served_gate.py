"""The served gate on raw samples: the function's own decode/resize/normalise (or tokenizer) and the converted model
must answer the raw samples as the user's pipeline did (`expected`), in every mode; without raw samples the report
and the last line say the served path was not checked; each refusal has its code and names what to fix."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PIL import Image

from convert.errors import ConversionError
from convert.keras_applications import PRESETS, keras_preprocess, preset_fields
from convert.preprocessing_check import check_preset
from convert.npz_reader import read_arrays
from convert.raw_samples import load_raw_samples
from convert.fidelity.classification import SCORE_BOUNDS
from tests.functional.convert.conftest import VOCABULARY, digits_split

pytestmark = pytest.mark.slow


def copied(saved_model, tmp_path, **arrays):
    """The fixture's SavedModel with another validation.npz (session fixtures stay untouched)."""
    directory = tmp_path / saved_model.name
    shutil.copytree(saved_model, directory)
    np.savez(directory / "validation.npz", **arrays)
    return directory


def digit_photos():
    """sklearn's digits as the 8x8 grey images they are (0..16): the fixture's sidecar divides by 16."""
    from sklearn.datasets import load_digits

    return load_digits().images[1500:1600].astype(np.uint8)[:, :, :, None]


def flat(images):
    return {"raw_images": np.concatenate([image.ravel() for image in images]),
            "raw_image_shapes": np.array([image.shape for image in images])}


def last_line(out: str) -> str:
    return [line for line in out.splitlines() if line.strip()][-1]


def test_raw_images_alone_are_enough_and_the_served_path_is_checked_in_every_mode(image_saved_model,
                                                                                  trained_digits_model, tmp_path,
                                                                                  run_convert):
    _, _, x_test, _ = digits_split()
    expected = trained_digits_model.predict(x_test[:100], verbose=0)
    saved_model = copied(image_saved_model, tmp_path, **flat(digit_photos()), expected=expected)
    code, out, err = run_convert(saved_model, tmp_path / "out", "--quantization", "float16", "--compare")
    assert code == 0, err
    assert "preprocessing 100 raw samples with the function's own code" in out
    assert "the served path was checked: served on 100 raw samples: 100.00%, scores within 0.0" in last_line(out)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["samples"]["source"] == "validation.npz (raw samples)"
    assert report["samples"]["raw"] == {"source": "validation.npz", "kind": "image", "count": 100}
    for row in report["rows"]:
        assert row["fidelity"]["served"]["samples"] == 100, row["mode"]
        served = row["fidelity"]["served"]
        assert served["score_bound"] == SCORE_BOUNDS[row["mode"]]
        assert served["passed"] == (served["top1_agreement"] >= 0.95 and served["max_score_diff"] <= SCORE_BOUNDS[
            row["mode"]])
        worst = served["worst"]  # disagreeing samples first, then the largest score differences
        assert len(worst) == 5
        assert worst == sorted(worst, key=lambda sample: (sample["agrees"], -sample["max_score_diff"]))
        assert set(worst[0]) == {"index", "agrees", "max_score_diff", "served", "expected"}
    assert "| served on raw samples |" in out


def test_image_files_listed_in_the_sidecar_are_raw_samples(image_saved_model, trained_digits_model, tmp_path,
                                                           run_convert):
    images = digit_photos()[:20]
    _, _, x_test, _ = digits_split()
    saved_model = copied(image_saved_model, tmp_path, inputs_image=x_test[:20],
                         expected=trained_digits_model.predict(x_test[:20], verbose=0))
    for index, image in enumerate(images):
        Image.fromarray(image[:, :, 0]).save(saved_model / f"digit{index}.png")
    sidecar = json.loads((saved_model / "sidecar.json").read_text())
    sidecar["validation"]["raw_images"] = [f"digit{index}.png" for index in range(20)]
    (saved_model / "sidecar.json").write_text(json.dumps(sidecar))
    code, out, err = run_convert(saved_model, tmp_path / "out", "--quantization", "float32")
    assert code == 0, err
    assert "served on 20 raw samples: 100.00%, scores within 0.0" in last_line(out)


def test_without_raw_samples_the_report_and_the_last_line_say_the_served_path_was_not_checked(image_saved_model,
                                                                                             tmp_path, run_convert):
    code, out, err = run_convert(image_saved_model, tmp_path / "out", "--quantization", "float32")
    assert code == 0, err
    assert "the served path (the function's decode, resize and normalise, or its tokenizer) was not checked" in (
        last_line(out))
    row = json.loads((tmp_path / "out" / "report.json").read_text())["rows"][0]
    assert row["fidelity"]["served"] == {"checked": False}
    assert "| not checked |" in out


def test_expected_answers_from_another_pipeline_are_refused(image_saved_model, trained_digits_model, tmp_path,
                                                            run_convert):
    _, _, x_test, _ = digits_split()
    expected = trained_digits_model.predict(x_test[:100, :, ::-1], verbose=0)  # "their" pipeline mirrors digits
    saved_model = copied(image_saved_model, tmp_path, **flat(digit_photos()), expected=expected)
    code, _, err = run_convert(saved_model, tmp_path / "out", "--quantization", "dynamic")
    assert code == 2 and err.strip().endswith("[served_disagrees]"), err
    assert ("sidecar.json: \"preprocessing\" (L, / 1, mean [0.0], std [16.0], resize bilinear) is not how expected "
            "was made") in err
    assert "make the sidecar's preprocessing what your pipeline does" in err
    assert "worst raw samples: " in err and "expected {" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", ["int8", "compare"])
def test_readmes_raw_samples_alone_calibrate_int8_and_compare_every_mode(image_saved_model, trained_digits_model,
                                                                         tmp_path, run_convert, mode):
    """README's validation.npz (raw images, no inputs_image, no representative file): flattened with
    raw_image_shapes as README writes it (int8), or a 4-D stack as np.stack gives it (compare); int8 calibrates on
    what the function's own preprocessing makes of the raw samples."""
    _, _, x_test, _ = digits_split()
    images = flat(digit_photos()) if mode == "int8" else {"raw_images": digit_photos()}
    saved_model = copied(image_saved_model, tmp_path, **images,
                         expected=trained_digits_model.predict(x_test[:100], verbose=0))
    (saved_model / "representative.npz").unlink()
    sidecar = json.loads((saved_model / "sidecar.json").read_text())
    del sidecar["validation"]["representative"]
    (saved_model / "sidecar.json").write_text(json.dumps(sidecar))
    flags = ["--quantization", "int8"] if mode == "int8" else ["--compare"]
    code, out, err = run_convert(saved_model, tmp_path / "out", *flags)
    assert code == 0, err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    int8 = next(row for row in report["rows"] if row["mode"] == "int8")
    assert int8["size_bytes"] and int8["fidelity"]["served"]["samples"] == 100
    assert "no 'inputs_image' array" not in err


def sentences(ids: np.ndarray, mask: np.ndarray) -> list[str]:
    return [" ".join(VOCABULARY[token] for token in row[:int(length)]) for row, length in zip(ids, mask.sum(axis=1))]


@pytest.mark.parametrize("fixture", ["text_saved_model", "embedding_saved_model"])
def test_raw_texts_go_through_the_functions_tokenizer(fixture, request, tmp_path, run_convert):
    from convert.quiet import import_tensorflow

    saved_model = request.getfixturevalue(fixture)
    with np.load(saved_model / "validation.npz") as archive:
        ids, mask = archive["inputs_input_ids"][:64], archive["inputs_attention_mask"][:64]
    serve = import_tensorflow().saved_model.load(str(saved_model)).signatures["serving_default"]
    expected = next(iter(serve(input_ids=ids, attention_mask=mask).values())).numpy()
    directory = copied(saved_model, tmp_path, inputs_input_ids=ids, inputs_attention_mask=mask,
                       raw_texts=np.array(sentences(ids, mask)), expected=expected)
    code, out, err = run_convert(directory, tmp_path / "out", "--quantization", "float32")
    assert code == 0, err
    assert "the served path was checked: served on 64 raw samples: " + (
        "100.00%" if fixture == "text_saved_model" else "min cos 1.0000") in last_line(out)


def test_int8_calibration_on_another_scale_is_refused_before_calibrating(image_saved_model, tmp_path, run_convert):
    with np.load(image_saved_model / "representative.npz") as archive:
        np.savez(tmp_path / "raw_pixels.npz", inputs_image=archive["inputs_image"] * 255.0)
    code, out, err = run_convert(image_saved_model, tmp_path / "out", "--quantization", "int8",
                                 "--representative", tmp_path / "raw_pixels.npz")
    assert code == 2 and err.strip().endswith("[representative_range]"), err
    assert "raw_pixels.npz: input 'pixels' spans [0, 255] but the validation inputs (validation.npz) span [0, 1]" in err
    assert "converting to int8" not in out


def test_a_tensor_models_raw_samples_are_refused(tensor_saved_model, tmp_path, run_convert):
    with np.load(tensor_saved_model / "validation.npz") as archive:
        arrays = dict(archive)
    saved_model = copied(tensor_saved_model, tmp_path, **arrays, raw_texts=np.array(["a"] * 150),
                         expected=np.zeros((150, 1)))
    code, _, err = run_convert(saved_model, tmp_path / "out")
    assert code == 2 and err.strip().endswith("[bad_samples]"), err
    assert "raw samples are for image and text models" in err


def random_photos(tmp_path, count=4):
    rng = np.random.default_rng(5)
    images = [rng.integers(0, 256, size=(int(rng.integers(20, 90)), int(rng.integers(20, 90)), 3), dtype=np.uint8)
              for _ in range(count)]
    np.savez(tmp_path / "v.npz", **flat(images), expected=np.zeros((count, 2)))
    return load_raw_samples(tmp_path / "v.npz", read_arrays(tmp_path / "v.npz"))


class RawOnly:
    """check_preset reads only the raw samples of the served gate."""

    def __init__(self, raw):
        self.raw = raw


@pytest.mark.parametrize("module", sorted(PRESETS))
def test_every_preset_feeds_exactly_what_keras_preprocess_input_gives(module, tmp_path):
    gate = RawOnly(random_photos(tmp_path))
    preprocessing = {"type": "image", "size": [32, 48], "resize": "bilinear", **preset_fields(module),
                     "keras_applications": module}
    assert check_preset(gate, preprocessing) == (4 if keras_preprocess(module) else 0)


def test_a_preset_whose_numbers_are_not_kerass_is_refused(tmp_path):
    gate = RawOnly(random_photos(tmp_path))
    wrong = {"type": "image", "size": [32, 32], "resize": "bilinear", **preset_fields("mobilenet_v2"),
             "keras_applications": "vgg16"}  # tf numbers under a caffe module's name: what a wrong table would do
    with pytest.raises(ConversionError) as raised:
        check_preset(gate, wrong)
    assert raised.value.code == "preset_mismatch"
    assert "\"preprocessing.keras_applications\" is \"vgg16\", but on raw sample 0" in raised.value.message


def test_a_softmax_model_declared_as_logits_is_refused_naming_the_output(image_saved_model, trained_digits_model,
                                                                        tmp_path, run_convert):
    """A SavedModel (no layers to read): expected, the model's own outputs, are rows of probabilities, which the
    function would put through a second softmax; the refusal says which word to write."""
    _, _, x_test, _ = digits_split()
    saved_model = copied(image_saved_model, tmp_path, **flat(digit_photos()),
                         expected=trained_digits_model.predict(x_test[:100], verbose=0))
    sidecar = json.loads((saved_model / "sidecar.json").read_text())
    (saved_model / "sidecar.json").write_text(json.dumps({**sidecar, "output": "logits"}))
    code, _, err = run_convert(saved_model, tmp_path / "out", "--quantization", "float32")
    assert code == 2 and err.strip().endswith("[output_mismatch]"), err
    assert ('sidecar.json: "output" is "logits" but expected\'s 100 rows are probabilities (each value in [0, 1], '
            'every row summing to 1): the model ends in softmax: write "output": "probabilities"') in err
