"""GET /openapi.json: this deployment's OpenAPI 3.1 document, built from the router's tables, the routes'
descriptions (function/openapi/), the settings and the models the registry lists now (no model loads). Kept for
that listing: a model published or removed (the registry's refresh) gives the next request a new document."""
from __future__ import annotations

import functools
import json

from function.config import ServiceSettings
from function.openapi.document import build_document
from function.responses import JSON_CONTENT_TYPE, Response
from function.router import GROUPS
from function.routes.context import RouteContext


def openapi_document(ctx: RouteContext) -> Response:
    models = tuple(sorted((name, task.name) for name, task in ctx.registry.tasks.items()))
    return Response(200, _document_bytes(ctx.settings, models), {"content-type": JSON_CONTENT_TYPE})


@functools.lru_cache(maxsize=4)  # one per (settings, listing): a process has one of each at a time, tests a few
def _document_bytes(settings: ServiceSettings, models: tuple[tuple[str, str], ...]) -> bytes:
    return json.dumps(build_document(settings, dict(models), GROUPS), ensure_ascii=False).encode("utf-8")
