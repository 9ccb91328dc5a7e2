"""No client-controlled length or id reaches the interpreter beyond what the model takes: minilm's sequence length
(256, its position table) and both text models' vocabulary (30,522 token ids), which `convert` found in the models
and wrote to their manifests, bound every tensor request with a 400 naming the input and the bound; the text
routes truncate instead, as documented. Generated requests never get a 5xx."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.entry import handle_event
from function.protocols.tensor_values import MAX_TENSOR_ELEMENTS
from kit.events import http_api_event
from tests.support.function_fixtures import call, demo_models  # noqa: F401
from tests.support.tensor_fixtures import tensor_model_dir, tensor_registry, tensor_service  # noqa: F401

MAX_LENGTH, VOCABULARY = 256, 30522
MINILM_PREDICT, MINILM_INFER = "/v1/models/minilm:predict", "/v2/models/minilm/infer"
SENTIMENT_PREDICT, SENTIMENT_INFER = "/v1/models/sentiment:predict", "/v2/models/sentiment/infer"


def minilm_predict(ids: list[int]) -> dict:
    return {"instances": [{"input_ids": ids, "attention_mask": [1] * len(ids)}]}


def minilm_infer(ids: list[int], shape: list[int] | None = None) -> dict:
    shape = shape or [1, len(ids)]
    return {"inputs": [{"name": "input_ids", "shape": shape, "datatype": "INT32", "data": ids},
                       {"name": "attention_mask", "shape": shape, "datatype": "INT32", "data": [1] * len(ids)}]}


def sentiment_predict(ids: list[int]) -> dict:
    return {"instances": [ids + [0] * (64 - len(ids))]}


def test_the_manifests_carry_the_bounds_convert_found(tensor_registry):
    minilm = {spec.name: spec for spec in tensor_registry.tensor_task("minilm").inputs}
    assert minilm["input_ids"].max_shape == (-1, MAX_LENGTH) and minilm["attention_mask"].max_shape == (-1, MAX_LENGTH)
    assert minilm["input_ids"].value_range == (0, VOCABULARY - 1) and minilm["attention_mask"].value_range is None
    (sentiment,) = tensor_registry.tensor_task("sentiment").inputs
    assert sentiment.value_range == (0, VOCABULARY - 1) and sentiment.max_shape is None  # its length is fixed


@pytest.mark.parametrize("length", [300, 513, 2048, 20000])
@pytest.mark.parametrize("protocol", ["tfserving", "v2"])
def test_a_sequence_longer_than_the_model_takes_is_refused(tensor_service, length, protocol):
    path, body = ((MINILM_PREDICT, minilm_predict([7] * length)) if protocol == "tfserving"
                  else (MINILM_INFER, minilm_infer([7] * length)))
    status, got = call(tensor_service, "POST", path, body)
    assert status == 400, got
    assert "'input_ids'" in got["error"] and f"at most {MAX_LENGTH}" in got["error"] and str(length) in got["error"]


@pytest.mark.parametrize("token", [VOCABULARY, 10 ** 6, 2 ** 31 - 1, -1, -(2 ** 31)])
@pytest.mark.parametrize("path,body", [(MINILM_PREDICT, lambda ids: minilm_predict(ids)),
                                       (MINILM_INFER, lambda ids: minilm_infer(ids)),
                                       (SENTIMENT_PREDICT, lambda ids: sentiment_predict(ids)),
                                       (SENTIMENT_INFER, lambda ids: {"inputs": [{
                                           "name": "input_ids", "shape": [1, 64], "datatype": "INT32",
                                           "data": ids + [0] * (64 - len(ids))}]})])
def test_an_id_outside_the_vocabulary_is_refused(tensor_service, token, path, body):
    status, got = call(tensor_service, "POST", path, body([101, token, 102]))
    assert status == 400, got
    assert "'input_ids'" in got["error"] and f"0 to {VOCABULARY - 1}" in got["error"], got


def test_the_longest_sequence_and_the_last_id_are_answered(tensor_service):
    ids = [101] + [VOCABULARY - 1] * (MAX_LENGTH - 2) + [102]
    for path, body in ((MINILM_PREDICT, minilm_predict(ids)), (MINILM_INFER, minilm_infer(ids)),
                       (SENTIMENT_PREDICT, sentiment_predict([101, VOCABULARY - 1, 102]))):
        status, got = call(tensor_service, "POST", path, body)
        assert status == 200, got


def test_a_declared_shape_over_the_element_cap_is_refused_before_allocating(tensor_service):
    for shape in ([1, 10 ** 30], [10 ** 30, 0], [MAX_TENSOR_ELEMENTS, 2]):
        status, got = call(tensor_service, "POST", MINILM_INFER, minilm_infer([], shape))
        assert status == 400 and str(MAX_TENSOR_ELEMENTS) in got["error"], (shape, got)


def test_binary_ids_are_bounded_too(tensor_service):
    head = {"inputs": [{"name": "input_ids", "shape": [1, 3], "datatype": "INT32",
                        "parameters": {"binary_data_size": 12}},
                       {"name": "attention_mask", "shape": [1, 3], "datatype": "INT32", "data": [1, 1, 1]}]}
    raw = json.dumps(head).encode()
    event = http_api_event("POST", MINILM_INFER, raw + np.array([101, 2 ** 31 - 1, 102], "<i4").tobytes(),
                           content_type="application/octet-stream")
    event["headers"]["inference-header-content-length"] = str(len(raw))
    result = handle_event(tensor_service, event, None)
    assert result["statusCode"] == 400 and "0 to 30521" in json.loads(result["body"])["error"]


def test_the_text_routes_truncate_to_the_model_maximum(tensor_service):
    text = "word " * 1000  # over 1,000 tokens
    status, got = call(tensor_service, "POST", "/embed", {"text": text})
    assert status == 200 and got["embeddings"][0]["tokens"] == MAX_LENGTH and got["embeddings"][0]["truncated"], got
    status, got = call(tensor_service, "POST", "/tokenize", {"text": text})
    assert status == 200 and got["results"][0]["count"] == 64 and got["results"][0]["truncated"], got
    assert call(tensor_service, "POST", "/sentiment", {"text": text})[0] == 200


# ---- generated: lengths and ids around every bound, both protocols, both models ---------------------------------

ids = st.lists(st.one_of(st.integers(-5, 5), st.integers(VOCABULARY - 3, VOCABULARY + 3),
                         st.integers(-(2 ** 31), 2 ** 31 - 1)), min_size=0, max_size=40)
lengths = st.one_of(st.integers(0, 3), st.integers(MAX_LENGTH - 2, MAX_LENGTH + 2), st.integers(257, 700))


@st.composite
def minilm_requests(draw):
    head, length = draw(ids), draw(lengths)
    sequence = (head + [7] * length)[:length] if length else head
    shape = draw(st.one_of(st.none(), st.lists(st.integers(0, 2 ** 40), min_size=2, max_size=2)))
    if draw(st.booleans()):
        return MINILM_PREDICT, minilm_predict(sequence)
    return MINILM_INFER, minilm_infer(sequence, shape)


GENERATED = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(HealthCheck))


@GENERATED
@given(request=st.one_of(minilm_requests(), ids.map(lambda found: (SENTIMENT_PREDICT, sentiment_predict(found)))))
def test_generated_bounds_requests_never_fail_the_server(tensor_service, request):
    path, body = request
    status, got = call(tensor_service, "POST", path, body)
    assert status in (200, 400), (status, got)
    if status == 400:
        assert set(got) == {"error"} and got["error"]
