"""TensorFlow Serving's encoded image bytes, {"b64": ...}, on the image models: its documented image request (its
example/resnet_client.py sends `'{"instances" : [{"b64": "%s"}]}' % jpeg_bytes` and reads np.argmax of
`predictions[0]`) answers what /classify answers for the same photo, through the model's own preprocessing; every
form TF Serving's json_tensor_test reads base64 in (row, columnar, named or not) and Google's `image_bytes` give the
same scores; the metadata shows the input as DT_STRING; and every bad image is a clear 4xx."""
from __future__ import annotations

import base64

import numpy as np
import pytest
import requests
from PIL import Image

from function.catalog.registry import ModelRegistry
from function.config import TaskLimits
from tests.support.local_api import serving
from tests.support.function_fixtures import call, demo_models, make_service  # noqa: F401
from kit.photos import b64, cat_jpeg, encode, is_cat, photo
from tests.support.tensor_fixtures import tensor_model_dir, tensor_registry, tensor_service  # noqa: F401

PREDICT = "/v1/models/efficientnet_lite0:predict"


@pytest.fixture(scope="module")
def server(tensor_registry):
    with serving(make_service(tensor_registry)) as url:
        yield url


def classify(service, image: bytes, model: str) -> dict:
    status, body = call(service, "POST", "/classify", {"model": model, "image": b64(image), "top_k": 1})
    assert status == 200
    return body["predictions"][0]


def test_tf_servings_documented_image_request_answers_what_classify_answers(server, tensor_service, tensor_registry):
    jpeg = cat_jpeg()
    jpeg_bytes = base64.b64encode(jpeg).decode("utf-8")
    predict_request = '{"instances" : [{"b64": "%s"}]}' % jpeg_bytes  # noqa: UP031  (resnet_client.py's own line)
    response = requests.post(f"{server}{PREDICT}", data=predict_request, timeout=60)
    response.raise_for_status()
    prediction = response.json()["predictions"][0]
    best = int(np.argmax(prediction))
    label = tensor_registry.task("efficientnet_lite0").manifest.labels[best]
    classified = classify(tensor_service, jpeg, "efficientnet_lite0")
    assert label == classified["label"] and is_cat(label)
    assert prediction[best] == pytest.approx(classified["score"], abs=1e-6)  # /classify rounds to 6 decimals


def test_the_digit_model_reads_a_png_as_classify_does(tensor_service, tensor_registry):
    pixels = np.zeros((8, 8), np.uint8)
    pixels[1:7, 3:5] = 255  # a one
    png = encode(Image.fromarray(pixels, "L"), "PNG")
    status, body = call(tensor_service, "POST", "/v1/models/digits:predict", {"instances": [{"b64": b64(png)}]})
    assert status == 200
    scores = body["predictions"][0]
    classified = classify(tensor_service, png, "digits")
    assert tensor_registry.task("digits").manifest.labels[int(np.argmax(scores))] == classified["label"]
    assert max(scores) == pytest.approx(classified["score"], abs=1e-6)


def test_every_form_of_encoded_bytes_gives_the_same_scores(tensor_service):
    cat, coffee = b64(cat_jpeg()), b64(encode(photo("coffee"), "PNG"))
    rows = [
        {"instances": [{"b64": cat}, {"b64": coffee}]},  # json_tensor_test SingleUnnamedTensorBase64Scalars
        {"instances": [{"image": {"b64": cat}}, {"image": {"b64": coffee}}]},  # SingleNamedTensorBase64's form
        {"instances": [{"image_bytes": {"b64": cat}}, {"image_bytes": {"b64": coffee}}]},  # Google's name
        {"signature_name": "serving_default", "instances": [{"b64": cat}, {"b64": coffee}]},
    ]
    answers = []
    for body in rows:
        status, answer = call(tensor_service, "POST", PREDICT, body)
        assert status == 200 and list(answer) == ["predictions"], answer
        answers.append(answer["predictions"])
    for body in ({"inputs": [{"b64": cat}, {"b64": coffee}]}, {"inputs": {"image": [{"b64": cat}, {"b64": coffee}]}},
                 {"inputs": {"image_bytes": [{"b64": cat}, {"b64": coffee}]}}):
        status, answer = call(tensor_service, "POST", PREDICT, body)
        assert status == 200 and list(answer) == ["outputs"], answer
        answers.append(answer["outputs"])
    assert all(answer == answers[0] for answer in answers)
    assert np.argmax(answers[0][0]) != np.argmax(answers[0][1])  # two photos, two answers, in order


def test_the_metadata_shows_the_image_input_as_bytes(tensor_service):
    for model in ("efficientnet_lite0", "digits"):
        status, body = call(tensor_service, "GET", f"/v1/models/{model}/metadata")
        signature = body["metadata"]["signature_def"]["signature_def"]["serving_default"]
        assert status == 200 and signature["inputs"] == {"image": {
            "dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1", "name": ""}], "unknown_rank": False},
            "name": "image"}}
        assert signature["outputs"]["output_0"]["dtype"] == "DT_FLOAT"


def test_the_decoded_pixels_as_numbers_are_still_taken(tensor_service):
    pixels = np.zeros((8, 8, 1)).tolist()
    assert call(tensor_service, "POST", "/v1/models/digits:predict", {"instances": [pixels]})[0] == 200


CAT = b64(cat_jpeg())
# (path, body, status, fragments of the message)
BAD = {
    "not-base64": (PREDICT, {"instances": [{"b64": "@@not base64@@"}]}, 400, ["'instances[0]'", "base64"]),
    "not-an-image": (PREDICT, {"instances": [{"b64": CAT}, {"b64": b64(b"plain text")}]}, 415,
                     ["'instances[1]'", "JPEG"]),
    "truncated-jpeg": (PREDICT, {"inputs": [{"b64": b64(cat_jpeg()[:2000])}]}, 415, ["'inputs[0]'", "truncated"]),
    "bytes-mixed-with-numbers": (PREDICT, {"instances": [{"b64": CAT}, [[[0.0] * 3] * 224] * 224]}, 400,
                                 ["'instances[1]'", "every image"]),
    # json_tensor_test SingleUnnamedTensorBase64Lists: a [2, 1] string tensor; here each instance is one image
    "nested-in-lists": (PREDICT, {"instances": [[{"b64": CAT}], [{"b64": CAT}]]}, 400, ["one encoded image", "nested"]),
    # MultipleNamedTensorColumnarFormat's bin_tensor: a scalar string, no batch
    "columnar-without-batch": (PREDICT, {"inputs": {"image": {"b64": CAT}}}, 400, ["without a batch"]),
    "b64-for-numbers": ("/v1/models/tabular:predict",
                        {"instances": [{"vitals": {"b64": CAT}, "sex": 1, "serum": [1.0] * 6}]}, 400,
                        ["'vitals'", "image model", "takes numbers"]),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_encoded_image_is_a_clear_4xx(tensor_service, case):
    path, body, status, fragments = BAD[case]
    got_status, got = call(tensor_service, "POST", path, body)
    assert got_status == status and set(got) == {"error"}, got
    for fragment in fragments:
        assert fragment in got["error"], (fragment, got["error"])


def test_more_images_than_classify_takes_is_a_413(tensor_registry):
    service = make_service(tensor_registry, max_batch=2)
    status, body = call(service, "POST", PREDICT, {"instances": [{"b64": CAT}] * 3})
    assert status == 413 and "3 encoded images" in body["error"] and "MAX_BATCH" in body["error"]


def test_an_image_of_too_many_pixels_is_a_413(tensor_model_dir):
    service = make_service(ModelRegistry(tensor_model_dir, TaskLimits(max_image_pixels=10_000)))
    status, body = call(service, "POST", PREDICT, {"instances": [{"b64": CAT}]})
    assert status == 413 and "pixels" in body["error"]


def test_a_body_over_the_limit_is_a_413(tensor_registry):
    service = make_service(tensor_registry, max_body_bytes=10_000)
    status, body = call(service, "POST", PREDICT, {"instances": [{"b64": CAT}]})
    assert status == 413 and set(body) == {"error"}
