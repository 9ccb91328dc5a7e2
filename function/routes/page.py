"""GET /: a page to try every model from a browser (function/web/index.html), when SERVE_PAGE is on.

`python -m function serve` turns it on; the Lambda function serves only the API unless SERVE_PAGE=true. The page
calls the same HTTP API as any client, from plain HTML, CSS and JavaScript with nothing to build or download.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from function.config import SERVE_PAGE
from function.errors import refuse
from function.openapi import described_by
from function.responses import Response
from function.routes.context import RouteContext

if TYPE_CHECKING:
    from function.openapi.operation import Deployment, Operation

PAGE_FILE = Path(__file__).resolve().parent.parent / "web" / "index.html"


def describe(deployment: Deployment) -> Operation | None:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    if not deployment.settings.serve_page:
        return None
    return spec.Operation(
        summary="A page to try every model",
        description=f"HTML: classify a photo, the sentiment of a text, the similarity of two sentences ({SERVE_PAGE}"
                    "=true; on with `python -m function serve`).",
        response={"type": "string"},
        response_type="text/html",
        tags=("service",),
    )


@described_by(describe)
def page(ctx: RouteContext) -> Response:
    if not ctx.settings.serve_page:
        raise refuse("route_not_found", f"This deployment serves the API only ({SERVE_PAGE}=true serves a "
                     "page here); GET /openapi.json describes it.")
    return Response(200, _page_bytes(), {"content-type": "text/html; charset=utf-8"})


@functools.lru_cache(maxsize=1)
def _page_bytes() -> bytes:
    return PAGE_FILE.read_bytes()
