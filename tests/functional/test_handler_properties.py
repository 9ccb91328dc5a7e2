"""Property-based: whatever event arrives, the handler answers, never raises, never answers >= 500, and every
error has the documented shape. Thousands of generated API Gateway events (payload 1.0 and 2.0), mutated at every
level: fields of the wrong type, random methods, paths, headers, query strings and bodies, and JSON bodies with
the routes' own field names holding random values.

`make test` runs a bounded number of examples (HANDLER_PROPERTY_EXAMPLES, default 1500 per test, well under a
minute); set it higher for a longer hunt, e.g. HANDLER_PROPERTY_EXAMPLES=20000.
"""
from __future__ import annotations

import copy
import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.entry import handle_event
from function.errors import UnsupportedEvent
from function.events import parse_event
from kit.events import http_api_event, rest_api_event
from tests.support.function_fixtures import assert_healthy, call, demo_models, registry, make_service  # noqa: F401
from kit.photos import b64, cat_jpeg, is_cat

EXAMPLES = int(os.environ.get("HANDLER_PROPERTY_EXAMPLES", "1500"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
PATHS = ["/classify", "/sentiment", "/tokenize", "/embed", "/v1/embeddings", "/models", "/health", "/",
         "/v1/models/digits", "/v1/models/digits:predict", "/v1/models/digits/metadata", "/v2/health/ready",
         "/v2/models/digits/infer", "/v2/models/digits", "/nowhere", "/classify/extra"]
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "get", "", "POST\u2028", "\ud800"]
FIELDS = ["image", "images", "text", "texts", "model", "top_k", "normalize", "input", "encoding_format",
          "dimensions", "instances", "inputs", "signature_name", "outputs", "x"]

text = st.text(alphabet=st.characters(codec=None), max_size=40)  # lone surrogates, U+2028, NUL included
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), text)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(text, inner, max_size=4)), max_leaves=12)
route_bodies = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=4)


def _encode(value) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True, default=str)


# JSON that Python's json module cannot even hold: an integer of over 4,300 digits, in any route's body.
HUGE_INTEGERS = st.sampled_from(FIELDS).map(lambda field: '{"text": "hi", "%s": %s}' % (field, "1" * 5000))

bodies = st.one_of(
    st.none(),
    HUGE_INTEGERS,
    text,
    st.binary(max_size=200),
    route_bodies.map(_encode),
    json_values.map(_encode),
)
queries = st.one_of(st.none(), st.dictionaries(st.sampled_from(["top_k", "model", "x"]),
                                               st.one_of(text, st.sampled_from(["²", "1" * 5000, "-1", "3"])),
                                               max_size=3))
content_types = st.one_of(st.none(), st.sampled_from(["application/json", "image/jpeg", "text/plain",
                                                      "multipart/form-data; boundary=x", "application/x+json"]), text)


@st.composite
def events(draw) -> dict:
    builder = draw(st.sampled_from([http_api_event, rest_api_event]))
    body = draw(bodies)
    event = builder(draw(st.sampled_from(METHODS)), draw(st.sampled_from(PATHS)) if draw(st.booleans())
                    else draw(text), body, draw(content_types),
                    binary=isinstance(body, bytes) or draw(st.booleans()), query=draw(queries))
    return mutate(event, draw)


def mutate(event: dict, draw) -> dict:
    """Replace a few fields, at any depth, with values of any type (or delete them)."""
    event = copy.deepcopy(event)
    for _ in range(draw(st.integers(0, 3))):
        target, path = event, []
        while isinstance(target, dict) and target and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(target, key=str)))
            path.append(key)
            if not isinstance(target[key], dict):
                break
            target = target[key]
        if not path:
            continue
        parent = event
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()):
            parent[path[-1]] = draw(json_values)
        else:
            del parent[path[-1]]
    return event


def path_of(event: object) -> str | None:
    """The path the handler routed (None when the event itself was refused)."""
    try:
        return parse_event(event).path
    except UnsupportedEvent:
        return None


def assert_documented_error(path: object, status: int, body: object) -> None:
    assert isinstance(body, dict) and "error" in body, body
    error = body["error"]
    if isinstance(path, str) and (path.startswith("/v1/models") or path.startswith("/v2")) and isinstance(error, str):
        assert error
        return
    assert isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)


def answer(service, event: object) -> tuple[int, dict]:
    result = handle_event(service, event, None)
    assert isinstance(result, dict) and set(result) >= {"statusCode", "headers", "body"}
    status = result["statusCode"]
    assert 200 <= status < 500, result
    return status, json.loads(result["body"])


@SETTINGS
@given(event=events())
def test_generated_events_never_escape_nor_answer_5xx(registry, event):  # noqa: F811
    service = make_service(registry)
    status, body = answer(service, event)
    if status >= 400:
        assert_documented_error(path_of(event), status, body)


@settings(SETTINGS, max_examples=max(EXAMPLES // 3, 1))
@given(event=st.one_of(json_values, st.builds(list), st.text()))
def test_anything_that_is_not_an_api_gateway_event_is_a_clean_400(registry, event):  # noqa: F811
    status, body = answer(make_service(registry), event)
    assert status in (200, 400)  # 200 only for the {"warmup": true} event
    if status == 400:
        assert body["error"]["code"] == "unsupported_event"


def test_the_service_still_answers_afterwards(registry):  # noqa: F811
    service = make_service(registry)
    assert_healthy(service)
    status, body = call(service, "POST", "/classify", {"image": b64(cat_jpeg())})
    assert status == 200 and is_cat(body["predictions"][0]["label"])
