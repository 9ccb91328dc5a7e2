"""The local server's CORS and API console in a real browser (Debian's Chromium, headless, via Playwright):

- CORS from function/devserver/cors.json, the settings serverless.yml gives the deployed HTTP API: a page of another
  origin calls the API with a JSON body (so the browser sends a preflight first) and reads the answer when its origin is
  allowed, and cannot when it is not; the preflight itself is answered as API Gateway answers it;
- /docs: Swagger UI over /openapi.json from the installed package, every asset from this server (no request fails,
  none leaves it), listing every route of the document, and "Try it out" calls the API.
"""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import expect

from function.devserver.cors import SETTINGS_FILE, CorsPolicy
from tests.functional.test_page_browser import ARTIFACTS, browser  # noqa: F401
from tests.support.function_fixtures import demo_models, make_service, registry  # noqa: F401
from tests.support.local_api import demo_api, serving  # noqa: F401

SETTINGS = json.loads(SETTINGS_FILE.read_text(encoding="utf-8"))
# A fetch with a JSON body: not a "simple" request, so the browser asks the API (preflight) before sending it.
CALL = """async (api) => {
  try {
    const answer = await fetch(api + "/classify-text", {method: "POST", headers: {"content-type": "application/json"},
                                                        body: JSON.stringify({text: "A joy to watch.", top_k: "all"})});
    return {status: answer.status, body: await answer.json()};
  } catch (error) {
    return {error: String(error)};
  }
}"""


@pytest.fixture(scope="module")
def cors_api(registry, demo_api) -> Iterator[str]:  # noqa: F811
    """The API allowing one origin: the demo page's server (demo_api), as --cors-origins would."""
    with serving(make_service(registry), CorsPolicy.load(demo_api)) as url:
        yield url


@pytest.fixture(scope="module")
def closed_api(registry) -> Iterator[str]:  # noqa: F811
    """The API allowing another origin only."""
    with serving(make_service(registry), CorsPolicy.load("https://app.example.com")) as url:
        yield url


def test_the_settings_are_the_deployed_api_s(cors_api, demo_api):  # noqa: F811
    preflight = requests.options(f"{cors_api}/classify-text", timeout=30, headers={
        "Origin": demo_api, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,authorization"})
    assert preflight.status_code == 204 and preflight.content == b""
    assert preflight.headers["access-control-allow-origin"] == demo_api
    assert preflight.headers["access-control-allow-methods"].split(",") == SETTINGS["allowMethods"]
    assert preflight.headers["access-control-allow-headers"].split(",") == [h.lower() for h in SETTINGS["allowHeaders"]]
    assert preflight.headers["access-control-max-age"] == str(SETTINGS["maxAge"])
    refused = requests.options(f"{cors_api}/classify-text", timeout=30, headers={
        "Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"})
    assert refused.status_code == 204 and "access-control-allow-origin" not in refused.headers
    odd_header = requests.options(f"{cors_api}/classify-text", timeout=30, headers={
        "Origin": demo_api, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-secret"})
    assert "access-control-allow-origin" not in odd_header.headers


def test_without_an_allowed_origin_nothing_changes(demo_api):  # noqa: F811
    """function/devserver/cors.json allows no origin by default, as serverless.yml's corsOrigins: no CORS header, and
    OPTIONS reaches the function."""
    assert CorsPolicy.load().origins == ()
    answer = requests.options(f"{demo_api}/classify-text", timeout=30, headers={
        "Origin": "https://app.example.com", "Access-Control-Request-Method": "POST"})
    assert answer.status_code == 405 and answer.json()["error"]["code"] == "method_not_allowed"
    assert "access-control-allow-origin" not in answer.headers


def test_a_page_of_an_allowed_origin_calls_the_api(browser, demo_api, cors_api, closed_api):  # noqa: F811
    page = browser.new_page()
    preflights = []
    page.on("request", lambda request: request.method == "OPTIONS" and preflights.append(request.url))
    page.goto(f"{demo_api}/")  # the page's origin: demo_api
    answer = page.evaluate(CALL, cors_api)
    assert answer["status"] == 200, answer
    [prediction] = answer["body"]["predictions"]
    assert prediction["label"] == "positive" and len(prediction["top_k"]) == 2
    refused = page.evaluate(CALL, closed_api)
    assert "Failed to fetch" in refused.get("error", ""), refused  # the browser keeps the answer from the page
    page.close()


def test_the_api_console_lists_every_route_and_calls_them(browser, demo_api):  # noqa: F811
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    failed, elsewhere = [], []
    page.on("requestfailed", lambda request: failed.append(f"{request.url} {request.failure}"))
    page.on("response", lambda response: response.status >= 400 and failed.append(f"{response.url} {response.status}"))
    page.on("request", lambda request: request.url.startswith(demo_api) or elsewhere.append(request.url))
    page.goto(f"{demo_api}/docs")
    document = requests.get(f"{demo_api}/openapi.json", timeout=30).json()
    operations = {(method.upper(), path) for path, methods in document["paths"].items() for method in methods}
    # An operation with two tags (TEI's paths are this API's too) is listed under each: count them once.
    tagged = sum(len(methods[method].get("tags") or [None]) for methods in document["paths"].values()
                 for method in methods)
    blocks = page.locator(".opblock")
    expect(blocks).to_have_count(tagged, timeout=30_000)
    shown = set(zip(page.locator(".opblock-summary-method").all_inner_texts(),
                    page.locator(".opblock-summary-path").evaluate_all(
                        "nodes => nodes.map(node => node.getAttribute('data-path'))")))
    assert shown == operations
    paths = set(page.locator(".opblock-summary-path").evaluate_all(
        "nodes => nodes.map(node => node.getAttribute('data-path'))"))
    assert paths == set(document["paths"]) and "/classify-text" in paths
    health = page.locator(".opblock-get", has=page.locator(".opblock-summary-path[data-path='/health']"))
    health.locator(".opblock-summary").click()
    health.locator("button.execute").click()
    expect(health.locator(".live-responses-table tbody .response-col_status")).to_have_text("200")
    expect(health.locator(".live-responses-table tbody .microlight").first).to_contain_text('"status": "ok"')
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "docs.png")
    assert failed == [] and elsewhere == []
    page.close()


def test_the_console_is_the_local_server_s_alone(demo_api):  # noqa: F811
    """Only the page's assets are served under /docs; the Lambda function has no /docs route."""
    assert requests.get(f"{demo_api}/docs/../serverless.yml", timeout=30).status_code == 404
    assert requests.get(f"{demo_api}/docs/index.html", timeout=30).json()["error"]["code"] == "route_not_found"
    assert requests.post(f"{demo_api}/docs", timeout=30).status_code == 405
    assert "/docs" not in requests.get(f"{demo_api}/openapi.json", timeout=30).json()["paths"]
