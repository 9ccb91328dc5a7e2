"""TensorFlow Serving's REST handler cases, ported: tensorflow_serving/model_servers/http_rest_api_handler_test.cc
(UnsupportedApiCalls, PredictModelNameVersionErrors, PredictRequestErrors). Every /v1/ path is TF Serving's:
a malformed one is 400 {"error": "Malformed request: ..."}, a model or version not served is 404, and the body is
always {"error": "<message>"}. Where the upstream test names a model "foo" for a path that fails to parse, the
answer does not depend on the model; where it needs a served one, tabular stands in."""
from __future__ import annotations

import json

import pytest

from function.entry import handle_event
from function.protocols import tfserving
from kit.events import http_api_event
from tests.support.function_fixtures import call, demo_models  # noqa: F401
from tests.support.tensor_fixtures import tensor_model_dir, tensor_registry, tensor_service  # noqa: F401

UINT64_MAX = 2 ** 64 - 1

# UnsupportedApiCalls: (method, path, what the message says); every one is InvalidArgument, HTTP 400.
UNSUPPORTED = [
    ("GET", "/v1/foo", "Malformed request"),
    ("POST", "/v1/foo", "Malformed request"),
    # ("GET", "/v1/models", "Missing model name") is TF Serving's, but here that path is OpenAI's model list
    # (tests/functional/test_openai_models.py).
    ("GET", "/v1/models/debug/model_name", "Malformed request"),
    ("POST", "/v1/models", "Malformed request"),
    ("GET", "/v1/models/foo:predict", "Malformed request"),
    ("GET", "/v1/models/foo/version/50:predict", "Malformed request"),
    ("POST", "/v1/models/foo/version/50:regress", "Malformed request"),
    ("POST", "/v1/models/foo/versions/HELLO:regress", "Malformed request"),
    ("POST", f"/v1/models/foo/versions/{UINT64_MAX}:regress", "Failed to convert version"),
    ("POST", "/v1/models/foo/metadata", "Malformed request"),
    ("POST", "/v1/models/foo/label/some_label:regress", "Malformed request"),
    ("POST", "/v1/models/foo/versions/50/labels/some_label:regress", "Malformed request"),
    ("POST", "/v1/models/foo/versions/some_label:regress", "Malformed request"),
    # The same rules on this server's own routes and a served model.
    ("GET", "/v1/models/tabular:predict", "Malformed request"),
    ("POST", "/v1/models/tabular", "Malformed request"),
    ("POST", "/v1/models/tabular/versions/HELLO:predict", "Malformed request"),
    ("POST", "/v1/models/tabular/versions/-1:predict", "Malformed request"),
    ("POST", f"/v1/models/tabular/versions/{2 ** 63}:predict", "Failed to convert version"),
    ("POST", f"/v1/models/foo/versions/{UINT64_MAX}:predict", "Failed to convert version"),
    ("POST", "/v1/models/tabular/versions/" + "9" * 5000 + ":predict", "Failed to convert version"),
    ("GET", "/v1/models/tabular/versions/" + "9" * 30, "Failed to convert version"),
    ("PUT", "/v1/models/tabular:predict", "Malformed request"),
    ("DELETE", "/v1/models/tabular", "Malformed request"),
    ("POST", "/v1/models/tabular:classify", ":predict only"),
    ("POST", "/v1/models/tabular/labels/stable:regress", ":predict only"),
    ("POST", f"/v1/models/tabular/versions/{UINT64_MAX}:classify", "Failed to convert version"),
    ("GET", "/v1/models/tabular/labels/stable:predict", "Malformed request"),
    ("POST", "/v1/models/tabular/labels/stable/metadata", "Malformed request"),
]


@pytest.mark.parametrize("method,path,fragment", UNSUPPORTED, ids=[f"{m} {p[:60]}" for m, p, _ in UNSUPPORTED])
def test_unsupported_api_calls(tensor_service, method, path, fragment):
    status, got = call(tensor_service, method, path, {"instances": [1]} if method != "GET" else None)
    assert status == 400, got
    assert set(got) == {"error"} and fragment in got["error"], got
    assert len(got["error"]) < 300  # a long path is cut, never echoed whole


def test_a_path_with_control_characters_is_quoted_and_escaped(tensor_service):
    event = http_api_event("GET", "/v1/foo", None)
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/v1/foo\r\nX-Injected: 1"
    result = handle_event(tensor_service, event, None)
    message = json.loads(result["body"])["error"]
    assert result["statusCode"] == 400 and "\r" not in message and "\n" not in message and "\\r\\n" in message


def test_predict_model_name_version_errors(tensor_service, tensor_registry):
    served = tfserving.version_number(tensor_registry.tensor_task("tabular").manifest)
    body = {"instances": [1]}
    for path in ("/v1/models/foo:predict", "/v1/models/foo/versions/50:predict",
                 f"/v1/models/tabular/versions/{int(served) + 99}:predict"):
        status, got = call(tensor_service, "POST", path, body)
        assert status == 404 and set(got) == {"error"}, (path, got)


def test_a_version_is_read_as_the_int64_it_is(tensor_service, tensor_registry):
    served = tfserving.version_number(tensor_registry.tensor_task("tabular").manifest)
    for version in (served, "000" + served):
        status, got = call(tensor_service, "GET", f"/v1/models/tabular/versions/{version}")
        assert status == 200 and got["model_version_status"][0]["version"] == served, got


@pytest.mark.parametrize("body,fragment", [
    ("", "JSON"),  # the empty document
    ("instances = [1, 2]", "JSON"),  # badly formatted JSON
    ({"instances": ["x", "y"]}, "string"),  # incorrect type
    ({"signature_name": 100}, "'signature_name'"),  # incorrect signature_name type
])
def test_predict_request_errors(tensor_service, body, fragment):
    status, got = call(tensor_service, "POST", "/v1/models/sentiment:predict", body)  # one input, as upstream's
    assert status == 400 and set(got) == {"error"} and fragment in got["error"], got


def test_kpath_regex_owns_every_v1_path_but_openai_embeddings(tensor_service):
    from function.router import match

    assert match("/v1/models").group.name == "tfserving" and match("/v1/anything/else").group.name == "tfserving"
    assert match("/statuspage").group.name == "api" and match("/index").group.name == "api"
    assert match("/v1/embeddings").group.name == "openai"
    status, got = call(tensor_service, "GET", "/v1/embeddings")
    assert status == 405 and got["error"]["type"] == "invalid_request_error"  # OpenAI's shape, not TF Serving's
