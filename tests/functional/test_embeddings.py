"""POST /embed with the converted all-MiniLM-L6-v2 demo model: vectors, normalisation, truncation, the cache, and
every documented client error, through the Lambda entry contract."""
from __future__ import annotations

import numpy as np
import pytest

from function.cache.memory import MemoryResultStore
from function.config import ServiceSettings
from function.catalog.registry import ModelRegistry
from function.service import Service
from function.config import TaskLimits
from saved_model.recipes import paraphrase_set
from tests.support.function_fixtures import call, demo_models, make_service, registry, service  # noqa: F401

SENTENCES = ["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell sharply today."]


def embed(service, texts, **options) -> dict:
    status, body = call(service, "POST", "/embed", {"texts": texts, **options})
    assert status == 200, body
    return body


def test_vectors_are_unit_length_and_in_input_order(service):
    body = embed(service, SENTENCES)
    vectors = np.array([item["embedding"] for item in body["embeddings"]])
    assert body["model"] == "minilm" and body["dimensions"] == 384 == vectors.shape[1]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.6 > similarity[0, 2]  # the paraphrase is close, the market is not
    single = embed(service, [SENTENCES[2]])["embeddings"][0]["embedding"]
    np.testing.assert_allclose(single, vectors[2], atol=1e-5)  # batching (and its padding) changes nothing


def test_a_batch_of_mixed_lengths_runs_in_groups_and_answers_each_text_as_alone(registry):  # noqa: F811
    """More texts than one group (text_embedding.GROUP_ROWS), of very different lengths, shuffled: each vector is
    the one the text gets alone, in input order, though the batch ran as several calls of their own widths. No
    cache, so every text is computed both times."""
    from function.cache.base import NullResultStore  # noqa: PLC0415
    from function.tasks.text_embedding import GROUP_ROWS  # noqa: PLC0415

    service = Service(ServiceSettings.from_env({}, model_dir=registry.model_dir), NullResultStore(), registry)
    texts = [("word " * (3 + (7 * index) % 60)).strip() + f" number {index}." for index in range(2 * GROUP_ROWS + 3)]
    batch = np.array([item["embedding"] for item in embed(service, texts)["embeddings"]])
    alone = np.array([embed(service, [text])["embeddings"][0]["embedding"] for text in texts])
    assert len({len(text.split()) for text in texts}) > GROUP_ROWS  # lengths differ within and across groups
    # The demo minilm is served mixed (int8 weights, activations quantized row by row on the fly): padding a text to
    # its group's width changes the float rounding of its attention sums by ~1e-7, which can move an activation
    # across an int8 step, hence 1e-3 and not float32's 1e-5. A text's neighbour differs by far more.
    np.testing.assert_allclose(batch, alone, atol=1e-3)
    assert np.abs(alone[1:] - alone[:-1]).max(axis=1).min() > 1e-2


def test_normalize_false_gives_the_raw_vector_in_the_same_direction(service):
    raw = np.array(embed(service, SENTENCES[:1], normalize=False)["embeddings"][0]["embedding"])
    unit = np.array(embed(service, SENTENCES[:1])["embeddings"][0]["embedding"])
    assert abs(np.linalg.norm(raw) - 1.0) > 0.05
    np.testing.assert_allclose(raw / np.linalg.norm(raw), unit, atol=1e-6)


def test_a_paraphrase_ranks_above_an_unrelated_sentence(service):
    def vectors(texts: list[str]) -> np.ndarray:
        return np.array([item["embedding"] for item in embed(service, texts)["embeddings"]])

    ranking = paraphrase_set.rank(paraphrase_set.load(), vectors)
    assert ranking.correct == ranking.total, ranking.text()


def test_a_long_text_is_truncated_to_256_tokens_and_says_so(service):
    body = embed(service, ["word " * 400, "short"])
    long, short = body["embeddings"]
    assert (long["tokens"], long["truncated"]) == (256, True)
    assert short["truncated"] is False and short["tokens"] == 3


def test_cached_vectors_are_bit_for_bit_and_skip_tokenization(registry, demo_models):  # noqa: F811
    store = MemoryResultStore(max_items=100, ttl_seconds=60)
    first = Service(ServiceSettings.from_env({}, model_dir=demo_models), store, registry)
    computed = embed(first, SENTENCES)
    fresh_registry = ModelRegistry(demo_models)
    second = Service(ServiceSettings.from_env({}, model_dir=demo_models), store, fresh_registry)
    cached = embed(second, SENTENCES)
    assert [item["cached"] for item in cached["embeddings"]] == [True] * 3
    assert ([item["embedding"] for item in cached["embeddings"]]
            == [item["embedding"] for item in computed["embeddings"]])
    task = fresh_registry.task("minilm")
    assert "encoder" not in task._components and not task.loaded  # noqa: SLF001  (a hit loads nothing)


@pytest.mark.parametrize("body,status,code", [
    ({"text": ""}, 400, "empty_text"),
    ({"texts": ["fine", "   "]}, 400, "empty_text"),
    ({"texts": ["fine", 3]}, 400, "invalid_field"),
    ({"text": ["not", "a string"]}, 400, "invalid_field"),
    ({"texts": ["x"] * 2049}, 413, "batch_too_large"),
    ({"text": "hello", "model": "nope"}, 404, "model_not_found"),
    ({"text": "hello", "model": "sentiment"}, 400, "wrong_model_task"),
    ({"text": "hello", "normalize": "yes"}, 400, "invalid_field"),
])
def test_client_errors(service, body, status, code):
    got_status, got = call(service, "POST", "/embed", body)
    assert (got_status, got["error"]["code"]) == (status, code), got


def test_too_many_tokens_in_one_request_is_413(demo_models):  # noqa: F811
    service = make_service(ModelRegistry(demo_models, TaskLimits(max_batch_tokens=100)))
    status, body = call(service, "POST", "/embed", {"texts": ["word " * 60, "more words " * 30]})
    assert (status, body["error"]["code"]) == (413, "too_many_tokens")
    assert "100" in body["error"]["message"]
