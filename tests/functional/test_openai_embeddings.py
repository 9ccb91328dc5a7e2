"""The official `openai` Python client against POST /v1/embeddings: over HTTP from `python -m function.devserver`,
and straight into `function.app.handler` (the client's own HTTP layer with a transport that builds the API
Gateway event, as API Gateway would)."""
from __future__ import annotations

import base64

import httpx2
import numpy as np
import openai
import pytest

from function.entry import handle_event
from function.devserver.server import http_api_event
from tests.support.function_fixtures import demo_models, make_service, registry  # noqa: F401
from tests.support.serve_process import serving

TEXTS = ["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell sharply today."]


@pytest.fixture(scope="module")
def base_url(demo_models, tmp_path_factory):  # noqa: F811
    with serving(demo_models, tmp_path_factory.mktemp("serve")) as url:
        yield url + "/v1"


@pytest.fixture()
def handler_client(registry):  # noqa: F811
    """An OpenAI client whose requests become API Gateway events handed to the Lambda handler."""
    service = make_service(registry)

    def lambda_transport(request: httpx2.Request) -> httpx2.Response:
        event = http_api_event(request.method, str(request.url.raw_path.decode()), dict(request.headers),
                               request.read(), "127.0.0.1")
        result = handle_event(service, event, None)
        return httpx2.Response(result["statusCode"], headers=result["headers"], content=result["body"].encode())

    http_client = httpx2.Client(transport=httpx2.MockTransport(lambda_transport))
    return openai.OpenAI(base_url="http://lambda.local/v1", api_key="unused", http_client=http_client, max_retries=0)


@pytest.fixture()
def http_client(base_url):
    return openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)


@pytest.fixture(params=["http", "handler"])
def client(request):
    return request.getfixturevalue(f"{request.param}_client")


def test_a_batch_in_float_and_in_base64_gives_the_same_unit_vectors(client):
    as_floats = client.embeddings.create(model="minilm", input=TEXTS, encoding_format="float")
    as_base64 = client.embeddings.create(model="minilm", input=TEXTS)  # the client asks for base64 by default
    assert [item.index for item in as_floats.data] == [0, 1, 2]
    floats = np.array([item.embedding for item in as_floats.data])
    decoded = np.array([item.embedding for item in as_base64.data])
    assert floats.shape == (3, 384)
    np.testing.assert_array_equal(floats.astype(np.float32), decoded.astype(np.float32))
    np.testing.assert_allclose(np.linalg.norm(floats, axis=1), 1.0, atol=1e-5)
    assert as_floats.model == "minilm" and as_floats.usage.prompt_tokens == as_floats.usage.total_tokens > 3 * 3
    assert floats[0] @ floats[1] > floats[0] @ floats[2]


def test_one_string_and_the_raw_base64_wire_format(base_url):
    raw = openai.OpenAI(base_url=base_url, api_key="unused").embeddings.with_raw_response.create(
        model="minilm", input=TEXTS[0], encoding_format="base64")
    wire = raw.http_response.json()
    vector = np.frombuffer(base64.b64decode(wire["data"][0]["embedding"]), dtype="<f4")
    assert wire["object"] == "list" and wire["data"][0]["object"] == "embedding" and vector.shape == (384,)


@pytest.mark.parametrize("kwargs,status,code,param", [
    ({"model": "nope", "input": "hi"}, 404, "model_not_found", "model"),
    ({"model": "sentiment", "input": "hi"}, 400, "wrong_model_task", "model"),
    ({"model": "minilm", "input": ""}, 400, "empty_text", "input"),
    ({"model": "minilm", "input": []}, 400, "invalid_field", "input"),
    ({"model": "minilm", "input": [[101, 2023, 102]]}, 400, "unsupported_input", "input"),
    ({"model": "minilm", "input": ["x"] * 2049}, 413, "batch_too_large", "input"),
    ({"model": "minilm", "input": "hi", "dimensions": 128}, 400, "unsupported_dimensions", "dimensions"),
])
def test_errors_reach_the_client_in_openai_shape(client, kwargs, status, code, param):
    with pytest.raises(openai.APIStatusError) as caught:
        client.embeddings.create(encoding_format="float", **kwargs)
    error = caught.value
    assert (error.status_code, error.code, error.param) == (status, code, param)
    assert error.type == "invalid_request_error" and error.message
