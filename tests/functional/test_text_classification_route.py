"""POST /classify-text for any text classifier: the best label, the top_k ranked, every label with "all" (as HF
pipelines' top_k=None), /sentiment as its alias, and every route of our own API refusing a JSON field it does not
read. Real models: the demo sentiment model, and minilm served as a 384-label classifier (tests/support/
text_classifier_stand_ins.py), whose probabilities this test computes itself from /embed's raw vector."""
from __future__ import annotations

import importlib
import json
import math

import numpy as np
import pytest

from function.catalog.registry import ModelRegistry
from function.entry import handle_event
from kit.events import http_api_event
from tests.support.function_fixtures import call, demo_models, make_service  # noqa: F401
from kit.photos import b64, encode, photo
from tests.support.text_classifier_stand_ins import FLAGS, TOPICS, models_with_text_classifiers

TEXT = "What a wonderful, delightful film."


@pytest.fixture(scope="module")
def classifiers(demo_models, tmp_path_factory):  # noqa: F811
    return ModelRegistry(models_with_text_classifiers(demo_models, tmp_path_factory.mktemp("models")))


@pytest.fixture()
def service(classifiers):
    return make_service(classifiers)


def test_without_top_k_the_best_label_alone_as_sentiment_answers(service):
    status, body = call(service, "POST", "/classify-text", {"text": TEXT})
    assert status == 200 and body["model"] == "sentiment"
    [prediction] = body["predictions"]
    assert set(prediction) == {"label", "score", "cached"} and prediction["label"] == "positive"
    status, alias = call(service, "POST", "/sentiment", {"text": TEXT})
    assert status == 200
    assert alias["predictions"] == [{**prediction, "cached": True}]  # one route under two names, one cache


def test_every_label_of_a_two_label_model(service):
    status, body = call(service, "POST", "/classify-text", {"text": TEXT, "top_k": "all"})
    assert status == 200
    [prediction] = body["predictions"]
    assert [entry["label"] for entry in prediction["top_k"]] == ["positive", "negative"]
    assert prediction["top_k"][0] == {"label": prediction["label"], "score": prediction["score"]}
    assert math.isclose(sum(entry["score"] for entry in prediction["top_k"]), 1.0, abs_tol=2e-6)


def test_top_k_of_a_many_label_classifier_is_its_softmax_ranked(service):
    texts = ["A dull, tedious mess.", "Quarterly revenue rose by four percent."]
    status, body = call(service, "POST", "/classify-text", {"texts": texts, "model": TOPICS, "top_k": "all"})
    assert status == 200 and body["model"] == TOPICS
    status, raw = call(service, "POST", "/embed", {"texts": texts, "model": "minilm", "normalize": False})
    assert status == 200
    for prediction, embedding in zip(body["predictions"], raw["embeddings"]):
        logits = np.asarray(embedding["embedding"], dtype=np.float64)
        expected = np.exp(logits - logits.max())
        expected /= expected.sum()
        ranking = prediction["top_k"]
        assert len(ranking) == 384 and len({entry["label"] for entry in ranking}) == 384
        scores = [entry["score"] for entry in ranking]
        assert scores == sorted(scores, reverse=True)
        by_label = {entry["label"]: entry["score"] for entry in ranking}
        assert all(abs(by_label[f"topic_{unit:03d}"] - expected[unit]) < 1e-5 for unit in range(384))
        assert prediction["label"] == f"topic_{int(expected.argmax()):03d}"
    status, three = call(service, "POST", "/classify-text", {"texts": texts, "model": TOPICS, "top_k": 3})
    assert status == 200
    assert [p["top_k"] for p in three["predictions"]] == [p["top_k"][:3] for p in body["predictions"]]


def test_top_k_is_capped_at_the_labels_and_is_a_cache_option(service):
    _, capped = call(service, "POST", "/classify-text", {"text": TEXT, "top_k": 50})
    _, every = call(service, "POST", "/classify-text", {"text": TEXT, "top_k": "all"})
    assert len(capped["predictions"][0]["top_k"]) == 2
    assert every["predictions"][0]["cached"] is True  # 50 and "all" rank the same two labels
    _, one = call(service, "POST", "/classify-text", {"text": TEXT, "top_k": 1})
    assert one["predictions"][0]["cached"] is False and len(one["predictions"][0]["top_k"]) == 1


@pytest.mark.parametrize("top_k", [0, -1, "ALL", "3", 2.5, True, None, []])
def test_a_bad_top_k_is_refused(service, top_k):
    status, body = call(service, "POST", "/classify-text", {"text": TEXT, "top_k": top_k})
    assert (status, body["error"]["code"]) == (400, "invalid_field")
    assert "'top_k'" in body["error"]["message"]


def test_a_multi_label_model_answers_at_most_top_k_labels_at_or_above_the_threshold(service):
    status, body = call(service, "POST", "/classify-text", {"text": TEXT, "model": FLAGS, "threshold": 0})
    assert status == 200 and [entry["label"] for entry in body["predictions"][0]["labels"]] == ["positive"]
    status, capped = call(service, "POST", "/classify-text", {"text": TEXT, "model": FLAGS, "threshold": 0,
                                                              "top_k": 1})
    assert status == 200 and capped["predictions"][0]["labels"] == body["predictions"][0]["labels"]
    assert capped["predictions"][0]["cached"] is False  # another cache key: top_k is one of its options
    status, above = call(service, "POST", "/classify-text", {"text": "A dull, tedious, badly acted mess.",
                                                             "model": FLAGS, "top_k": "all"})
    assert status == 200 and above["predictions"][0]["labels"] == []  # "positive" scores under 0.5


@pytest.mark.parametrize("path,body,unknown", [
    ("/classify-text", {"text": TEXT, "topk": 2}, "topk"),
    ("/sentiment", {"text": TEXT, "top_k": 1, "normalize": True}, "normalize"),
    ("/tokenize", {"text": TEXT, "top_k": 2}, "top_k"),
    ("/tokenize", {"texts": [TEXT], "threshold": 0.5}, "threshold"),
    ("/classify", {"image": "aGVsbG8=", "top": 2}, "top"),
    ("/classify", {"txt": TEXT}, "txt"),  # named before the missing image: the misspelling is the mistake
])
def test_a_field_the_route_does_not_read_is_refused(service, path, body, unknown):
    status, answer = call(service, "POST", path, body)
    assert (status, answer["error"]["code"]) == (400, "unknown_field")
    assert repr(unknown) in answer["error"]["message"]


def test_classify_takes_top_k_all_in_json_and_in_the_query(service):
    jpeg = encode(photo("chelsea"), "JPEG", quality=90)
    status, body = call(service, "POST", "/classify", {"image": b64(jpeg), "model": "digits", "top_k": "all"})
    assert status == 200 and len(body["predictions"][0]["top_k"]) == 10
    event = http_api_event("POST", "/classify", jpeg, "image/jpeg", True, query={"model": "digits", "top_k": "all"})
    result = handle_event(service, event, None)
    assert result["statusCode"] == 200 and len(json.loads(result["body"])["predictions"][0]["top_k"]) == 10


@pytest.mark.parametrize("path,fields", [("/classify", "classify:JSON_FIELDS"),
                                         ("/classify-text", "text:CLASSIFY_FIELDS"),
                                         ("/sentiment", "text:CLASSIFY_FIELDS"), ("/tokenize", "text:TEXT_FIELDS")])
def test_the_openapi_body_has_exactly_the_fields_the_route_reads(service, path, fields):
    module, name = fields.split(":")
    reads = getattr(importlib.import_module(f"function.routes.{module}"), name)
    _, document = call(service, "GET", "/openapi.json")
    operation = document["paths"][path]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    body = body["anyOf"][0] if "anyOf" in body else body  # /tokenize: this API's body, then TEI's
    assert body["additionalProperties"] is False and set(body["properties"]) == reads
    assert "`unknown_field`" in operation["responses"]["400"]["description"]
