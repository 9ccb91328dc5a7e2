"""Path and method -> route function, from one table per protocol group: this project's API, OpenAI's embeddings,
TensorFlow Serving's REST API and the Open Inference Protocol v2. A group declares its routes, the body its errors
take and the path prefix it owns, so that a path no route matches still answers in the shape its protocol's
clients read. Paths may hold {name} parts; unknown paths are 404, known paths with another method 405. A new route
(or protocol codec) is one entry here and its description in function/openapi/; serverless.yml's httpApi routes
are checked against these tables (tests/unit/test_router_table.py)."""
from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from function.errors import MethodNotAllowed, quoted, refuse
from function.http_errors import ErrorBody, api_error_body, message_error_body, openai_error_body
from function.responses import Response
from function.routes.context import RouteContext

RouteFunction = Callable[[RouteContext], Response]


class LazyRoute:
    """A route function named "module:function" (a module of function/routes/), imported on its first request:
    a container's init pays for no route module (all of them, with their codecs, parsers and the OpenAPI
    descriptions: 23 modules, ~21 ms by `python -X importtime`), and a cold start only for the routes it serves."""

    def __init__(self, reference: str) -> None:
        self.module, self.name = reference.split(":")
        self._function: RouteFunction | None = None

    @property
    def function(self) -> RouteFunction:
        if self._function is None:
            self._function = getattr(importlib.import_module(f"function.routes.{self.module}"), self.name)
        return self._function

    def __call__(self, ctx: RouteContext) -> Response:
        return self.function(ctx)


@dataclass(frozen=True)
class Group:
    """One protocol's routes (path template -> method -> route) and the body its errors take."""

    name: str
    prefix: str | None  # every path under it is this group's, matched or not; None: every path no group owns
    error_body: ErrorBody
    routes: dict[str, dict[str, LazyRoute]]
    # API Gateway path variables are whole segments: "{name}:predict" is not one, so the group reaches the function
    # through greedy routes under its prefix (serverless.yml) and this router resolves the rest.
    greedy: bool = False

    def owns(self, path: str) -> bool:
        prefix = self.prefix
        return prefix is not None and (path == prefix or path.startswith((prefix + "/", prefix + ":")))


def _routes(table: dict[str, dict[str, str]]) -> dict[str, dict[str, LazyRoute]]:
    return {template: {method: LazyRoute(reference) for method, reference in methods.items()}
            for template, methods in table.items()}


API = Group("api", None, api_error_body, _routes({
    "/classify": {"POST": "classify:classify"},
    "/sentiment": {"POST": "text:sentiment"},
    "/tokenize": {"POST": "text:tokenize"},
    "/embed": {"POST": "embed:embed"},
    "/models": {"GET": "catalog:list_models"},
    "/health": {"GET": "catalog:health"},
    "/openapi.json": {"GET": "openapi_document:openapi_document"},
    "/": {"GET": "page:page"},
}))
OPENAI = Group("openai", "/v1/embeddings", openai_error_body, _routes({
    "/v1/embeddings": {"POST": "openai_embeddings:embeddings"},
}))


def _model_routes(model_path: str, selectors: tuple[str, ...], table: dict[str, dict[str, str]]) -> dict:
    """A tensor protocol's model routes (suffix -> method -> route), each also under every selector of a version
    (".../versions/{version}", ".../labels/{label}"): the protocols spell every model route that way."""
    return {f"{model_path}{selector}{suffix}": methods for selector in ("", *selectors) for suffix, methods in table.items()}


# TensorFlow Serving's REST API (docs/api.md); a version or a label, when given, names the version that answers.
TF_SERVING = Group("tfserving", "/v1/models", message_error_body, greedy=True, routes=_routes(_model_routes(
    "/v1/models/{name}", ("/versions/{version}", "/labels/{label}"), {
        "": {"GET": "tfserving:model_status"},
        "/metadata": {"GET": "tfserving:model_metadata"},
        ":predict": {"POST": "tfserving:predict_route"},
    })))
# The Open Inference Protocol v2 (docs/api.md).
OPEN_INFERENCE = Group("open_inference", "/v2", message_error_body, greedy=True, routes=_routes({
    "/v2": {"GET": "open_inference:server_metadata"},
    "/v2/health/live": {"GET": "open_inference:server_live"},
    "/v2/health/ready": {"GET": "open_inference:server_ready"},
    **_model_routes("/v2/models/{name}", ("/versions/{version}",), {
        "": {"GET": "open_inference:model_metadata"},
        "/ready": {"GET": "open_inference:model_ready"},
        "/infer": {"POST": "open_inference:infer"},
    }),
}))
GROUPS = (API, OPENAI, TF_SERVING, OPEN_INFERENCE)
ROUTES: dict[str, dict[str, LazyRoute]] = {template: methods for group in GROUPS
                                           for template, methods in group.routes.items()}


def _pattern(template: str) -> re.Pattern:
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/:]+)" for i, part in enumerate(parts))
    return re.compile(regex)


PATTERNS = [(template, _pattern(template), group) for group in GROUPS for template in group.routes]


@dataclass(frozen=True)
class Match:
    """Where a request's path leads: its group always, its route template when one matches."""

    path: str  # normalized
    group: Group
    template: str | None  # the route as the table names it: what the log line records, never the client's path
    params: dict[str, str]

    def route(self, method: str) -> LazyRoute:
        if self.template is None:
            raise refuse("route_not_found", f"There is no route {quoted(self.path)}; GET /openapi.json lists every route.")
        methods = self.group.routes[self.template]
        if method not in methods:
            raise MethodNotAllowed(method, self.template, sorted(methods))
        return methods[method]


def normalize(path: str) -> str:
    return "/" + path.strip("/")


def match(path: str) -> Match:
    normalized = normalize(path)
    for template, pattern, group in PATTERNS:
        found = pattern.fullmatch(normalized)
        if found:
            return Match(normalized, group, template, found.groupdict())
    # No route: the group whose prefix holds the path as the client sent it, else this API.
    return Match(normalized, next((group for group in GROUPS if group.owns(path)), API), None, {})
