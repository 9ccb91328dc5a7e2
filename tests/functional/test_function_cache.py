"""The result cache in the request path: looked up before any decoding, misses computed as one batch."""
from __future__ import annotations

import pytest

from function.cache.factory import open_result_store
from function.cache.keys import digest_bytes, result_key
from function.config import CacheSettings, ServiceSettings
from function.service import Service
from tests.support.function_fixtures import call, demo_models, registry, service  # noqa: F401
from kit.photos import b64, encode, photo

CAT = encode(photo("chelsea").resize((256, 170)), "JPEG", quality=90)
COFFEE = encode(photo("coffee").resize((256, 170)), "JPEG", quality=90)


def _without_cached(body: dict) -> list[dict]:
    return [{k: v for k, v in p.items() if k != "cached"} for p in body["predictions"]]


def test_second_request_is_a_hit_with_the_identical_prediction(service):
    _, first = call(service, "POST", "/classify", {"image": b64(CAT)})
    _, second = call(service, "POST", "/classify", {"image": b64(CAT)})
    assert [p["cached"] for p in first["predictions"]] == [False]
    assert [p["cached"] for p in second["predictions"]] == [True]
    assert _without_cached(first) == _without_cached(second)


def test_options_that_change_the_answer_are_part_of_the_key(service):
    call(service, "POST", "/classify", {"image": b64(CAT), "top_k": 5})
    _, other = call(service, "POST", "/classify", {"image": b64(CAT), "top_k": 2})
    assert other["predictions"][0]["cached"] is False and len(other["predictions"][0]["top_k"]) == 2


def test_batch_mixes_hits_and_misses_in_input_order(service):
    call(service, "POST", "/classify", {"image": b64(COFFEE)})
    _, body = call(service, "POST", "/classify", {"images": [b64(CAT), b64(COFFEE), b64(CAT)]})
    assert [p["cached"] for p in body["predictions"]] == [False, True, False]
    assert body["predictions"][0] == body["predictions"][2]


def test_a_hit_skips_decoding_entirely(service):
    # A stored answer for bytes that are not an image: only a lookup BEFORE decoding can return it.
    manifest = service.registry.tasks["efficientnet_lite0"].manifest
    ranking = [{"label": label, "score": 0.2} for label in manifest.labels[:5]]
    planted = {**ranking[0], "top_k": ranking}
    key = result_key(manifest.version, manifest.task, digest_bytes(b"not an image"), {"top_k": 5})
    service.store.put_many({key: planted})
    status, body = call(service, "POST", "/classify", b"not an image", "image/jpeg", True)
    assert status == 200 and body["predictions"] == [{**planted, "cached": True}]


@pytest.mark.parametrize("forged", [
    {},
    {"label": "planted", "score": 1.0, "top_k": [{"label": "planted", "score": 1.0}]},
    {"label": "tench", "score": 1.5, "top_k": [{"label": "tench", "score": 1.5}] * 5},
    {"label": "tench", "score": float("nan"), "top_k": [{"label": "tench", "score": 0.1}] * 5},
    {"label": "tench", "score": 0.2, "top_k": [{"label": "tench", "score": 0.2}]},  # top_k 5 asked, 1 stored
    {"label": "tench", "score": 0.2, "top_k": [{"label": "goldfish", "score": 0.3}] * 5},  # head disagrees
    {"label": "tench", "score": 0.2, "top_k": [{"label": "tench", "score": 0.2}] * 5, "extra": 1},
])
def test_a_stored_result_the_task_could_not_have_produced_is_a_miss(service, forged):
    manifest = service.registry.tasks["efficientnet_lite0"].manifest
    key = result_key(manifest.version, manifest.task, digest_bytes(b"not an image"), {"top_k": 5})
    service.store.put_many({key: forged})
    status, body = call(service, "POST", "/classify", b"not an image", "image/jpeg", True)
    assert (status, body["error"]["code"]) == (415, "unsupported_image")


def test_text_results_are_cached(service):
    _, first = call(service, "POST", "/sentiment", {"texts": ["Great fun.", "Boring."]})
    _, second = call(service, "POST", "/sentiment", {"texts": ["Boring.", "New text here."]})
    assert [p["cached"] for p in second["predictions"]] == [True, False]
    assert second["predictions"][0]["label"] == first["predictions"][1]["label"]


def test_sqlite_store_from_the_factory_survives_a_new_container(registry, tmp_path):  # noqa: F811
    cache = CacheSettings.from_env({"RESULTS_CACHE": "sqlite", "RESULTS_SQLITE_PATH": str(tmp_path / "r.db")})
    settings = ServiceSettings.from_env({}, model_dir=registry.model_dir)
    first = Service(settings, open_result_store(cache), registry)
    _, answer = call(first, "POST", "/classify", {"image": b64(CAT)})
    second = Service(settings, open_result_store(cache), registry)  # a fresh in-memory tier, same file
    _, again = call(second, "POST", "/classify", {"image": b64(CAT)})
    assert again["predictions"][0]["cached"] is True
    assert _without_cached(again) == _without_cached(answer)
