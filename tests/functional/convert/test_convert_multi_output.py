"""Models with a value head, written as the Keras functional API guide writes multi-output models, trained briefly on
sklearn's digits (8x8 grey photos), saved as `.keras` files and converted by the real convert:

- two heads (a softmax digit and a linear "ink", the photo's mean brightness): /classify answers the label and
  scores from the class head and the ink beside them, under its Keras output name, each equal to `model.predict` on
  held-out photos within the gate's bounds;
- one linear output (the digit as a number): an image regression model, whose values TF Serving's :predict answers
  from the photo's bytes (the Open Inference Protocol from its pixels), and whose /classify says where they are."""
from __future__ import annotations

import json

import numpy as np
import pytest
from jsonschema import Draft202012Validator

from convert.fidelity.classification import SCORE_BOUNDS
from convert.fidelity.tensor import TOLERANCES
from convert.report_page import main as report_page
from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from tests.support import two_head_model
from tests.support.convert_models import seeded_keras
from tests.support.two_head_model import HELD_OUT, LABELS, MODE, TRAIN, VALIDATION, digit_photos, png
from kit.events import http_api_event
from tests.support.function_fixtures import make_service

pytestmark = pytest.mark.slow


def classify(service, model: str, photos: np.ndarray) -> tuple[int, dict]:
    """/classify's answer for the photos, asked 15 at a time (under the batch limit); the first refusal, if any."""
    predictions = []
    for start in range(0, len(photos), 15):
        body = {"model": model, "images": [png(photo) for photo in photos[start:start + 15]], "top_k": "all"}
        result = handle_event(service, http_api_event("POST", "/classify", body), None)
        answer = json.loads(result["body"])
        if result["statusCode"] != 200:
            return result["statusCode"], answer
        predictions += answer["predictions"]
    return 200, {**answer, "predictions": predictions}


@pytest.fixture(scope="module")
def two_heads(tmp_path_factory):
    """The guide's shape: shared layers, then a softmax class head and a linear value head, named (built once per
    session: tests/support/two_head_model.py)."""
    built = two_head_model.two_heads(tmp_path_factory)
    return built.model, built.folder, built.held_out


def test_two_heads_on_classify_answer_the_label_and_the_value_beside_it(two_heads, tmp_path_factory):
    model, folder, held_out = two_heads
    converted = two_head_model.converted_two_heads(tmp_path_factory)  # python -m convert, once per session
    code, out, err = converted.code, converted.out, converted.err
    assert code == 0, err
    assert "class_output: the one output of 2 that ends in softmax" in out
    manifest = json.loads((converted.models / "digits_ink" / "manifest.json").read_text())
    assert manifest["task"] == "image_classification" and manifest["labels"] == LABELS
    assert [(spec["name"], spec["role"]) for spec in manifest["outputs"]] == [("digit", "scores"), ("ink", "ink")]
    assert manifest["fidelity"]["passed"] and set(manifest["fidelity"]["served"]["outputs"]) == {"ink"}
    assert report_page([str(converted.models / "digits_ink")]) == 0  # the page ranks the class head's scores

    service = make_service(ModelRegistry(converted.models))
    digit_wanted, ink_wanted = model.predict(held_out.astype(np.float32), verbose=0)
    status, answer = classify(service, "digits_ink", held_out)
    assert status == 200, answer
    predictions = answer["predictions"]
    assert len({prediction["label"] for prediction in predictions}) >= 5  # the class head tells digits apart
    ink_range = float(np.abs(ink_wanted).max())
    for prediction, scores, ink in zip(predictions, digit_wanted, ink_wanted):
        assert set(prediction) == {"label", "score", "top_k", "outputs", "cached"}
        served = {entry["label"]: entry["score"] for entry in prediction["top_k"]}
        assert max(abs(served[label] - float(score)) for label, score in zip(LABELS, scores)) <= SCORE_BOUNDS[MODE]
        assert prediction["label"] == LABELS[int(np.argmax(scores))] or np.sort(scores)[-1] - np.sort(scores)[-2] < 0.1
        assert list(prediction["outputs"]) == ["ink"] and len(prediction["outputs"]["ink"]) == 1
        assert abs(prediction["outputs"]["ink"][0] - float(ink[0])) <= TOLERANCES[MODE] * ink_range
    assert np.ptp([prediction["outputs"]["ink"][0] for prediction in predictions]) > 0.5  # the value varies
    document = json.loads(handle_event(service, http_api_event("GET", "/openapi.json"), None)["body"])
    schema = document["paths"]["/classify"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    Draft202012Validator(schema).validate(answer)  # the answer is the one the OpenAPI document describes

    again_status, again = classify(service, "digits_ink", held_out[:3])  # from the result cache: the same answer
    assert again_status == 200 and all(prediction["cached"] for prediction in again["predictions"])
    assert [p["outputs"] for p in again["predictions"]] == [p["outputs"] for p in predictions[:3]]


def test_beside_outputs_need_their_expected_answers(two_heads, tmp_path, run_convert):
    model, folder, _ = two_heads
    arrays = dict(np.load(folder / "validation.npz"))
    del arrays["expected_ink"]
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "digits_ink.keras").write_bytes((folder / "digits_ink.keras").read_bytes())
    (copy / "labels.txt").write_text((folder / "labels.txt").read_text())
    np.savez(copy / "validation.npz", **arrays)
    code, _, err = run_convert(copy / "digits_ink.keras", tmp_path / "out")
    assert code == 2 and err.strip().endswith("[bad_samples]"), err
    assert "the model answers output 'ink' as values but the file has no expected_ink" in err


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    """One linear unit on the photo: the digit as a number (mean squared error)."""
    keras = seeded_keras()
    layers = keras.layers
    photos, digits = digit_photos()
    pixels = photos.astype(np.float32)
    inputs = keras.Input(shape=(8, 8, 1))
    x = layers.Rescaling(1.0 / 255)(inputs)
    x = layers.Flatten()(x)
    x = layers.Dense(64, activation="relu")(x)
    outputs = layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    model.fit(pixels[:TRAIN], digits[:TRAIN].astype(np.float32), epochs=8, batch_size=64, verbose=0)
    folder = tmp_path_factory.mktemp("regression")
    model.save(folder / "digit_value.keras")
    validation = photos[TRAIN:TRAIN + VALIDATION]
    np.savez(folder / "validation.npz", raw_images=validation,
             expected=model.predict(validation.astype(np.float32), verbose=0))
    return model, folder, photos[-HELD_OUT:]


def test_an_image_regression_model_answers_values_from_photos(regression, tmp_path, run_convert):
    model, folder, held_out = regression
    code, out, err = run_convert(folder / "digit_value.keras", tmp_path / "models" / "digit_value",
                                 "--quantization", MODE)
    assert code == 0, err
    manifest = json.loads((tmp_path / "models" / "digit_value" / "manifest.json").read_text())
    assert manifest["task"] == "image_regression" and not manifest["labels"]
    output = manifest["outputs"][0]["name"]
    assert manifest["fidelity"]["served"]["passed"] and "values within" in out
    assert report_page([str(tmp_path / "models" / "digit_value")]) == 0  # the report page shows its samples' values
    assert "digit_value" in (tmp_path / "models" / "digit_value" / "report.html").read_text()

    service = make_service(ModelRegistry(tmp_path / "models"))
    wanted = model.predict(held_out.astype(np.float32), verbose=0)[:, 0]
    assert np.ptp(wanted) > 3  # the model reads the digit: its values spread over the range
    bound = TOLERANCES[MODE] * float(np.abs(wanted).max())

    served = []
    for start in range(0, len(held_out), 15):  # as many photos a request as /classify takes
        body = {"instances": [{"b64": png(photo)} for photo in held_out[start:start + 15]]}
        result = handle_event(service, http_api_event("POST", "/v1/models/digit_value:predict", body), None)
        assert result["statusCode"] == 200, result["body"]
        served += json.loads(result["body"])["predictions"]
    served = np.array(served, dtype=np.float64).reshape(len(held_out))
    assert np.abs(served - wanted).max() <= bound

    # The Open Inference Protocol takes the pixel tensor (the model rescales inside: pixels as they are) and
    # answers every output by name.
    pixels = {"name": manifest["inputs"][0]["name"], "shape": [1, 8, 8, 1], "datatype": "FP32",
              "data": held_out[0].astype(float).ravel().tolist()}
    result = handle_event(service, http_api_event("POST", "/v2/models/digit_value/infer", {"inputs": [pixels]}), None)
    assert result["statusCode"] == 200, result["body"]
    (answer,) = json.loads(result["body"])["outputs"]
    assert answer["name"] == output and abs(answer["data"][0] - float(wanted[0])) <= bound

    status, refused = classify(service, "digit_value", held_out[:1])
    assert status == 400 and refused["error"]["code"] == "wrong_model_task"
    assert refused["error"]["message"] == (
        "Model 'digit_value' does image_regression, not image_classification; it answers values: send the image to "
        "TensorFlow Serving's REST API, POST /v1/models/digit_value:predict with {\"instances\": [{\"b64\": "
        "\"<image in base64>\"}]}.")


TAGS = ["even", "above_four", "round"]  # round: 0, 6, 8, 9 (digits with a closed loop)


def test_a_multi_label_head_beside_a_value_from_a_saved_model_with_a_dict_of_outputs(tmp_path, run_convert):
    """Three sigmoid tags and the ink, outputs given as a dict (their keys name them in the SavedModel), exported
    with model.export(): sigmoid scores and values in [0, 1] look alike in expected_<output>, so convert infers no
    class head and says to name one; with the sidecar naming it, /classify answers the label set at the request's
    threshold, as multi-label does alone, with the ink beside it."""
    keras = seeded_keras()
    layers = keras.layers
    photos, digits = digit_photos()
    pixels = photos.astype(np.float32)
    tags = np.stack([digits % 2 == 0, digits > 4, np.isin(digits, (0, 6, 8, 9))], axis=1).astype(np.float32)
    ink = pixels.mean(axis=(1, 2, 3)) / 255.0 * 10

    image_input = keras.Input(shape=(8, 8, 1), name="image")
    x = layers.Rescaling(1.0 / 255)(image_input)
    x = layers.Flatten()(x)
    x = layers.Dense(32, activation="relu")(x)
    outputs = {"tags": layers.Dense(3, activation="sigmoid", name="tags")(x), "ink": layers.Dense(1, name="ink")(x)}
    model = keras.Model(inputs=image_input, outputs=outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-2),
                  loss={"tags": "binary_crossentropy", "ink": "mse"}, loss_weights={"tags": 1.0, "ink": 0.2})
    model.fit(pixels[:TRAIN], {"tags": tags[:TRAIN], "ink": ink[:TRAIN]}, epochs=8, batch_size=64, verbose=0)

    folder = tmp_path / "saved_model" / "digit_tags"
    model.export(str(folder), verbose=False)
    validation = photos[TRAIN:TRAIN + VALIDATION]
    expected = model.predict(validation.astype(np.float32), verbose=0)
    np.savez(folder / "validation.npz", raw_images=validation,
             **{f"expected_{name}": array for name, array in expected.items()})
    (folder / "labels.txt").write_text("\n".join(TAGS) + "\n")

    code, out, err = run_convert(folder, tmp_path / "inferred", "--quantization", MODE)
    assert code == 2 and err.strip().endswith("[cannot_infer]"), err
    assert "2 outputs ('ink' (linear, 1 unit(s)), 'tags' (activation unknown, 3 unit(s))): no one class head " \
           "(softmax or sigmoid) " \
           "among them: write a sidecar with \"task\": \"image_classification\" and \"class_output\"" in err
    sidecar = {"schema": 1, "name": "digit_tags", "task": "image_classification", "class_output": "tags",
               "labels": TAGS, "output": "probabilities", "multi_label": True,
               "preprocessing": {"type": "image", "color_mode": "L", "size": [8, 8]},
               "inputs": {"image": "image"}, "validation": {"samples": "validation.npz"}}
    (folder / "sidecar.json").write_text(json.dumps(sidecar))
    code, out, err = run_convert(folder, tmp_path / "models" / "digit_tags", "--quantization", MODE)
    assert code == 0, err
    manifest = json.loads((tmp_path / "models" / "digit_tags" / "manifest.json").read_text())
    assert manifest["task"] == "image_classification" and manifest["multi_label"] and manifest["labels"] == TAGS
    assert [(spec["name"], spec["role"]) for spec in manifest["outputs"]] == [("tags", "scores"), ("ink", "ink")]

    service = make_service(ModelRegistry(tmp_path / "models"))
    held_out = photos[-HELD_OUT:]
    wanted = model.predict(held_out.astype(np.float32), verbose=0)
    ink_range = float(np.abs(wanted["ink"]).max())
    for threshold in (0.5, 0.8):
        predictions = []
        for start in range(0, HELD_OUT, 15):
            body = {"model": "digit_tags", "images": [png(photo) for photo in held_out[start:start + 15]],
                    "threshold": threshold}
            result = handle_event(service, http_api_event("POST", "/classify", body), None)
            assert result["statusCode"] == 200, result["body"]
            predictions += json.loads(result["body"])["predictions"]
        near = np.abs(wanted["tags"] - threshold) < SCORE_BOUNDS[MODE]  # a score on the edge may land either side
        for prediction, scores, value, edge in zip(predictions, wanted["tags"], wanted["ink"], near):
            served = {entry["label"]: entry["score"] for entry in prediction["labels"]}
            assert {label for label, score, on_edge in zip(TAGS, scores, edge) if score >= threshold and not on_edge} \
                <= set(served) <= {label for label, score in zip(TAGS, scores) if score >= threshold - 0.05}
            assert all(abs(served[label] - float(scores[TAGS.index(label)])) <= SCORE_BOUNDS[MODE] for label in served)
            assert abs(prediction["outputs"]["ink"][0] - float(value[0])) <= TOLERANCES[MODE] * ink_range
        assert len({frozenset(entry["label"] for entry in p["labels"]) for p in predictions}) >= 3
