"""The OpenAPI 3.1 document of this deployment, built from the router's table and each route's own description.

Routes, methods, path parameters and the error body shape of each come from function/router.py's group tables;
request and answer schemas and the error codes from each route's description (function/openapi/*_routes.py);
statuses from function/http_errors.py; limits from the settings in force (function/config.py).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from function.config import LIMIT_VARIABLES, ServiceSettings
from function.errors import ERROR_CODES
from function.http_errors import ErrorBody, api_error_body, message_error_body, openai_error_body, status_of_kind
from function.openapi import api_routes, open_inference_routes, openai_routes, tei_routes, tfserving_routes
from function.openapi.operation import Deployment, Operation
from function.openapi.spec import STRING, obj
from function.router import Group, LazyRoute

TITLE = "lambda-tflite-serving"
VERSION = "1"  # of the API's contract, not of the models: each answer names its model_version
PATH_PARAMETER = re.compile(r"\{(\w+)\}")
# Route (as the router's tables name it, "module:function" of function/routes/) -> its description.
DESCRIPTIONS: dict[str, Callable[[Deployment], Operation | None]] = {
    **api_routes.DESCRIPTIONS, **openai_routes.DESCRIPTIONS, **tfserving_routes.DESCRIPTIONS,
    **open_inference_routes.DESCRIPTIONS, **tei_routes.DESCRIPTIONS}


def api_error_schema(codes: list[str]) -> dict:
    return obj({"error": obj({"code": {"enum": codes}, "message": STRING})})


def openai_error_schema(codes: list[str]) -> dict:
    return obj({"error": obj({"message": STRING, "type": {"enum": ["invalid_request_error", "server_error"]},
                              "param": {"type": ["string", "null"]}, "code": {"enum": codes}})})


def message_error_schema(codes: list[str]) -> dict:
    return obj({"error": {**STRING, "description": f"What went wrong; one of the cases {', '.join(codes)}."}})


# One schema per error body shape of function/http_errors.py, given the codes an answer may carry.
ERROR_SCHEMAS: dict[ErrorBody, Callable[[list[str]], dict]] = {
    api_error_body: api_error_schema,
    openai_error_body: openai_error_schema,
    message_error_body: message_error_schema,
}


def _function(route: Callable) -> Callable:
    return route.function if isinstance(route, LazyRoute) else route


def build_document(settings: ServiceSettings, models: Mapping[str, str], groups: Sequence[Group]) -> dict:
    """`models`: served model name -> task. `groups`: the router's tables (function/router.py GROUPS)."""
    deployment = Deployment(settings, dict(models))
    routes = [(group, template, method, _function(route)) for group in groups
              for template, methods in group.routes.items() for method, route in methods.items()]
    names = Counter(function.__name__ for _, _, _, function in routes)
    paths: dict[str, dict] = {}
    for group, template, method, function in routes:
        reference = f"{function.__module__.removeprefix('function.routes.')}:{function.__name__}"
        describe = DESCRIPTIONS.get(reference)
        if describe is None:
            raise TypeError(f"{method} {template} has no description: add {function.__name__} ({reference}) to "
                            "its group's DESCRIPTIONS in function/openapi/")
        operation = describe(deployment)
        if operation is None:  # a route that is off in this deployment (the page, unless SERVE_PAGE)
            continue
        # A function's name is its operation's id, unless the function (or its name) serves several routes.
        operation_id = function.__name__ if names[function.__name__] == 1 else _slug(f"{method} {template}")
        paths.setdefault(template, {})[method.lower()] = _operation(template, operation_id, operation, settings,
                                                                    group.error_body)
    return {
        "openapi": "3.1.0",
        "info": {"title": TITLE, "version": VERSION, "description": _overview(settings),
                 "x-limits": {variable: settings.limit(variable) for variable in LIMIT_VARIABLES}},
        "paths": paths,
    }


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")


def _operation(template: str, operation_id: str, operation: Operation, settings: ServiceSettings,
               error_body: ErrorBody) -> dict:
    spec: dict = {"operationId": operation_id, "summary": operation.summary, "description": operation.description}
    if operation.tags:
        spec["tags"] = list(operation.tags)
    in_path = PATH_PARAMETER.findall(template)
    declared = [p for p in operation.parameters if p.location != "path" or p.name in in_path]
    parameters = [{"name": name, "in": "path", "required": True, "schema": STRING}
                  for name in in_path if name not in {p.name for p in declared}]
    parameters += [{"name": p.name, "in": p.location, "required": p.location == "path", "schema": p.schema,
                    "description": p.description} for p in declared]
    if parameters:
        spec["parameters"] = parameters
    if operation.request:
        spec["requestBody"] = {"required": operation.request_required, "content": {media: {"schema": schema}
                                                             for media, schema in operation.request.items()}}
    answers = {operation.response_type: operation.response, **operation.other_responses}
    spec["responses"] = {"200": {"description": "OK", "content": {media: {"schema": schema}
                                                                  for media, schema in answers.items()}},
                         **_error_responses(operation.errors, error_body)}
    for status, (description, schema) in sorted(operation.dialect_errors.items()):
        ours = spec["responses"].get(status)
        if ours is None:
            spec["responses"][status] = {"description": description,
                                         "content": {"application/json": {"schema": schema}}}
        else:
            content = ours["content"]["application/json"]
            ours["description"] += f"; {description}"
            content["schema"] = {"anyOf": [content["schema"], schema]}
    if operation.limits:
        spec["x-limits"] = {variable: settings.limit(variable) for variable in operation.limits}
    return spec


def _error_responses(codes: tuple[str, ...], error_body: ErrorBody) -> dict:
    by_status: dict[int, list[str]] = {}
    for code in dict.fromkeys((*codes, "internal_error")):  # every route may fail with a bug of ours
        by_status.setdefault(status_of_kind(ERROR_CODES[code].kind), []).append(code)
    schema_of = ERROR_SCHEMAS[error_body]
    return {str(status): {"description": "; ".join(f"`{code}`: {ERROR_CODES[code].when}" for code in codes),
                          "content": {"application/json": {"schema": schema_of(codes)}}}
            for status, codes in sorted(by_status.items())}


def _overview(settings: ServiceSettings) -> str:
    limits = "\n".join(f"| `{variable}` | {settings.limit(variable)} |" for variable in LIMIT_VARIABLES)
    codes = "\n".join(f"| {status_of_kind(entry.kind)} | `{code}` | {entry.when} |"
                      for code, entry in sorted(ERROR_CODES.items(), key=lambda item: status_of_kind(item[1].kind)))
    return ("Keras models served as quantized TFLite on LiteRT from AWS Lambda. Every answer is JSON; every error "
            "is a stable code and a sentence (`{\"error\": {\"code\", \"message\"}}`, or the upstream protocol's own "
            "shape on the compatibility routes).\n\n"
            f"## Limits in force\n\n| environment variable | value |\n|---|---|\n{limits}\n\n"
            f"## Error codes\n\n| status | code | when |\n|---|---|---|\n{codes}\n")
