"""GET /openapi.json: the API's OpenAPI 3.1 document, built from the router's tables and each route's description.

The routes (function/routes/) only handle requests; their descriptions live here, one module per protocol group
(api_routes.py, openai_routes.py, tfserving_routes.py, open_inference_routes.py). Each maps a route, as the
router's tables name it ("classify:classify"), to `describe(deployment)`, which returns an `Operation`
(operation.py) built from spec.py, or None when the route is off in this deployment (the page, unless SERVE_PAGE).
Nothing here is imported before the first GET /openapi.json, so the Lambda init pays nothing for it.

Adding a route: its entry in function/router.py, and its `describe` in its group's module here, listing its
request, answer, error codes and limits. tests/functional/test_openapi_document.py fails for a route without one,
and the fuzzer (tests/functional/test_openapi_fuzz.py) for a description that is wrong.
"""
