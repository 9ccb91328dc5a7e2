"""GET /openapi.json: a valid OpenAPI 3.1 document of every route, generated from the code (routes, schemas, error
codes, limits in force), built on first request without loading a model."""
from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from convert.publish import publish
from function.aws.s3 import client_from_environment
from function.config import LIMIT_VARIABLES
from function.entry import handle_event
from function.errors import ERROR_CODES
from function.http_errors import api_error_body, status_of_kind
from function.catalog.registry import ModelRegistry
from function.openapi.document import PATH_PARAMETER, build_document
from function.router import ROUTES, Group, match
from tests.functional.test_events_model_source import REFRESH_SECONDS, s3_registry
from tests.support.clock import Clock
from tests.functional.test_function_errors import CASES
from tests.functional.test_tensor_errors import CASES as TENSOR_ERROR_CASES
from tests.support.aws_fixtures import aws, aws_environment  # noqa: F401
from kit.events import http_api_event
from tests.support.function_fixtures import (DEMO_MODELS, REPO, call, demo_models, make_service,  # noqa: F401
                                             registry, service)
from tests.support.log_capture import attached


def document(service) -> dict:
    status, body = call(service, "GET", "/openapi.json")
    assert status == 200
    return body


def operation_of(doc: dict, method: str, path: str) -> dict | None:
    return doc["paths"].get(path, {}).get(method.lower())


def test_the_served_document_is_valid_openapi_3_1(service):
    doc = document(service)
    validate(doc)  # openapi-spec-validator: raises on any violation of the OpenAPI 3.1 schema
    assert doc["openapi"].startswith("3.1")


def test_every_route_and_method_is_described_and_nothing_else(registry):  # noqa: F811
    doc = document(make_service(registry, serve_page=True))
    routes = {(method.lower(), path) for path, methods in ROUTES.items() for method in methods}
    assert {(method, path) for path, methods in doc["paths"].items() for method in methods} == routes
    assert len({op["operationId"] for ops in doc["paths"].values() for op in ops.values()}) == len(routes)
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            assert op["summary"] and op["description"], f"{method} {path}"
            assert "200" in op["responses"] and "500" in op["responses"], f"{method} {path}"


def test_the_page_is_off_unless_settings_turn_it_on(service, registry):  # noqa: F811
    assert "/" not in document(service)["paths"]
    status, body = call(service, "GET", "/")
    assert (status, body["error"]["code"]) == (404, "route_not_found")
    assert "SERVE_PAGE=true" in body["error"]["message"]
    with_page = make_service(registry, serve_page=True)
    result = handle_event(with_page, http_api_event("GET", "/"), None)
    assert result["statusCode"] == 200 and result["headers"]["content-type"] == "text/html; charset=utf-8"
    assert "<title>" in result["body"]
    assert operation_of(document(with_page), "GET", "/")["responses"]["200"]["content"].keys() == {"text/html"}


def test_limits_come_from_the_settings_in_force(registry):  # noqa: F811
    doc = document(make_service(registry, max_batch=3, max_text_batch=7, max_text_chars=99))
    assert doc["info"]["x-limits"]["MAX_BATCH"] == 3 and set(doc["info"]["x-limits"]) == set(LIMIT_VARIABLES)
    classify = operation_of(doc, "POST", "/classify")
    assert classify["requestBody"]["content"]["application/json"]["schema"]["properties"]["images"]["maxItems"] == 3
    assert classify["x-limits"]["MAX_BATCH"] == 3
    texts = operation_of(doc, "POST", "/sentiment")["requestBody"]["content"]["application/json"]["schema"]
    assert texts["properties"]["texts"]["maxItems"] == 7 and texts["properties"]["text"]["maxLength"] == 99
    assert "| `MAX_TEXT_CHARS` | 99 |" in doc["info"]["description"]


def test_model_fields_name_the_served_models_of_the_route_task(service):
    doc = document(service)
    model = operation_of(doc, "POST", "/classify")["requestBody"]["content"]["application/json"]["schema"]
    assert model["properties"]["model"]["enum"] == ["digits", "efficientnet_lite0"]
    # /tokenize's body is this API's or TEI's (the first of the two, then the second).
    ours, tei = operation_of(doc, "POST", "/tokenize")["requestBody"]["content"]["application/json"]["schema"]["anyOf"]
    assert "sentiment" in ours["properties"]["model"]["enum"] and tei["required"] == ["inputs"]


@pytest.mark.parametrize("method,path,body,content_type,binary,status,code",
                         [case for case in CASES if case[0] in ROUTES.get(case[1], {})],
                         ids=[f"{c[0]} {c[1]} {c[6]}" for c in CASES if c[0] in ROUTES.get(c[1], {})])
def test_every_error_the_routes_answer_is_documented_for_that_route(service, method, path, body, content_type,
                                                                    binary, status, code):
    got_status, got = call(service, method, path, body, content_type, binary)
    assert (got_status, got["error"]["code"]) == (status, code)  # the error suite's case, as it runs today
    response = operation_of(document(service), method, path)["responses"][str(status)]
    schema = response["content"]["application/json"]["schema"]
    schema = schema["anyOf"][0] if "anyOf" in schema else schema  # this API's, before TEI's on /embed and /tokenize
    assert code in schema["properties"]["error"]["properties"]["code"]["enum"]
    assert f"`{code}`" in response["description"]


def test_error_statuses_come_from_the_error_kinds(service):
    for path, methods in document(service)["paths"].items():
        for method, op in methods.items():
            for status, response in op["responses"].items():
                if status == "200":
                    continue
                schema = response["content"]["application/json"]["schema"]
                # TEI's error bodies ({"error", "error_type"}, its own statuses) beside this API's on /embed, /tokenize
                schemas = schema.get("anyOf", [schema])
                errors = [one["properties"]["error"] for one in schemas]
                codes = [code for error in errors if "properties" in error
                         for code in error["properties"]["code"]["enum"]]
                assert all(status_of_kind(ERROR_CODES[code].kind) == int(status) for code in codes), (path, status)


def test_the_openai_route_documents_openai_error_bodies(service):
    op = operation_of(document(service), "POST", "/v1/embeddings")
    error = op["responses"]["400"]["content"]["application/json"]["schema"]["properties"]["error"]
    assert set(error["properties"]) == {"message", "type", "param", "code"}
    status, body = call(service, "POST", "/v1/embeddings", {"input": []})
    assert status == 400 and set(body["error"]) == {"message", "type", "param", "code"}


def test_built_on_first_request_without_loading_a_model(demo_models):  # noqa: F811
    fresh = ModelRegistry(demo_models)
    service = make_service(fresh)
    first = handle_event(service, http_api_event("GET", "/openapi.json"), None)
    assert first["statusCode"] == 200 and json.loads(first["body"])["paths"]
    assert not any(fresh.is_loaded(name) for name in fresh.names)
    assert handle_event(service, http_api_event("GET", "/openapi.json"), None)["body"] == first["body"]


def test_the_document_follows_the_models_the_registry_serves_now(aws_environment, registry, tmp_path):  # noqa: F811
    # A model published while the process is warm (MODEL_SOURCE on S3) appears in the document after the refresh.
    clock, bucket = Clock(), aws_environment.bucket()
    s3_models = s3_registry(bucket, tmp_path, clock, REFRESH_SECONDS)
    service = make_service(s3_models)
    before = document(service)
    assert "enum" not in operation_of(before, "GET", "/v2/models/{name}")["parameters"][0]["schema"]  # serves none
    publish(registry.model_dir / "digits", f"s3://{bucket}/models/", client_from_environment())
    assert document(service) == before  # not refreshed yet: the same listing, the same document
    clock.now += REFRESH_SECONDS
    document(service)  # due: starts the check in the background
    s3_models.settle()
    after = document(service)
    assert operation_of(after, "GET", "/v2/models/{name}")["parameters"][0]["schema"]["enum"] == ["digits"]
    classify = operation_of(after, "POST", "/classify")["requestBody"]["content"]["application/json"]["schema"]
    assert classify["properties"]["model"]["enum"] == ["digits"]


def test_a_route_without_a_description_is_named(service):
    def undocumented(ctx):
        raise AssertionError("never called")

    with pytest.raises(TypeError, match=r"POST /v9/thing has no description: add undocumented "):
        build_document(service.settings, {}, [Group("test", "/v9", api_error_body,
                                                     {"/v9/thing": {"POST": undocumented}})])


def test_path_parameters_come_from_the_route_template(service):
    from function.routes.catalog import health

    doc = build_document(service.settings, {}, [Group("test", "/v9", api_error_body,
                                                      {"/v9/models/{name}:check": {"GET": health}})])
    [parameter] = doc["paths"]["/v9/models/{name}:check"]["get"]["parameters"]
    assert parameter == {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
    validate(doc)


def test_the_routes_import_no_description_code_at_init():
    # The Lambda init imports the router; the descriptions and the builder wait for the first GET /openapi.json.
    probe = ("import sys, function.router; "
             "print(sorted(m for m in sys.modules if m.startswith('function.openapi.')))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    assert run.stdout.strip() == "[]"


# ---- the tensor routes: TensorFlow Serving's REST API and the Open Inference Protocol v2 ----------------------------

# /v1/models itself is OpenAI's model list (tests/functional/test_openai_models.py).
TENSOR_TEMPLATES = [path for path in ROUTES if path.startswith(("/v1/models/", "/v2"))]


class ErrorCodes(logging.Handler):
    """The error_code of each request's log line: the tensor routes' bodies ({"error": "<message>"}) carry none."""

    def __init__(self) -> None:
        super().__init__()
        self.codes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.codes.append(getattr(record, "fields", {}).get("error_code"))


@pytest.fixture()
def error_codes():
    with attached(ErrorCodes()) as handler:
        yield handler.codes


def answer_schema(doc: dict, method: str, path: str, status: str, media: str = "application/json") -> dict:
    template = match(path).template
    return operation_of(doc, method, template)["responses"][status]["content"][media]["schema"]


def test_the_24_tensor_routes_take_any_served_model_and_a_version_or_label_where_the_template_has_one(service):
    doc = document(service)
    assert len(TENSOR_TEMPLATES) == 24
    for template in TENSOR_TEMPLATES:
        for method, op in doc["paths"][template].items():
            parameters = {p["name"]: p for p in op.get("parameters", [])}
            assert set(parameters) == set(PATH_PARAMETER.findall(template)), (method, template)
            if "name" in parameters:
                assert parameters["name"]["schema"]["enum"] == sorted(DEMO_MODELS)
            if "version" in parameters:
                pattern = parameters["version"]["schema"]["pattern"]
                assert pattern == ("^[0-9]+$" if template.startswith("/v1") else "^[0-9a-f]{64}$"), template
            if "label" in parameters:
                assert parameters["label"]["schema"]["pattern"] == "^[a-z][a-z0-9_-]{0,63}$", template


def test_tritons_extensions_are_listed_with_their_error_codes(service):
    doc = document(service)
    index = operation_of(doc, "POST", "/v2/repository/index")
    assert index["requestBody"]["required"] is False  # tritonclient sends an empty body
    assert set(index["responses"]) == {"200", "400", "413", "500"}
    for method, template in (("GET", "/v2/models/{name}/config"), ("GET", "/v2/models/{name}/versions/{version}/stats"),
                             ("GET", "/v2/models/{name}/stats")):
        responses = operation_of(doc, method, template)["responses"]
        assert set(responses) == {"200", "404", "500", "503"}, template
        assert "`version_not_found`" in responses["404"]["description"]
    assert set(operation_of(doc, "GET", "/v2/models/stats")["responses"]) == {"200", "404", "500", "503"}


def test_the_tensor_batch_limit_comes_from_the_settings_in_force(registry):  # noqa: F811
    doc = document(make_service(registry, max_tensor_batch=5))
    assert doc["info"]["x-limits"]["MAX_TENSOR_BATCH"] == 5
    predict = operation_of(doc, "POST", "/v1/models/{name}:predict")
    assert predict["requestBody"]["content"]["application/json"]["schema"]["properties"]["instances"]["maxItems"] == 5
    infer = operation_of(doc, "POST", "/v2/models/{name}/infer")
    tensor = infer["requestBody"]["content"]["application/json"]["schema"]["properties"]["inputs"]["items"]
    assert tensor["properties"]["shape"]["prefixItems"][0]["maximum"] == 5
    assert predict["x-limits"]["MAX_TENSOR_BATCH"] == infer["x-limits"]["MAX_TENSOR_BATCH"] == 5


@pytest.mark.parametrize("case", TENSOR_ERROR_CASES)
def test_every_tensor_error_is_documented_for_its_route(service, error_codes, case):
    path, body, status, _ = TENSOR_ERROR_CASES[case]
    got_status, got = call(service, "POST", path, body)
    code = error_codes[-1]
    assert got_status == status and code
    template = match(path).template
    response = operation_of(document(service), "POST", template)["responses"][str(status)]
    assert f"`{code}`" in response["description"], (code, response["description"])
    Draft202012Validator(response["content"]["application/json"]["schema"]).validate(got)


def tabular_v2(**extra) -> dict:
    return {"inputs": [{"name": "vitals", "shape": [2, 3], "datatype": "FP32", "data": [59, 32.1, 101, 48, 21.6, 87]},
                       {"name": "sex", "shape": [2], "datatype": "INT32", "data": [2, 1]},
                       {"name": "serum", "shape": [2, 6], "datatype": "FP32", "data": list(range(12))}], **extra}


def test_real_tensor_answers_fit_the_documented_schemas(service):
    doc = document(service)
    tabular_row = {"vitals": [59, 32.1, 101], "sex": 2, "serum": [157, 93.2, 38, 4, 4.86, 87]}
    digit = [[[0.5]] * 8] * 8
    tf_version, digits_version = (call(service, "GET", f"/v1/models/{name}")[1]["model_version_status"][0]["version"]
                                  for name in ("tabular", "digits"))
    v2_version = call(service, "GET", "/v2/models/tabular")[1]["versions"][0]
    requests = [
        ("GET", "/v1/models/tabular", None), ("GET", f"/v1/models/tabular/versions/{tf_version}", None),
        ("GET", "/v1/models/minilm/metadata", None),
        ("GET", f"/v1/models/tabular/versions/{tf_version}/metadata", None),
        ("POST", "/v1/models/tabular:predict", {"instances": [tabular_row] * 2}),
        ("POST", "/v1/models/tabular:predict", {"inputs": {name: [value] for name, value in tabular_row.items()}}),
        ("POST", f"/v1/models/digits/versions/{digits_version}:predict", {"instances": [digit]}),
        ("POST", "/v1/models/digits:predict", {"signature_name": "serving_default", "inputs": [digit]}),
        ("GET", "/v2", None), ("GET", "/v2/health/live", None), ("GET", "/v2/health/ready", None),
        ("GET", "/v2/models/efficientnet_lite0", None), ("GET", f"/v2/models/tabular/versions/{v2_version}", None),
        ("GET", "/v2/models/sentiment/ready", None), ("GET", f"/v2/models/tabular/versions/{v2_version}/ready", None),
        ("POST", "/v2/models/tabular/infer", tabular_v2(id="7", outputs=[{"name": "risk"}])),
        ("POST", f"/v2/models/tabular/versions/{v2_version}/infer", tabular_v2(id=None)),
    ]
    for method, path, body in requests:
        status, got = call(service, method, path, body)
        assert status == 200, (path, got)
        Draft202012Validator(answer_schema(doc, method, path, "200")).validate(got)


def test_binary_tensor_answers_are_documented(service):
    event = http_api_event("POST", "/v2/models/tabular/infer", tabular_v2(parameters={"binary_data_output": True}))
    result = handle_event(service, event, None)
    media = result["headers"]["content-type"]
    assert result["statusCode"] == 200 and media == "application/octet-stream"
    answers = operation_of(document(service), "POST", "/v2/models/{name}/infer")["responses"]["200"]["content"]
    assert set(answers) == {"application/json", media}
    assert "Inference-Header-Content-Length" in answers[media]["schema"]["description"]
