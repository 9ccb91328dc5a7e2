"""GET /openapi.json: a valid OpenAPI 3.1 document of every route, generated from the code (routes, schemas, error
codes, limits in force), built on first request without loading a model."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from openapi_spec_validator import validate

from function.config import LIMITS
from function.http_errors import status_of_kind
from function.models.registry import ModelRegistry
from function.openapi.document import build_document
from function.openapi.error_codes import ERROR_CODES
from function.router import ROUTES
from tests.functional.test_function_errors import CASES
from tests.support.events import http_api_event
from tests.support.function_fixtures import REPO, call, demo_models, make_service, registry, service  # noqa: F401


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
    result = with_page.handle_event(http_api_event("GET", "/"), None)
    assert result["statusCode"] == 200 and result["headers"]["content-type"] == "text/html; charset=utf-8"
    assert "<title>" in result["body"]
    assert operation_of(document(with_page), "GET", "/")["responses"]["200"]["content"].keys() == {"text/html"}


def test_limits_come_from_the_settings_in_force(registry):  # noqa: F811
    doc = document(make_service(registry, max_batch=3, max_text_batch=7, max_text_chars=99))
    assert doc["info"]["x-limits"]["MAX_BATCH"] == 3 and set(doc["info"]["x-limits"]) == set(LIMITS)
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
    tokenize = operation_of(doc, "POST", "/tokenize")["requestBody"]["content"]["application/json"]["schema"]
    assert "sentiment" in tokenize["properties"]["model"]["enum"]


@pytest.mark.parametrize("method,path,body,content_type,binary,status,code",
                         [case for case in CASES if case[0] in ROUTES.get(case[1], {})],
                         ids=[f"{c[0]} {c[1]} {c[6]}" for c in CASES if c[0] in ROUTES.get(c[1], {})])
def test_every_error_the_routes_answer_is_documented_for_that_route(service, method, path, body, content_type,
                                                                    binary, status, code):
    got_status, got = call(service, method, path, body, content_type, binary)
    assert (got_status, got["error"]["code"]) == (status, code)  # the error suite's case, as it runs today
    response = operation_of(document(service), method, path)["responses"][str(status)]
    assert code in response["content"]["application/json"]["schema"]["properties"]["error"]["properties"]["code"][
        "enum"]
    assert f"`{code}`" in response["description"]


def test_error_statuses_come_from_the_error_kinds(service):
    for path, methods in document(service)["paths"].items():
        for method, op in methods.items():
            for status, response in op["responses"].items():
                if status == "200":
                    continue
                error = response["content"]["application/json"]["schema"]["properties"]["error"]
                codes = error["properties"]["code"]["enum"] if "properties" in error else []
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
    first = service.handle_event(http_api_event("GET", "/openapi.json"), None)
    assert first["statusCode"] == 200 and json.loads(first["body"])["paths"]
    assert not any(fresh.is_loaded(name) for name in fresh.names)
    assert service.handle_event(http_api_event("GET", "/openapi.json"), None)["body"] == first["body"]


def test_a_route_without_a_description_is_named(service):
    def undocumented(ctx):
        raise AssertionError("never called")

    with pytest.raises(TypeError, match=r"POST /v9/thing has no description: decorate undocumented"):
        build_document(service.settings, {}, {"/v9/thing": {"POST": undocumented}})


def test_path_parameters_come_from_the_route_template(service):
    from function.routes.catalog import health

    doc = build_document(service.settings, {}, {"/v9/models/{name}:check": {"GET": health}})
    [parameter] = doc["paths"]["/v9/models/{name}:check"]["get"]["parameters"]
    assert parameter == {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
    validate(doc)


def test_the_routes_import_no_description_code_at_init():
    # The Lambda init imports the router; the descriptions and the builder wait for the first GET /openapi.json.
    probe = ("import sys, function.router; "
             "print(sorted(m for m in sys.modules if m.startswith('function.openapi.')))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    assert run.stdout.strip() == "[]"
