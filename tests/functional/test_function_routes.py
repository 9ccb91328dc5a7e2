"""Every route through the Lambda entry contract, in both API Gateway payload formats, with the real demo models."""
from __future__ import annotations

import json

import pytest

from function.entry import handle_event
from tests.support.function_fixtures import call, demo_models, registry, service  # noqa: F401
from kit.photos import CAT_LABELS, b64, encode, photo
from kit.events import load_event

FORMATS = ["2.0", "1.0"]


@pytest.fixture(scope="module")
def cat_jpeg() -> bytes:
    return encode(photo("chelsea"), "JPEG", quality=90)


@pytest.mark.parametrize("event_format", FORMATS)
def test_classify_json_body(service, cat_jpeg, event_format):
    status, body = call(service, "POST", "/classify", {"image": b64(cat_jpeg), "top_k": 3}, event_format=event_format)
    assert status == 200
    assert body["model"] == "efficientnet_lite0"
    assert len(body["model_version"]) == 64
    [prediction] = body["predictions"]
    assert prediction["label"] in CAT_LABELS
    assert len(prediction["top_k"]) == 3
    assert prediction["top_k"][0] == {"label": prediction["label"], "score": prediction["score"]}
    assert [p["score"] for p in prediction["top_k"]] == sorted((p["score"] for p in prediction["top_k"]), reverse=True)
    assert prediction["cached"] is False


@pytest.mark.parametrize("event_format", FORMATS)
def test_classify_raw_binary_body(service, cat_jpeg, event_format):
    status, body = call(service, "POST", "/classify", cat_jpeg, content_type="image/jpeg", binary=True,
                        event_format=event_format)
    assert status == 200
    assert body["predictions"][0]["label"] in CAT_LABELS
    assert len(body["predictions"][0]["top_k"]) == 5  # the default top_k


@pytest.mark.parametrize("name", ["http_api_v2_post_image_binary.json", "rest_v1_post_image_binary.json"])
def test_recorded_binary_events_classify_a_digit(service, name):
    result = handle_event(service, load_event(name), None)
    body = json.loads(result["body"])
    assert result["statusCode"] == 200
    assert body["model"] == "digits"
    assert body["predictions"][0]["label"] == "3"
    assert len(body["predictions"][0]["top_k"]) == 3


@pytest.mark.parametrize("name", ["http_api_v2_post_json.json", "rest_v1_post_json.json"])
def test_recorded_json_events_get_sentiment(service, name):
    result = handle_event(service, load_event(name), None)
    body = json.loads(result["body"])
    assert result["statusCode"] == 200
    assert body["predictions"][0]["label"] == "positive"


@pytest.mark.parametrize("event_format", FORMATS)
def test_sentiment_batch_in_input_order(service, event_format):
    texts = ["What a wonderful, delightful film. I loved every minute.",
             "A dull, tedious, badly acted mess. I hated it.",
             "Absolutely brilliant and moving, a joy to watch."]
    status, body = call(service, "POST", "/sentiment", {"texts": texts}, event_format=event_format)
    assert status == 200
    assert body["model"] == "sentiment"
    assert [p["label"] for p in body["predictions"]] == ["positive", "negative", "positive"]
    assert all(0.5 <= p["score"] <= 1.0 and p["cached"] is False for p in body["predictions"])


@pytest.mark.parametrize("event_format", FORMATS)
def test_tokenize(service, event_format):
    status, body = call(service, "POST", "/tokenize", {"texts": ["Hello, world!", "Ünïcödé text ✓"]},
                        event_format=event_format)
    assert status == 200
    assert body["model"] == "sentiment" and body["max_length"] > 0
    first = body["results"][0]
    assert first["count"] == len(first["ids"]) == len(first["tokens"]) == len(first["attention_mask"])
    assert first["truncated"] is False
    assert len(body["results"]) == 2


@pytest.mark.parametrize("event_format", FORMATS)
def test_models_lists_every_demo_model(service, event_format):
    status, body = call(service, "GET", "/models", event_format=event_format)
    assert status == 200
    models = {m["name"]: m for m in body["models"]}
    assert {"efficientnet_lite0", "sentiment", "digits"} <= set(models)
    image = models["efficientnet_lite0"]
    assert image["task"] == "image_classification" and image["labels"] == 1000
    assert image["inputs"][0]["shape"][1:] == [224, 224, 3] and image["available"] is True
    assert len(image["version"]) == 64 and image["quantization"]
    assert models["sentiment"]["task"] == "text_classification"
    assert body["defaults"] == {"image": "efficientnet_lite0", "text": "sentiment", "embedding": "minilm"}


@pytest.mark.parametrize("event_format", FORMATS)
def test_health(service, event_format):
    status, body = call(service, "GET", "/health", event_format=event_format)
    assert (status, body["status"]) == (200, "ok")
    assert body["models"] >= 3


def test_trailing_slash_and_named_stage_reach_the_route(service):
    assert call(service, "GET", "/health/")[0] == 200
    event = load_event("http_api_v2_get_health.json")
    event["rawPath"], event["requestContext"]["stage"] = "/prod/health", "prod"
    assert handle_event(service, event, None)["statusCode"] == 200


def test_choosing_another_model(service):
    digit = encode(photo("chelsea").convert("L").resize((8, 8)), "PNG")
    status, body = call(service, "POST", "/classify", {"image": b64(digit), "model": "digits", "top_k": 50})
    assert status == 200 and body["model"] == "digits"
    assert len(body["predictions"][0]["top_k"]) == 10  # top_k is capped at the number of labels
