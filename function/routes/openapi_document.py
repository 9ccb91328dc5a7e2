"""GET /openapi.json: this deployment's OpenAPI 3.1 document. Built on the first request, from the routes' own
descriptions, the settings and the served models (no model loads), then kept: neither changes in a process."""
from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING

from function.config import ServiceSettings
from function.models.registry import ModelRegistry
from function.openapi import described_by
from function.responses import JSON_CONTENT_TYPE, Response
from function.routes.context import RouteContext

if TYPE_CHECKING:
    from function.openapi.operation import Deployment, Operation


def describe(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    return spec.Operation(
        summary="This document",
        description="The OpenAPI 3.1 document of every route, schema, error code and limit in force here.",
        response={"type": "object", "required": ["openapi", "info", "paths"]},
        tags=("service",),
    )


@described_by(describe)
def openapi_document(ctx: RouteContext) -> Response:
    return Response(200, _document_bytes(ctx.settings, ctx.registry), {"content-type": JSON_CONTENT_TYPE})


@functools.lru_cache(maxsize=4)  # one per (settings, registry): a process has one of each, tests a few
def _document_bytes(settings: ServiceSettings, registry: ModelRegistry) -> bytes:
    from function.openapi.document import build_document  # noqa: PLC0415  (only when asked: not at Lambda init)
    from function.router import GROUPS  # noqa: PLC0415  (the router imports this module)

    models = {name: task.name for name, task in registry.tasks.items()}
    return json.dumps(build_document(settings, models, GROUPS), ensure_ascii=False).encode("utf-8")
