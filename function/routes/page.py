"""GET /: a page to try every model from a browser (function/web/index.html), when SERVE_PAGE is on.

`python -m function.devserver` turns it on; the Lambda function serves only the API unless SERVE_PAGE=true. The page
calls the same HTTP API as any client, from plain HTML, CSS and JavaScript with nothing to build or download.
"""
from __future__ import annotations

import functools
from pathlib import Path

from function.config import Env
from function.errors import refuse
from function.responses import Response
from function.routes.context import RouteContext

PAGE_FILE = Path(__file__).resolve().parent.parent / "web" / "index.html"


def page(ctx: RouteContext) -> Response:
    if not ctx.settings.serve_page:
        raise refuse("route_not_found", f"This deployment serves the API only ({Env.SERVE_PAGE}=true serves a "
                     "page here); GET /openapi.json describes it.")
    return Response(200, _page_bytes(), {"content-type": "text/html; charset=utf-8"})


@functools.lru_cache(maxsize=1)
def _page_bytes() -> bytes:
    return PAGE_FILE.read_bytes()
