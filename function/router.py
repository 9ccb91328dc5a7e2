"""Path and method -> route function; unknown paths are 404, known paths with another method 405."""
from __future__ import annotations

from collections.abc import Callable

from function.errors import method_not_allowed, not_found
from function.events import Response
from function.routes.catalog import health, list_models
from function.routes.classify import classify
from function.routes.context import RouteContext
from function.routes.text import sentiment, tokenize

Route = Callable[[RouteContext], Response]

ROUTES: dict[str, dict[str, Route]] = {
    "/classify": {"POST": classify},
    "/sentiment": {"POST": sentiment},
    "/tokenize": {"POST": tokenize},
    "/models": {"GET": list_models},
    "/health": {"GET": health},
}


def normalize(path: str) -> str:
    return "/" + path.strip("/")


def resolve(method: str, path: str) -> Route:
    methods = ROUTES.get(normalize(path))
    if methods is None:
        raise not_found("route_not_found", f"There is no route {path}; try {', '.join(ROUTES)}.")
    route = methods.get(method)
    if route is None:
        raise method_not_allowed(method, normalize(path), sorted(methods))
    return route
