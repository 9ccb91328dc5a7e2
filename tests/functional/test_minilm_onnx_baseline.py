"""The embedding baseline of `make bench`: the ONNX graph bench/minilm_onnx.py builds from the original weights,
served by bench/baselines/onnx_embed_handler.py (ONNX Runtime + tokenizers), gives the numpy reference's vectors,
and bench/embed_worker.py times it in a separate process the way the benchmark does."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import inputs, minilm_onnx
from bench.embeddings import answer_vectors
from kit.events import http_api_event
from saved_model.recipes import minilm, minilm_encoder, paraphrase_set
from saved_model.recipes.minilm_reference import MiniLMReference, cosine

REPO = Path(__file__).resolve().parents[2]
HANDLER_MODULE = "bench.baselines.onnx_embed_handler"
LONG_TEXT = "The committee met again on Tuesday to discuss the budget. " * 40  # > 256 tokens

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory) -> Path:
    return minilm_onnx.export(tmp_path_factory.mktemp("onnx") / "minilm")


@pytest.fixture(scope="module")
def handler(onnx_dir):
    """The handler module as the Lambda runtime imports it: the model is loaded at import, from the env var."""
    sys.modules.pop(HANDLER_MODULE, None)
    previous = os.environ.get("BASELINE_MODEL_DIR")
    os.environ["BASELINE_MODEL_DIR"] = str(onnx_dir)
    try:
        yield importlib.import_module(HANDLER_MODULE).handler
    finally:
        sys.modules.pop(HANDLER_MODULE, None)
        if previous is None:
            os.environ.pop("BASELINE_MODEL_DIR", None)
        else:
            os.environ["BASELINE_MODEL_DIR"] = previous


def embed(handler, body: dict) -> dict:
    answer = handler(http_api_event("POST", "/embed", body), None)
    assert answer["statusCode"] == 200, answer["body"]
    return json.loads(answer["body"])


def test_onnx_vectors_match_the_numpy_reference(handler):
    texts = ["Short.", *paraphrase_set.texts(paraphrase_set.load())[:30], LONG_TEXT]
    body = embed(handler, {"texts": texts, "normalize": False})
    served = answer_vectors(body)
    reference, tokenizer = MiniLMReference(), minilm.make_tokenizer()
    expected = np.concatenate([reference.embed(*minilm_encoder.encode(tokenizer, [text])) for text in texts])
    similarity = cosine(served, expected)
    print(f"ONNX Runtime vs numpy reference, {len(texts)} texts of 3-256 tokens in one padded batch: "
          f"max abs diff {np.abs(served - expected).max():.2e}, cosine min {similarity.min():.10f}")
    assert similarity.min() > 0.9999
    assert np.abs(served - expected).max() < 1e-4


def test_answer_is_normalised_by_default_and_flags_truncation(handler):
    body = embed(handler, {"texts": ["A fine day for a walk.", LONG_TEXT]})
    vectors = answer_vectors(body)
    assert body["model"] == "minilm" and body["dimensions"] == 384 and vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert body["truncated"] == [False, True] and body["cached"] == [False, False]
    single = embed(handler, {"text": "A fine day for a walk."})
    np.testing.assert_allclose(answer_vectors(single)[0], vectors[0], atol=1e-6)  # padding changes nothing


@pytest.mark.parametrize("body", ['{"texts": []}', '{"texts": ["ok", 3]}', '{"text": ""}', "not json"])
def test_bad_requests_get_a_400(handler, body):
    event = {**http_api_event("POST", "/embed", {}), "body": body}
    answer = handler(event, None)
    assert answer["statusCode"] == 400
    assert json.loads(answer["body"])["error"]["code"] == "invalid_input"


def test_embed_worker_times_the_handler_in_its_own_process(onnx_dir, tmp_path):
    events = {"short": http_api_event("POST", "/embed", inputs.embed_body([inputs.EMBED_SHORT_SENTENCE])),
              "batch": http_api_event("POST", "/embed", inputs.embed_body(inputs.embed_batch_texts()[:4]))}
    plan = {"handler": f"{HANDLER_MODULE}.handler", "events": events, "requests": {"short": 3, "batch": 2}}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    environment = {**os.environ, "BASELINE_MODEL_DIR": str(onnx_dir), "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-P", str(REPO / "bench" / "embed_worker.py"), str(tmp_path / "plan.json"),
                    str(tmp_path / "out.json")], env=environment, cwd=tmp_path, check=True, timeout=300)
    results = json.loads((tmp_path / "out.json").read_text())
    assert [len(results[case]["ms"]) for case in ("short", "batch")] == [3, 2]
    assert all(ms > 0 for case in results.values() for ms in case["ms"])
    assert answer_vectors(results["batch"]["body"]).shape == (4, 384)


def test_answer_vectors_reads_lists_and_per_item_objects():
    rows = [[1.0, 0.0], [0.0, 1.0]]
    assert answer_vectors({"embeddings": rows}).tolist() == rows
    assert answer_vectors({"embeddings": [{"embedding": r, "cached": False} for r in rows]}).tolist() == rows


def test_the_embedding_batch_mixes_short_and_long_real_sentences():
    texts = inputs.embed_batch_texts()
    tokenizer = minilm.make_tokenizer()
    tokenizer.no_padding()
    lengths = [len(tokenizer.encode(text).ids) for text in texts]
    assert len(texts) == len(set(texts)) == 32
    assert min(lengths) <= 16 and 65 <= max(lengths) <= 128
    assert texts == inputs.embed_batch_texts.__wrapped__()  # the same batch every run
