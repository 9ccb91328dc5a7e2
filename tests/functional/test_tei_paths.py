"""Hugging Face Text Embeddings Inference's paths (function/routes/tei.py) through the Lambda entry contract on the
real minilm model, with TEI's own case ported: router/tests/test_http_embed.rs test_mrl_embeddings, which embeds
"test" with all-MiniLM-L6-v2 cut to 128 dimensions, alone and three times in a batch, and compares the vector with
TEI's snapshot (tests/support/tei_mrl_embeddings_single.json). The request and answer shapes and the errors'
statuses and error_type are those of TEI's docs/openapi.json and router/src/http/server.rs."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from function.errors import ERROR_CODES
from tests.support.function_fixtures import REPO, call, demo_models, registry, service  # noqa: F401
from tests.support.log_capture import attached

SNAPSHOT = json.loads((REPO / "tests" / "support" / "tei_mrl_embeddings_single.json").read_text(encoding="utf-8"))


def test_mrl_embeddings_as_tei_answers_them(service):  # noqa: F811
    status, single = call(service, "POST", "/embed", {"inputs": "test", "dimensions": 128})
    assert status == 200 and np.shape(single) == (1, 128)
    status, batch = call(service, "POST", "/embed", {"inputs": ["test", "test", "test"], "dimensions": 128})
    assert status == 200 and np.shape(batch) == (3, 128)
    # TEI's own check: every vector of the batch equals the single one, within its tolerance (4e-3).
    for vector in batch:
        np.testing.assert_allclose(vector, single[0], atol=4e-3)
    # TEI's snapshot was made in float32; minilm here is quantized (docs/conversion.md), so each value may be up to
    # 0.015 away (measured: 0.010 at most, 0.003 on average) while the direction agrees to a cosine over 0.998.
    ours, theirs = np.array(single[0]), np.array(SNAPSHOT["answer"][0])
    assert float(ours @ theirs / np.linalg.norm(ours) / np.linalg.norm(theirs)) > 0.998
    np.testing.assert_allclose(ours, theirs, atol=0.015)
    np.testing.assert_allclose(np.linalg.norm(ours), 1.0, atol=1e-5)  # cut to 128 values, then normalised


def test_the_vectors_are_those_of_this_apis_own_embed(service):  # noqa: F811
    texts = ["A man is playing a guitar.", "Someone plays the guitar."]
    _, tei = call(service, "POST", "/embed", {"inputs": texts})
    _, ours = call(service, "POST", "/embed", {"texts": texts})
    np.testing.assert_array_equal(tei, [item["embedding"] for item in ours["embeddings"]])
    _, raw = call(service, "POST", "/embed", {"inputs": texts[0], "normalize": False})
    _, ours_raw = call(service, "POST", "/embed", {"text": texts[0], "normalize": False})
    np.testing.assert_array_equal(raw[0], ours_raw["embeddings"][0]["embedding"])


def test_a_text_over_max_length_needs_truncate_as_in_tei(service):  # noqa: F811
    long_text = "word " * 400
    status, body = call(service, "POST", "/embed", {"inputs": long_text})
    assert (status, body["error_type"]) == (422, "Validation") and "256 tokens" in body["error"]
    status, body = call(service, "POST", "/embed", {"inputs": long_text, "truncate": True})
    assert status == 200 and len(body[0]) == 384


@pytest.mark.parametrize("body,status,error_type", [
    ({"inputs": []}, 400, "Empty"),  # server.rs: "`inputs` cannot be empty", ErrorType::Empty
    ({"inputs": ["a"] * 2049}, 422, "Validation"),  # "batch size 2049 > maximum allowed batch size 2048"
    ({"inputs": "test", "dimensions": 0}, 422, "Validation"),  # infer.rs: "`dimensions` should be positive"
    ({"inputs": "test", "dimensions": 385}, 422, "Validation"),  # "... smaller than the maximum embedding dimension"
    ({"inputs": "test", "prompt_name": "query"}, 422, "Validation"),  # no prompts configured
    ({"inputs": [[101, 3231, 102]]}, 422, "Validation"),  # token ids
    ({"inputs": 7}, 422, "Validation"),
    ({"inputs": "test", "normalize": "yes"}, 422, "Validation"),
    ({"inputs": "test", "truncation_direction": "left"}, 422, "Validation"),
    ({"inputs": "test", "model": "nope"}, 404, "Validation"),
])
def test_errors_take_teis_shape_and_status(service, body, status, error_type):  # noqa: F811
    with attached(LogLines()) as lines:
        got_status, got = call(service, "POST", "/embed", body)
    assert (got_status, set(got), got["error_type"]) == (status, {"error", "error_type"}, error_type), got
    assert lines.fields[-1]["error_code"] in ERROR_CODES  # the log line and the metrics still name the case


class LogLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.fields: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.fields.append(getattr(record, "fields", {}))


def test_fields_tei_does_not_know_are_ignored_as_tei_ignores_them(service):  # noqa: F811
    status, body = call(service, "POST", "/embed", {"inputs": "test", "encoding_format": "float", "extra": 1})
    assert status == 200 and len(body[0]) == 384


def test_this_apis_own_body_refuses_unknown_fields(service):  # noqa: F811
    status, body = call(service, "POST", "/embed", {"text": "test", "normalise": False})
    assert (status, body["error"]["code"]) == (400, "unknown_field") and "'normalise'" in body["error"]["message"]


def test_tokenize_gives_teis_tokens_with_utf8_byte_offsets(service):  # noqa: F811
    status, body = call(service, "POST", "/tokenize", {"inputs": "Héllo wörld"})
    assert status == 200
    assert body == [[{"id": 101, "text": "[CLS]", "special": True, "start": None, "stop": None},
                     {"id": 7592, "text": "Héllo", "special": False, "start": 0, "stop": 6},
                     {"id": 2088, "text": "wörld", "special": False, "start": 7, "stop": 13},
                     {"id": 102, "text": "[SEP]", "special": True, "start": None, "stop": None}]]
    # The text of a token is the input's own (TEI cuts it from the input by its offsets), not the lowercased token.
    status, body = call(service, "POST", "/tokenize", {"inputs": ["Hello", "a b"], "add_special_tokens": False})
    assert status == 200 and [[token["text"] for token in tokens] for tokens in body] == [["Hello"], ["a", "b"]]
    # This API's own body on the same path keeps its own answer (the default text model's tokenizer).
    status, body = call(service, "POST", "/tokenize", {"text": "Hello"})
    assert status == 200 and body["model"] == "sentiment" and body["results"][0]["tokens"][1] == "hello"


def test_info_describes_the_default_embedding_model(service, registry):  # noqa: F811
    status, body = call(service, "GET", "/info")
    manifest = registry.task("minilm").manifest
    assert status == 200
    assert (body["model_id"], body["model_sha"], body["max_input_length"]) == ("minilm", manifest.version, 256)
    assert body["model_type"] == {"embedding": {"pooling": "mean"}}
    assert (body["max_client_batch_size"], body["max_batch_tokens"], body["auto_truncate"]) == (2048, 32768, False)
