"""Path and method -> route function. Paths may hold {name} parts; unknown paths are 404, known paths with
another method 405. The one table of every route: a new route (or protocol codec) is one entry here, and its
function carries its OpenAPI description (`@described_by`, function/openapi/operation.py)."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from function.errors import MethodNotAllowed, RouteNotFound
from function.responses import Response
from function.routes.catalog import health, list_models
from function.routes.classify import classify
from function.routes.context import RouteContext
from function.routes import open_inference, tfserving
from function.routes.embed import embed
from function.routes.openai_embeddings import embeddings
from function.routes.openapi_document import openapi_document
from function.routes.page import page
from function.routes.text import sentiment, tokenize

RouteFunction = Callable[[RouteContext], Response]

ROUTES: dict[str, dict[str, RouteFunction]] = {
    "/classify": {"POST": classify},
    "/sentiment": {"POST": sentiment},
    "/tokenize": {"POST": tokenize},
    "/embed": {"POST": embed},
    "/v1/embeddings": {"POST": embeddings},
    "/models": {"GET": list_models},
    "/health": {"GET": health},
    # TensorFlow Serving's REST API (docs/api.md); a version, when given, must be the one served.
    "/v1/models/{name}": {"GET": tfserving.model_status},
    "/v1/models/{name}/versions/{version}": {"GET": tfserving.model_status},
    "/v1/models/{name}/metadata": {"GET": tfserving.model_metadata},
    "/v1/models/{name}/versions/{version}/metadata": {"GET": tfserving.model_metadata},
    "/v1/models/{name}:predict": {"POST": tfserving.predict},
    "/v1/models/{name}/versions/{version}:predict": {"POST": tfserving.predict},
    # The Open Inference Protocol v2 (docs/api.md).
    "/v2": {"GET": open_inference.server_metadata},
    "/v2/health/live": {"GET": open_inference.server_live},
    "/v2/health/ready": {"GET": open_inference.server_ready},
    "/v2/models/{name}": {"GET": open_inference.model_metadata},
    "/v2/models/{name}/versions/{version}": {"GET": open_inference.model_metadata},
    "/v2/models/{name}/ready": {"GET": open_inference.model_ready},
    "/v2/models/{name}/versions/{version}/ready": {"GET": open_inference.model_ready},
    "/v2/models/{name}/infer": {"POST": open_inference.infer},
    "/v2/models/{name}/versions/{version}/infer": {"POST": open_inference.infer},
    "/openapi.json": {"GET": openapi_document},
    "/": {"GET": page},
}


@dataclass(frozen=True)
class Match:
    template: str  # the route as ROUTES names it: what the log line records, never the client's own path
    function: RouteFunction
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
        raise RouteNotFound("route_not_found", f"There is no route {normalize(path)}; GET /openapi.json lists "
                            "every route.")
    template, params = matched
    methods = ROUTES[template]
    function = methods.get(method)
    if function is None:
        raise MethodNotAllowed(method, template, sorted(methods))
    return Match(template, function, params)
