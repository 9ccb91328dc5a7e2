"""GET /docs on the local server: Swagger UI over /openapi.json, to read every route and try it ("Try it out").

Its assets come from the PyPI package swagger-ui-bundle-v2 (Swagger UI 5, which reads OpenAPI 3.1), which the
development venv installs (requirements-test.txt): nothing from a CDN, so it works offline. The Lambda function
never serves it (its image installs requirements.txt alone). Development only, as all of function/devserver/.
"""
from __future__ import annotations

import functools
from pathlib import Path

from function.errors import quoted
from function.responses import Response, json_response

PREFIX = "/docs"
PACKAGE = "swagger-ui-bundle-v2"
# The files the page loads, and the source maps a browser's developer tools ask for: nothing else is served.
ASSETS = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui.css.map": "application/json",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui-bundle.js.map": "application/json",
}
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API console · lambda-tflite-serving</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script>
"use strict";
// The document this server answers at /openapi.json; no online validator (it would call out of this machine).
window.ui = SwaggerUIBundle({url: "openapi.json", dom_id: "#swagger-ui", validatorUrl: null, deepLinking: true,
                             tryItOutEnabled: true, displayRequestDuration: true});
</script>
</body>
</html>
"""


def is_docs_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


@functools.lru_cache(maxsize=1)
def assets_directory() -> Path | None:
    try:
        import swagger_ui_bundle  # noqa: PLC0415  (a development package: only when /docs is asked for)
    except ImportError:
        return None
    return Path(str(swagger_ui_bundle.swagger_ui_path))


def docs(method: str, path: str) -> Response:
    """The console page at /docs, its assets under /docs/, or the API's own error shape."""
    if method != "GET":
        return _error(405, "method_not_allowed", f"Method {quoted(method)} is not allowed on {PREFIX}; use GET.",
                      {"allow": "GET"})
    directory = assets_directory()
    if directory is None:
        return _error(404, "route_not_found", f"/docs needs the package {PACKAGE} (requirements-test.txt): "
                      f"pip install -r requirements-test.txt.")
    if path == PREFIX:
        return Response(200, PAGE.encode("utf-8"), {"content-type": "text/html; charset=utf-8"})
    name = path[len(PREFIX) + 1:]
    if name not in ASSETS:
        return _error(404, "route_not_found", f"There is no {path}; the console is at {PREFIX}.")
    return Response(200, (directory / name).read_bytes(), {"content-type": ASSETS[name],
                                                          "cache-control": "max-age=3600"})


def _error(status: int, code: str, message: str, headers: dict | None = None) -> Response:
    answer = json_response(status, {"error": {"code": code, "message": message}})
    answer.headers.update(headers or {})
    return answer
