"""GET /openapi.json: the API's OpenAPI 3.1 document, generated from the routes' own descriptions.

A route function carries its description: `@described_by(describe)`, where `describe(deployment)` returns an
`Operation` (function/openapi/operation.py) built from function/openapi/spec.py, or None when the route is off in
this deployment (the page, unless SERVE_PAGE). Only this decorator is imported with the routes; a description and
everything it uses are imported and run on the first GET /openapi.json, so the Lambda init pays nothing for them.

Adding a route: its entry in function/router.py ROUTES, and `@described_by(describe)` on its function, with a
`describe` beside it listing its request, answer, error codes and limits. tests/functional/test_openapi_document.py
fails for a route without one, and the fuzzer (tests/functional/test_openapi_fuzz.py) for a description that is
wrong.
"""
from __future__ import annotations

from collections.abc import Callable


def described_by(describe: Callable) -> Callable:
    """Attach a route's description to the route function: the router's table then names both."""
    def attach(route: Callable) -> Callable:
        route.describe = describe
        return route
    return attach
