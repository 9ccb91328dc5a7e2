"""The embedding dialects read by their own clients over HTTP from `python -m function.devserver` on the real minilm
model, each compared with this API's own /embed vectors: openai's `embeddings.create` with OpenAI's limit of 2,048
inputs, langchain-openai's `OpenAIEmbeddings` with its default chunk size (1,000 texts a request) on 1,500 texts, and
huggingface_hub's `InferenceClient(".../embed").feature_extraction` (Hugging Face TEI's body)."""
from __future__ import annotations

import requests
import numpy as np
import openai
import pytest
from huggingface_hub import InferenceClient
from langchain_openai import OpenAIEmbeddings

from tests.support.function_fixtures import demo_models  # noqa: F401
from tests.support.serve_process import serving

SUBJECTS = ["guitar", "market", "weather", "recipe", "football", "election", "garden", "train"]


def texts(count: int) -> list[str]:
    """Short distinct sentences (~10 tokens each): 2,048 of them hold ~20,000 tokens, under MAX_BATCH_TOKENS."""
    return [f"Note {i} is about the {SUBJECTS[i % len(SUBJECTS)]} and item {i * 7 % 1000}." for i in range(count)]


@pytest.fixture(scope="module")
def base_url(demo_models, tmp_path_factory):  # noqa: F811
    with serving(demo_models, tmp_path_factory.mktemp("serve")) as url:
        yield url


def own_vectors(base_url: str, batch: list[str]) -> np.ndarray:
    """This API's /embed vectors, 500 texts a request (the float answer of 2,048 is over Lambda's 6 MB)."""
    vectors = []
    for start in range(0, len(batch), 500):
        answer = requests.post(f"{base_url}/embed", json={"texts": batch[start:start + 500]}, timeout=120)
        assert answer.status_code == 200, answer.text
        vectors += [item["embedding"] for item in answer.json()["embeddings"]]
    return np.array(vectors, dtype=np.float32)


def test_openai_embeds_2048_inputs_in_one_request(base_url):
    client = openai.OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0, timeout=120)
    batch = texts(2048)
    answer = client.embeddings.create(model="minilm", input=batch)  # base64 on the wire, the client's default
    assert [item.index for item in answer.data] == list(range(2048))
    vectors = np.array([item.embedding for item in answer.data], dtype=np.float32)
    np.testing.assert_array_equal(vectors, own_vectors(base_url, batch))
    # As JSON numbers the same answer is ~16 MB, over Lambda's 6 MB: refused with a 413 that says what to do.
    with pytest.raises(openai.APIStatusError) as caught:
        client.embeddings.create(model="minilm", input=batch, encoding_format="float")
    assert (caught.value.status_code, caught.value.code) == (413, "answer_too_large")
    assert "encoding_format base64" in caught.value.message


def test_langchain_embeds_1500_documents_with_its_default_chunk_size(base_url):
    embeddings = OpenAIEmbeddings(model="minilm", base_url=f"{base_url}/v1", api_key="unused",
                                  check_embedding_ctx_length=False, max_retries=0)
    assert embeddings.chunk_size == 1000  # so 1,500 texts go as two requests, of 1,000 and 500
    documents = texts(1500)
    vectors = np.array(embeddings.embed_documents(documents), dtype=np.float32)
    assert vectors.shape == (1500, 384)
    np.testing.assert_allclose(vectors, own_vectors(base_url, documents), rtol=0, atol=1e-7)
    np.testing.assert_allclose(embeddings.embed_query(documents[3]), vectors[3], rtol=0, atol=1e-7)


def test_huggingface_hub_feature_extraction_reads_teis_embed(base_url):
    client = InferenceClient(base_url=f"{base_url}/embed")
    single = client.feature_extraction("A man is playing a guitar.")
    batch = client.feature_extraction(["A man is playing a guitar.", "Someone plays the guitar."])
    assert single.shape == (1, 384) and batch.shape == (2, 384) and single.dtype == np.float32
    np.testing.assert_array_equal(batch, own_vectors(base_url, ["A man is playing a guitar.",
                                                                "Someone plays the guitar."]))
    np.testing.assert_array_equal(single[0], batch[0])
    cut = client.feature_extraction("A man is playing a guitar.", dimensions=128, normalize=True)
    assert cut.shape == (1, 128) and abs(float(np.linalg.norm(cut)) - 1.0) < 1e-5


def test_huggingface_hub_reads_teis_errors(base_url):
    client = InferenceClient(base_url=f"{base_url}/embed")
    with pytest.raises(Exception) as caught:  # huggingface_hub's HfHubHTTPError, with TEI's error in its message
        client.feature_extraction("A man is playing a guitar.", prompt_name="query")
    assert caught.value.response.status_code == 422 and "prompt_name" in str(caught.value)
