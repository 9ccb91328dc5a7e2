"""Path and method -> route function. Paths may hold {name} parts; unknown paths are 404, known paths with
another method 405. The one table of every route: a new route (or protocol codec) is one entry here, and its
function carries its OpenAPI description (`@described_by`, function/openapi/operation.py)."""
from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from function.errors import MethodNotAllowed, refuse
from function.responses import Response
from function.routes.context import RouteContext

RouteFunction = Callable[[RouteContext], Response]


class LazyRoute:
    """A route function named "module:function" (a module of function/routes/), imported on its first request:
    a container's init pays for no route module, and a cold start only for the routes it serves (each pulls its
    own codecs and parsers). It stands for the function itself: called, or read (`describe` for the OpenAPI
    document), it is the function."""

    def __init__(self, reference: str) -> None:
        self.module, self.__name__ = reference.split(":")
        self._function: RouteFunction | None = None

    def resolve(self) -> RouteFunction:
        if self._function is None:
            self._function = getattr(importlib.import_module(f"function.routes.{self.module}"), self.__name__)
        return self._function

    def __call__(self, ctx: RouteContext) -> Response:
        return self.resolve()(ctx)

    def __getattr__(self, name: str):
        return getattr(self.resolve(), name)


def _routes(table: dict[str, dict[str, str]]) -> dict[str, dict[str, LazyRoute]]:
    return {template: {method: LazyRoute(reference) for method, reference in methods.items()}
            for template, methods in table.items()}


ROUTES: dict[str, dict[str, LazyRoute]] = _routes({
    "/classify": {"POST": "classify:classify"},
    "/sentiment": {"POST": "text:sentiment"},
    "/tokenize": {"POST": "text:tokenize"},
    "/embed": {"POST": "embed:embed"},
    "/v1/embeddings": {"POST": "openai_embeddings:embeddings"},
    "/models": {"GET": "catalog:list_models"},
    "/health": {"GET": "catalog:health"},
    # TensorFlow Serving's REST API (docs/api.md); a version, when given, must be the one served.
    "/v1/models/{name}": {"GET": "tfserving:model_status"},
    "/v1/models/{name}/versions/{version}": {"GET": "tfserving:model_status"},
    "/v1/models/{name}/metadata": {"GET": "tfserving:model_metadata"},
    "/v1/models/{name}/versions/{version}/metadata": {"GET": "tfserving:model_metadata"},
    "/v1/models/{name}:predict": {"POST": "tfserving:predict_route"},
    "/v1/models/{name}/versions/{version}:predict": {"POST": "tfserving:predict_route"},
    # The Open Inference Protocol v2 (docs/api.md).
    "/v2": {"GET": "open_inference:server_metadata"},
    "/v2/health/live": {"GET": "open_inference:server_live"},
    "/v2/health/ready": {"GET": "open_inference:server_ready"},
    "/v2/models/{name}": {"GET": "open_inference:model_metadata"},
    "/v2/models/{name}/versions/{version}": {"GET": "open_inference:model_metadata"},
    "/v2/models/{name}/ready": {"GET": "open_inference:model_ready"},
    "/v2/models/{name}/versions/{version}/ready": {"GET": "open_inference:model_ready"},
    "/v2/models/{name}/infer": {"POST": "open_inference:infer"},
    "/v2/models/{name}/versions/{version}/infer": {"POST": "open_inference:infer"},
    "/openapi.json": {"GET": "openapi_document:openapi_document"},
    "/": {"GET": "page:page"},
})


@dataclass(frozen=True)
class Match:
    template: str  # the route as ROUTES names it: what the log line records, never the client's own path
    function: LazyRoute
    params: dict[str, str]


def _pattern(template: str) -> re.Pattern:
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/:]+)" for i, part in enumerate(parts))
    return re.compile(regex)


PATTERNS = [(template, _pattern(template)) for template in ROUTES]


def normalize(path: str) -> str:
    return "/" + path.strip("/")


def template_of(path: str) -> tuple[str, dict[str, str]] | None:
    path = normalize(path)
    for template, pattern in PATTERNS:
        found = pattern.fullmatch(path)
        if found:
            return template, found.groupdict()
    return None


def resolve(method: str, path: str) -> Match:
    matched = template_of(path)
    if matched is None:
        raise refuse("route_not_found", f"There is no route {normalize(path)}; GET /openapi.json lists "
                     "every route.")
    template, params = matched
    methods = ROUTES[template]
    function = methods.get(method)
    if function is None:
        raise MethodNotAllowed(method, template, sorted(methods))
    return Match(template, function, params)
