"""Error messages never echo a client's raw bytes: a method, a path, a model name, a header quoted through
function.errors.quoted, escaped to printable ASCII and cut to a bounded length, whatever the client sent."""
from __future__ import annotations

import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from function.errors import MAX_QUOTED_CHARS, quoted
from tests.support.function_fixtures import call, demo_models, registry, service  # noqa: F401

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
# Longer than any message of ours that quotes one client value, far shorter than what a client can send.
MAX_MESSAGE_CHARS = 600
NASTY = "GET\r\nX-Injected: 1\x00\x1b[31m\u2028" + "A" * 10_000  # (a lone surrogate is refused as a bad event)


def assert_clean(message: str) -> None:
    assert len(message) <= MAX_MESSAGE_CHARS, len(message)
    assert not any(unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") for char in message), message
    assert "X-Injected: 1\x00" not in message and "A" * (MAX_QUOTED_CHARS + 1) not in message


def test_quoted_escapes_caps_and_names_kinds():
    assert quoted("digits") == "'digits'"
    assert quoted("a\nb\x00c\u2028") == "'a\\nb\\x00c\\u2028'"
    assert quoted("x" * 500) == "'" + "x" * MAX_QUOTED_CHARS + "'..."
    assert (quoted(7), quoted(None), quoted(True), quoted([1] * 10_000), quoted({"a": 1})) == (
        "7", "None", "True", "a list", "an object")


def test_the_405_message_quotes_the_method(service):  # noqa: F811
    status, body = call(service, NASTY, "/classify")
    assert status == 405 and body["error"]["code"] == "method_not_allowed"
    assert body["error"]["message"].startswith("Method 'GET\\r\\nX-INJECTED: 1\\x00\\x1b[31M\\u2028AAA")  # upper-cased
    assert_clean(body["error"]["message"])


def test_the_404_message_quotes_the_path(service):  # noqa: F811
    status, body = call(service, "GET", "/no\r\nwhere\x00/" + "p" * 5000)
    assert status == 404
    assert_clean(body["error"]["message"])


def test_a_model_name_is_quoted(service):  # noqa: F811
    status, body = call(service, "POST", "/sentiment", {"text": "fine", "model": NASTY})
    assert (status, body["error"]["code"]) == (404, "model_not_found")
    assert_clean(body["error"]["message"].split("; available:")[0])


def test_a_content_encoding_is_quoted(service):  # noqa: F811
    from function.entry import handle_event
    from kit.events import http_api_event

    event = http_api_event("POST", "/v1/models/digits:predict", {"instances": [[0.0] * 64]})
    event["headers"]["content-encoding"] = "gzip\x1b" + "z" * 900
    answer = handle_event(service, event, None)
    assert answer["statusCode"] == 415
    assert "\x1b" not in answer["body"] and "z" * (MAX_QUOTED_CHARS + 1) not in answer["body"]


@SETTINGS
@given(method=st.text(max_size=300), path=st.text(max_size=300), model=st.text(max_size=300))
def test_no_client_value_reaches_a_message_raw(service, method, path, model):  # noqa: F811
    for status, body in (call(service, method or "PUT", "/classify"), call(service, "GET", "/" + path),
                         call(service, "POST", "/sentiment", {"text": "fine", "model": model or "?"})):
        if status >= 400:
            message = body["error"]["message"]
            assert_clean(message.split("; available:")[0])
